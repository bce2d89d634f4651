// Tests of the recorder (model.hpp): the trace of one sequence is the model's
// one forward on a batch of one with a Recorder attached; its backward keeps
// every gradient intermediate per layer and head. The trace is checked
// against the playground's multi_head_attention() (the old trace path), the
// gradient intermediates against the double reference's; and the Model-only
// (run, never trained) path allocates no training state.

#include "attention/mask.hpp"
#include "model/model.hpp"
#include "attention/multi_head.hpp"
#include "train/trainer.hpp"
#include "model_test_util.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

using Catch::Matchers::Contains;
using attn::Batch;
using attn::ModelConfig;

namespace {

/// A random config of up to 3 layers, with the architecture options when `options`.
ModelConfig recorder_config(std::mt19937& rng, bool options) {
    ModelConfig c = options ? model_test::random_arch_config(rng) : model_test::random_config(rng);
    c.layers = std::uniform_int_distribution<int>(1, 3)(rng);
    return c;
}

using model_test::random_ids;
using model_test::random_params;
using model_test::relative_error;
using model_test::sized_config;

float max_diff(const attn::Matrix& a, const attn::Matrix& b) {
    REQUIRE(a.rows() == b.rows());
    REQUIRE(a.cols() == b.cols());
    return a.size() == 0 ? 0.0f : (a - b).cwiseAbs().maxCoeff();
}

float max_diff(const attn::Vector& a, const attn::Vector& b) {
    REQUIRE(a.size() == b.size());
    return a.size() == 0 ? 0.0f : (a - b).cwiseAbs().maxCoeff();
}

attn::Weights layer_weights(const attn::Parameters& p, int l) {
    const std::string prefix = "layers." + std::to_string(l) + ".";
    attn::Weights w;
    w.w_query = p.view(prefix + "w_query");
    w.w_key = p.view(prefix + "w_key");
    w.w_value = p.view(prefix + "w_value");
    w.w_output = p.view(prefix + "w_output");
    return w;
}

}  // namespace

TEST_CASE("recorder: every head of the recorded trace equals multi_head_attention() on the layer's input", "[model][recorder]") {
    // the playground's attention (multi_head.hpp), the implementation the old trace_model ran
    std::mt19937 rng(21);
    for (int trial = 0; trial < 40; ++trial) {
        const ModelConfig c = recorder_config(rng, false);
        const attn::Parameters p = random_params(rng, c);
        const int T = std::uniform_int_distribution<int>(1, c.context)(rng);
        const int len = std::uniform_int_distribution<int>(1, T)(rng);
        const std::vector<std::int32_t> ids = random_ids(rng, c, T);
        for (int causal : {-1, 0, 1}) {
            attn::ForwardOptions o;
            o.causal_override = causal;
            const attn::ModelTrace tr = attn::trace_model(c, p, ids, len, o);
            const bool is_causal = causal < 0 ? c.causal : causal == 1;
            CHECK(tr.mask == attn::build_mask(is_causal ? attn::MaskKind::causal_padding : attn::MaskKind::padding, T, len));
            for (int l = 0; l < c.layers; ++l) {
                const attn::LayerTrace& lt = tr.layers[static_cast<std::size_t>(l)];
                const attn::MultiHeadTrace old = attn::multi_head_attention(lt.normed, layer_weights(p, l), c.heads, tr.mask, c.scale);
                INFO("trial " << trial << " layer " << l << " causal " << causal);
                for (int h = 0; h < c.heads; ++h) {
                    const attn::HeadTrace& a = lt.attention.heads[static_cast<std::size_t>(h)];
                    const attn::HeadTrace& b = old.heads[static_cast<std::size_t>(h)];
                    CHECK(max_diff(a.query, b.query) < 1e-5f);
                    CHECK(max_diff(a.key, b.key) < 1e-5f);
                    CHECK(max_diff(a.value, b.value) < 1e-5f);
                    CHECK(max_diff(a.scores, b.scores) < 1e-5f);
                    CHECK(max_diff(a.scaled, b.scaled) < 1e-5f);
                    CHECK(max_diff(a.row_max, b.row_max) < 1e-5f);
                    CHECK(max_diff(a.row_sum, b.row_sum) < 1e-4f);
                    CHECK(max_diff(a.weights, b.weights) < 1e-5f);
                    CHECK(max_diff(a.output, b.output) < 1e-5f);
                }
                CHECK(max_diff(lt.attention.concat, old.concat) < 1e-5f);
                CHECK(max_diff(lt.attention.output, old.output) < 1e-5f);
                CHECK(max_diff(lt.residual, lt.input + old.output) < 1e-5f);
            }
        }
    }
}

