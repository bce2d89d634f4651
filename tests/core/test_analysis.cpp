// Tests of src/attention/analysis.hpp.

#include "attention/analysis.hpp"
#include "attention/mask.hpp"
#include "base/types.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <random>
#include <vector>

namespace {

/// Frobenius norm of diag(p) - p·pᵀ, the Jacobian built entry by entry.
double explicit_jacobian_norm(const std::vector<double>& p) {
    const std::size_t n = p.size();
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            const double jij = (i == j ? p[i] : 0.0) - p[i] * p[j];
            sum += jij * jij;
        }
    return std::sqrt(sum);
}

}  // namespace

TEST_CASE("row_entropy: uniform over n keys is ln n, one-hot is 0", "[analysis]") {
    const int t = 8;
    attn::Matrix w = attn::Matrix::Zero(t, t);
    for (int n = 1; n <= t; ++n)
        for (int j = 0; j < n; ++j) w(n - 1, j) = 1.0f / n;
    const attn::Vector h = attn::row_entropy(w);
    REQUIRE(h.size() == t);
    for (int n = 1; n <= t; ++n) {
        INFO("n = " << n);
        CHECK(h(n - 1) == Approx(std::log(static_cast<double>(n))).margin(1e-6));
    }
    // One-hot rows (zeros contribute 0, 1·ln 1 = 0).
    attn::Matrix one_hot = attn::Matrix::Zero(3, 3);
    one_hot(0, 0) = 1.0f;
    one_hot(1, 2) = 1.0f;
    one_hot(2, 1) = 1.0f;
    const attn::Vector h1 = attn::row_entropy(one_hot);
    REQUIRE(h1.size() == 3);
    CHECK(h1.allFinite());
    for (int i = 0; i < 3; ++i) CHECK(h1(i) == Approx(0.0).margin(1e-7));
}

TEST_CASE("row_entropy: hand example (1/2, 1/4, 1/4) is 1.5 ln 2", "[analysis]") {
    // H = -(1/2 ln 1/2 + 2 · 1/4 ln 1/4) = 1/2 ln 2 + 1/2 ln 4 = 1.5 ln 2 = 1.0397207708.
    attn::Matrix w(3, 3);
    w << 0.5f, 0.25f, 0.25f,  //
        0.25f, 0.0f, 0.75f,   //
        0.0f, 0.0f, 0.0f;
    const attn::Vector h = attn::row_entropy(w);
    CHECK(h(0) == Approx(1.0397207708).margin(1e-6));
    // -(1/4 ln 1/4 + 3/4 ln 3/4) = 0.25·1.3862943611 + 0.75·0.2876820725 = 0.5623351446.
    CHECK(h(1) == Approx(0.5623351446).margin(1e-6));
    // A fully masked (all-zero) row: nothing contributes.
    CHECK(h(2) == Approx(0.0).margin(1e-7));
    CHECK(h.allFinite());
}

TEST_CASE("softmax_jacobian_norm: uniform over 2 keys is 0.5, one-hot is 0", "[analysis]") {
    // p = [1/2, 1/2]: J = diag(p) - p·pᵀ = [[1/2-1/4, -1/4], [-1/4, 1/2-1/4]]
    //   = [[1/4, -1/4], [-1/4, 1/4]], ‖J‖_F = sqrt(4 · 1/16) = 1/2 exactly.
    // p = [1, 0]: J = [[1-1, 0], [0, 0]] = 0.
    attn::Matrix w(4, 4);
    w << 0.5f, 0.5f, 0.0f, 0.0f,  //
        0.0f, 0.5f, 0.0f, 0.5f,   //
        1.0f, 0.0f, 0.0f, 0.0f,   //
        0.0f, 0.0f, 0.0f, 1.0f;
    const attn::Vector j = attn::softmax_jacobian_norm(w);
    REQUIRE(j.size() == 4);
    CHECK(j(0) == 0.5f);
    CHECK(j(1) == 0.5f);
    CHECK(j(2) == Approx(0.0).margin(1e-7));
    CHECK(j(3) == Approx(0.0).margin(1e-7));
}

