// Tests of src/attention/attention.hpp: the single-head steps.

#include "attention/attention.hpp"
#include "base/types.hpp"
#include "reference.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

namespace {

attn::MaskMatrix full_mask(int t) { return attn::MaskMatrix::Constant(t, t, true); }

/// An n×n matrix whose n rows are all `values` (the steps take T×T matrices).
attn::Matrix row(std::initializer_list<float> values) {
    const int n = static_cast<int>(values.size());
    attn::Matrix m(n, n);
    for (int i = 0; i < n; ++i) {
        int j = 0;
        for (float v : values) m(i, j++) = v;
    }
    return m;
}

}  // namespace

TEST_CASE("attention_scores: q·kᵀ equals the loop reference", "[attention]") {
    std::mt19937 rng(1);
    for (int iter = 0; iter < 50; ++iter) {
        const int t = 1 + static_cast<int>(rng() % 20), d = 1 + static_cast<int>(rng() % 8);
        const attn::Matrix q = ref::random_matrix(rng, t, d, -2, 2);
        const attn::Matrix k = ref::random_matrix(rng, t, d, -2, 2);
        attn::Matrix s;
        attn::attention_scores(q, k, s);
        const ref::Diff diff = ref::compare(s, ref::scores(ref::from(q), ref::from(k)), 1e-5);
        INFO(diff.describe("scores"));
        CHECK(diff.ok());
    }
}

TEST_CASE("attention_scores: hand example", "[attention]") {
    // q = [[1,2],[0,1]], k = [[3,0],[1,1]]:
    //   s00 = 1·3+2·0 = 3, s01 = 1·1+2·1 = 3, s10 = 0·3+1·0 = 0, s11 = 0·1+1·1 = 1.
    attn::Matrix q(2, 2), k(2, 2);
    q << 1, 2, 0, 1;
    k << 3, 0, 1, 1;
    attn::Matrix s;
    attn::attention_scores(q, k, s);
    REQUIRE(s.rows() == 2);
    REQUIRE(s.cols() == 2);
    CHECK(s(0, 0) == 3.0f);
    CHECK(s(0, 1) == 3.0f);
    CHECK(s(1, 0) == 0.0f);
    CHECK(s(1, 1) == 1.0f);
}

TEST_CASE("score_scale: 1/sqrt(D) with the scale on, 1 with it off", "[attention]") {
    CHECK(attn::score_scale(1, true) == 1.0f);
    CHECK(attn::score_scale(4, true) == 0.5f);
    CHECK(attn::score_scale(16, true) == 0.25f);
    CHECK(attn::score_scale(64, true) == 0.125f);
    CHECK(attn::score_scale(2, true) == Approx(0.70710678118).epsilon(1e-7));
    CHECK(attn::score_scale(8, true) == Approx(0.35355339059).epsilon(1e-7));
    for (int d : {1, 2, 4, 7, 64}) CHECK(attn::score_scale(d, false) == 1.0f);
}

TEST_CASE("masked_softmax: hand example with weights 1/6, 1/3, 1/2", "[attention]") {
    // Scores [0, ln 2, ln 3]: exp gives [1, 2, 3], sum 6 → [1/6, 2/6, 3/6].
    const attn::Matrix s = row({0.0f, static_cast<float>(std::log(2.0)), static_cast<float>(std::log(3.0))});
    attn::Matrix w;
    attn::masked_softmax(s, full_mask(3), w);
    REQUIRE(w.rows() == 3);
    REQUIRE(w.cols() == 3);
    CHECK(w(0, 0) == Approx(1.0 / 6.0).margin(1e-6));
    CHECK(w(0, 1) == Approx(1.0 / 3.0).margin(1e-6));
    CHECK(w(0, 2) == Approx(1.0 / 2.0).margin(1e-6));
    // [1, 0]: e/(e+1) = 1/(1+e^-1) = 0.7310585786, 1/(1+e) = 0.2689414214.
    attn::masked_softmax(row({1.0f, 0.0f}), full_mask(2), w);
    CHECK(w(0, 0) == Approx(0.7310585786).margin(1e-6));
    CHECK(w(0, 1) == Approx(0.2689414214).margin(1e-6));
    // Equal scores: uniform.
    attn::masked_softmax(row({5.0f, 5.0f, 5.0f, 5.0f}), full_mask(4), w);
    for (int j = 0; j < 4; ++j) CHECK(w(0, j) == Approx(0.25).margin(1e-7));
}

