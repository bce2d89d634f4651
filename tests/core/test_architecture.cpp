// Tests of the architecture options of ModelConfig (model.hpp, pretrained.hpp):
// biases on Q/K/V/O, GELU erf or tanh, LayerNorm eps, pre-LN or post-LN,
// token-type embeddings, the embedding LayerNorm, BERT's MLM output transform,
// the output bias, tied or separate output. Each one: the fast path against
// the double reference, the reference against central finite differences, the
// per-layer trace against the batched forward, the layout's canonical names,
// the config JSON, and the limits of a model that is run vs trained.

#include "model/layers.hpp"
#include "model/model.hpp"
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

using namespace model_test;

namespace {

ModelConfig gpt2_like() { return gpt2_options(sized_config(11, 6, 8, 2, 2, 12)); }

ModelConfig bert_like() { return bert_options(sized_config(11, 6, 8, 2, 2, 12)); }

}  // namespace

TEST_CASE("architecture: the layout gives GPT-2's and BERT's tensors their canonical names, in order", "[model][arch]") {
    std::vector<std::string> names;
    for (const auto& p : attn::parameter_layout(gpt2_like())) names.push_back(p.name);
    std::vector<std::string> want = {"embed", "pos"};
    const std::vector<std::string> gpt2_layer = {"ln1.gain", "ln1.bias", "w_query", "b_query", "w_key",
                                                 "b_key",    "w_value",  "b_value", "w_output", "b_output",
                                                 "ln2.gain", "ln2.bias", "mlp.w_in", "mlp.b_in", "mlp.w_out",
                                                 "mlp.b_out"};
    for (int l = 0; l < 2; ++l)
        for (const auto& n : gpt2_layer) want.push_back("layers." + std::to_string(l) + "." + n);
    want.insert(want.end(), {"final_ln.gain", "final_ln.bias"});
    CHECK(names == want);

    names.clear();
    for (const auto& p : attn::parameter_layout(bert_like())) names.push_back(p.name);
    want = {"embed", "pos", "token_type", "embed_ln.gain", "embed_ln.bias"};
    for (int l = 0; l < 2; ++l)
        for (const auto& n : gpt2_layer) want.push_back("layers." + std::to_string(l) + "." + n);
    want.insert(want.end(), {"head.w_transform", "head.b_transform", "head.ln.gain", "head.ln.bias", "unembed_bias"});
    CHECK(names == want);  // post-LN: no final_ln

    const attn::Parameters p(bert_like());
    CHECK(p.view("token_type").rows() == 2);
    CHECK(p.view("head.w_transform").rows() == 8);
    CHECK(p.info("unembed_bias").vector);
    CHECK(p.info("unembed_bias").cols == 11);
    CHECK(p.info("layers.0.b_query").vector);
    CHECK_FALSE(p.info("layers.0.b_query").decay);
    CHECK(p.info("token_type").decay);
    CHECK(p.info("head.w_transform").decay);
}

TEST_CASE("architecture: the slots of the layer kinds point at the tensors of the same names", "[model][arch]") {
    for (const ModelConfig& c : {gpt2_like(), bert_like()}) {
        attn::Parameters p(c);
        for (std::size_t i = 0; i < p.flat().size(); ++i) p.flat()[i] = static_cast<float>(i);
        const attn::ParamSlots slots = attn::resolve_slots(c);
        const attn::ParamPtrs w = attn::bind(slots, static_cast<const float*>(p.flat().data()));
        CHECK(w.embed == p.view("embed").data());
        CHECK(w.layers[1].b_value == p.view("layers.1.b_value").data());
        CHECK(w.layers[0].w_out == p.view("layers.0.mlp.w_out").data());
        if (c.norm == attn::Norm::post) {
            CHECK(w.final_ln_gain == nullptr);
            CHECK(w.head_ln_bias == p.view("head.ln.bias").data());
            CHECK(w.unembed_bias == p.view("unembed_bias").data());
            CHECK(w.token_type == p.view("token_type").data());
        } else {
            CHECK(w.final_ln_bias == p.view("final_ln.bias").data());
            CHECK(w.token_type == nullptr);
        }
    }
}

