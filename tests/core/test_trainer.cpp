// Tests of src/train/trainer.hpp: AdamW against a hand-computed update,
// determinism, stopping on non-finite numbers, checkpoints, and learning itself
// (fixed seeds, outcomes asserted, never times).

#include "checkpoints/safetensors.hpp"
#include "train/trainer.hpp"
#include "peak_memory.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <typeinfo>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTN_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ATTN_TEST_ASAN 1
#endif
#ifdef ATTN_TEST_ASAN
#include <sanitizer/allocator_interface.h>
#else
#include <malloc.h>
#endif

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

/// The attn::Error f throws; FAIL when it throws nothing or something else (std::bad_alloc, …).
attn::Error error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const attn::Error& e) {
        return e;
    } catch (const std::exception& e) {
        FAIL("threw " << typeid(e).name() << " (" << e.what() << "), not attn::Error");
    }
    FAIL("nothing was thrown");
    return attn::Error("unreachable");
}

}  // namespace

namespace test_memory {

/// The most memory the process held above its level at the start while f
/// ran, in bytes. Natively the peak resident set (VmHWM, reset through
/// /proc/self/clear_refs after malloc_trim returned freed memory): an
/// allocation counts once it is written, and every buffer of the model is.
/// Under AddressSanitizer (whose shadow memory and quarantine would inflate
/// the resident set) the peak of the live heap bytes, from its allocator hooks.
#ifdef ATTN_TEST_ASAN
std::int64_t live_bytes = 0, peak_bytes = 0;
extern "C" void count_malloc(const volatile void*, std::size_t size) {
    live_bytes += static_cast<std::int64_t>(size);
    peak_bytes = std::max(peak_bytes, live_bytes);
}
extern "C" void count_free(const volatile void* p) {
    live_bytes -= static_cast<std::int64_t>(__sanitizer_get_allocated_size(const_cast<const void*>(p)));
}
std::int64_t peak_memory_of(const std::function<void()>& f) {
    static const int installed = __sanitizer_install_malloc_and_free_hooks(count_malloc, count_free);
    REQUIRE(installed != 0);
    live_bytes = peak_bytes = 0;
    f();
    return peak_bytes;
}
#else
std::int64_t status_kb(const char* field) {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind(field, 0) == 0) return std::stoll(line.substr(std::strlen(field)));
    FAIL("/proc/self/status has no " << field);
    return 0;
}
std::int64_t peak_memory_of(const std::function<void()>& f) {
    malloc_trim(0);
    {
        std::ofstream clear("/proc/self/clear_refs");
        clear << "5";  // resets VmHWM to the current resident set
        REQUIRE(clear.good());
    }
    const std::int64_t before = status_kb("VmRSS:");
    REQUIRE(status_kb("VmHWM:") <= before + 1024);  // the reset took (1 MB of slack: reading /proc itself touches pages)
    f();
    return (status_kb("VmHWM:") - before) * 1024;
}
#endif

}  // namespace test_memory

using test_memory::peak_memory_of;


TEST_CASE("trainer: settings whose step needs more memory than the limit are refused up front (too_large)", "[trainer][memory]") {
    // the lab's link train.html#task=induction&n=256&L=1&H=64&C=64&bs=1024: 1024·64·256² = 2³² attention
    // weights, 16 GiB, which wrapped to 0 in wasm's 32-bit size_t and ended in std::bad_alloc natively
    attn::TrainConfig cfg = recipe(TaskKind::induction);
    cfg.task_options.length = 256;
    cfg.model.layers = 1;
    cfg.model.heads = 64;
    cfg.model.d_model = 64;
    cfg.batch = 1024;
    const attn::Error e = error_of([&] { attn::Trainer t(cfg); });
    CHECK(e.code() == attn::Error::Code::too_large);
    CHECK_THAT(e.what(), Contains("batch 1024 × 64 heads × 256² tokens") && Contains("17.2 GB of attention weights") &&
                             Contains("the limit") && Contains("lower batch, heads, length or layers"));
    // a small batch with fewer heads is well within the limit, and it trains
    cfg.batch = 2;
    cfg.model.heads = 4;
    attn::Trainer small(cfg);
    CHECK(std::isfinite(small.step().loss));
}

