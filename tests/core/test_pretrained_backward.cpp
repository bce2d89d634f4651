// Tests of the backward of a loaded (pretrained) model without a Trainer
// (Model::learn_forward, Model::backward_layer, backward.hpp pretrained_*): one
// layer's parameter gradients on tiny random GPT-2- and BERT-shaped models
// against central finite differences of the double reference's loss
// (model_reference.cpp), against the full Model::backward, and the gradient
// intermediates against the reference's; the default targets; the memory
// estimate and its refusal; the step by hand and its exact undo.

#include "train/backward.hpp"

#include "model_test_util.hpp"
#include "peak_memory.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

using attn::ModelConfig;

ModelConfig tiny_gpt2() { return model_test::gpt2_options(model_test::sized_config(11, 8, 8, 2, 3, 12)); }
ModelConfig tiny_bert() { return model_test::bert_options(model_test::sized_config(13, 8, 8, 2, 2, 12)); }

struct Case {
    ModelConfig config;
    std::vector<std::int32_t> ids, targets;
};

/// A GPT-2-shaped case (next token everywhere but the last) or a BERT-shaped one (two masked positions).
Case make_case(std::mt19937& rng, bool bert) {
    Case k;
    k.config = bert ? tiny_bert() : tiny_gpt2();
    k.ids = model_test::random_ids(rng, k.config, 6);
    k.targets.assign(k.ids.size(), attn::kNoTarget);
    if (bert) {
        k.targets[1] = 3;
        k.targets[4] = 7;
    } else {
        for (std::size_t t = 0; t + 1 < k.ids.size(); ++t) k.targets[t] = k.ids[t + 1];
    }
    return k;
}

attn::Batch batch_of(const Case& k) {
    attn::Batch b;
    b.batch = 1;
    b.length = static_cast<int>(k.ids.size());
    b.ids = k.ids;
    b.targets = k.targets;
    return b;
}

/// Layer 0's backward on `ids` (the next token as each target): checks learn_memory bounds the
/// peak it allocates; returns that peak.
std::int64_t check_learn_memory(attn::Model& m, const std::vector<std::int32_t>& ids) {
    std::vector<std::int32_t> targets(ids.begin() + 1, ids.end());
    targets.push_back(attn::kNoTarget);
    const int T = static_cast<int>(ids.size());
    const std::int64_t estimate = attn::learn_memory(m.config(), T);
    const std::int64_t used = test_memory::peak_memory_of([&] {
        const attn::PretrainedBackward b = attn::pretrained_backward(m, ids, targets, 0);
        CHECK(b.loss > 0);
    });
    INFO("T = " << T << ": " << used << " bytes used, " << estimate << " estimated");
    CHECK(estimate >= used);
    return used;
}

}  // namespace

TEST_CASE("pretrained backward: one layer's gradients equal central finite differences of the double loss, GPT-2 and BERT shapes",
          "[pretrained_backward]") {
    std::mt19937 rng(2301);
    int checked = 0;
    for (const bool bert : {false, true})
        for (int layer = 0; layer < (bert ? 2 : 3); ++layer) {
            const Case k = make_case(rng, bert);
            const attn::Parameters p = model_test::random_params(rng, k.config);
            attn::Model m(k.config, attn::Parameters(p));
            const attn::PretrainedBackward b = attn::pretrained_backward(m, k.ids, k.targets, layer);
            const std::vector<double> w = model_test::to_double(p);
            const attn::Batch batch = batch_of(k);
            CHECK(std::fabs(b.loss - attn::reference_loss_and_grads(k.config, w, batch, nullptr)) < 1e-5);
            for (const attn::ParamInfo& g : b.grads.layout) {
                const attn::ParamInfo& at = p.info(g.name);
                double scale = 1e-3;
                for (std::size_t i = 0; i < g.size(); ++i) scale = std::max(scale, std::fabs(static_cast<double>(b.grads.flat[g.offset + i])));
                for (int n = 0; n < 4; ++n) {
                    const std::size_t i = std::uniform_int_distribution<std::size_t>(0, g.size() - 1)(rng);
                    std::vector<double> q = w;
                    const double h = 1e-5;
                    q[at.offset + i] = w[at.offset + i] + h;
                    const double up = attn::reference_loss_and_grads(k.config, q, batch, nullptr);
                    q[at.offset + i] = w[at.offset + i] - h;
                    const double down = attn::reference_loss_and_grads(k.config, q, batch, nullptr);
                    const double fd = (up - down) / (2 * h);
                    INFO((bert ? "bert " : "gpt2 ") << g.name << "[" << i << "] fd " << fd << " ours " << b.grads.flat[g.offset + i]);
                    CHECK(std::fabs(fd - b.grads.flat[g.offset + i]) <= 1e-3 * scale);
                    ++checked;
                }
            }
            // no tensor of another layer is in the gradients
            for (const attn::ParamInfo& g : b.grads.layout) CHECK(g.name.rfind("layers." + std::to_string(layer) + ".", 0) == 0);
        }
    CHECK(checked >= 5 * 16 * 4 - 64);
}

