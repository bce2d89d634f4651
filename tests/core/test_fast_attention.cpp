// Tests of src/attention/fast_attention.hpp: the SIMD fast path against the Eigen
// reference (multi_head_output) and the independent double-precision
// reference of reference.hpp, on random shapes including T = 1, 3, 17 and
// head widths D that are not multiples of 4; every mask kind; scale on and off.
// These run natively (the kernels' SSE2 form); tests/js/fast.test.mjs runs
// the same comparisons through the wasm SIMD128 kernels.

#include "attention/attention.hpp"
#include "attention/fast_attention.hpp"
#include "attention/mask.hpp"
#include "attention/multi_head.hpp"
#include "base/types.hpp"
#include "attention/weights.hpp"
#include "reference.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using Catch::Matchers::Contains;

namespace {

struct Case {
    int t = 1, heads = 1, d = 1;
    attn::Matrix x;
    attn::Weights w;
    bool scale = true;
    attn::MaskKind kind = attn::MaskKind::none;
    int real = 0;
    attn::MaskMatrix mask;  // the T×T matrix the reference gets
    std::string describe() const {
        return "T=" + std::to_string(t) + " H=" + std::to_string(heads) + " D=" + std::to_string(d) +
               " mask=" + attn::mask_name(kind) + " real=" + std::to_string(real) +
               " scale=" + (scale ? "on" : "off");
    }
    attn::MaskSpec spec() const {
        return kind == attn::MaskKind::custom ? attn::MaskSpec::custom(mask) : attn::MaskSpec::from_kind(kind, real);
    }
};

attn::Weights random_weights(std::mt19937& rng, int c) {
    const double limit = std::sqrt(6.0 / (2.0 * c));
    return attn::Weights{ref::random_matrix(rng, c, c, -limit, limit), ref::random_matrix(rng, c, c, -limit, limit),
                         ref::random_matrix(rng, c, c, -limit, limit), ref::random_matrix(rng, c, c, -limit, limit)};
}

Case random_case(std::mt19937& rng, int t, int heads, int d) {
    Case k;
    k.t = t;
    k.heads = heads;
    k.d = d;
    k.x = ref::random_matrix(rng, t, heads * d, -2, 2);
    k.w = random_weights(rng, heads * d);
    k.scale = std::bernoulli_distribution(0.7)(rng);
    const int pick = std::uniform_int_distribution<int>(0, 4)(rng);
    k.kind = pick == 0 ? attn::MaskKind::none
           : pick == 1 ? attn::MaskKind::causal
           : pick == 2 ? attn::MaskKind::padding
           : pick == 3 ? attn::MaskKind::causal_padding
                       : attn::MaskKind::custom;
    k.real = std::uniform_int_distribution<int>(0, t)(rng);
    k.mask = k.kind == attn::MaskKind::custom ? ref::random_mask(rng, t, 0.6) : attn::build_mask(k.kind, t, k.real);
    return k;
}

/// max |got - want| / max(1, max |want|)
double relative_error(const attn::Matrix& got, const attn::Matrix& want) {
    if (got.rows() != want.rows() || got.cols() != want.cols()) return std::numeric_limits<double>::infinity();
    if (got.size() == 0) return 0.0;
    if (!got.allFinite()) return std::numeric_limits<double>::infinity();
    const double scale = std::max(1.0, static_cast<double>(want.cwiseAbs().maxCoeff()));
    return static_cast<double>((got - want).cwiseAbs().maxCoeff()) / scale;
}

bool bit_identical_rows(const attn::Matrix& a, const attn::Matrix& b, int rows) {
    for (int i = 0; i < rows; ++i)
        if (std::memcmp(a.row(i).data(), b.row(i).data(), sizeof(float) * static_cast<std::size_t>(a.cols())) != 0)
            return false;
    return true;
}

std::string error_of(const attn::Matrix& x, const attn::Weights& w, int heads, const attn::MaskSpec& m) {
    attn::FastAttention fa;
    attn::Matrix y;
    try {
        fa.forward(x, w, heads, m, true, y);
    } catch (const attn::Error& e) {
        return e.what();
    }
    return "<no error>";
}

}  // namespace

