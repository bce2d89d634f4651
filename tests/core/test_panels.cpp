// Tests of the product matrices stored as the kernels' panels (Parameters::use_panels,
// which a loaded checkpoint gets): every number a model computes with them equals the
// row-major model's, bit for bit (the same kernel sums the same products in the same
// order; only the packing moved from every product to the load): the trace, the
// backward of one layer, a step by hand and its undo; the KV cache within float
// rounding (its row-major path is Eigen's product); the tensors read back row-major;
// what refuses panels says so.

#include "train/backward.hpp"
#include "kernels/gemm.hpp"
#include "model/generation.hpp"

#include "model_test_util.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

namespace {

using attn::ModelConfig;
using attn::Parameters;

/// GPT-2- and BERT-shaped tiny models: D = 4 (heads cut panels in half) and D = 8 (a
/// head is one panel); MLP widths 12 (W_in stays row-major: 12 is not a multiple of 8) and 16.
std::vector<ModelConfig> configs() {
    return {model_test::gpt2_options(model_test::sized_config(11, 8, 8, 2, 3, 12)),
            model_test::gpt2_options(model_test::sized_config(13, 7, 16, 2, 2, 16)),
            model_test::bert_options(model_test::sized_config(13, 8, 8, 2, 2, 12)),
            model_test::bert_options(model_test::sized_config(17, 6, 16, 2, 2, 16))};
}

Parameters as_panels(const Parameters& p) {
    Parameters q(p);
    q.use_panels();
    return q;
}

bool bert(const ModelConfig& c) { return c.family == "bert"; }

/// Targets as the pretrained backward's tests set them: the next token (GPT-2), two masked positions (BERT).
std::vector<std::int32_t> targets_of(const ModelConfig& c, const std::vector<std::int32_t>& ids) {
    std::vector<std::int32_t> t(ids.size(), attn::kNoTarget);
    if (bert(c)) {
        t[1] = 3;
        t[ids.size() - 2] = 5;
    } else {
        for (std::size_t i = 0; i + 1 < ids.size(); ++i) t[i] = ids[i + 1];
    }
    return t;
}

}  // namespace

TEST_CASE("panels: use_panels stores the blocks' product matrices as panels, matrix() reads every tensor back row-major",
          "[panels]") {
    std::mt19937 rng(4401);
    for (const ModelConfig& c : configs()) {
        const Parameters p = model_test::random_params(rng, c);
        const Parameters q = as_panels(p);
        CHECK(q.panels());
        CHECK_FALSE(p.panels());
        CHECK(q.size() == p.size());
        int stored = 0;
        for (const attn::ParamInfo& info : q.layout()) {
            INFO(info.name);
            CHECK(q.matrix(info.name) == p.view(info.name));
            const bool product = info.name.find(".w_") != std::string::npos && info.name.rfind("layers.", 0) == 0;
            CHECK(info.panels == (product && info.cols % 8 == 0));
            if (info.panels) {
                ++stored;
                CHECK_THROWS_WITH(q.view(info.name), Catch::Contains("stored as panels") && Catch::Contains(info.name));
                // element (r, c) sits where panel_index says
                for (int r = 0; r < info.rows; ++r)
                    for (int k = 0; k < info.cols; ++k)
                        REQUIRE(q.flat()[info.offset + attn::panel_index(info.rows, r, k)] == p.view(info.name)(r, k));
            } else {
                CHECK(q.view(info.name) == p.view(info.name));
            }
        }
        CHECK(stored >= 4 * c.layers);  // W_Q, W_K, W_V, W_O of every layer at least
    }
}

TEST_CASE("panels: a model with its matrices as panels traces every number of the row-major model, bit for bit",
          "[panels]") {
    std::mt19937 rng(4402);
    for (const ModelConfig& c : configs())
        for (int rep = 0; rep < 3; ++rep) {
            const Parameters p = model_test::random_params(rng, c);
            const Parameters q = as_panels(p);
            const std::vector<std::int32_t> ids = model_test::random_ids(rng, c, c.context - rep);
            const attn::ModelTrace a = attn::trace_model(c, p, ids), b = attn::trace_model(c, q, ids);
            INFO(c.family << " C " << c.d_model << " T " << ids.size());
            CHECK(a.logits == b.logits);
            CHECK(a.probabilities == b.probabilities);
            REQUIRE(a.layers.size() == b.layers.size());
            for (std::size_t l = 0; l < a.layers.size(); ++l) {
                CHECK(a.layers[l].output == b.layers[l].output);
                CHECK(a.layers[l].mlp_hidden == b.layers[l].mlp_hidden);
                CHECK(a.layers[l].attention.output == b.layers[l].attention.output);
                for (std::size_t h = 0; h < a.layers[l].attention.heads.size(); ++h) {
                    CHECK(a.layers[l].attention.heads[h].query == b.layers[l].attention.heads[h].query);
                    CHECK(a.layers[l].attention.heads[h].weights == b.layers[l].attention.heads[h].weights);
                }
            }
            // Model::run, a batch of one without a recorder
            attn::Model ma(c, Parameters(p)), mb(c, Parameters(q));
            attn::Batch batch;
            batch.batch = 1;
            batch.length = static_cast<int>(ids.size());
            batch.ids = ids;
            batch.targets = targets_of(c, ids);
            CHECK(ma.run(batch).loss == mb.run(batch).loss);
            CHECK(ma.logits() == mb.logits());
        }
}