TEST_CASE("softmax_jacobian_norm: uniform over n is sqrt(n-1)/n", "[analysis]") {
    // ‖J‖² = n·(1/n - 1/n²)² + (n² - n)·(1/n²)² = (n-1)²/n³ + (n-1)/n³ = (n-1)/n².
    // n = 4: sqrt(3)/4 = 0.4330127019.
    const int t = 6;
    attn::Matrix w = attn::Matrix::Zero(t, t);
    for (int n = 1; n <= t; ++n)
        for (int k = 0; k < n; ++k) w(n - 1, k) = 1.0f / n;
    const attn::Vector j = attn::softmax_jacobian_norm(w);
    for (int n = 1; n <= t; ++n) {
        INFO("n = " << n);
        CHECK(j(n - 1) == Approx(std::sqrt(n - 1.0) / n).margin(1e-6));
    }
    CHECK(j(3) == Approx(0.4330127019).margin(1e-6));
}

TEST_CASE("softmax_jacobian_norm and row_entropy: random rows match explicit loops", "[analysis]") {
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(-4, 4);
    for (int iter = 0; iter < 100; ++iter) {
        const int t = 1 + static_cast<int>(rng() % 12);
        attn::Matrix w(t, t);
        std::vector<std::vector<double>> p(t, std::vector<double>(t));
        for (int i = 0; i < t; ++i) {
            double sum = 0;
            for (int k = 0; k < t; ++k) {
                p[i][k] = std::exp(u(rng));
                sum += p[i][k];
            }
            for (int k = 0; k < t; ++k) {
                w(i, k) = static_cast<float>(p[i][k] / sum);
                p[i][k] = static_cast<double>(w(i, k));  // compare on the same float input
            }
        }
        const attn::Vector j = attn::softmax_jacobian_norm(w);
        const attn::Vector h = attn::row_entropy(w);
        REQUIRE(j.size() == t);
        REQUIRE(h.size() == t);
        for (int i = 0; i < t; ++i) {
            double entropy = 0;
            for (int k = 0; k < t; ++k)
                if (p[i][k] > 0) entropy -= p[i][k] * std::log(p[i][k]);
            INFO("T = " << t << " row " << i);
            CHECK(j(i) == Approx(explicit_jacobian_norm(p[i])).margin(1e-5));
            CHECK(h(i) == Approx(entropy).margin(1e-5));
        }
    }
}

TEST_CASE("score_stats: mean and population variance by hand on a 2×2 example", "[analysis]") {
    // [[1, 2], [3, 6]]: mean = 12/4 = 3; deviations -2, -1, 0, 3 →
    // variance = (4 + 1 + 0 + 9)/4 = 3.5; min 1, max 6, count 4.
    attn::Matrix s(2, 2);
    s << 1, 2, 3, 6;
    const attn::ScoreStats st = attn::score_stats(s);
    CHECK(st.mean == Approx(3.0).margin(1e-12));
    CHECK(st.variance == Approx(3.5).margin(1e-12));
    CHECK(st.min == 1.0);
    CHECK(st.max == 6.0);
    CHECK(st.count == 4);
}

TEST_CASE("score_stats: with a mask only the allowed entries count", "[analysis]") {
    // Causal mask on [[1, 2], [3, 6]] keeps 1, 3, 6 (the 2 at (0,1) is hidden):
    // mean = 10/3; deviations -7/3, -1/3, 8/3 → squares 49/9, 1/9, 64/9, sum 114/9,
    // variance = 114/27 = 38/9 = 4.2222…; min 1, max 6, count 3.
    attn::Matrix s(2, 2);
    s << 1, 2, 3, 6;
    const attn::ScoreStats st = attn::score_stats(s, attn::build_mask(attn::MaskKind::causal, 2, 2));
    CHECK(st.mean == Approx(10.0 / 3.0).margin(1e-9));
    CHECK(st.variance == Approx(38.0 / 9.0).margin(1e-9));
    CHECK(st.min == 1.0);
    CHECK(st.max == 6.0);
    CHECK(st.count == 3);
    // Hiding the 6 instead: entries 1, 2, 3 → mean 2, variance 2/3, max 3.
    attn::MaskMatrix m(2, 2);
    m << true, true, true, false;
    const attn::ScoreStats st2 = attn::score_stats(s, m);
    CHECK(st2.mean == Approx(2.0).margin(1e-9));
    CHECK(st2.variance == Approx(2.0 / 3.0).margin(1e-9));
    CHECK(st2.max == 3.0);
    CHECK(st2.count == 3);
    // An all-true mask gives the unmasked statistics.
    const attn::ScoreStats all = attn::score_stats(s, attn::build_mask(attn::MaskKind::none, 2, 2));
    CHECK(all.mean == Approx(3.0).margin(1e-12));
    CHECK(all.variance == Approx(3.5).margin(1e-12));
    CHECK(all.count == 4);
}

