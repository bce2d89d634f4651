#pragma once
// The one validator of attention inputs: the checks (and messages) that the
// trace (trace.cpp), the Eigen paths (multi_head.cpp) and the fast path
// (fast_attention.cpp) share. Each throws attn::Error with the numbers in the
// message.

#include "attention/positional.hpp"
#include "kernels/bounds.hpp"
#include "base/types.hpp"
#include "attention/weights.hpp"

#include <string>

namespace attn {

/// heads >= 1 and d_model divisible by heads.
inline void check_heads(Eigen::Index d_model, int heads) {
    if (heads < 1) throw Error("heads must be at least 1, got " + std::to_string(heads));
    if (d_model % heads != 0)
        throw Error("d_model " + std::to_string(d_model) + " is not divisible by " + std::to_string(heads) + " heads");
}

/// RoPE pairs value i of a head with i + D/2: it needs an even head width D.
inline void check_positions(const AttentionPositions& positions, Eigen::Index d_head) {
    if (positions.kind == Positional::rope && d_head % 2 != 0)
        throw Error("positional rope needs an even head width D (it turns pairs of values), got D = " +
                    std::to_string(d_head));
}

/// A T×T mask: "mask is 3x2, expected 3x3 (tokens x tokens)" (`what` names it).
inline void check_mask_shape(Eigen::Index rows, Eigen::Index cols, Eigen::Index tokens, const std::string& what = "mask") {
    if (rows != tokens || cols != tokens)
        throw Error(Error::Code::bad_mask, what + " is " + std::to_string(rows) + "x" + std::to_string(cols) +
                                               ", expected " + std::to_string(tokens) + "x" + std::to_string(tokens) +
                                               " (tokens x tokens)");
}

/// The weights are C×C and bounded. validate_weights() names the culprit; it
/// runs only when something is wrong (Eigen's allFinite() over 4·C² floats
/// costs more than the whole attention at small sizes).
inline void check_weights(const Weights& w, Eigen::Index c) {
    bool ok = true;
    for (const Matrix* m : {&w.w_query, &w.w_key, &w.w_value, &w.w_output})
        ok = ok && m->rows() == c && m->cols() == c && all_within_bound(m->data(), static_cast<std::size_t>(m->size()));
    if (!ok) validate_weights(w, static_cast<int>(c));
}

/// Everything multi-head attention on x (T×C) needs, in this order: the heads
/// fit C, the weights are C×C and bounded, the mask (mask_rows × mask_cols;
/// pass T, T when there is none to check) is T×T, x is finite and within ±1e6
/// (so nothing downstream overflows, bounds.hpp).
inline void check_attention_inputs(const Eigen::Ref<const Matrix>& x, const Weights& w, int heads,
                                   Eigen::Index mask_rows, Eigen::Index mask_cols) {
    check_heads(x.cols(), heads);
    check_weights(w, x.cols());
    check_mask_shape(mask_rows, mask_cols, x.rows());
    check_bounded(x, "x");
}

}  // namespace attn