TEST_CASE("pretrained backward: the asked layer's gradients equal the full Model::backward's, bit for bit", "[pretrained_backward]") {
    std::mt19937 rng(2302);
    for (const bool bert : {false, true})
        for (int layer = 0; layer < 2; ++layer) {
            const Case k = make_case(rng, bert);
            const attn::Parameters p = model_test::random_params(rng, k.config);
            attn::Model m(k.config, attn::Parameters(p));
            const attn::PretrainedBackward b = attn::pretrained_backward(m, k.ids, k.targets, layer);
            attn::Model full(k.config, attn::Parameters(p));
            full.forward(batch_of(k));
            attn::Parameters all;
            full.backward(all);
            double worst = 0;
            for (const attn::ParamInfo& g : b.grads.layout) {
                const auto ours = b.grads.view(g.name);
                const auto theirs = all.view(g.name);
                worst = std::max(worst, static_cast<double>((ours - theirs).cwiseAbs().maxCoeff()));
            }
            INFO((bert ? "bert" : "gpt2") << " layer " << layer);
            CHECK(worst <= 1e-6);
            CHECK(b.grads.flat.size() < all.size() / 2);  // one layer's, not every parameter's
        }
}

TEST_CASE("pretrained backward: the asked layer's heads' intermediates equal the double reference's, with and without the scale",
          "[pretrained_backward]") {
    std::mt19937 rng(2303);
    for (const bool bert : {false, true})
        for (const int scale : {1, 0}) {
            const Case k = make_case(rng, bert);
            const attn::Parameters p = model_test::random_params(rng, k.config);
            attn::Model m(k.config, attn::Parameters(p));
            const int layer = 1;
            const attn::PretrainedBackward b = attn::pretrained_backward(m, k.ids, k.targets, layer, scale);
            ModelConfig rc = k.config;
            rc.scale = scale == 1;
            std::vector<double> g;
            std::vector<std::vector<attn::ReferenceHeadGrads>> heads;
            const double loss = attn::reference_loss_and_grads(rc, model_test::to_double(p), batch_of(k), &g, &heads);
            INFO((bert ? "bert" : "gpt2") << " scale " << scale);
            CHECK(std::fabs(b.loss - loss) < 1e-5);
            CHECK(b.config.scale == (scale == 1));
            const auto& lt = b.recorder.gradients.layers[static_cast<std::size_t>(layer)];
            REQUIRE(lt.heads.size() == static_cast<std::size_t>(k.config.heads));
            for (int h = 0; h < k.config.heads; ++h) {
                const attn::HeadGradTrace& o = lt.heads[static_cast<std::size_t>(h)];
                const attn::ReferenceHeadGrads& r = heads[static_cast<std::size_t>(layer)][static_cast<std::size_t>(h)];
                CHECK(model_test::relative_error(o.d_output, r.d_output) < 1e-4);
                CHECK(model_test::relative_error(o.d_weights, r.d_weights) < 1e-4);
                CHECK(model_test::relative_error(o.d_scaled, r.d_scaled) < 1e-4);
                CHECK(model_test::relative_error(o.d_scores, r.d_scores) < 1e-4);
                CHECK(model_test::relative_error(o.d_query, r.d_query) < 1e-4);
                CHECK(model_test::relative_error(o.d_key, r.d_key) < 1e-4);
                CHECK(model_test::relative_error(o.d_value, r.d_value) < 1e-4);
            }
            // the parameter gradients of the layer against the reference's too (the scale switch included)
            for (const attn::ParamInfo& info : b.grads.layout) {
                const attn::ParamInfo& at = p.info(info.name);
                INFO(info.name);
                CHECK(model_test::relative_error(b.grads.flat.data() + info.offset, g.data() + at.offset, info.size()) < 1e-3);
            }
            // the layers below the asked one are not visited
            CHECK(b.recorder.gradients.layers[0].heads.empty());
        }
}