TEST_CASE("architecture: GELU's tanh form is GPT-2's gelu_new, its erf form the exact one", "[model][arch]") {
    // values of 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))) and 0.5·x·(1 + erf(x/√2)), computed in Python
    CHECK(attn::activation(attn::Activation::gelu_tanh, 1.0f) == Approx(0.8411919906082768).epsilon(1e-6));
    CHECK(attn::activation(attn::Activation::gelu_tanh, -0.5f) == Approx(-0.15428599017485606).epsilon(1e-6));
    CHECK(attn::activation(attn::Activation::gelu_tanh, 2.5f) == Approx(2.484915733910001).epsilon(1e-6));
    CHECK(attn::activation(attn::Activation::gelu_erf, 1.0f) == Approx(0.8413447460685429).epsilon(1e-6));
    CHECK(attn::activation(attn::Activation::gelu_erf, 2.5f) == Approx(2.4844758366855597).epsilon(1e-6));
    for (const attn::Activation a : {attn::Activation::gelu_erf, attn::Activation::gelu_tanh})
        for (float x = -4.0f; x <= 4.0f; x += 0.37f) {
            const double h = 1e-3;
            const double fd = (attn::activation(a, static_cast<float>(x + h)) - attn::activation(a, static_cast<float>(x - h))) / (2 * h);
            CHECK(attn::activation_grad(a, x) == Approx(fd).margin(2e-3));
        }
}

TEST_CASE("architecture: the reference's gradients equal central finite differences under every option", "[model][arch]") {
    std::mt19937 rng(2026);
    CHECK(check_reference_by_finite_differences(rng, random_arch_config, 40, 2) > 500);
}

TEST_CASE("architecture: fast loss and gradients match the double reference under every option", "[model][arch]") {
    std::mt19937 rng(77);
    int post = 0, transform = 0, bias = 0;
    for (int trial = 0; trial < 120; ++trial) {
        const ModelConfig c = random_arch_config(rng);
        post += c.norm == attn::Norm::post;
        transform += c.output_transform;
        bias += c.attn_bias;
        const Batch batch = random_batch(rng, c, trial % 3 == 0);
        attn::Model m(c);
        m.params() = random_params(rng, c);
        const ReferenceComparison r = compare_with_reference(m, batch);
        INFO(describe(c));
        CHECK(r.loss_error < 1e-5);
        check_gradients(r, 2e-4);
    }
    CHECK(post > 10);
    CHECK(transform > 10);
    CHECK(bias > 10);
}

TEST_CASE("architecture: GPT-2- and BERT-shaped models match the reference", "[model][arch]") {
    std::mt19937 rng(8);
    for (const ModelConfig& c : {gpt2_like(), bert_like()}) {
        Batch b;
        b.batch = 2;
        b.length = 6;
        for (int i = 0; i < 12; ++i) {
            b.ids.push_back(std::uniform_int_distribution<int>(0, 10)(rng));
            b.targets.push_back(std::uniform_int_distribution<int>(-1, 10)(rng));
        }
        b.targets[0] = 3;
        attn::Model m(c);
        m.params() = random_params(rng, c);
        const ReferenceComparison r = compare_with_reference(m, b);
        INFO(c.family);
        CHECK(r.loss == Approx(r.reference_loss).epsilon(1e-5));
        check_gradients(r, 2e-4);
    }
}