TEST_CASE("scale_experiment: unscaled score variance grows like d_k, scaled stays near 1",
          "[analysis]") {
    for (int d_k : {4, 16, 64}) {
        const attn::ScaleExperiment off = attn::scale_experiment(d_k, 16, 50, 1, false);
        const attn::ScaleExperiment on = attn::scale_experiment(d_k, 16, 50, 1, true);
        INFO("d_k = " << d_k << " unscaled variance " << off.score_variance << " scaled variance "
                      << on.score_variance);
        // Var(q·k) = d_k for unit-variance entries; Var(q·k / sqrt(d_k)) = 1.
        CHECK(off.score_variance > 0.625 * d_k);
        CHECK(off.score_variance < 1.4 * d_k);
        CHECK(on.score_variance > 0.7);
        CHECK(on.score_variance < 1.3);
        CHECK(on.max_entropy == Approx(std::log(16.0)).margin(1e-9));
        CHECK(off.max_entropy == Approx(std::log(16.0)).margin(1e-9));
    }
    const attn::ScaleExperiment d64 = attn::scale_experiment(64, 16, 50, 1, false);
    CHECK(d64.score_variance >= 40.0);
    CHECK(d64.score_variance <= 90.0);
}

TEST_CASE("scale_experiment: without the scale softmax saturates at d_k = 256", "[analysis]") {
    const attn::ScaleExperiment off = attn::scale_experiment(256, 16, 30, 7, false);
    const attn::ScaleExperiment on = attn::scale_experiment(256, 16, 30, 7, true);
    INFO("entropy unscaled " << off.mean_entropy << " scaled " << on.mean_entropy << " of max "
                             << on.max_entropy << "; jacobian unscaled " << off.mean_jacobian_norm
                             << " scaled " << on.mean_jacobian_norm);
    CHECK(off.mean_entropy < on.mean_entropy);
    CHECK(off.mean_jacobian_norm < on.mean_jacobian_norm);
    CHECK(off.mean_entropy >= 0.0);
    CHECK(on.mean_entropy <= on.max_entropy + 1e-9);
    // Scores with standard deviation 16 leave rows nearly one-hot.
    CHECK(off.mean_entropy < 0.5 * on.mean_entropy);
}

TEST_CASE("scale_experiment: deterministic for a seed", "[analysis]") {
    const attn::ScaleExperiment a = attn::scale_experiment(8, 6, 5, 3, true);
    const attn::ScaleExperiment b = attn::scale_experiment(8, 6, 5, 3, true);
    const attn::ScaleExperiment c = attn::scale_experiment(8, 6, 5, 4, true);
    CHECK(a.score_variance == b.score_variance);
    CHECK(a.mean_entropy == b.mean_entropy);
    CHECK(a.mean_jacobian_norm == b.mean_jacobian_norm);
    CHECK(a.score_variance != c.score_variance);
}

TEST_CASE("row_entropy and softmax_jacobian_norm: non-finite or huge entries throw attn::Error naming the entry", "[analysis]") {
    // [[inf, 0]] gave an entropy of -inf, [[1e30, 1e30]] a Jacobian norm of inf.
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    for (const float bad : {inf, -inf, nan, 1e30f}) {
        attn::Matrix w(2, 2);
        w << 0.5f, 0.5f, bad, bad;
        INFO("entry " << bad);
        for (int fn = 0; fn < 2; ++fn) {
            std::string message = "<no error>";
            try {
                if (fn == 0) attn::row_entropy(w);
                else attn::softmax_jacobian_norm(w);
            } catch (const attn::Error& e) {
                message = e.what();
            }
            INFO((fn == 0 ? "row_entropy" : "softmax_jacobian_norm") << ": " << message);
            CHECK_THAT(message, Catch::Matchers::Contains("weights[1][0]"));
        }
    }
}

TEST_CASE("score_stats: a non-finite entry it would count throws attn::Error, a masked-out one is ignored", "[analysis]") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    attn::Matrix s(2, 2);
    s << 1.0f, nan, 3.0f, -std::numeric_limits<float>::infinity();
    CHECK_THROWS_AS(attn::score_stats(s), attn::Error);
    attn::MaskMatrix m(2, 2);
    m << true, false, true, true;
    CHECK_THROWS_AS(attn::score_stats(s, m), attn::Error);
    m << true, false, true, false;  // −∞ for a hidden key is the usual convention
    const attn::ScoreStats st = attn::score_stats(s, m);
    CHECK(st.count == 2);
    CHECK(st.mean == 2.0);
    CHECK(std::isfinite(st.variance));
}