TEST_CASE("pretrained backward: default targets are the next token for GPT-2 and the model's own top fill at each [MASK] for BERT",
          "[pretrained_backward]") {
    std::mt19937 rng(2304);
    {
        const ModelConfig c = tiny_gpt2();
        attn::Model m(c, model_test::random_params(rng, c));
        const std::vector<std::int32_t> ids{3, 1, 4, 1, 5};
        CHECK(attn::pretrained_default_targets(m, ids, -1) == std::vector<std::int32_t>{1, 4, 1, 5, attn::kNoTarget});
        CHECK_THROWS_WITH(attn::pretrained_default_targets(m, {3}, -1), Catch::Contains("one-token sentence"));
    }
    {
        const ModelConfig c = tiny_bert();
        attn::Model m(c, model_test::random_params(rng, c));
        const std::int32_t mask = 4;
        const std::vector<std::int32_t> ids{2, 7, mask, 9, mask, 3};
        const std::vector<std::int32_t> t = attn::pretrained_default_targets(m, ids, mask);
        const attn::ModelTrace tr = attn::trace_model(c, m.params(), ids);
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if (ids[i] != mask) {
                CHECK(t[i] == attn::kNoTarget);
                continue;
            }
            Eigen::Index best = 0;
            tr.probabilities.row(static_cast<Eigen::Index>(i)).maxCoeff(&best);
            CHECK(t[i] == best);
        }
        try {
            attn::pretrained_default_targets(m, {2, 7, 9, 3}, mask);
            FAIL("a BERT sentence without [MASK] was accepted");
        } catch (const attn::Error& e) {
            CHECK(e.code() == attn::Error::Code::bad_input);
            CHECK_THAT(e.what(), Catch::Contains("[MASK]") && Catch::Contains("write [MASK] in place of a word"));
        }
    }
}

TEST_CASE("pretrained backward: the memory estimate fits GPT-2 small's short sentences and refuses what is too large by name",
          "[pretrained_backward]") {
    ModelConfig g = model_test::gpt2_options(model_test::sized_config(50257, 1024, 768, 12, 12, 3072));
    const std::int64_t weights = static_cast<std::int64_t>(124439808) * 4;  // GPT-2 small's 124,439,808 parameters
    const std::int64_t short_sentence = attn::learn_memory(g, 64);
    CHECK(short_sentence < attn::kMaxLearnBytes);
    CHECK(weights + short_sentence < (std::int64_t{4} << 30));  // the wasm module's 4 GiB
    CHECK(attn::learn_memory(g, 1024) > attn::kMaxLearnBytes);   // the full context is refused
    CHECK(attn::learn_memory(g, 128) > attn::learn_memory(g, 64));
    // the refusal comes before anything is allocated: a wide model, zero weights, a long input
    ModelConfig wide = model_test::gpt2_options(model_test::sized_config(60000, 2048, 64, 2, 1, 0));
    attn::Model m(wide);
    std::vector<std::int32_t> ids(2048, 1), targets(2048, 2);
    try {
        attn::pretrained_backward(m, ids, targets, 0);
        FAIL("a backward above the limit was accepted");
    } catch (const attn::Error& e) {
        CHECK(e.code() == attn::Error::Code::too_large);
        CHECK_THAT(e.what(), Catch::Contains("2048 tokens") && Catch::Contains("shorter sentence"));
    }
}

TEST_CASE("pretrained backward: a bad layer or a backward before its forward is refused with a message", "[pretrained_backward]") {
    std::mt19937 rng(2305);
    const Case k = make_case(rng, false);
    attn::Model m(k.config, model_test::random_params(rng, k.config));
    attn::LayerGradients g;
    CHECK_THROWS_WITH(m.backward_layer(0, g), Catch::Contains("needs a learn_forward() first"));
    CHECK_THROWS_WITH(attn::pretrained_backward(m, k.ids, k.targets, 3), Catch::Contains("layer 3 is not in this model"));
    CHECK_THROWS_WITH(attn::pretrained_backward(m, k.ids, std::vector<std::int32_t>(k.ids.size(), attn::kNoTarget), 0),
                      Catch::Contains("no position has a target"));
}

