#pragma once
// Multi-head self-attention on an input X' (T×C): every intermediate kept.

#include "attention/positional.hpp"
#include "base/types.hpp"
#include "attention/weights.hpp"

#include <vector>

namespace attn {

/// One head's intermediates. With ALiBi the softmax reads scaled − m_h·|i − j| (the
/// head's slope m_h, alibi_slopes()): row_max and row_sum are of that, and
/// weights = exp(scaled − m_h·|i − j| − row_max) / row_sum.
struct HeadTrace {
    Matrix query;    ///< Q_h (T×D), after RoPE's rotation with rope
    Matrix key;      ///< K_h (T×D), after RoPE's rotation with rope
    Matrix value;    ///< V_h (T×D)
    Matrix scores;   ///< Q_h·K_hᵀ (T×T)
    Matrix scaled;   ///< scores / sqrt(D) (T×T), before masking, finite
    Vector row_max;  ///< per query: the largest allowed scaled score m (T; 0 for a fully masked row)
    Vector row_sum;  ///< per query: Σ_j exp(scaled − m) over allowed keys (T; 0 for a fully masked row)
    Matrix weights;  ///< masked row softmax (T×T) = exp(scaled − row_max) / row_sum
    Matrix output;   ///< weights·V_h (T×D)
    Matrix query_before_rope;  ///< Q_h before RoPE's rotation (T×D; empty without rope)
    Matrix key_before_rope;    ///< K_h before RoPE's rotation (T×D; empty without rope)
};

struct MultiHeadTrace {
    std::vector<HeadTrace> heads;  ///< H heads
    Matrix concat;                 ///< heads' outputs side by side (T×C)
    Matrix output;                 ///< concat·W_O (T×C)
};

/// x (T×C), weights (C×C each), mask (T×T) → every intermediate; `positions`: RoPE rotates
/// each head's q and k by their row (the position of row t is t), ALiBi adds
/// −m_h·|i − j| to head h's scaled scores before the mask. Validates
/// shapes and throws attn::Error naming them; x and the weights must be finite
/// and within ±1e6 (bounds.hpp), or the error names the first entry outside.
/// T = 0 gives empty (0-row) matrices. The matrix products run on the
/// hand-written SIMD kernels (gemm.hpp); the same numbers as
/// multi_head_attention_reference() within float rounding (tested to 1e-5).
MultiHeadTrace multi_head_attention(const Eigen::Ref<const Matrix>& x, const Weights& weights,
                                    int heads, const MaskMatrix& mask, bool scale,
                                    const AttentionPositions& positions = {});

/// The slow, obvious reference: the same steps with Eigen's products.
MultiHeadTrace multi_head_attention_reference(const Eigen::Ref<const Matrix>& x, const Weights& weights,
                                              int heads, const MaskMatrix& mask, bool scale,
                                              const AttentionPositions& positions = {});

/// Output only (T×C), without keeping per-head T×T matrices: one score buffer
/// is reused across heads. Eigen's products only (none of the SIMD kernels of
/// gemm.hpp / kernels.hpp): the independent reference the fast path
/// (fast_attention.hpp, engine.forward) is tested against, and what
/// engine.forwardReference runs.
Matrix multi_head_output(const Eigen::Ref<const Matrix>& x, const Weights& weights, int heads,
                         const MaskMatrix& mask, bool scale, const AttentionPositions& positions = {});

}  // namespace attn