TEST_CASE("trainer: the memory estimate is at least what a step allocates", "[trainer][memory]") {
    struct Case {
        TaskKind task;
        int length, layers, heads, d_model, mlp, batch;
        bool layernorm;
    };
    // attention-heavy, activation-heavy (an MLP), and wide with LayerNorm
    const Case cases[] = {{TaskKind::induction, 64, 2, 8, 32, 0, 256, false},
                          {TaskKind::sort, 32, 2, 2, 64, 256, 512, true},
                          {TaskKind::previous_token, 128, 1, 4, 128, 128, 64, true}};
    for (const Case& k : cases) {
        attn::TrainConfig cfg = recipe(k.task);
        cfg.task_options.length = k.length;
        cfg.model.layers = k.layers;
        cfg.model.heads = k.heads;
        cfg.model.d_model = k.d_model;
        cfg.model.mlp = k.mlp;
        cfg.model.layernorm = k.layernorm;
        cfg.batch = k.batch;
        const std::int64_t used = peak_memory_of([&] {
            attn::Trainer t(cfg);
            t.step();
        });
        attn::Trainer t(cfg);
        const attn::ModelConfig& m = t.model().config();
        const std::int64_t T = t.task().context(), B = k.batch, C = k.d_model, H = k.heads, F = k.mlp, V = m.vocab,
                           L = k.layers;
        const std::int64_t P = static_cast<std::int64_t>(t.model().params().size());
        INFO("task " << attn::task_name(k.task) << " T=" << T << " B=" << B << " V=" << V << ": " << used
                     << " bytes used");
        // the formula of training_memory(), written out here: weights, gradients, AdamW (m, v and the
        // update's copy of p, m, v); kept activations; attention; backward's buffers and packed operands
        const std::int64_t N = B * T, widest = std::max({C, V, F});
        const std::int64_t kept = L * (N * C * (F > 0 ? 8 : 7) + 2 * N * F + 4 * N) + 2 * N * C + 2 * N * V + 6 * N + B;
        const std::int64_t operand = std::max({(N + 8) * (widest + 8), (C + 8) * (widest + 8), (F + 8) * (C + 8),
                                               (T + 8) * (T + 8), (V + 8) * (C + 8)});
        const std::int64_t scratch = 10 * N * C + N * F + std::max({V * C, C * F, C * C, N * C}) + 3 * T * T + T * C +
                                     T * (C / H) + 2 * operand;
        const std::int64_t expected = 4 * (P * 7 + kept + L * B * H * T * T + scratch);
        const attn::TrainingMemory est = attn::training_memory(m, k.batch, static_cast<int>(T));
        CHECK(est.total() == expected);
        CHECK(est.attention == 4 * L * B * H * T * T);
        CHECK(est.parameters == 4 * P);
        CHECK(est.total() >= used);
        CHECK(used > est.attention / 2);  // the measure sees the step's big buffers
    }
}

TEST_CASE("trainer: the memory estimate is at least what a step allocates, under the modern options", "[trainer][memory][modern]") {
    // a Llama-shaped model whose Q is wider than the stream (H·D = 2C) over fewer K/V heads, with
    // the q/k norms and the gated MLP; and an ALiBi model
    for (const bool llama : {true, false}) {
        attn::TrainConfig cfg = recipe(TaskKind::sort);
        cfg.task_options.length = 32;
        cfg.model.layers = 2;
        cfg.model.heads = 4;
        cfg.model.d_model = 64;
        cfg.model.mlp = 128;
        cfg.model.layernorm = true;
        cfg.batch = 256;
        if (llama) {
            cfg.model.rmsnorm = true;
            cfg.model.positional = attn::Positional::rope;
            cfg.model.kv_heads = 1;
            cfg.model.head_dim = 32;
            cfg.model.qk_norm = true;
            cfg.model.gated_mlp = true;
            cfg.model.mlp_bias = false;
            cfg.model.activation = attn::Activation::silu;
        } else {
            cfg.model.positional = attn::Positional::alibi;
        }
        const std::int64_t used = peak_memory_of([&] {
            attn::Trainer t(cfg);
            t.step();
        });
        attn::Trainer t(cfg);
        const attn::TrainingMemory est = attn::training_memory(t.model().config(), cfg.batch, t.task().context());
        INFO((llama ? "llama-shaped: " : "alibi: ") << used << " bytes used, " << est.total() << " estimated");
        CHECK(est.total() >= used);
        CHECK(used > est.attention / 2);
    }
}

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

