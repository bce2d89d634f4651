// Tests of src/model/model.hpp: the fast forward/backward against the
// independent double-precision reference (model_reference.cpp), the reference
// against central finite differences, and the properties of masks, padding,
// ablation and the per-layer trace.

#include "model/model.hpp"
#include "model_test_util.hpp"
#include "base/types.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

using Catch::Matchers::Contains;
using attn::Batch;
using attn::ModelConfig;
using attn::Positional;

using namespace model_test;

TEST_CASE("model: the parameter layout names every tensor of the config, in order", "[model]") {
    ModelConfig c = sized_config(7, 5, 4, 2, 2, 3);
    c.layernorm = true;
    c.positional = Positional::learned;
    c.tied = false;
    std::vector<std::string> names;
    for (const auto& p : attn::parameter_layout(c)) names.push_back(p.name);
    const std::vector<std::string> layer = {"ln1.gain", "ln1.bias", "w_query",  "w_key",    "w_value",   "w_output",
                                            "ln2.gain", "ln2.bias", "mlp.w_in", "mlp.b_in", "mlp.w_out", "mlp.b_out"};
    std::vector<std::string> want = {"embed", "pos"};
    for (int l = 0; l < 2; ++l)
        for (const auto& n : layer) want.push_back("layers." + std::to_string(l) + "." + n);
    want.insert(want.end(), {"final_ln.gain", "final_ln.bias", "unembed"});
    CHECK(names == want);

    attn::Parameters p(c);
    CHECK(p.view("embed").rows() == 7);
    CHECK(p.view("pos").rows() == 5);
    CHECK(p.view("layers.1.mlp.w_in").cols() == 3);
    CHECK(p.view("unembed").cols() == 7);
    CHECK(p.info("layers.0.ln1.gain").vector);
    CHECK_FALSE(p.info("layers.0.ln1.gain").decay);
    CHECK(p.info("layers.0.w_key").decay);

    c.layernorm = false;
    c.mlp = 0;
    c.tied = true;
    c.positional = Positional::sinusoidal;
    names.clear();
    for (const auto& q : attn::parameter_layout(c)) names.push_back(q.name);
    CHECK(names == std::vector<std::string>{"embed", "layers.0.w_query", "layers.0.w_key", "layers.0.w_value",
                                            "layers.0.w_output", "layers.1.w_query", "layers.1.w_key",
                                            "layers.1.w_value", "layers.1.w_output"});
}

TEST_CASE("model: bad configs and batches are rejected with the field named", "[model]") {
    ModelConfig c;
    c.d_model = 10;
    c.heads = 3;
    CHECK_THROWS_WITH(attn::validate_model_config(c), Contains("not divisible by 3 heads"));
    c = ModelConfig{};
    c.layers = 0;
    CHECK_THROWS_WITH(attn::validate_model_config(c), Contains("layers"));
    c = ModelConfig{};
    c.vocab = 1;
    CHECK_THROWS_WITH(attn::validate_model_config(c), Contains("vocab"));

    c = ModelConfig{};
    c.vocab = 5;
    c.context = 4;
    attn::Model m(c);
    Batch b;
    b.batch = 1;
    b.length = 5;
    b.ids.assign(5, 0);
    b.targets.assign(5, -1);
    CHECK_THROWS_WITH(m.forward(b), Contains("context 4"));
    b.length = 4;
    b.ids.assign(4, 0);
    b.targets.assign(4, -1);
    b.ids[2] = 5;
    CHECK_THROWS_WITH(m.forward(b), Contains("token id 5"));
    b.ids[2] = 0;
    b.targets[1] = 9;
    CHECK_THROWS_WITH(m.forward(b), Contains("target 9"));
    b.targets[1] = -1;
    b.lengths.assign(1, 2);
    b.targets[3] = 1;
    CHECK_THROWS_WITH(m.forward(b), Contains("past its length"));
    attn::Parameters g;
    attn::Model fresh(c);
    CHECK_THROWS_WITH(fresh.backward(g), Contains("forward"));
}

TEST_CASE("model reference: gradients equal central finite differences for every parameter kind", "[model]") {
    // The reference is the independent check of the fast path, so it is
    // itself checked against the definition of the derivative, in double:
    // three entries of every tensor (or all when it is small).
    std::mt19937 rng(1234);
    CHECK(check_reference_by_finite_differences(rng, random_config, 40, 3) > 500);
}