TEST_CASE("architecture: post-LN normalises each layer's output, pre-LN leaves the stream unnormalised", "[model][arch]") {
    std::mt19937 rng(3);
    ModelConfig c = bert_like();
    c.output_transform = false;
    attn::Parameters p = random_params(rng, c, 0.5f);
    // unit gains and zero biases in every block's LayerNorms: LN2's output rows have mean 0 and variance 1
    for (const auto& info : p.layout())
        if (info.name.find(".ln2.") != std::string::npos || info.name.find(".ln1.") != std::string::npos)
            for (std::size_t i = info.offset; i < info.offset + info.size(); ++i)
                p.flat()[i] = info.name.find(".gain") != std::string::npos ? 1.0f : 0.0f;
    const std::vector<std::int32_t> ids = {1, 4, 2, 7, 0};
    const attn::ModelTrace tr = attn::trace_model(c, p, ids);
    for (const attn::LayerTrace& lt : tr.layers) {
        for (int t = 0; t < 5; ++t) {
            const auto row = lt.output.row(t);
            const double mean = row.mean();
            const double var = (row.array() - mean).square().mean();
            CHECK(mean == Approx(0.0).margin(1e-5));
            CHECK(var == Approx(1.0).epsilon(1e-4));
            // residual = input + attention output, before LN1 (post-LN: the attention reads the stream itself)
            CHECK((lt.residual.row(t) - lt.input.row(t) - lt.attention.output.row(t)).cwiseAbs().maxCoeff() < 1e-5f);
        }
        CHECK((lt.normed - lt.input).cwiseAbs().maxCoeff() == 0.0f);
    }
    CHECK(tr.token_type.rows() == 5);
    CHECK(tr.embed_normed.rows() == 5);
    CHECK((tr.final_normed - tr.layers.back().output).cwiseAbs().maxCoeff() == 0.0f);  // no final_ln
}

TEST_CASE("architecture: the token type adds row 0 of its table to every position", "[model][arch]") {
    std::mt19937 rng(4);
    ModelConfig c = gpt2_like();
    c.token_types = 2;
    const attn::Parameters p = random_params(rng, c);
    const attn::ModelTrace tr = attn::trace_model(c, p, {3, 1, 4});
    for (int t = 0; t < 3; ++t) {
        CHECK((tr.token_type.row(t) - p.view("token_type").row(0)).cwiseAbs().maxCoeff() == 0.0f);
        const attn::Matrix sum = tr.embeddings.row(t) + tr.positional.row(t) + tr.token_type.row(t);
        CHECK((tr.layers[0].input.row(t) - sum).cwiseAbs().maxCoeff() < 1e-6f);
    }
}

TEST_CASE("architecture: the per-layer trace equals the batched forward under every option", "[model][arch]") {
    std::mt19937 rng(15);
    for (int trial = 0; trial < 40; ++trial) {
        const ModelConfig c = random_arch_config(rng);
        const Batch b = random_batch(rng, c, true);
        attn::Model m(c);
        m.params() = random_params(rng, c);
        m.forward(b);
        check_trace_matches_batch(m, b, attn::ForwardOptions{}, "defaults");
    }
}

TEST_CASE("architecture: the config JSON carries every option, and old JSON keeps today's defaults", "[model][arch]") {
    for (const ModelConfig& c : {gpt2_like(), bert_like()}) {
        const ModelConfig back = attn::model_config_from_json(attn::model_config_json(c));
        CHECK(back.attn_bias == c.attn_bias);
        CHECK(back.activation == c.activation);
        CHECK(back.ln_eps == c.ln_eps);
        CHECK(back.norm == c.norm);
        CHECK(back.token_types == c.token_types);
        CHECK(back.embed_layernorm == c.embed_layernorm);
        CHECK(back.output_transform == c.output_transform);
        CHECK(back.output_bias == c.output_bias);
        CHECK(back.family == c.family);
        CHECK(attn::model_config_json(back) == attn::model_config_json(c));
    }
    const ModelConfig old = attn::model_config_from_json(
        R"({"vocab":9,"context":5,"layers":1,"d_model":8,"heads":2,"mlp":0,"layernorm":true,"positional":"learned","causal":true,"scale":true,"tied":false})");
    const ModelConfig d;
    CHECK(old.attn_bias == d.attn_bias);
    CHECK(old.activation == attn::Activation::gelu_erf);
    CHECK(old.ln_eps == 1e-5f);
    CHECK(old.norm == attn::Norm::pre);
    CHECK(old.token_types == 0);
    CHECK_FALSE(old.embed_layernorm);
    CHECK_FALSE(old.output_transform);
    CHECK_FALSE(old.output_bias);
    CHECK(old.family.empty());
    // our own models' JSON is unchanged: no new keys at the defaults
    CHECK(attn::model_config_json(old).find("\"norm\"") == std::string::npos);
    CHECK_THROWS_WITH(attn::model_config_from_json(R"({"norm":"middle"})"), Contains("norm"));
    CHECK_THROWS_WITH(attn::model_config_from_json(R"({"activation":"relu"})"), Contains("activation"));
}