TEST_CASE("panels: one layer's backward on panels equals the row-major model's, gradients and intermediates bit for bit",
          "[panels]") {
    std::mt19937 rng(4403);
    for (const ModelConfig& c : configs())
        for (int layer = 0; layer < c.layers; ++layer) {
            const Parameters p = model_test::random_params(rng, c);
            attn::Model ma(c, Parameters(p)), mb(c, as_panels(p));
            const std::vector<std::int32_t> ids = model_test::random_ids(rng, c, c.context);
            const std::vector<std::int32_t> targets = targets_of(c, ids);
            const attn::PretrainedBackward a = attn::pretrained_backward(ma, ids, targets, layer);
            const attn::PretrainedBackward b = attn::pretrained_backward(mb, ids, targets, layer);
            INFO(c.family << " C " << c.d_model << " layer " << layer);
            CHECK(a.loss == b.loss);
            CHECK(a.grads.flat == b.grads.flat);
            for (const attn::ParamInfo& g : b.grads.layout) CHECK_FALSE(g.panels);  // gradients stay row-major
            const attn::LayerGradTrace &ga = a.recorder.gradients.layers[static_cast<std::size_t>(layer)],
                                       &gb = b.recorder.gradients.layers[static_cast<std::size_t>(layer)];
            CHECK(ga.d_input == gb.d_input);
            REQUIRE(ga.heads.size() == gb.heads.size());
            for (std::size_t h = 0; h < ga.heads.size(); ++h) {
                CHECK(ga.heads[h].d_scores == gb.heads[h].d_scores);
                CHECK(ga.heads[h].d_query == gb.heads[h].d_query);
            }
            // the CLI's JSON of the backward shows the weights row-major: the same document
            CHECK(attn::pretrained_backward_json(ma.params(), a) == attn::pretrained_backward_json(mb.params(), b));
        }
}

TEST_CASE("panels: a step by hand moves the same weights as on the row-major model, and its undo restores them exactly",
          "[panels]") {
    std::mt19937 rng(4404);
    for (const ModelConfig& c : configs())
        for (const int head : {-1, 0, 1}) {
            const Parameters p = model_test::random_params(rng, c);
            attn::Model ma(c, Parameters(p)), mb(c, as_panels(p));
            const std::vector<float> stored = mb.params().flat();
            const std::vector<std::int32_t> ids = model_test::random_ids(rng, c, c.context);
            const std::vector<std::int32_t> targets = targets_of(c, ids);
            const int layer = c.layers - 1;
            const attn::PretrainedBackward a = attn::pretrained_backward(ma, ids, targets, layer);
            const attn::PretrainedBackward b = attn::pretrained_backward(mb, ids, targets, layer);
            attn::SgdUndo ua, ub;
            const double sa = attn::sgd_step_layer(c, ma.params(), a.grads, 0.05, head, &ua);
            const double sb = attn::sgd_step_layer(c, mb.params(), b.grads, 0.05, head, &ub);
            INFO(c.family << " C " << c.d_model << " head " << head);
            CHECK(sa == Approx(sb).epsilon(1e-12));
            for (const attn::ParamInfo& info : ma.params().layout()) {
                INFO(info.name);
                CHECK(mb.params().matrix(info.name) == ma.params().matrix(info.name));
            }
            CHECK(ua.old.size() == ub.old.size());
            // the moved model computes what the moved row-major model computes
            CHECK(attn::pretrained_backward(ma, ids, targets, layer).loss == attn::pretrained_backward(mb, ids, targets, layer).loss);
            attn::undo_sgd(mb.params(), ub);
            CHECK(mb.params().flat() == stored);
        }
}

TEST_CASE("panels: the KV cache on panels gives the row-major cache's next-token logits", "[panels]") {
    std::mt19937 rng(4405);
    for (const ModelConfig& c : configs()) {
        if (!c.causal) continue;
        const Parameters p = model_test::random_params(rng, c);
        attn::Model ma(c, Parameters(p)), mb(c, as_panels(p));
        attn::KvCache ka(ma), kb(mb);
        const std::vector<std::int32_t> ids = model_test::random_ids(rng, c, c.context);
        const attn::ModelTrace full = attn::trace_model(c, p, ids);
        for (std::size_t t = 0; t < ids.size(); ++t) {
            ka.append(ids[t]);
            kb.append(ids[t]);
            const double scale = 1e-5 * (1.0 + ka.logits().cwiseAbs().maxCoeff());
            INFO("position " << t);
            CHECK((ka.logits() - kb.logits()).cwiseAbs().maxCoeff() <= scale);
            CHECK((kb.logits() - full.logits.row(static_cast<Eigen::Index>(t))).cwiseAbs().maxCoeff() <= scale);
        }
        // the same ids as one prompt on panels: the last position's logits
        attn::KvCache prompt(mb);
        prompt.append(ids);
        CHECK((prompt.logits() - full.logits.bottomRows(1)).cwiseAbs().maxCoeff() <= 1e-5 * (1.0 + prompt.logits().cwiseAbs().maxCoeff()));
    }
}

TEST_CASE("panels: the trainer's full step refuses panels by name and leaves the weights as they were", "[panels]") {
    std::mt19937 rng(4406);
    const ModelConfig c = configs().front();
    Parameters q = as_panels(model_test::random_params(rng, c));
    const std::vector<float> before = q.flat();
    const Parameters g(c);
    CHECK_THROWS_WITH(attn::sgd_step(c, q, g, 0.1, -1, 0), Catch::Contains("panels"));
    CHECK(q.flat() == before);
    // the panel product refuses a width that is not whole panels
    attn::Matrix out;
    const attn::Matrix a = attn::Matrix::Ones(2, 3);
    const std::vector<float> w(3 * 12, 1.0f);
    CHECK_THROWS_WITH(attn::gemm_panels(a, w.data(), 3, 12, out), Catch::Contains("8 columns"));
}
