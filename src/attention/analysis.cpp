#include "attention/analysis.hpp"

#include "attention/attention.hpp"
#include "kernels/bounds.hpp"
#include "base/random.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace attn {

namespace {
/// Entries within ±1e6 keep every sum below finite: the entropy of a row is at
/// most T·1e6·ln(1e6) ≈ 3e10, the Jacobian norm's p⁴ terms at most T·1e24.
constexpr const char* kAnalysisReason = "larger values can overflow the result in float";
}  // namespace

Vector row_entropy(const Eigen::Ref<const Matrix>& weights) {
    check_bounded(weights, "weights", kAnalysisReason);
    Vector h(weights.rows());
    for (Eigen::Index i = 0; i < weights.rows(); ++i) {
        double sum = 0;
        for (Eigen::Index j = 0; j < weights.cols(); ++j) {
            const double p = weights(i, j);
            if (p > 0) sum -= p * std::log(p);  // 0·ln 0 = 0
        }
        h[i] = static_cast<float>(sum);
    }
    return h;
}

Vector softmax_jacobian_norm(const Eigen::Ref<const Matrix>& weights) {
    // J = diag(p) - p·pᵀ:  ||J||²_F = Σ_i (p_i - p_i²)² + Σ_{i≠j} p_i² p_j²
    //                             = Σ_i p_i²(1 - p_i)² + (Σ_i p_i²)² - Σ_i p_i⁴
    check_bounded(weights, "weights", kAnalysisReason);
    Vector n(weights.rows());
    for (Eigen::Index r = 0; r < weights.rows(); ++r) {
        double diag = 0, sq = 0, quad = 0;
        for (Eigen::Index j = 0; j < weights.cols(); ++j) {
            const double p = weights(r, j);
            diag += p * p * (1 - p) * (1 - p);
            sq += p * p;
            quad += p * p * p * p;
        }
        n[r] = static_cast<float>(std::sqrt(std::max(0.0, diag + sq * sq - quad)));
    }
    return n;
}

namespace {

template <typename Allowed>
ScoreStats stats(const Eigen::Ref<const Matrix>& s, Allowed allowed) {
    ScoreStats st;
    double sum = 0;
    for (Eigen::Index i = 0; i < s.rows(); ++i)
        for (Eigen::Index j = 0; j < s.cols(); ++j) {
            if (!allowed(i, j)) continue;
            const double v = s(i, j);
            if (st.count == 0 || v < st.min) st.min = v;
            if (st.count == 0 || v > st.max) st.max = v;
            sum += v;
            ++st.count;
        }
    if (st.count == 0) return st;
    st.mean = sum / static_cast<double>(st.count);
    double var = 0;  // two-pass: exact for small counts, no cancellation
    for (Eigen::Index i = 0; i < s.rows(); ++i)
        for (Eigen::Index j = 0; j < s.cols(); ++j)
            if (allowed(i, j)) var += (s(i, j) - st.mean) * (s(i, j) - st.mean);
    st.variance = var / static_cast<double>(st.count);
    return st;
}

}  // namespace

ScoreStats score_stats(const Eigen::Ref<const Matrix>& scores) {
    // any finite float is fine: sums of up to 2^22 squares of 7e38 stay far
    // below the double range
    check_finite(scores, "scores", [](Eigen::Index, Eigen::Index) { return true; });
    return stats(scores, [](Eigen::Index, Eigen::Index) { return true; });
}

ScoreStats score_stats(const Eigen::Ref<const Matrix>& scores, const MaskMatrix& mask) {
    if (mask.rows() != scores.rows() || mask.cols() != scores.cols())
        throw Error(Error::Code::bad_mask, "mask is " + std::to_string(mask.rows()) + "x" + std::to_string(mask.cols()) +
                    ", scores are " + std::to_string(scores.rows()) + "x" + std::to_string(scores.cols()));
    // a hidden entry may be anything (-inf is the usual way to write it)
    check_finite(scores, "scores", [&](Eigen::Index i, Eigen::Index j) { return mask(i, j); });
    return stats(scores, [&](Eigen::Index i, Eigen::Index j) { return mask(i, j); });
}

ScaleExperiment scale_experiment(int d_k, int tokens, int samples, std::uint32_t seed, bool scale) {
    if (d_k < 1 || d_k > 4096) throw Error("d_k must be between 1 and 4096, got " + std::to_string(d_k));
    if (tokens < 1 || tokens > 512) throw Error("tokens must be between 1 and 512, got " + std::to_string(tokens));
    if (samples < 1 || samples > 10000)
        throw Error("samples must be between 1 and 10000, got " + std::to_string(samples));
    const float factor = score_scale(d_k, scale);
    const MaskMatrix all = MaskMatrix::Constant(tokens, tokens, true);
    Matrix q(tokens, d_k), k(tokens, d_k), scores, weights;
    double sum = 0, sum_sq = 0, entropy = 0, jacobian = 0;
    std::int64_t n = 0;
    for (int s = 0; s < samples; ++s) {
        for (int t = 0; t < tokens; ++t)
            for (int j = 0; j < d_k; ++j) {
                const std::uint64_t row = (static_cast<std::uint64_t>(s) << 20) | static_cast<std::uint64_t>(t);
                q(t, j) = counter_uniform(seed, Stream::experiment, row, 2 * static_cast<std::uint64_t>(j),
                                          kUnitVarianceLimit);
                k(t, j) = counter_uniform(seed, Stream::experiment, row, 2 * static_cast<std::uint64_t>(j) + 1,
                                          kUnitVarianceLimit);
            }
        attention_scores(q, k, scores);
        scores *= factor;
        masked_softmax(scores, all, weights);
        for (Eigen::Index i = 0; i < scores.size(); ++i) {
            sum += scores.data()[i];
            sum_sq += static_cast<double>(scores.data()[i]) * scores.data()[i];
        }
        n += scores.size();
        entropy += row_entropy(weights).cast<double>().sum();
        jacobian += softmax_jacobian_norm(weights).cast<double>().sum();
    }
    ScaleExperiment r;
    const double mean = sum / static_cast<double>(n);
    r.score_variance = sum_sq / static_cast<double>(n) - mean * mean;
    r.mean_entropy = entropy / (static_cast<double>(samples) * tokens);
    r.mean_jacobian_norm = jacobian / (static_cast<double>(samples) * tokens);
    r.max_entropy = std::log(static_cast<double>(tokens));
    return r;
}

}  // namespace attn