TEST_CASE("model: fast loss and gradients match the double reference on random configs", "[model]") {
    std::mt19937 rng(99);
    double worst_loss = 0, worst_grad = 0;
    for (int trial = 0; trial < 120; ++trial) {
        const ModelConfig c = random_config(rng);
        const Batch batch = random_batch(rng, c, trial % 3 == 0);
        attn::Model m(c);
        m.params() = random_params(rng, c);
        const ReferenceComparison r = compare_with_reference(m, batch);
        INFO(describe(c));
        CHECK(r.loss_error < 1e-5);
        worst_loss = std::max(worst_loss, r.loss_error);
        worst_grad = std::max(worst_grad, check_gradients(r, 1e-4));
    }
    WARN("worst relative loss error " << worst_loss << ", worst relative gradient error " << worst_grad);
}

TEST_CASE("model: a larger model's fast gradients match the reference (the SIMD tiles' edges)", "[model]") {
    // Sizes that are not multiples of the kernels' 4×8 tiles, and big enough
    // for several tiles per product.
    std::mt19937 rng(5);
    ModelConfig c = sized_config(13, 11, 18, 3, 2, 10);
    c.causal = true;
    Batch b;
    b.batch = 3;
    b.length = 11;
    for (int i = 0; i < 33; ++i) {
        b.ids.push_back(std::uniform_int_distribution<int>(0, 12)(rng));
        b.targets.push_back(std::uniform_int_distribution<int>(-1, 12)(rng));
    }
    attn::Model m(c);
    m.params() = random_params(rng, c);
    check_gradients(compare_with_reference(m, b), 1e-4);
}

TEST_CASE("model: under the causal mask no earlier position's loss reaches a later token", "[model]") {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 30; ++trial) {
        ModelConfig c = random_config(rng);
        c.causal = true;
        c.vocab = 8;
        c.context = 6;
        c.tied = false;  // with tied weights every embedding row is also an output row
        Batch b;
        b.batch = 1;
        b.length = 6;
        b.ids = std::vector<std::int32_t>{0, 1, 2, 3, 4, 5};  // one token per position
        const int cut = std::uniform_int_distribution<int>(0, 4)(rng);
        b.targets.assign(6, attn::kNoTarget);
        for (int t = 0; t <= cut; ++t) b.targets[static_cast<std::size_t>(t)] = 7 - t;
        attn::Model m(c);
        m.params() = random_params(rng, c);
        m.forward(b);
        attn::Parameters g;
        m.backward(g);
        const auto de = g.view("embed");
        INFO(describe(c) << " losses at positions 0…" << cut);
        for (int t = cut + 1; t < 6; ++t) {
            CHECK(de.row(t).cwiseAbs().maxCoeff() == 0.0f);
            if (c.positional == Positional::learned) CHECK(g.view("pos").row(t).cwiseAbs().maxCoeff() == 0.0f);
        }
        CHECK(de.row(0).cwiseAbs().maxCoeff() > 0.0f);
    }
}

TEST_CASE("model: a fully masked row (an empty padded sequence) gives zero weights and finite gradients", "[model]") {
    std::mt19937 rng(8);
    ModelConfig c = sized_config(6, 4, 8, 2, 2, 4);
    Batch b;
    b.batch = 2;
    b.length = 4;
    b.lengths = std::vector<int>{0, 3};
    b.ids = std::vector<std::int32_t>{0, 0, 0, 0, 1, 2, 3, 0};
    b.targets = std::vector<std::int32_t>{-1, -1, -1, -1, 2, 3, 4, -1};
    attn::Model m(c);
    m.params() = random_params(rng, c);
    const ReferenceComparison r = compare_with_reference(m, b);
    CHECK(std::isfinite(r.loss));
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 2; ++h) CHECK(m.attention(0, l, h).cwiseAbs().maxCoeff() == 0.0f);
    for (float v : r.grads.flat()) REQUIRE(std::isfinite(v));
    check_gradients(r, 1e-4);
}

TEST_CASE("model: saturated scores keep the loss and gradients finite", "[model]") {
    std::mt19937 rng(9);
    ModelConfig c = sized_config(5, 5, 8, 1);
    c.layernorm = false;
    c.scale = false;
    attn::Model m(c);
    m.params() = random_params(rng, c);
    m.params().view("layers.0.w_query") *= 300.0f;  // scores in the thousands: one-hot softmax rows
    Batch b;
    b.batch = 1;
    b.length = 5;
    b.ids = std::vector<std::int32_t>{0, 1, 2, 3, 4};
    b.targets = std::vector<std::int32_t>{1, 2, 3, 4, 0};
    const auto r = m.forward(b);
    CHECK(std::isfinite(r.loss));
    CHECK(m.attention(0, 0, 0).maxCoeff() > 0.999f);
    attn::Parameters g;
    m.backward(g);
    for (float v : g.flat()) REQUIRE(std::isfinite(v));
}

