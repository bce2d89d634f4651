// Tests of src/core/trainer.hpp: AdamW against a hand-computed update,
// determinism, stopping on non-finite numbers, checkpoints, and learning itself
// (fixed seeds, outcomes asserted, never times).

#include "core/safetensors.hpp"
#include "core/trainer.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using Catch::Matchers::Contains;
using attn::TaskKind;

namespace {

attn::TrainConfig recipe(TaskKind task) { return attn::default_recipe(task).config; }

attn::EvalResult train(attn::Trainer& t, int steps, int eval_samples = 512) {
    for (int i = 0; i < steps; ++i) t.step();
    return t.evaluate(eval_samples);
}

double best_score(const std::vector<attn::HeadScore>& scores, int layer, const std::string& key) {
    double best = 0;
    for (const auto& h : scores)
        if (h.layer == layer)
            for (const auto& [name, s] : h.scores)
                if (name == key) best = std::max(best, s);
    return best;
}

}  // namespace

TEST_CASE("adamw: one update equals the hand-computed AdamW step", "[trainer]") {
    // Two parameters: a 1×1 matrix (decayed) and a 1-vector (not decayed).
    attn::ModelConfig c;
    c.vocab = 2;
    c.context = 1;
    c.d_model = 1;
    c.heads = 1;
    c.layernorm = true;
    c.positional = attn::Positional::none;
    c.tied = true;
    attn::Parameters p(c), g(c);
    for (std::size_t i = 0; i < p.size(); ++i) {
        p.flat()[i] = 0.5f + 0.1f * static_cast<float>(i);
        g.flat()[i] = (i % 2 ? -1.0f : 2.0f) * 0.25f;
    }
    attn::OptimizerConfig o;
    o.lr = 0.1f;
    o.weight_decay = 0.5f;
    attn::AdamW adam(o, p.size());
    const std::vector<float> before = p.flat();
    adam.update(p, g, 1);
    for (const attn::ParamInfo& info : p.layout())
        for (std::size_t i = info.offset; i < info.offset + info.size(); ++i) {
            // step 1: m̂ = g, v̂ = g², so the Adam step is lr·g/(|g| + eps) = lr·sign(g)
            double x = before[i];
            if (info.decay) x -= 0.1 * 0.5 * x;
            x -= 0.1 * g.flat()[i] / (std::fabs(g.flat()[i]) + 1e-8);
            INFO(info.name);
            CHECK(p.flat()[i] == Approx(x).epsilon(1e-6));
        }
    // a second step with the same gradient: m̂ = g, v̂ = g² again
    const std::vector<float> mid = p.flat();
    adam.update(p, g, 2);
    for (const attn::ParamInfo& info : p.layout())
        for (std::size_t i = info.offset; i < info.offset + info.size(); ++i) {
            double x = mid[i];
            if (info.decay) x -= 0.1 * 0.5 * x;
            x -= 0.1 * g.flat()[i] / (std::fabs(g.flat()[i]) + 1e-8);
            CHECK(p.flat()[i] == Approx(x).epsilon(1e-5));
        }
}

TEST_CASE("adamw: clipping scales the gradient to the given global norm and warm-up scales the rate", "[trainer]") {
    attn::ModelConfig c;
    c.vocab = 2;
    c.context = 1;
    c.d_model = 1;
    c.heads = 1;
    c.layernorm = false;
    c.positional = attn::Positional::none;
    c.tied = true;
    attn::Parameters p(c), g(c);  // embed 2×1, W_Q, W_K, W_V, W_O 1×1
    for (float& v : g.flat()) v = 3.0f;
    attn::OptimizerConfig o;
    o.lr = 1.0f;
    o.clip = 1.0f;
    o.warmup = 4;
    o.beta1 = 0.0f;  // m = clipped g: the step shows the clip directly
    o.beta2 = 0.0f;
    attn::AdamW adam(o, p.size());
    const double norm = adam.update(p, g, 1);
    CHECK(norm == Approx(3.0 * std::sqrt(6.0)));
    // with β1 = β2 = 0 the step is lr_t·ĝ/(|ĝ| + eps) = lr_t whatever the clip; lr_1 = 1/4
    for (float v : p.flat()) CHECK(v == Approx(-0.25).epsilon(1e-6));
    attn::OptimizerConfig bad;
    bad.lr = -1;
    CHECK_THROWS_WITH(attn::AdamW(bad, 1), Contains("learning rate"));
}

TEST_CASE("trainer: the same seed and settings give bit-identical weights, another seed does not", "[trainer]") {
    attn::TrainConfig cfg = recipe(TaskKind::induction);
    cfg.batch = 8;
    attn::Trainer a(cfg), b(cfg);
    for (int i = 0; i < 25; ++i) {
        a.step();
        b.step();
    }
    CHECK(a.model().params().flat() == b.model().params().flat());
    cfg.seed = 2;
    attn::Trainer c(cfg);
    for (int i = 0; i < 25; ++i) c.step();
    CHECK(a.model().params().flat() != c.model().params().flat());
}

TEST_CASE("trainer: a non-finite loss stops training, names the step and keeps the weights", "[trainer]") {
    attn::Trainer t(recipe(TaskKind::reverse));
    t.step();
    t.step();
    t.model().params().view("unembed").setConstant(3e38f);  // logits overflow to ±inf
    const std::vector<float> before = t.model().params().flat();
    CHECK_THROWS_WITH(t.step(), Contains("step 3") && Contains("not finite") && Contains("learning rate"));
    CHECK(t.steps_done() == 2);
    CHECK(t.model().params().flat() == before);
}