TEST_CASE("architecture: a model that is run has the inference limits, a model that is trained today's", "[model][arch]") {
    ModelConfig gpt2;  // GPT-2 small
    gpt2.vocab = 50257;
    gpt2.context = 1024;
    gpt2.layers = 12;
    gpt2.d_model = 768;
    gpt2.heads = 12;
    gpt2.mlp = 3072;
    gpt2.tied = true;
    gpt2.attn_bias = true;
    gpt2.activation = attn::Activation::gelu_tanh;
    CHECK_NOTHROW(attn::validate_inference_config(gpt2));
    CHECK_THROWS_WITH(attn::validate_model_config(gpt2), Contains("vocab"));
    ModelConfig xl = gpt2;
    xl.d_model = 1600;
    xl.heads = 25;
    xl.mlp = 6400;
    xl.layers = 48;
    CHECK_NOTHROW(attn::validate_inference_config(xl));
    xl.layers = 49;  // kMaxInferenceLayers (pretrained.hpp) + 1
    CHECK_THROWS_WITH(attn::validate_inference_config(xl), Contains("layers"));

    ModelConfig c = bert_like();
    c.layernorm = false;
    c.embed_layernorm = false;
    c.output_transform = false;
    CHECK_THROWS_WITH(attn::validate_model_config(c), Contains("post"));
    c = bert_like();
    c.ln_eps = 0.0f;
    CHECK_THROWS_WITH(attn::validate_model_config(c), Contains("ln_eps"));
    c.ln_eps = std::nanf("");
    CHECK_THROWS_WITH(attn::validate_model_config(c), Contains("ln_eps"));
    c = bert_like();
    c.family = "mistral";
    CHECK_THROWS_WITH(attn::validate_model_config(c), Contains("family"));
}

TEST_CASE("architecture: a checkpoint of a model with every option keeps them, and steps bit-identically after loading", "[model][arch][trainer]") {
    attn::TrainConfig tc = attn::default_recipe(attn::TaskKind::reverse).config;
    tc.batch = 4;
    tc.model.mlp = 8;
    tc.model.tied = true;
    tc.model.attn_bias = true;
    tc.model.activation = attn::Activation::gelu_tanh;
    tc.model.ln_eps = 1e-6f;
    tc.model.norm = attn::Norm::post;
    tc.model.token_types = 2;
    tc.model.embed_layernorm = true;
    tc.model.output_transform = true;
    tc.model.output_bias = true;
    attn::Trainer t(tc);
    t.step();
    const std::unique_ptr<attn::Trainer> back = attn::Trainer::from_checkpoint(t.save());
    const ModelConfig& c = back->model().config();
    CHECK(attn::model_config_json(c) == attn::model_config_json(t.model().config()));
    CHECK(c.norm == attn::Norm::post);
    CHECK(c.ln_eps == 1e-6f);
    CHECK(back->model().params().flat() == t.model().params().flat());
    CHECK(back->model().params().has("head.ln.gain"));
    CHECK(back->model().params().has("layers.0.b_value"));
}

// ---- the modern decoders' options (RoPE, ALiBi, RMSNorm, the gated MLP, grouped-query
// attention, head_dim, qkv_bias, qk_norm): the same checks, over random configs of them ----

TEST_CASE("architecture: the reference's gradients equal central finite differences under the modern options",
          "[model][arch][modern]") {
    std::mt19937 rng(2027);
    double worst = 0;
    CHECK(check_reference_by_finite_differences(rng, random_modern_config, 40, 2, &worst) > 500);
    WARN("modern options, the reference against central differences: largest relative difference " << worst);
}

