#pragma once
// The four projections of multi-head attention, each C×C, no biases.
// Head h (D = C/H) uses columns h·D … (h+1)·D-1 of W_Q, W_K, W_V and the same
// rows of W_O.

#include "base/types.hpp"

#include <cstdint>

namespace attn {

struct Weights {
    Matrix w_query;   ///< C×C
    Matrix w_key;     ///< C×C
    Matrix w_value;   ///< C×C
    Matrix w_output;  ///< C×C
};

/// Glorot-uniform weights, limit sqrt(6 / (C + C)), seeded. With
/// `share_heads` every head gets head 0's columns (and rows of W_O), so all
/// heads compute the same thing: the "heads differ" demonstration's control.
Weights glorot_weights(int d_model, int heads, std::uint32_t seed, bool share_heads = false);

/// Throws attn::Error naming the matrix and its shape unless all four are C×C,
/// and naming the entry unless every entry is finite and within ±1e6
/// (kMaxAbsValue, bounds.hpp: the range in which nothing can overflow).
void validate_weights(const Weights& w, int d_model);

}  // namespace attn