TEST_CASE("recorder: an ablated head keeps its own output in the trace and a zero slot in the concatenation", "[model][recorder]") {
    std::mt19937 rng(22);
    for (int trial = 0; trial < 20; ++trial) {
        ModelConfig c = recorder_config(rng, false);
        if (c.heads < 2) c.heads = 2, c.d_model = 4;
        const attn::Parameters p = random_params(rng, c);
        const std::vector<std::int32_t> ids = random_ids(rng, c, c.context);
        attn::ForwardOptions o;
        o.head_enabled.assign(static_cast<std::size_t>(c.layers), std::vector<bool>(static_cast<std::size_t>(c.heads), true));
        o.head_enabled[0][1] = false;
        const attn::ModelTrace tr = attn::trace_model(c, p, ids, -1, o);
        const attn::LayerTrace& lt = tr.layers[0];
        const attn::MultiHeadTrace old = attn::multi_head_attention(lt.normed, layer_weights(p, 0), c.heads, tr.mask, c.scale);
        const int D = c.d_model / c.heads;
        CHECK(max_diff(lt.attention.heads[1].output, old.heads[1].output) < 1e-5f);
        CHECK(lt.attention.concat.middleCols(D, D).cwiseAbs().maxCoeff() == 0.0f);
        attn::Matrix concat = old.concat;
        concat.middleCols(D, D).setZero();
        CHECK(max_diff(lt.attention.output, concat * layer_weights(p, 0).w_output) < 1e-5f);
    }
}

TEST_CASE("recorder: keeping one layer keeps its heads only, with the same values", "[model][recorder]") {
    std::mt19937 rng(23);
    for (int trial = 0; trial < 20; ++trial) {
        ModelConfig c = recorder_config(rng, true);
        c.layers = 3;
        const attn::Parameters p = random_params(rng, c);
        const std::vector<std::int32_t> ids = random_ids(rng, c, c.context);
        const attn::ModelTrace all = attn::trace_model(c, p, ids);
        const int k = std::uniform_int_distribution<int>(0, 2)(rng);
        const attn::ModelTrace one = attn::trace_model(c, p, ids, -1, {}, k);
        for (int l = 0; l < 3; ++l) {
            const attn::LayerTrace& a = all.layers[static_cast<std::size_t>(l)];
            const attn::LayerTrace& b = one.layers[static_cast<std::size_t>(l)];
            CHECK(b.attention.heads.size() == (l == k ? static_cast<std::size_t>(c.heads) : 0u));
            CHECK(max_diff(a.output, b.output) == 0.0f);
            CHECK(max_diff(a.attention.output, b.attention.output) == 0.0f);
            if (l == k)
                for (int h = 0; h < c.heads; ++h)
                    CHECK(max_diff(a.attention.heads[static_cast<std::size_t>(h)].weights,
                                   b.attention.heads[static_cast<std::size_t>(h)].weights) == 0.0f);
        }
        CHECK(max_diff(all.logits, one.logits) == 0.0f);
    }
    ModelConfig c;
    CHECK_THROWS_WITH(attn::trace_model(c, attn::Parameters(c), {1, 2}, -1, {}, 1), Contains("layer 1"));
}

TEST_CASE("recorder: the backward's gradient intermediates equal the double reference's, per layer and head", "[model][recorder]") {
    std::mt19937 rng(24);
    for (int trial = 0; trial < 60; ++trial) {
        const ModelConfig c = recorder_config(rng, true);
        const int T = std::uniform_int_distribution<int>(1, c.context)(rng);
        Batch b;
        b.batch = 1;
        b.length = T;
        b.ids = random_ids(rng, c, T);
        const int len = std::uniform_int_distribution<int>(1, T)(rng);
        if (len < T) b.lengths = {len};
        for (int t = 0; t < T; ++t)
            b.targets.push_back(t < len ? std::uniform_int_distribution<int>(-1, c.vocab - 1)(rng) : attn::kNoTarget);
        b.targets[0] = 0;
        attn::Model m(c);
        m.params() = random_params(rng, c);
        attn::Recorder rec;
        m.forward(b, {}, &rec);
        attn::Parameters g, g_plain;
        m.backward(g, nullptr, &rec);
        std::vector<double> ref;
        std::vector<std::vector<attn::ReferenceHeadGrads>> ref_heads;
        attn::reference_loss_and_grads(c, model_test::to_double(m.params()), b, &ref, &ref_heads);
        INFO(attn::model_config_json(c) << " T=" << T << " length=" << len);
        REQUIRE(rec.gradients.layers.size() == static_cast<std::size_t>(c.layers));
        for (int l = 0; l < c.layers; ++l)
            for (int h = 0; h < c.heads; ++h) {
                const attn::HeadGradTrace& f = rec.gradients.layers[static_cast<std::size_t>(l)].heads[static_cast<std::size_t>(h)];
                const attn::ReferenceHeadGrads& r = ref_heads[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)];
                INFO("layer " << l << " head " << h);
                CHECK(relative_error(f.d_output, r.d_output) < 1e-4);
                CHECK(relative_error(f.d_weights, r.d_weights) < 1e-4);
                CHECK(relative_error(f.d_scaled, r.d_scaled) < 1e-4);
                CHECK(relative_error(f.d_scores, r.d_scores) < 1e-4);
                CHECK(relative_error(f.d_query, r.d_query) < 1e-4);
                CHECK(relative_error(f.d_key, r.d_key) < 1e-4);
                CHECK(relative_error(f.d_value, r.d_value) < 1e-4);
            }
        // the recorder changes nothing of the gradients themselves
        m.forward(b);
        m.backward(g_plain);
        CHECK(g.flat() == g_plain.flat());
    }
}