TEST_CASE("fast_attention: matches the Eigen reference on random shapes masks and scales", "[fast_attention]") {
    std::mt19937 rng(20240601);
    attn::FastAttention fa;  // one workspace for every case: reuse must not leak state
    attn::Matrix y;
    double worst = 0.0;
    const int fixed_t[] = {1, 3, 17};
    for (int i = 0; i < 400; ++i) {
        const int t = i < 60 ? fixed_t[i % 3] : std::uniform_int_distribution<int>(1, 70)(rng);
        const int heads = std::uniform_int_distribution<int>(1, 4)(rng);
        const int d = std::uniform_int_distribution<int>(1, 13)(rng);  // D % 4 != 0 in most cases
        const Case k = random_case(rng, t, heads, d);
        fa.forward(k.x, k.w, k.heads, k.spec(), k.scale, y);
        const attn::Matrix want = attn::multi_head_output(k.x, k.w, k.heads, k.mask, k.scale);
        const double err = relative_error(y, want);
        worst = std::max(worst, err);
        INFO(k.describe() << ", relative error " << err);
        REQUIRE(err <= 1e-5);
    }
    INFO("max relative error " << worst);
    SUCCEED();
}

TEST_CASE("fast_attention: matches the Eigen reference across row blocks and key panels", "[fast_attention]") {
    // Sizes that cross the fast path's internal boundaries: several blocks of
    // 64 query rows, key panels of 8 with a partial last one, blocks of fewer
    // rows when T is long, and the widths of the benchmark's heads.
    std::mt19937 rng(7);
    attn::FastAttention fa;
    attn::Matrix y;
    struct Size { int t, heads, d; };
    for (const Size s : {Size{65, 2, 8}, Size{130, 3, 5}, Size{200, 1, 64}, Size{257, 8, 4}, Size{1100, 3, 4}}) {
        for (const attn::MaskKind kind : {attn::MaskKind::none, attn::MaskKind::causal, attn::MaskKind::causal_padding,
                                          attn::MaskKind::custom}) {
            Case k = random_case(rng, s.t, s.heads, s.d);
            k.kind = kind;
            k.real = s.t * 2 / 3;
            k.mask = kind == attn::MaskKind::custom ? ref::random_mask(rng, s.t, 0.5) : attn::build_mask(kind, s.t, k.real);
            fa.forward(k.x, k.w, k.heads, k.spec(), k.scale, y);
            const double err = relative_error(y, attn::multi_head_output(k.x, k.w, k.heads, k.mask, k.scale));
            INFO(k.describe() << ", relative error " << err);
            REQUIRE(err <= 1e-5);
        }
    }
}

TEST_CASE("fast_attention: matches the independent double-precision reference", "[fast_attention]") {
    std::mt19937 rng(99);
    for (int i = 0; i < 60; ++i) {
        const Case k = random_case(rng, std::uniform_int_distribution<int>(1, 24)(rng),
                                   std::uniform_int_distribution<int>(1, 3)(rng),
                                   std::uniform_int_distribution<int>(1, 9)(rng));
        const attn::Matrix y = attn::fast_multi_head_output(k.x, k.w, k.heads, k.spec(), k.scale);
        const ref::Result want = ref::multi_head(k.x, k.w, k.heads, k.mask, k.scale);
        const ref::Diff diff = ref::compare(y, want.output, 1e-5);
        INFO(k.describe() << ": " << diff.describe("output"));
        REQUIRE(diff.ok());
    }
}

TEST_CASE("fast_attention: a causal mask hides future keys exactly", "[fast_attention]") {
    // Output row i may depend on tokens 0..i only: changing every later token
    // leaves rows 0..i bit-identical (hidden keys contribute exact zeros).
    std::mt19937 rng(3);
    for (const int t : {1, 3, 17, 70}) {
        const Case k = random_case(rng, t, 2, 6);
        const int i = std::uniform_int_distribution<int>(0, t - 1)(rng);
        attn::Matrix changed = k.x;
        for (int r = i + 1; r < t; ++r) changed.row(r) = ref::random_matrix(rng, 1, 12, -50, 50);
        const attn::Matrix a = attn::fast_multi_head_output(k.x, k.w, 2, attn::MaskSpec::causal(), true);
        const attn::Matrix b = attn::fast_multi_head_output(changed, k.w, 2, attn::MaskSpec::causal(), true);
        INFO("T=" << t << " rows 0.." << i);
        REQUIRE(bit_identical_rows(a, b, i + 1));
    }
}