TEST_CASE("architecture: fast loss and gradients match the double reference under the modern options",
          "[model][arch][modern]") {
    std::mt19937 rng(78);
    int rope = 0, alibi = 0, rms = 0, gated = 0, grouped = 0, qk = 0, qkv = 0, llama3 = 0;
    double worst = 0, worst_loss = 0;
    for (int trial = 0; trial < 120; ++trial) {
        const ModelConfig c = random_modern_config(rng);
        rope += c.positional == attn::Positional::rope;
        alibi += c.positional == attn::Positional::alibi;
        llama3 += c.rope_scaling == attn::RopeScaling::llama3;
        rms += c.rmsnorm;
        gated += c.gated_mlp;
        grouped += attn::kv_heads_of(c) < c.heads;
        qk += c.qk_norm;
        qkv += c.qkv_bias;
        const Batch batch = random_batch(rng, c, trial % 3 == 0);
        attn::Model m(c);
        m.params() = random_params(rng, c);
        const ReferenceComparison r = compare_with_reference(m, batch);
        INFO(describe(c));
        CHECK(r.loss_error < 1e-5);
        worst = std::max(worst, check_gradients(r, 2e-4));
        worst_loss = std::max(worst_loss, r.loss_error);
    }
    for (const int n : {rope, alibi, rms, gated, grouped, qk, qkv}) CHECK(n > 10);
    CHECK(llama3 > 3);
    WARN("modern options, fast against the double reference: loss " << worst_loss << ", gradients " << worst);
}

TEST_CASE("architecture: a Llama-shaped model (RMSNorm, RoPE, grouped-query attention, SwiGLU) matches the reference",
          "[model][arch][modern]") {
    std::mt19937 rng(9);
    for (ModelConfig c : {llama_like(), llama_like(13, 8)}) {
        if (c.vocab == 13) {  // Qwen-shaped: q/k/v biases, the per-head q/k norm, llama3-scaled RoPE
            c.qkv_bias = true;
            c.qk_norm = true;
            c.rope_base = 100;
            c.rope_scaling = attn::RopeScaling::llama3;
            c.rope_original_context = 64;
        }
        Batch b;
        b.batch = 2;
        b.length = 8;
        for (int i = 0; i < 16; ++i) {
            b.ids.push_back(std::uniform_int_distribution<int>(0, c.vocab - 1)(rng));
            b.targets.push_back(std::uniform_int_distribution<int>(-1, c.vocab - 1)(rng));
        }
        b.targets[0] = 3;
        attn::Model m(c);
        m.params() = random_params(rng, c);
        const ReferenceComparison r = compare_with_reference(m, b);
        INFO(describe(c));
        CHECK(r.loss == Approx(r.reference_loss).epsilon(1e-5));
        check_gradients(r, 2e-4);
        CHECK(m.params().info("layers.0.w_key").cols == 8);    // H_kv·D = 2·4
        CHECK(m.params().info("layers.0.w_output").rows == 16);  // H·D = 4·4
        CHECK_FALSE(m.params().has("layers.0.ln1.bias"));
        CHECK(m.params().has("layers.0.mlp.w_gate"));
        CHECK_FALSE(m.params().has("layers.0.mlp.b_in"));
        CHECK(m.params().has("layers.0.b_query") == c.qkv_bias);
        CHECK_FALSE(m.params().has("layers.0.b_output"));
    }
}

TEST_CASE("architecture: the per-layer trace equals the batched forward under the modern options",
          "[model][arch][modern]") {
    std::mt19937 rng(16);
    for (int trial = 0; trial < 40; ++trial) {
        const ModelConfig c = random_modern_config(rng);
        const Batch b = random_batch(rng, c, true);
        attn::Model m(c);
        m.params() = random_params(rng, c);
        m.forward(b);
        check_trace_matches_batch(m, b, attn::ForwardOptions{}, "defaults");
    }
}