TEST_CASE("recorder: the recorded d_scaled is the finite difference of the loss in the scaled scores", "[model][recorder]") {
    // ∂loss/∂s′_ij through the softmax: perturb one scaled score of the reference's
    // formula in double and compare with the fast path's recorded dS′ (one layer, one head)
    std::mt19937 rng(25);
    for (int trial = 0; trial < 10; ++trial) {
        ModelConfig c = sized_config(5, 4, 4, 1);
        c.layernorm = false;
        c.tied = true;
        c.causal = trial % 2 == 0;
        attn::Model m(c);
        m.params() = random_params(rng, c);
        Batch b;
        b.batch = 1;
        b.length = 4;
        b.ids = random_ids(rng, c, 4);
        b.targets = {1, 2, 3, 4};
        attn::Recorder rec;
        m.forward(b, {}, &rec);
        attn::Parameters g;
        m.backward(g, nullptr, &rec);
        const attn::HeadTrace& ht = rec.trace.layers[0].attention.heads[0];
        // loss as a function of the scaled scores S′ (masked softmax, ×V, ×W_O, residual, ×Eᵀ, cross-entropy), in double
        const attn::Matrix wo = m.params().view("layers.0.w_output"), e = m.params().view("embed");
        auto loss_of = [&](const Eigen::MatrixXd& s) {
            const int T = 4;
            Eigen::MatrixXd w = Eigen::MatrixXd::Zero(T, T);
            for (int i = 0; i < T; ++i) {
                double mx = -1e300, z = 0;
                for (int j = 0; j < T; ++j)
                    if (rec.trace.mask(i, j)) mx = std::max(mx, s(i, j));
                for (int j = 0; j < T; ++j)
                    if (rec.trace.mask(i, j)) z += std::exp(s(i, j) - mx);
                for (int j = 0; j < T; ++j) w(i, j) = rec.trace.mask(i, j) ? std::exp(s(i, j) - mx) / z : 0.0;
            }
            const Eigen::MatrixXd x = rec.trace.layers[0].input.cast<double>() + w * ht.value.cast<double>() * wo.cast<double>();
            const Eigen::MatrixXd logits = x * e.cast<double>().transpose();
            double loss = 0;
            for (int i = 0; i < T; ++i) {
                const double mx = logits.row(i).maxCoeff();
                loss += std::log((logits.row(i).array() - mx).exp().sum()) + mx - logits(i, b.targets[static_cast<std::size_t>(i)]);
            }
            return loss / T;
        };
        const Eigen::MatrixXd s = ht.scaled.cast<double>();
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) {
                Eigen::MatrixXd up = s, down = s;
                up(i, j) += 1e-5;
                down(i, j) -= 1e-5;
                const double fd = (loss_of(up) - loss_of(down)) / 2e-5;
                CHECK(rec.gradients.layers[0].heads[0].d_scaled(i, j) == Approx(fd).margin(1e-5));
            }
    }
}