TEST_CASE("fast_attention: a padding mask hides padding keys from every query exactly", "[fast_attention]") {
    std::mt19937 rng(4);
    const int t = 23, real = 9;
    const Case k = random_case(rng, t, 3, 5);
    attn::Matrix changed = k.x;
    for (int r = real; r < t; ++r) changed.row(r) = ref::random_matrix(rng, 1, 15, -50, 50);
    for (const auto spec : {attn::MaskSpec::padding(real), attn::MaskSpec::causal_padding(real)}) {
        const attn::Matrix a = attn::fast_multi_head_output(k.x, k.w, 3, spec, true);
        const attn::Matrix b = attn::fast_multi_head_output(changed, k.w, 3, spec, true);
        REQUIRE(bit_identical_rows(a, b, real));
    }
}

TEST_CASE("fast_attention: a fully masked row gives an all-zero output row and never NaN", "[fast_attention]") {
    std::mt19937 rng(5);
    for (const int t : {1, 5, 18}) {
        const Case k = random_case(rng, t, 2, 3);
        attn::MaskMatrix m = ref::random_mask(rng, t, 0.7);
        const int dead = t / 2;
        m.row(dead).setConstant(false);
        const attn::Matrix y = attn::fast_multi_head_output(k.x, k.w, 2, attn::MaskSpec::custom(m), true);
        REQUIRE(y.allFinite());
        REQUIRE(y.row(dead).isZero(0.0f));
        // padding with no real tokens hides every key from every query
        const attn::Matrix none = attn::fast_multi_head_output(k.x, k.w, 2, attn::MaskSpec::padding(0), true);
        REQUIRE(none.isZero(0.0f));
    }
}

TEST_CASE("fast_attention: huge scores stay finite and match the reference", "[fast_attention]") {
    // Scores of ±1e4 make exp() underflow for all but the row maximum: the
    // stable softmax must still give the reference's (one-hot-like) weights.
    std::mt19937 rng(6);
    for (const auto kind : {attn::MaskKind::none, attn::MaskKind::causal}) {
        Case k = random_case(rng, 19, 2, 7);
        k.x *= 60.0f;
        k.kind = kind;
        k.mask = attn::build_mask(kind, 19, 19);
        const attn::Matrix y = attn::fast_multi_head_output(k.x, k.w, 2, k.spec(), false);
        const double err = relative_error(y, attn::multi_head_output(k.x, k.w, 2, k.mask, false));
        INFO(attn::mask_name(kind) << ": relative error " << err);
        REQUIRE(err <= 1e-5);
    }
}

TEST_CASE("fast_attention: a custom matrix equal to a range mask gives the same result bit for bit", "[fast_attention]") {
    std::mt19937 rng(8);
    const int t = 37;
    const Case k = random_case(rng, t, 4, 3);
    const attn::MaskMatrix causal = attn::build_mask(attn::MaskKind::causal, t, t);
    const attn::MaskMatrix padding = attn::build_mask(attn::MaskKind::causal_padding, t, 30);
    REQUIRE(attn::fast_multi_head_output(k.x, k.w, 4, attn::MaskSpec::custom(causal), true) ==
            attn::fast_multi_head_output(k.x, k.w, 4, attn::MaskSpec::causal(), true));
    REQUIRE(attn::fast_multi_head_output(k.x, k.w, 4, attn::MaskSpec::custom(padding), true) ==
            attn::fast_multi_head_output(k.x, k.w, 4, attn::MaskSpec::causal_padding(30), true));
}