TEST_CASE("masked_softmax: masked entries are exactly zero", "[attention]") {
    // Row [ln 2, 100 (masked), 0]: allowed exp [2, 1] → [2/3, 0, 1/3].
    attn::Matrix s = row({static_cast<float>(std::log(2.0)), 100.0f, 0.0f});
    attn::MaskMatrix m(3, 3);
    m << true, false, true,  //
        true, false, true,   //
        true, false, true;
    attn::Matrix w;
    attn::masked_softmax(s, m, w);
    CHECK(w(0, 1) == 0.0f);
    CHECK(w(0, 0) == Approx(2.0 / 3.0).margin(1e-6));
    CHECK(w(0, 2) == Approx(1.0 / 3.0).margin(1e-6));
    // A huge masked score does not disturb the others.
    s.col(1).setConstant(3e38f);
    attn::masked_softmax(s, m, w);
    CHECK(w.allFinite());
    for (int i = 0; i < 3; ++i) {
        CHECK(w(i, 1) == 0.0f);
        CHECK(w(i, 0) == Approx(2.0 / 3.0).margin(1e-6));
    }
}

TEST_CASE("masked_softmax: random rows match the reference, rows sum to 1, masked entries 0",
          "[attention]") {
    std::mt19937 rng(7);
    for (int iter = 0; iter < 200; ++iter) {
        const int t = 1 + static_cast<int>(rng() % 20);
        const attn::Matrix s = ref::random_matrix(rng, t, t, -10, 10);
        const attn::MaskMatrix m = ref::random_mask(rng, t, 0.6);
        attn::Matrix w;
        attn::masked_softmax(s, m, w);
        REQUIRE(w.rows() == t);
        REQUIRE(w.cols() == t);
        const ref::Diff diff = ref::compare(w, ref::masked_softmax(ref::from(s), ref::from(m)), 1e-6);
        INFO("T = " << t << "; " << diff.describe("weights"));
        CHECK(diff.ok());
        for (int i = 0; i < t; ++i) {
            double sum = 0;
            for (int j = 0; j < t; ++j) {
                if (!m(i, j)) CHECK(w(i, j) == 0.0f);
                CHECK(w(i, j) >= 0.0f);
                sum += w(i, j);
            }
            if (m.row(i).any())
                CHECK(sum == Approx(1.0).margin(1e-5));
            else
                CHECK(sum == 0.0);
        }
    }
}

TEST_CASE("masked_softmax: scores of 1e4 and -1e4 give finite weights summing to 1", "[attention]") {
    attn::Matrix s(4, 4);
    s << 1e4f, -1e4f, 0.0f, -1e4f,   //
        1e4f, 1e4f, 1e4f, 1e4f,      //
        -1e4f, -1e4f, -1e4f, -1e4f,  //
        -1e4f, 1e4f, 9999.0f, -1e4f;
    attn::Matrix w;
    attn::masked_softmax(s, full_mask(4), w);
    REQUIRE(w.rows() == 4);
    REQUIRE(w.cols() == 4);
    CHECK(w.allFinite());
    for (int i = 0; i < 4; ++i) CHECK(w.row(i).sum() == Approx(1.0f).margin(1e-5));
    // Row 0: exp(0 - 1e4) underflows to 0, the maximum gets everything.
    CHECK(w(0, 0) == 1.0f);
    CHECK(w(0, 1) == 0.0f);
    CHECK(w(0, 2) == 0.0f);
    CHECK(w(0, 3) == 0.0f);
    for (int j = 0; j < 4; ++j) {
        CHECK(w(1, j) == Approx(0.25).margin(1e-7));
        CHECK(w(2, j) == Approx(0.25).margin(1e-7));
    }
    // Row 3: [-1e4, 1e4, 1e4-1, -1e4] → [0, 1/(1+e^-1), e^-1/(1+e^-1), 0]
    //      = [0, 0.7310585786, 0.2689414214, 0].
    CHECK(w(3, 0) == 0.0f);
    CHECK(w(3, 1) == Approx(0.7310585786).margin(1e-6));
    CHECK(w(3, 2) == Approx(0.2689414214).margin(1e-6));
    CHECK(w(3, 3) == 0.0f);
}

TEST_CASE("masked_softmax: a fully masked row gives zero weights, no NaN", "[attention]") {
    attn::Matrix s(3, 3);
    s << 1, 2, 3, 4, 5, 6, -7, 8, 1e4f;
    attn::MaskMatrix m(3, 3);
    m << true, true, false,  //
        false, false, false, //
        false, false, false;
    attn::Matrix w;
    attn::masked_softmax(s, m, w);
    CHECK(w.allFinite());
    CHECK((w.row(1).array() == 0.0f).all());
    CHECK((w.row(2).array() == 0.0f).all());
    CHECK(w(0, 2) == 0.0f);
    // Row 0 over [1, 2]: [1/(1+e), e/(1+e)].
    CHECK(w(0, 0) == Approx(0.2689414214).margin(1e-6));
    CHECK(w(0, 1) == Approx(0.7310585786).margin(1e-6));
    // A 1×1 fully masked matrix too.
    attn::Matrix one(1, 1);
    one << 0.0f;
    attn::masked_softmax(one, attn::MaskMatrix::Constant(1, 1, false), w);
    CHECK(w(0, 0) == 0.0f);
}