TEST_CASE("recorder: under uniform attention and for an ablated head nothing reaches the scores", "[model][recorder]") {
    std::mt19937 rng(26);
    ModelConfig c = sized_config(6, 5, 4, 2, 1, 3);
    attn::Model m(c);
    m.params() = random_params(rng, c);
    Batch b;
    b.batch = 1;
    b.length = 5;
    b.ids = random_ids(rng, c, 5);
    b.targets = {1, 2, 3, 4, 5};
    attn::ForwardOptions o;
    o.head_enabled = {{true, false}};
    attn::Recorder rec;
    m.forward(b, o, &rec);
    attn::Parameters g;
    m.backward(g, nullptr, &rec);
    const attn::HeadGradTrace& off = rec.gradients.layers[0].heads[1];
    CHECK(off.d_output.cwiseAbs().maxCoeff() == 0.0f);
    CHECK(off.d_scaled.cwiseAbs().maxCoeff() == 0.0f);
    CHECK(off.d_value.cwiseAbs().maxCoeff() == 0.0f);
    CHECK(rec.gradients.layers[0].heads[0].d_scaled.cwiseAbs().maxCoeff() > 0.0f);

    o = {};
    o.uniform_attention = true;
    m.forward(b, o, &rec);
    m.backward(g, nullptr, &rec);
    for (const attn::HeadGradTrace& h : rec.gradients.layers[0].heads) {
        CHECK(h.d_scaled.cwiseAbs().maxCoeff() == 0.0f);
        CHECK(h.d_query.cwiseAbs().maxCoeff() == 0.0f);
        CHECK(h.d_weights.cwiseAbs().maxCoeff() > 0.0f);
        CHECK(h.d_value.cwiseAbs().maxCoeff() > 0.0f);
    }
    for (const attn::HeadTrace& h : rec.trace.layers[0].attention.heads)
        for (int i = 0; i < 5; ++i)
            for (int j = 0; j < 5; ++j) CHECK(h.weights(i, j) == 1.0f / 5.0f);
}

TEST_CASE("recorder: a recorder takes a batch of one sequence", "[model][recorder]") {
    ModelConfig c;
    attn::Model m(c);
    Batch b;
    b.batch = 2;
    b.length = 2;
    b.ids = {1, 2, 3, 4};
    b.targets = {1, 2, 3, 4};
    attn::Recorder rec;
    CHECK_THROWS_WITH(m.forward(b, {}, &rec), Contains("one sequence"));
}

TEST_CASE("model: a model that is only run keeps no backward state and needs no training limits", "[model][recorder]") {
    std::mt19937 rng(27);
    ModelConfig c;
    c.vocab = 9;
    c.context = 6;
    c.layers = 2;
    c.d_model = 8;
    attn::Model m(c, random_params(rng, c));
    Batch b;
    b.batch = 1;
    b.length = 6;
    b.ids = random_ids(rng, c, 6);
    b.targets = {1, 2, 3, 4, 5, 6};
    const attn::LossResult run = m.run(b);
    attn::Parameters g;
    CHECK_THROWS_WITH(m.backward(g), Contains("forward"));
    CHECK(g.size() == 0);  // nothing allocated
    const attn::LossResult trained = m.forward(b);
    CHECK(run.loss == trained.loss);
    const attn::ModelTrace tr = m.trace(b.ids);
    CHECK((tr.logits - m.logits()).cwiseAbs().maxCoeff() == 0.0f);
    CHECK_NOTHROW(m.backward(g));  // the trace runs on its own buffers: the training forward's stay

    // a model wider than the training limits runs (kMaxInference*), but does not train
    ModelConfig wide = c;
    wide.context = attn::kMaxModelContext + 8;
    attn::Model big(wide);
    b.length = 2;
    b.ids = {1, 2};
    b.targets = {1, 2};
    CHECK_NOTHROW(big.run(b));
    CHECK_THROWS_WITH(big.forward(b), Contains("context"));
    CHECK_THROWS_WITH(attn::Model(c, attn::Parameters(wide)), Contains("layout"));
}

TEST_CASE("trainer: a checkpoint loaded to be run allocates no gradients or AdamW moments until it trains", "[trainer][recorder]") {
    attn::TrainConfig tc = attn::default_recipe(attn::TaskKind::reverse).config;
    tc.batch = 4;
    attn::Trainer t(tc);
    CHECK(t.has_training_state());
    const std::unique_ptr<attn::Trainer> loaded = attn::Trainer::from_checkpoint(t.save());
    CHECK_FALSE(loaded->has_training_state());
    const attn::Example probe = loaded->task().probe();
    CHECK_NOTHROW(attn::trace_model(loaded->model().config(), loaded->model().params(), probe.ids, probe.length));
    CHECK_FALSE(loaded->has_training_state());
    loaded->step();
    CHECK(loaded->has_training_state());
    t.step();
    CHECK(t.model().params().flat() == loaded->model().params().flat());  // the same first step as a fresh optimizer
}

TEST_CASE("recorder: a trace whose every layer's maps would not fit is refused up front (too_large), naming the way out", "[model][recorder]") {
    ModelConfig c;  // small weights, long context, many layers: the T×T maps are what is large
    c.vocab = 10;
    c.context = 2048;
    c.layers = 48;
    c.d_model = 16;
    c.heads = 8;
    const attn::Parameters p(c);
    const std::vector<std::int32_t> ids(2048, 1);
    try {
        attn::trace_model(c, p, ids);
        FAIL("no error");
    } catch (const attn::Error& e) {
        CHECK(e.code() == attn::Error::Code::too_large);
        CHECK_THAT(e.what(), Contains("trace one layer"));
    }
}