TEST_CASE("fast_attention: a reused workspace gives the results of a fresh one", "[fast_attention]") {
    std::mt19937 rng(10);
    attn::FastAttention reused;
    attn::Matrix y;
    for (const int t : {40, 3, 90, 1, 40}) {
        const Case k = random_case(rng, t, 2, 5);
        reused.forward(k.x, k.w, 2, k.spec(), k.scale, y);
        REQUIRE(y == attn::fast_multi_head_output(k.x, k.w, 2, k.spec(), k.scale));
    }
    REQUIRE(reused.workspace_bytes() > 0);
    reused.release();
    REQUIRE(reused.workspace_bytes() == 0);
}

TEST_CASE("fast_attention: rejects bad shapes with the reference's messages", "[fast_attention]") {
    std::mt19937 rng(11);
    const attn::Matrix x = ref::random_matrix(rng, 4, 10, -1, 1);
    const attn::Weights w = random_weights(rng, 10);
    REQUIRE_THAT(error_of(x, w, 3, attn::MaskSpec::none()), Contains("d_model 10 is not divisible by 3 heads"));
    REQUIRE_THAT(error_of(x, w, 0, attn::MaskSpec::none()), Contains("heads must be at least 1"));
    attn::Weights bad = w;
    bad.w_key.resize(10, 9);
    REQUIRE_THAT(error_of(x, bad, 2, attn::MaskSpec::none()), Contains("w_key is 10x9"));
    const attn::MaskMatrix m(3, 3);
    REQUIRE_THAT(error_of(x, w, 2, attn::MaskSpec::custom(m)), Contains("mask is 3x3, expected 4x4"));
}

TEST_CASE("fast_attention: no tokens give an empty output", "[fast_attention]") {
    std::mt19937 rng(12);
    const attn::Matrix x(0, 8);
    const attn::Matrix y = attn::fast_multi_head_output(x, random_weights(rng, 8), 2, attn::MaskSpec::none(), true);
    REQUIRE(y.rows() == 0);
    REQUIRE(y.cols() == 8);
}