TEST_CASE("trainer: an update that would take a weight past ±1e6 stops training and keeps the weights", "[trainer]") {
    // the bound probe and trace accept (kMaxAbsValue, bounds.hpp): a model training produced can always be shown
    attn::TrainConfig cfg = recipe(TaskKind::reverse);
    cfg.optimizer.lr = 10.0f;  // the largest rate: AdamW's first step moves a weight by about 10
    attn::Trainer t(cfg);
    t.step();
    auto embed = t.model().params().view("embed");
    for (Eigen::Index i = 0; i < embed.size(); ++i) embed.data()[i] = i % 2 ? 999999.0f : -999999.0f;
    const std::vector<float> before = t.model().params().flat();
    const attn::Error e = error_of([&] { t.step(); });
    CHECK(e.code() == attn::Error::Code::not_finite);
    CHECK_THAT(e.what(), Contains("step 2") && Contains("outside the range -1e+06 to 1e+06") &&
                             Contains("learning rate 10") && Contains("weights after step 1 are kept"));
    CHECK(t.steps_done() == 1);
    CHECK(t.model().params().flat() == before);
    // the kept model is one the rest of the engine accepts
    const attn::Example probe = t.task().probe();
    CHECK_NOTHROW(attn::trace_model(t.model().config(), t.model().params(), probe.ids, probe.length));
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

TEST_CASE("trainer: random settings inside the documented ranges train or fail with a coded error, never crash", "[trainer][memory]") {
    // docs/training.md: L ≤ 12, C ≤ 512 (H divides C), F ≤ 2048, V ≤ 50,000, context ≤ 512, batch ≤ 4096, and each
    // task's length range. Sizes are drawn log-uniformly so that small and huge settings both come up.
    std::mt19937 rng(2026);
    auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    auto log_uniform = [&](int lo, int hi) {
        const double x = std::uniform_real_distribution<double>(std::log(lo), std::log(hi + 1.0))(rng);
        return std::min(hi, static_cast<int>(std::exp(x)));
    };
    auto coin = [&](double p = 0.5) { return std::bernoulli_distribution(p)(rng); };
    struct Range {
        TaskKind task;
        int lo, hi;
    };
    const Range ranges[] = {{TaskKind::copy, 2, 64},        {TaskKind::reverse, 2, 64},    {TaskKind::sort, 2, 64},
                            {TaskKind::previous_token, 2, 256}, {TaskKind::induction, 8, 256}, {TaskKind::recall, 1, 8},
                            {TaskKind::brackets, 4, 128},   {TaskKind::coreference, 0, 128}, {TaskKind::text, 4, 256}};
    std::string corpus;  // 3,000 words of 40 kinds for the text task
    for (int i = 0; i < 3000; ++i) corpus += std::string(1, static_cast<char>('a' + (i * 7) % 20)) + std::string(1, static_cast<char>('a' + i % 2)) + " ";
    int trained = 0, refused = 0, invalid = 0;
    for (int trial = 0; trial < 120; ++trial) {
        const Range& r = ranges[static_cast<std::size_t>(uniform(0, 8))];
        attn::TrainConfig cfg = recipe(r.task);
        cfg.task_options.length = coin(0.3) ? 0 : r.task == TaskKind::coreference ? 128 : log_uniform(r.lo, r.hi);
        if (r.task == TaskKind::brackets) cfg.task_options.length &= ~1;  // even, or 0 = the default
        if (r.task == TaskKind::text) {
            cfg.task_options.corpus = corpus;
            cfg.task_options.max_vocab = log_uniform(2, attn::kMaxTextVocab);
        }
        attn::ModelConfig& m = cfg.model;
        m.layers = uniform(1, 12);
        m.d_model = log_uniform(1, 512);
        m.heads = coin(0.1) ? uniform(1, m.d_model) : 1;  // sometimes not a divisor: a coded error
        if (m.heads == 1)
            for (int h = log_uniform(1, m.d_model); h >= 1; --h)
                if (m.d_model % h == 0) {
                    m.heads = h;
                    break;
                }
        m.mlp = coin() ? 0 : log_uniform(1, 2048);
        m.context = coin(0.8) ? 0 : log_uniform(1, 512);
        m.layernorm = coin();
        m.positional = static_cast<attn::Positional>(uniform(0, 2));
        m.scale = coin(0.8);
        m.tied = coin(0.3);
        cfg.batch = log_uniform(1, 4096);
        cfg.optimizer.lr = static_cast<float>(std::pow(10.0, std::uniform_real_distribution<double>(-4, 1)(rng)));
        cfg.optimizer.clip = coin() ? 0.0f : 1.0f;
        INFO("trial " << trial << ": " << attn::task_name(r.task) << " length " << cfg.task_options.length << " L "
                      << m.layers << " C " << m.d_model << " H " << m.heads << " F " << m.mlp << " context " << m.context
                      << " batch " << cfg.batch);
        attn::TrainingMemory need;
        try {
            need = attn::training_memory(cfg);
        } catch (const attn::Error& e) {  // settings wrong in another way: the constructor says the same
            CHECK(e.code() != attn::Error::Code::internal);
            CHECK(error_of([&] { attn::Trainer t(cfg); }).code() == e.code());
            ++invalid;
            continue;
        }
        if (!need.fits()) {
            const attn::Error e = error_of([&] { attn::Trainer t(cfg); });
            CHECK(e.code() == attn::Error::Code::too_large);
            CHECK_THAT(e.what(), Contains("needs") && Contains("the limit") && Contains("lower"));
            ++refused;
            continue;
        }
        try {
            attn::Trainer t(cfg);
            // one step when it is cheap (the multiply-adds of a forward and backward, about 3× the forward's)
            const double N = static_cast<double>(cfg.batch) * t.task().context(), C = m.d_model,
                         T = t.task().context();
            const double flops = 6 * N * (m.layers * (4 * C * C + 2 * T * C + 2 * C * m.mlp) + C * t.model().config().vocab);
            if (flops > 3e8) continue;
            try {
                t.step();
                ++trained;
            } catch (const attn::Error& e) {
                CHECK(e.code() == attn::Error::Code::not_finite);  // a rate too high: the coded stop
            }
        } catch (const std::exception& e) {
            FAIL("settings within the estimate's limit threw " << typeid(e).name() << ": " << e.what());
        }
    }
    WARN(trained << " trained, " << refused << " refused as too large, " << invalid << " invalid");
    CHECK(trained >= 20);
    CHECK(refused >= 5);
}

TEST_CASE("learning: rope and alibi learn previous-token, where a model without positions cannot", "[trainer][learning][modern]") {
    // previous-token needs to know which key came just before: no positions stay at 32% (measured);
    // rope reaches 100% with the recipe's model (seeds 1, 2, 3; measured); alibi, whose bias only
    // says how far a key is, not which one, needs its steeper slopes of 4 heads (1/4 …): 82% for
    // seeds 1, 2, 3, and 92% with 8 heads (measured)
    const int steps = attn::default_recipe(TaskKind::previous_token).steps;
    attn::TrainConfig rope = recipe(TaskKind::previous_token);
    rope.model.positional = attn::Positional::rope;
    attn::Trainer r(rope);
    CHECK(train(r, steps).accuracy >= 0.99);
    attn::TrainConfig alibi = recipe(TaskKind::previous_token);
    alibi.model.positional = attn::Positional::alibi;
    alibi.model.heads = 4;
    attn::Trainer a(alibi);
    CHECK(train(a, steps).accuracy >= 0.75);
}