TEST_CASE("model: an ablated head contributes nothing and its projections get no gradient", "[model]") {
    std::mt19937 rng(10);
    ModelConfig c = sized_config(6, 5, 8, 2);
    attn::Model m(c);
    m.params() = random_params(rng, c);
    Batch b;
    b.batch = 2;
    b.length = 5;
    for (int i = 0; i < 10; ++i) {
        b.ids.push_back(i % 6);
        b.targets.push_back((i + 1) % 6);
    }
    attn::ForwardOptions off;
    off.head_enabled = {{true, false}};
    const double with = m.forward(b).loss;
    const double without = m.forward(b, off).loss;
    CHECK(with != without);
    attn::Parameters g;
    m.backward(g);
    // head 1 = columns 4…7 of W_Q, W_K, W_V
    CHECK(g.view("layers.0.w_query").rightCols(4).cwiseAbs().maxCoeff() == 0.0f);
    CHECK(g.view("layers.0.w_value").rightCols(4).cwiseAbs().maxCoeff() == 0.0f);
    CHECK(g.view("layers.0.w_query").leftCols(4).cwiseAbs().maxCoeff() > 0.0f);

    // the same as zeroing head 1's rows of W_O
    attn::Model zeroed(c);
    zeroed.params() = m.params();
    zeroed.params().view("layers.0.w_output").bottomRows(4).setZero();
    CHECK(zeroed.forward(b).loss == Approx(without).epsilon(1e-6));
}

TEST_CASE("model: uniform attention equals the mean of the allowed values", "[model]") {
    std::mt19937 rng(11);
    ModelConfig c = sized_config(6, 4, 4, 1);
    c.causal = true;
    attn::Model m(c);
    m.params() = random_params(rng, c);
    Batch b;
    b.batch = 1;
    b.length = 4;
    b.ids = std::vector<std::int32_t>{1, 2, 3, 4};
    b.targets = std::vector<std::int32_t>{2, 3, 4, 5};
    attn::ForwardOptions uniform;
    uniform.uniform_attention = true;
    m.forward(b, uniform);
    const auto w = m.attention(0, 0, 0);
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) CHECK(w(i, j) == (j <= i ? Approx(1.0 / (i + 1)) : Approx(0.0)));
    attn::Parameters g;
    m.backward(g);  // nothing reaches W_Q and W_K through constant weights
    CHECK(g.view("layers.0.w_query").cwiseAbs().maxCoeff() == 0.0f);
    CHECK(g.view("layers.0.w_key").cwiseAbs().maxCoeff() == 0.0f);
}

/// Every ForwardOptions field, alone and together: the defaults, uniform
/// attention, each causal override, one ablated head (layer 0, head 0), and
/// all of them at once.
std::vector<std::pair<std::string, attn::ForwardOptions>> every_forward_option(const ModelConfig& c) {
    std::vector<std::pair<std::string, attn::ForwardOptions>> out;
    out.emplace_back("defaults", attn::ForwardOptions{});
    attn::ForwardOptions uniform;
    uniform.uniform_attention = true;
    out.emplace_back("uniform attention", uniform);
    for (int causal : {0, 1}) {
        attn::ForwardOptions o;
        o.causal_override = causal;
        out.emplace_back("causal override " + std::to_string(causal), o);
    }
    attn::ForwardOptions ablate;
    ablate.head_enabled.assign(static_cast<std::size_t>(c.layers), std::vector<bool>(static_cast<std::size_t>(c.heads), true));
    ablate.head_enabled[0][0] = false;
    out.emplace_back("head 0 of layer 0 ablated", ablate);
    attn::ForwardOptions all = ablate;
    all.uniform_attention = true;
    all.causal_override = c.causal ? 0 : 1;
    out.emplace_back("uniform, ablated and the other mask", all);
    return out;
}

TEST_CASE("model: the per-layer trace equals the batched forward under every forward option", "[model]") {
    std::mt19937 rng(12);
    for (int trial = 0; trial < 30; ++trial) {
        const ModelConfig c = random_config(rng);
        Batch b = random_batch(rng, c, true);
        attn::Model m(c);
        m.params() = random_params(rng, c);
        for (const auto& [option, options] : every_forward_option(c)) {
            m.forward(b, options);
            check_trace_matches_batch(m, b, options, option);
        }
    }
}