TEST_CASE("fast exp: relative error below 2e-7 from -87 to 88", "[fast_attention][exp]") {
    const std::size_t n = 1 << 21;
    std::vector<float> x(n), e(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = -87.0f + 175.0f * static_cast<float>(i) / static_cast<float>(n - 1);
    attn::detail::fast_exp(x.data(), e.data(), n);
    double worst = 0.0;
    float at = 0.0f;
    for (std::size_t i = 0; i < n; ++i) {
        const double want = std::exp(static_cast<double>(x[i]));
        const double err = std::abs(static_cast<double>(e[i]) - want) / want;
        if (err > worst) worst = err, at = x[i];
    }
    INFO("max relative error " << worst << " at x = " << at);
    REQUIRE(worst < 2e-7);
}

TEST_CASE("fast exp: exact at 0 and exactly zero below -87 with no denormals", "[fast_attention][exp]") {
    const float x[] = {0.0f, -87.5f, -100.0f, -1e30f, -std::numeric_limits<float>::infinity(), -86.9f, -1.0f};
    float e[7];
    attn::detail::fast_exp(x, e, 7);
    REQUIRE(e[0] == 1.0f);
    for (int i = 1; i <= 4; ++i) REQUIRE(e[i] == 0.0f);
    REQUIRE(std::isnormal(e[5]));
    REQUIRE(e[6] == Approx(std::exp(-1.0)).epsilon(4e-7));
}

TEST_CASE("fast softmax: rows sum to 1 within 1e-6 at every T up to 2048 and match masked_softmax", "[fast_attention]") {
    // The fused pass's denominator, summed in float key by key, drifted like the
    // reference's did: the property is checked on the weights it implies.
    std::mt19937 rng(2049);
    std::uniform_real_distribution<float> near(-0.5f, 0.0f);
    std::normal_distribution<float> spread(0.0f, 3.0f);
    for (const int t : {1, 3, 8, 255, 256, 425, 1000, 2047, 2048})
        for (int kind = 0; kind < 2; ++kind)
            for (const bool causal : {false, true}) {
                const int rows = 13;  // a partial last row tile
                attn::Matrix s(rows, t);
                for (int i = 0; i < rows; ++i)
                    for (int j = 0; j < t; ++j) s(i, j) = kind == 0 ? 4.0f + near(rng) : spread(rng);
                attn::Matrix w, want;
                attn::detail::fast_softmax(s, causal, w);
                attn::MaskMatrix m = attn::MaskMatrix::Constant(rows, t, true);
                if (causal)
                    for (int i = 0; i < rows; ++i)
                        for (int j = i + 1; j < t; ++j) m(i, j) = false;
                attn::masked_softmax(s, m, want);
                double worst = 0;
                for (int i = 0; i < rows; ++i) worst = std::max(worst, std::abs(w.row(i).cast<double>().sum() - 1.0));
                INFO("T = " << t << ", kind " << kind << (causal ? ", causal" : "") << ": worst |row sum - 1| = " << worst
                            << ", max |fast - reference| = " << (w - want).cwiseAbs().maxCoeff());
                CHECK(worst <= 1e-6);
                CHECK((w - want).cwiseAbs().maxCoeff() <= 1e-6f);
            }
}

TEST_CASE("fast_attention: x or weights not finite or beyond 1e6 throw naming the entry like the reference", "[fast_attention]") {
    std::mt19937 rng(13);
    const attn::Matrix x0 = ref::random_matrix(rng, 5, 8, -2, 2);
    const attn::Weights w0 = random_weights(rng, 8);
    for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 1e20f,
                            -3e38f, 1.01e6f}) {
        INFO("bad value " << bad);
        attn::Matrix x = x0;
        x(4, 7) = bad;
        CHECK_THAT(error_of(x, w0, 2, attn::MaskSpec::causal()), Contains("x[4][7]"));
        attn::Weights w = w0;
        w.w_output(2, 5) = bad;
        CHECK_THAT(error_of(x0, w, 2, attn::MaskSpec::causal()), Contains("w_output[2][5]"));
    }
    // the largest accepted values: finite, and the reference agrees
    attn::Matrix x = attn::Matrix::Constant(9, 1024, 1e6f);
    x.row(3) *= -1.0f;
    attn::Weights w{attn::Matrix::Constant(1024, 1024, 1e6f), attn::Matrix::Constant(1024, 1024, -1e6f),
                    attn::Matrix::Constant(1024, 1024, 1e6f), attn::Matrix::Constant(1024, 1024, 1e6f)};
    const attn::Matrix y = attn::fast_multi_head_output(x, w, 2, attn::MaskSpec::none(), false);
    REQUIRE(y.allFinite());
    CHECK(relative_error(y, attn::multi_head_output(x, w, 2, attn::build_mask(attn::MaskKind::none, 9, 9), false)) <= 1e-5);
}

TEST_CASE("fast_attention: matches the Eigen reference at the model widths C = 768 and 1024", "[fast_attention]") {
    // the widths of BERT-base / GPT-2 small (12 heads of 64) and of (512, 1024, 16),
    // at odd T and T across a row block, every range mask
    std::mt19937 rng(768);
    attn::FastAttention fa;
    attn::Matrix y;
    struct Size { int t, heads, d; };
    for (const Size s : {Size{37, 12, 64}, Size{1, 12, 64}, Size{70, 16, 64}, Size{5, 8, 96}}) {
        for (const attn::MaskKind kind : {attn::MaskKind::none, attn::MaskKind::causal, attn::MaskKind::padding}) {
            Case k = random_case(rng, s.t, s.heads, s.d);
            k.kind = kind;
            k.real = (s.t + 1) / 2;
            k.mask = attn::build_mask(kind, s.t, k.real);
            fa.forward(k.x, k.w, k.heads, k.spec(), k.scale, y);
            const double err = relative_error(y, attn::multi_head_output(k.x, k.w, k.heads, k.mask, k.scale));
            INFO(k.describe() << ", relative error " << err);
            REQUIRE(err <= 1e-5);
        }
    }
}

