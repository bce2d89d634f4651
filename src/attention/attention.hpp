#pragma once
// Scaled dot-product attention for one head, one step per function so that
// every intermediate can be kept and shown:
//   scores  = Q·Kᵀ                 (T×T)
//   scaled  = scores · 1/sqrt(D)    (or unscaled when the scale is off)
//   weights = masked row softmax    (T×T, forbidden entries exactly 0)
//   output  = weights · V           (T×D)

#include "base/types.hpp"

namespace attn {

/// q, k (T×D) → scores (T×T) = q·kᵀ.
void attention_scores(const Eigen::Ref<const Matrix>& q, const Eigen::Ref<const Matrix>& k,
                      Matrix& scores);

/// The factor the scores are multiplied by: 1/sqrt(D), or 1 with the scale off.
float score_scale(int d_head, bool scale);

/// Row softmax of `scaled` (T×T) where `mask` allows, into `weights`.
/// Numerically stable (the row maximum over allowed entries is subtracted),
/// masked entries are written as exact zeros without evaluating exp(-inf),
/// and a fully masked row gives all-zero weights, never NaN.
/// With row_max / row_sum, also writes each row's maximum over allowed keys m
/// and its denominator Σ_j exp(scaled(i, j) − m) over allowed keys (summed in
/// double, then rounded to float): weights(i, j) = exp(scaled(i, j) − m) / sum.
/// A fully masked row gets m = 0 and sum = 0 (every other row has sum >= 1).
void masked_softmax(const Eigen::Ref<const Matrix>& scaled, const MaskMatrix& mask,
                    Matrix& weights, Vector* row_max = nullptr, Vector* row_sum = nullptr);

/// weights (T×T), v (T×D) → output (T×D).
void attention_output(const Eigen::Ref<const Matrix>& weights, const Eigen::Ref<const Matrix>& v,
                      Matrix& output);

}  // namespace attn