TEST_CASE("masked_softmax: adding a constant to a row does not change it", "[attention]") {
    std::mt19937 rng(3);
    for (int iter = 0; iter < 20; ++iter) {
        const int t = 2 + static_cast<int>(rng() % 10);
        const attn::Matrix s = ref::random_matrix(rng, t, t, -3, 3);
        attn::Matrix shifted = s.array() + 1000.0f;
        attn::Matrix w1, w2;
        attn::masked_softmax(s, full_mask(t), w1);
        attn::masked_softmax(shifted, full_mask(t), w2);
        // The shifted row loses the low bits (ulp(1000) ≈ 6e-5) of each score.
        CHECK((w1 - w2).cwiseAbs().maxCoeff() < 1e-4f);
    }
}

TEST_CASE("attention_output: weights·V equals the loop reference", "[attention]") {
    std::mt19937 rng(11);
    for (int iter = 0; iter < 50; ++iter) {
        const int t = 1 + static_cast<int>(rng() % 20), d = 1 + static_cast<int>(rng() % 8);
        const attn::Matrix w = ref::random_matrix(rng, t, t, 0, 1);
        const attn::Matrix v = ref::random_matrix(rng, t, d, -2, 2);
        attn::Matrix out;
        attn::attention_output(w, v, out);
        const ref::Diff diff = ref::compare(out, ref::matmul(ref::from(w), ref::from(v)), 1e-5);
        INFO(diff.describe("output"));
        CHECK(diff.ok());
    }
}

TEST_CASE("attention_output: hand example", "[attention]") {
    // w = [[0.5, 0.5], [1, 0]], v = [[2, 4], [6, 8]] → [[4, 6], [2, 4]].
    attn::Matrix w(2, 2), v(2, 2);
    w << 0.5f, 0.5f, 1.0f, 0.0f;
    v << 2, 4, 6, 8;
    attn::Matrix out;
    attn::attention_output(w, v, out);
    REQUIRE(out.rows() == 2);
    REQUIRE(out.cols() == 2);
    CHECK(out(0, 0) == 4.0f);
    CHECK(out(0, 1) == 6.0f);
    CHECK(out(1, 0) == 2.0f);
    CHECK(out(1, 1) == 4.0f);
}

namespace {

/// `rows` rows of T scores of one of three kinds: near-equal (what repeated
/// tokens give: every exp() close to 1, so the denominator is close to T),
/// spread (normal, sigma 3) and half-saturated (one large score per row).
attn::Matrix stress_scores(std::mt19937& rng, int rows, int t, int kind) {
    attn::Matrix s(rows, t);
    std::uniform_real_distribution<float> near(-0.5f, 0.0f);
    std::normal_distribution<float> spread(0.0f, 3.0f);
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < t; ++j) s(i, j) = kind == 0 ? 4.0f + near(rng) : spread(rng);
    if (kind == 2)
        for (int i = 0; i < rows; ++i) s(i, static_cast<int>(rng() % static_cast<unsigned>(t))) += 12.0f;
    return s;
}

/// Largest |row sum - 1| over the rows with any allowed key, summed in double.
double worst_row_sum_error(const attn::Matrix& w) {
    double worst = 0;
    for (Eigen::Index i = 0; i < w.rows(); ++i) worst = std::max(worst, std::abs(w.row(i).cast<double>().sum() - 1.0));
    return worst;
}

}  // namespace

TEST_CASE("masked_softmax: rows sum to 1 within 1e-6 at every T up to 2048", "[attention]") {
    // A float running sum of T terms drifts by up to ~T·2^-24 of the total;
    // at T = 2048 near-equal scores it missed 1 by several 1e-6.
    std::mt19937 rng(2048);
    for (const int t : {1, 2, 7, 64, 255, 256, 425, 1000, 1024, 2047, 2048})
        for (int kind = 0; kind < 3; ++kind) {
            const attn::Matrix s = stress_scores(rng, 16, t, kind);
            attn::Matrix w;
            attn::masked_softmax(s, attn::MaskMatrix::Constant(16, t, true), w);
            const double err = worst_row_sum_error(w);
            INFO("T = " << t << ", kind " << kind << ": worst |row sum - 1| = " << err);
            CHECK(err <= 1e-6);
        }
}