TEST_CASE("fast_attention: kept weight panels follow every change of the weights", "[fast_attention]") {
    // The workspace keeps the packed weights and reuses them while the weights'
    // bits are unchanged; any change, even of one bit in the last entry, must
    // repack: each result is the one of a fresh workspace.
    std::mt19937 rng(25);
    attn::FastAttention kept;
    attn::Matrix y;
    for (const int c : {96, 72}) {  // past the in-place width (64), two widths in turn
        Case k = random_case(rng, 9, 4, c / 4);
        auto fresh = [&] { return attn::fast_multi_head_output(k.x, k.w, k.heads, k.spec(), k.scale); };
        kept.forward(k.x, k.w, k.heads, k.spec(), k.scale, y);
        REQUIRE(y == fresh());
        kept.forward(k.x, k.w, k.heads, k.spec(), k.scale, y);  // the same weights: panels reused
        REQUIRE(y == fresh());
        for (attn::Matrix* m : {&k.w.w_query, &k.w.w_key, &k.w.w_value, &k.w.w_output}) {
            float& last = m->data()[m->size() - 1];
            std::uint32_t bits;
            std::memcpy(&bits, &last, 4);
            bits ^= 1u << 20;  // a change of the mantissa
            std::memcpy(&last, &bits, 4);
            kept.forward(k.x, k.w, k.heads, k.spec(), k.scale, y);
            const attn::Matrix want = fresh();
            REQUIRE(y == want);
            REQUIRE(relative_error(y, attn::multi_head_output(k.x, k.w, k.heads, k.mask, k.scale)) <= 1e-5);
        }
        k.w.w_output.row(3).setZero();  // a whole row at once
        kept.forward(k.x, k.w, k.heads, k.spec(), k.scale, y);
        REQUIRE(y == fresh());
    }
    kept.release();
    REQUIRE(kept.workspace_bytes() == 0);
    const Case k = random_case(rng, 9, 4, 24);
    kept.forward(k.x, k.w, k.heads, k.spec(), k.scale, y);  // after release: packs again
    REQUIRE(y == attn::fast_multi_head_output(k.x, k.w, k.heads, k.spec(), k.scale));
}

TEST_CASE("fast_attention: forward_kept on kept weights gives forward()'s numbers bit for bit", "[fast_attention]") {
    // keep_weights once, then calls that pass x alone: each result equals forward() with
    // those weights passed, also after forward() on other weights repacked the panels
    // (in place at C <= 64, packed above), and within 1e-5 of the Eigen reference.
    std::mt19937 rng(2522);
    for (const int c : {16, 96}) {
        attn::FastAttention fa;
        Case k = random_case(rng, 11, 4, c / 4);
        fa.keep_weights(k.w);
        REQUIRE(fa.kept_c() == c);
        const Case other = random_case(rng, 7, 4, c / 4);
        attn::Matrix y, y_other;
        for (int round = 0; round < 24; ++round) {
            Case q = random_case(rng, std::uniform_int_distribution<int>(1, 40)(rng), 4, c / 4);
            q.w = k.w;
            fa.forward_kept(q.x, q.heads, q.spec(), q.scale, y);
            INFO(q.describe());
            REQUIRE(y == attn::fast_multi_head_output(q.x, q.w, q.heads, q.spec(), q.scale));
            REQUIRE(relative_error(y, attn::multi_head_output(q.x, q.w, q.heads, q.mask, q.scale)) <= 1e-5);
            if (round % 3 == 0) {  // forward() on other weights in between
                fa.forward(other.x, other.w, other.heads, other.spec(), other.scale, y_other);
                REQUIRE(y_other == attn::fast_multi_head_output(other.x, other.w, other.heads, other.spec(), other.scale));
            }
        }
        const Case next = random_case(rng, 5, 2, c / 2);  // keep_weights again replaces them
        fa.keep_weights(next.w);
        fa.forward_kept(next.x, next.heads, next.spec(), next.scale, y);
        REQUIRE(y == attn::fast_multi_head_output(next.x, next.w, next.heads, next.spec(), next.scale));
    }
}