TEST_CASE("pretrained backward: one step by hand on a layer's attention lowers the loss and its undo restores the weights exactly",
          "[pretrained_backward][sgd]") {
    std::mt19937 rng(2306);
    for (const bool bert : {false, true})
        for (const int head : {-1, 1}) {
            const Case k = make_case(rng, bert);
            const attn::Parameters p = model_test::random_params(rng, k.config);
            attn::Model m(k.config, attn::Parameters(p));
            const int layer = 1;
            const attn::PretrainedBackward b = attn::pretrained_backward(m, k.ids, k.targets, layer);
            attn::SgdUndo undo;
            const double size = attn::sgd_step_layer(m.config(), m.params(), b.grads, 0.05, head, &undo);
            CHECK(size > 0);
            const double after = attn::pretrained_backward(m, k.ids, k.targets, layer).loss;
            INFO((bert ? "bert" : "gpt2") << " head " << head << ": " << b.loss << " -> " << after);
            CHECK(after < b.loss);
            // only the layer's attention moved (and with head ≥ 0 only that head's share)
            std::size_t moved = 0;
            for (std::size_t i = 0; i < p.size(); ++i)
                if (m.params().flat()[i] != p.flat()[i]) {
                    ++moved;
                    bool inside = false;
                    for (const auto& [lo, hi] : undo.ranges) inside = inside || (i >= lo && i < hi);
                    CHECK(inside);
                }
            CHECK(moved > 0);
            attn::undo_sgd(m.params(), undo);
            CHECK(m.params().flat() == p.flat());
            CHECK(attn::pretrained_backward(m, k.ids, k.targets, layer).loss == b.loss);
        }
    // the refusals: a bad rate, a head outside the model
    const Case k = make_case(rng, false);
    attn::Model m(k.config, model_test::random_params(rng, k.config));
    const attn::PretrainedBackward b = attn::pretrained_backward(m, k.ids, k.targets, 0);
    const std::vector<float> before = m.params().flat();
    CHECK_THROWS_WITH(attn::sgd_step_layer(m.config(), m.params(), b.grads, 0, -1), Catch::Contains("learning rate"));
    CHECK_THROWS_WITH(attn::sgd_step_layer(m.config(), m.params(), b.grads, 0.1, 2), Catch::Contains("head 2 is not in this model"));
    CHECK(m.params().flat() == before);
}

TEST_CASE("pretrained backward: learn_memory is an upper bound of what the forward and backward of one layer allocate",
          "[pretrained_backward][memory]") {
    // a wide vocabulary and many heads, so the T×V and T×T buffers are what is measured
    const ModelConfig c = model_test::gpt2_options(model_test::sized_config(20000, 256, 64, 8, 2, 128));
    std::mt19937 rng(2307);
    const attn::Parameters p = model_test::random_params(rng, c, 0.1f);
    attn::Model m(c, attn::Parameters(p));
    for (const int T : {32, 256}) {
        const std::vector<std::int32_t> ids = model_test::random_ids(rng, c, T);
        const std::int64_t used = check_learn_memory(m, ids);
        CHECK(used > std::int64_t{T} * c.vocab * 4);  // the measure sees at least one T×V buffer
    }
}

TEST_CASE("pretrained backward: learn_memory and run_memory bound what a modern model allocates (wide heads, GQA, "
          "qk_norm, rope, the gated MLP)",
          "[pretrained_backward][memory][modern]") {
    // Q wider than the stream (H·D = 2C), K and V narrower (H_kv = H/4), the q/k norms, RMSNorm
    // and the gated MLP: the buffers the modern options add or widen
    ModelConfig c = model_test::sized_config(20000, 256, 64, 8, 2, 128);
    c.causal = true;
    c.layernorm = true;
    c.rmsnorm = true;
    c.positional = attn::Positional::rope;
    c.kv_heads = 2;
    c.head_dim = 16;
    c.qk_norm = true;
    c.qkv_bias = true;
    c.gated_mlp = true;
    c.activation = attn::Activation::silu;
    std::mt19937 rng(2308);
    const attn::Parameters p = model_test::random_params(rng, c, 0.1f);
    attn::Model m(c, attn::Parameters(p));
    for (const int T : {32, 256}) {
        const std::vector<std::int32_t> ids = model_test::random_ids(rng, c, T);
        const std::int64_t used = check_learn_memory(m, ids);
        CHECK(used > std::int64_t{T} * c.vocab * 4);  // the measure sees at least one T×V buffer
        attn::TraceKeep keep;  // every layer's heads and vectors, the logits
        const std::int64_t run_estimate = attn::run_memory(c, 1, T, &keep);
        const std::int64_t run_used = test_memory::peak_memory_of([&] {
            const attn::ModelTrace tr = attn::trace_model(c, p, ids, -1, {}, keep);
            CHECK(tr.layers[1].attention.heads[7].key_before_rope.rows() == T);
        });
        INFO("trace: " << run_used << " bytes used, " << run_estimate << " estimated");
        CHECK(run_estimate >= run_used);
    }
}