TEST_CASE("model: the uniform-attention trace puts exactly 1/n on each of the n keys a row may see", "[model]") {
    std::mt19937 rng(13);
    for (int trial = 0; trial < 20; ++trial) {
        const ModelConfig c = random_config(rng);
        const attn::Parameters p = random_params(rng, c);
        const int T = std::uniform_int_distribution<int>(1, c.context)(rng);
        const int len = std::uniform_int_distribution<int>(1, T)(rng);
        const std::vector<std::int32_t> ids = random_ids(rng, c, T);
        attn::ForwardOptions uniform;
        uniform.uniform_attention = true;
        const attn::ModelTrace tr = attn::trace_model(c, p, ids, len, uniform);
        INFO(describe(c) << " T=" << T << " length=" << len);
        for (const attn::LayerTrace& lt : tr.layers)
            for (const attn::HeadTrace& ht : lt.attention.heads)
                for (int i = 0; i < T; ++i) {
                    const int n = c.causal ? std::min(i + 1, len) : len;  // keys 0 … n−1: real, and not later under the causal mask
                    for (int j = 0; j < T; ++j) CHECK(ht.weights(i, j) == (j < n ? 1.0f / static_cast<float>(n) : 0.0f));
                    CHECK(ht.row_sum(i) == static_cast<float>(n));
                }
    }
}

TEST_CASE("model: initialisation is seeded, per tensor, and documented in scale", "[model]") {
    ModelConfig c = sized_config(50, 16, 32, 2, 1, 64);
    attn::Parameters a, b, other;
    attn::init_parameters(c, 3, a);
    attn::init_parameters(c, 3, b);
    attn::init_parameters(c, 4, other);
    CHECK(a.flat() == b.flat());
    CHECK(a.flat() != other.flat());
    const auto e = a.view("embed");
    CHECK(e.cwiseAbs().maxCoeff() <= 1.7320509f);
    const double var = e.array().square().mean();
    CHECK(var == Approx(1.0).epsilon(0.1));  // unit variance
    CHECK(a.view("layers.0.w_query").cwiseAbs().maxCoeff() <= 1.0f / std::sqrt(32.0f));
    CHECK(a.view("layers.0.mlp.w_out").cwiseAbs().maxCoeff() <= 1.0f / 8.0f);
    CHECK(a.view("layers.0.ln1.gain").minCoeff() == 1.0f);
    CHECK(a.view("layers.0.mlp.b_in").cwiseAbs().maxCoeff() == 0.0f);
    // W_Q and W_K of one layer come from different streams
    CHECK(a.view("layers.0.w_query") != a.view("layers.0.w_key"));
}

TEST_CASE("model: training sizes are computed in 64 bits, and near 2³² they are refused, not wrapped", "[model][memory]") {
    ModelConfig c = sized_config(16, 256, 64, 64, 1);
    // B·H·T² = 1024·64·256² = 2³² floats and 1023·64·256² just below: both would wrap (or nearly) a 32-bit
    // size_t once times 4 bytes; the estimate keeps every bit
    for (const std::int64_t batch : {std::int64_t{1024}, std::int64_t{1023}}) {
        const attn::TrainingMemory m = attn::training_memory(c, static_cast<int>(batch), 256);
        CHECK(m.attention == batch * 64 * 256 * 256 * 4);
        CHECK(m.total() > (std::int64_t{1} << 32));
        REQUIRE_THROWS_MATCHES(attn::check_training_memory(c, static_cast<int>(batch), 256), attn::Error,
                               Catch::Matchers::Predicate<attn::Error>(
                                   [](const attn::Error& e) { return e.code() == attn::Error::Code::too_large; },
                                   "is too_large"));
    }
    // Model::forward checks before it allocates: a 1024×256 batch is refused with the sizes named
    attn::Model model(c);
    Batch b;
    b.batch = 1024;
    b.length = 256;
    b.ids.assign(static_cast<std::size_t>(b.batch) * b.length, 1);
    b.targets.assign(b.ids.size(), 2);
    try {
        model.forward(b);
        FAIL("forward allocated 16 GiB of attention weights");
    } catch (const attn::Error& e) {
        CHECK(e.code() == attn::Error::Code::too_large);
        CHECK_THAT(e.what(), Contains("17.2 GB of attention weights"));
    }
    // a batch that fits runs
    b.batch = 1;
    b.ids.resize(256);
    b.targets.resize(256);
    CHECK(std::isfinite(model.forward(b).loss));
    // the limit itself: the largest batch that fits passes, one more sequence is refused
    int fits = 1;
    while (attn::training_memory(c, fits + 1, 256).total() <= attn::kMaxTrainingBytes) ++fits;
    CHECK_NOTHROW(attn::check_training_memory(c, fits, 256));
    CHECK_THROWS_AS(attn::check_training_memory(c, fits + 1, 256), attn::Error);
}

TEST_CASE("model: format_bytes names sizes in decimal units", "[model][memory]") {
    CHECK(attn::format_bytes(std::int64_t{17179869184}) == "17.2 GB");
    CHECK(attn::format_bytes(42000000) == "42 MB");
    CHECK(attn::format_bytes(512000) == "512 kB");
    CHECK(attn::format_bytes(attn::kMaxTrainingBytes) == "805 MB");
}