TEST_CASE("fast_attention: forward_kept refuses a missing weight set, another width and bad weights by code", "[fast_attention]") {
    std::mt19937 rng(2523);
    attn::FastAttention fa;
    attn::Matrix y;
    const attn::Matrix x = ref::random_matrix(rng, 4, 8, -1, 1);
    auto code_of = [&](auto f) {
        try {
            f();
        } catch (const attn::Error& e) {
            return std::string(attn::error_code_name(e.code())) + ": " + e.what();
        }
        return std::string("<no error>");
    };
    REQUIRE_THAT(code_of([&] { fa.forward_kept(x, 2, attn::MaskSpec::none(), true, y); }), Contains("bad_state"));
    attn::Weights bad = random_weights(rng, 8);
    bad.w_value(2, 5) = std::numeric_limits<float>::quiet_NaN();
    REQUIRE_THAT(code_of([&] { fa.keep_weights(bad); }), Contains("w_value[2][5] is NaN"));
    REQUIRE(fa.kept_c() == 0);
    REQUIRE_THAT(code_of([&] { fa.keep_weights(attn::Weights{}); }), Contains("bad_shape"));
    fa.keep_weights(random_weights(rng, 12));
    REQUIRE_THAT(code_of([&] { fa.forward_kept(x, 2, attn::MaskSpec::none(), true, y); }),
                 Contains("bad_shape: x has 8 columns; the kept weights are 12x12"));
    const attn::Matrix x12 = ref::random_matrix(rng, 4, 12, -1, 1);
    REQUIRE_THAT(code_of([&] { fa.forward_kept(x12, 5, attn::MaskSpec::none(), true, y); }), Contains("not divisible"));
    attn::Matrix huge = x12;
    huge(1, 1) = 1e7f;
    REQUIRE_THAT(code_of([&] { fa.forward_kept(huge, 2, attn::MaskSpec::none(), true, y); }), Contains("not_finite: x[1][1]"));
    const attn::MaskMatrix wrong = attn::build_mask(attn::MaskKind::causal, 3, 3);
    REQUIRE_THAT(code_of([&] { fa.forward_kept(x12, 2, attn::MaskSpec::custom(wrong), true, y); }), Contains("bad_mask"));
}

TEST_CASE("fast_attention: rope and alibi match the Eigen reference and the double reference", "[fast_attention][modern]") {
    std::mt19937 rng(20261205);
    attn::FastAttention fa;  // reused across kinds: the rope table must follow T
    attn::Matrix y;
    double worst = 0.0, worst_double = 0.0;
    struct Size { int t, heads, d; };
    std::vector<Size> sizes = {{65, 2, 8}, {130, 3, 6}, {257, 4, 4}};
    for (int i = 0; i < 120; ++i)
        sizes.push_back({std::uniform_int_distribution<int>(1, 40)(rng), std::uniform_int_distribution<int>(1, 4)(rng),
                         2 * std::uniform_int_distribution<int>(1, 6)(rng)});
    for (const Size s : sizes)
        for (const attn::Positional kind : {attn::Positional::rope, attn::Positional::alibi}) {
            const Case k = random_case(rng, s.t, s.heads, s.d);
            const attn::AttentionPositions positions{kind, {}};
            fa.forward(k.x, k.w, k.heads, k.spec(), k.scale, y, positions);
            const double err = relative_error(y, attn::multi_head_output(k.x, k.w, k.heads, k.mask, k.scale, positions));
            INFO(k.describe() << " " << attn::positional_name(kind) << ", relative error " << err);
            REQUIRE(err <= 1e-5);
            worst = std::max(worst, err);
            if (s.t <= 70) {
                const ref::Diff d = ref::compare(y, ref::multi_head(k.x, k.w, k.heads, k.mask, k.scale, kind).output, 1e-5);
                INFO(d.describe("output"));
                REQUIRE(d.ok());
                worst_double = std::max(worst_double, d.max_diff / std::max(1.0, d.magnitude));
            }
        }
    WARN("rope and alibi, fast path: largest relative error against Eigen " << worst << ", against double "
                                                                            << worst_double);
    // forward_kept takes the positions too, with the same numbers bit for bit
    const Case k = random_case(rng, 33, 2, 8);
    const attn::AttentionPositions rope{attn::Positional::rope, {}};
    fa.forward(k.x, k.w, k.heads, k.spec(), k.scale, y, rope);
    attn::Matrix kept;
    fa.keep_weights(k.w);
    fa.forward_kept(k.x, k.heads, k.spec(), k.scale, kept, rope);
    CHECK(kept == y);
}