TEST_CASE("trainer: a checkpoint round trip is bit-exact and keeps the task, settings and step", "[trainer]") {
    attn::TrainConfig cfg = recipe(TaskKind::recall);
    cfg.model.mlp = 8;
    cfg.model.tied = true;
    cfg.optimizer.weight_decay = 0.01f;
    attn::Trainer t(cfg);
    for (int i = 0; i < 7; ++i) t.step();
    const std::string bytes = t.save();
    const auto back = attn::Trainer::from_checkpoint(bytes);
    CHECK(back->model().params().flat() == t.model().params().flat());
    CHECK(back->steps_done() == 7);
    CHECK(back->config().task == TaskKind::recall);
    CHECK(back->config().optimizer.weight_decay == Approx(0.01));
    CHECK(back->vocabulary() == t.vocabulary());
    CHECK(back->save() == bytes);
    const attn::Checkpoint cp = attn::load_checkpoint(bytes);
    CHECK(cp.config.mlp == 8);
    CHECK(cp.config.tied);
    CHECK(cp.metadata.at("format") == "attention-playground-model/1");
}

TEST_CASE("trainer: bad checkpoints give a clear error, never a crash", "[trainer]") {
    attn::Trainer t(recipe(TaskKind::reverse));
    const std::string good = t.save();
    attn::SafeTensors file = attn::read_safetensors(good);

    CHECK_THROWS_WITH(attn::load_checkpoint(good.substr(0, good.size() - 5)), Contains("safetensors"));
    CHECK_THROWS_WITH(attn::load_checkpoint(std::string(4, 'x')), Contains("8"));

    attn::SafeTensors missing = file;
    missing.tensors.erase(missing.tensors.begin() + 1);
    CHECK_THROWS_WITH(attn::load_checkpoint(attn::write_safetensors(missing)), Contains("missing tensor"));

    attn::SafeTensors shape = file;
    shape.tensors[0].shape = {shape.tensors[0].shape[1], shape.tensors[0].shape[0]};
    CHECK_THROWS_WITH(attn::load_checkpoint(attn::write_safetensors(shape)), Contains("shape"));

    attn::SafeTensors nan = file;
    nan.tensors[2].data[3] = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_WITH(attn::load_checkpoint(attn::write_safetensors(nan)), Contains("NaN"));

    attn::SafeTensors extra = file;
    extra.tensors.push_back(attn::Tensor{"layers.7.w_query", {1}, {0.0f}});
    CHECK_THROWS_WITH(attn::load_checkpoint(attn::write_safetensors(extra)), Contains("does not use"));

    attn::SafeTensors no_config = file;
    no_config.metadata.erase("config");
    CHECK_THROWS_WITH(attn::load_checkpoint(attn::write_safetensors(no_config)), Contains("config"));

    attn::SafeTensors bad_config = file;
    bad_config.metadata["config"] = "{\"d_model\": 10, \"heads\": 3}";
    CHECK_THROWS_WITH(attn::load_checkpoint(attn::write_safetensors(bad_config)), Contains("divisible"));

    // a dtype other than F32: rewrite the header by hand
    std::string bf16 = good;
    const std::size_t at = bf16.find("\"F32\"");
    REQUIRE(at != std::string::npos);
    bf16.replace(at, 5, "\"F16\"");
    CHECK_THROWS_WITH(attn::load_checkpoint(bf16), Contains("F16"));

    // a header length over 1 MiB
    std::string huge = good;
    const std::uint64_t n = (1u << 20) + 1;
    std::memcpy(&huge[0], &n, 8);
    CHECK_THROWS_WITH(attn::load_checkpoint(huge), Contains("header"));
}

TEST_CASE("learning: reverse reaches 99% held-out accuracy with an anti-diagonal head", "[trainer][learning]") {
    attn::Trainer t(recipe(TaskKind::reverse));
    const attn::EvalResult e = train(t, attn::default_recipe(TaskKind::reverse).steps);
    CHECK(e.accuracy >= 0.99);
    CHECK(best_score(t.head_scores(128), 0, "anti-diagonal") >= 0.9);
}

TEST_CASE("learning: reverse without positions stays near chance (attention sees a set)", "[trainer][learning]") {
    attn::TrainConfig cfg = recipe(TaskKind::reverse);
    cfg.model.positional = attn::Positional::none;
    attn::Trainer t(cfg);
    const attn::EvalResult e = train(t, attn::default_recipe(TaskKind::reverse).steps);
    CHECK(e.accuracy < 0.3);
}

TEST_CASE("learning: two layers learn induction with a layer-1 induction head, one layer does not", "[trainer][learning]") {
    attn::Trainer two(recipe(TaskKind::induction));
    // 500 of the recipe's 600 steps: with seed 1 the heads have formed by then (held-out 97%, the
    // layer-1 induction head 0.96, the previous-token head 0.78; measured), and the one-layer model
    // is at 13% however long it trains; the sanitizer build runs this test too, at many times the cost
    const int steps = 500;
    REQUIRE(steps <= attn::default_recipe(TaskKind::induction).steps);
    const attn::EvalResult e2 = train(two, steps);
    CHECK(e2.accuracy >= 0.9);
    const auto scores = two.head_scores(128);
    CHECK(best_score(scores, 1, "induction") >= 0.7);
    CHECK(best_score(scores, 0, "previous-token") >= 0.5);

    attn::TrainConfig one_layer = recipe(TaskKind::induction);
    one_layer.model.layers = 1;
    attn::Trainer one(one_layer);
    CHECK(train(one, steps).accuracy < 0.5);
}