TEST_CASE("architecture: a trace of a modern model names its new intermediates", "[model][arch][modern]") {
    std::mt19937 rng(17);
    ModelConfig c = llama_like();
    const attn::Parameters p = random_params(rng, c);
    const std::vector<std::int32_t> ids = {1, 2, 3, 4, 5};
    attn::ModelTrace tr = attn::trace_model(c, p, ids);
    const int T = 5, D = 4, F = 12;
    REQUIRE(tr.rope_frequencies.size() == D / 2);
    CHECK(tr.rope_frequencies(1) == Approx(0.01));  // 10000^(−2/4)
    CHECK(tr.alibi_slopes.size() == 0);
    CHECK(tr.final_rms.size() == T);
    const attn::LayerTrace& l0 = tr.layers[0];
    CHECK(l0.normed_rms.size() == T);
    CHECK(l0.mlp_normed_rms.size() == T);
    CHECK(l0.mlp_gate.rows() == T);
    CHECK(l0.mlp_gate.cols() == F);
    CHECK(l0.mlp_up.cols() == F);
    // hidden = silu(gate) ⊙ up
    const float g = l0.mlp_gate(2, 3);
    CHECK(l0.mlp_hidden(2, 3) == Approx(g / (1 + std::exp(-g)) * l0.mlp_up(2, 3)).epsilon(1e-5));
    // normed = x / rms ⊙ gain
    const float gain = p.flat()[p.info("layers.0.ln1.gain").offset + 1];
    CHECK(l0.normed(3, 1) == Approx(l0.input(3, 1) / l0.normed_rms(3) * gain).epsilon(1e-5));
    for (const attn::HeadTrace& h : l0.attention.heads) {
        REQUIRE(h.query_before_rope.rows() == T);
        REQUIRE(h.query_before_rope.cols() == D);
        REQUIRE(h.key_before_rope.cols() == D);
        // row 0 is not turned; row t by t·θ: the pair (0, 2) by angle t·1
        CHECK((h.query.row(0) - h.query_before_rope.row(0)).cwiseAbs().maxCoeff() == 0.0f);
        const float a = h.query_before_rope(3, 0), b2 = h.query_before_rope(3, 2);
        CHECK(h.query(3, 0) == Approx(a * std::cos(3.0) - b2 * std::sin(3.0)).margin(1e-5));
        CHECK(h.query(3, 2) == Approx(b2 * std::cos(3.0) + a * std::sin(3.0)).margin(1e-5));
    }
    // heads 0 and 1 share K/V head 0: the same keys
    CHECK(l0.attention.heads[0].key == l0.attention.heads[1].key);
    CHECK(l0.attention.heads[0].value == l0.attention.heads[1].value);
    CHECK(l0.attention.heads[1].key != l0.attention.heads[2].key);
    c.positional = attn::Positional::alibi;
    tr = attn::trace_model(c, p, ids);
    REQUIRE(tr.alibi_slopes.size() == 4);
    CHECK(tr.alibi_slopes(0) == 0.25f);  // 2^(−8·1/4)
    CHECK(tr.rope_frequencies.size() == 0);
    CHECK(tr.layers[0].attention.heads[0].query_before_rope.size() == 0);
}

TEST_CASE("architecture: a checkpoint of a model with the modern options keeps them, bit for bit",
          "[model][arch][trainer][modern]") {
    attn::TrainConfig tc = attn::default_recipe(attn::TaskKind::reverse).config;
    tc.batch = 4;
    tc.model.mlp = 8;
    tc.model.layernorm = true;
    tc.model.rmsnorm = true;
    tc.model.positional = attn::Positional::rope;
    tc.model.rope_base = 500;
    tc.model.heads = 4;
    tc.model.kv_heads = 2;
    tc.model.head_dim = 6;
    tc.model.gated_mlp = true;
    tc.model.mlp_bias = false;
    tc.model.activation = attn::Activation::silu;
    tc.model.qkv_bias = true;
    tc.model.qk_norm = true;
    attn::Trainer t(tc);
    t.step();
    const std::unique_ptr<attn::Trainer> back = attn::Trainer::from_checkpoint(t.save());
    const ModelConfig& c = back->model().config();
    CHECK(attn::model_config_json(c) == attn::model_config_json(t.model().config()));
    CHECK(c.rope_base == 500);
    CHECK(c.kv_heads == 2);
    CHECK(c.head_dim == 6);
    CHECK(c.positional == attn::Positional::rope);
    CHECK(back->model().params().flat() == t.model().params().flat());
    CHECK(back->save() == t.save());
    back->step();  // and it trains on
}
