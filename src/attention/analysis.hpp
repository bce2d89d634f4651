#pragma once
// Numbers the page shows beside the matrices to explain them.

#include "base/types.hpp"

#include <cstdint>

namespace attn {

/// Shannon entropy (natural log, nats) of each row of `weights` (T×T); zero
/// entries contribute 0. Entries must be finite and within ±1e6 (attn::Error
/// naming the first that is not), so the result is always finite. A uniform row over n keys has entropy ln n; a one-hot
/// row has 0.
Vector row_entropy(const Eigen::Ref<const Matrix>& weights);

/// Frobenius norm of the softmax Jacobian J = diag(p) - p·pᵀ of each row p of
/// `weights`: the size of the gradient signal through softmax. It is 0 for a
/// saturated (one-hot) row and 0.5 for a uniform row over 2 keys. Entries as
/// for row_entropy().
Vector softmax_jacobian_norm(const Eigen::Ref<const Matrix>& weights);

struct ScoreStats {
    double mean = 0;      ///< over the counted entries
    double variance = 0;  ///< population variance
    double min = 0;
    double max = 0;
    std::int64_t count = 0;
};

/// Statistics of the entries of `scores`; with a mask, of the allowed entries
/// only. A counted entry that is NaN or ±inf is an attn::Error naming it (a
/// hidden one may be anything, -inf included).
ScoreStats score_stats(const Eigen::Ref<const Matrix>& scores);
ScoreStats score_stats(const Eigen::Ref<const Matrix>& scores, const MaskMatrix& mask);

/// The "why 1/sqrt(d_k)" experiment: `samples` random (T×d_k) Q and K with
/// unit-variance entries, seeded; scores q·k (scaled by 1/sqrt(d_k) if
/// `scale`), softmax per row. Returns the variance of the scores and the mean
/// row entropy and softmax-Jacobian norm over all rows of all samples.
struct ScaleExperiment {
    double score_variance = 0;
    double mean_entropy = 0;
    double mean_jacobian_norm = 0;
    double max_entropy = 0;  ///< ln T, the entropy of a uniform row
};
ScaleExperiment scale_experiment(int d_k, int tokens, int samples, std::uint32_t seed, bool scale);

}  // namespace attn
