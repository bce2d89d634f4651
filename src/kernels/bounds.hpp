#pragma once
// The range of values the core accepts where numbers enter it (x, weights, the
// analysis functions' matrices), so that no float operation downstream can
// overflow and no NaN or infinity ever comes out.
//
// The bound: every entry of x (T×C) and of W_Q, W_K, W_V, W_O (C×C) is finite
// and |v| <= kMaxAbsValue = 1e6. With C <= kMaxDModel = 1024 = 2^10:
//   Q, K, V entries   |x·W|        <= C·1e6·1e6            ≈ 1.0e15
//   scores            |q·kᵀ|       <= D·(1.0e15)²          <= 1.1e33 (unscaled, D <= C)
//   head outputs      |weights·V|  <= max |V|              ≈ 1.0e15
//   y                 |concat·W_O| <= C·1.0e15·1e6         ≈ 1.1e24
// and every partial sum of those products is bounded by the same sums of
// absolute values: all at least 3·10^5 below FLT_MAX ≈ 3.4e38, on both paths
// and in any summation order. Softmax then sees finite scores, and s − max
// (at most 2.2e33) is finite too. 1e6 is far above anything meaningful
// (Glorot weights are below 0.06 at C = 1024, embeddings below 2).

#include "kernels/kernels.hpp"
#include "base/types.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace attn {

/// Largest |entry| accepted in x and the weights (see above for why).
inline constexpr float kMaxAbsValue = 1e6f;

/// True when all n floats are finite and within ±kMaxAbsValue (the vector
/// kernel of kernels.hpp: as cheap as the finiteness test it replaced).
inline bool all_within_bound(const float* p, std::size_t n) { return kernels::all_within(p, n, kMaxAbsValue); }

/// True when all n floats are finite (within ±FLT_MAX): the one finiteness
/// test of the core (the vector kernel of kernels.hpp).
inline bool all_finite(const float* p, std::size_t n) {
    return kernels::all_within(p, n, std::numeric_limits<float>::max());
}
/// The same over a matrix, row by row when its rows are not contiguous (a head's columns).
/// (Eigen's allFinite() is 30 to 100 times slower: 30 ms for GPT-2's 128×50257 logits, 1 ms here.)
inline bool all_finite(const Eigen::Ref<const Matrix>& m) {
    if (m.outerStride() == m.cols()) return all_finite(m.data(), static_cast<std::size_t>(m.size()));
    for (Eigen::Index i = 0; i < m.rows(); ++i)
        if (!all_finite(m.data() + i * m.outerStride(), static_cast<std::size_t>(m.cols()))) return false;
    return true;
}

namespace detail {
inline std::string entry_name(const std::string& name, Eigen::Index i, Eigen::Index j) {
    return name + "[" + std::to_string(i) + "][" + std::to_string(j) + "]";
}
inline std::string float_text(float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
    return buf;
}
/// "x[2][1] is NaN, not a finite number" for the first entry `ok` rejects (row-major order).
template <typename Ok>
void check_entries(const Eigen::Ref<const Matrix>& m, const std::string& name, Ok ok, const char* why) {
    for (Eigen::Index i = 0; i < m.rows(); ++i)
        for (Eigen::Index j = 0; j < m.cols(); ++j) {
            const float v = m(i, j);
            if (ok(i, j, v)) continue;
            if (std::isnan(v)) throw Error(Error::Code::not_finite, entry_name(name, i, j) + " is NaN, not a finite number");
            if (std::isinf(v))
                throw Error(Error::Code::not_finite, entry_name(name, i, j) + " is " + (v > 0 ? "Infinity" : "-Infinity") +
                            ", not a finite number");
            throw Error(Error::Code::not_finite, entry_name(name, i, j) + " = " + float_text(v) + " is outside " + why);
        }
}
}  // namespace detail

inline constexpr const char* kBoundReason = "larger values can overflow Q·Kᵀ in float";

/// Throws attn::Error naming the first entry of `m` that is not finite or
/// beyond ±kMaxAbsValue: "w_query[3][1] = 1e+19 is outside the accepted range
/// -1e+06 to 1e+06 (larger values can overflow Q·Kᵀ in float)".
inline void check_bounded(const Eigen::Ref<const Matrix>& m, const std::string& name,
                          const char* reason = kBoundReason) {
    if (m.outerStride() == m.cols() && all_within_bound(m.data(), static_cast<std::size_t>(m.size()))) return;
    detail::check_entries(
        m, name, [](Eigen::Index, Eigen::Index, float v) { return std::abs(v) <= kMaxAbsValue; },
        ("the accepted range -1e+06 to 1e+06 (" + std::string(reason) + ")").c_str());
}

/// Throws attn::Error naming the first entry of `m` that is NaN or ±inf, of
/// those `counted(i, j)` selects.
template <typename Counted>
void check_finite(const Eigen::Ref<const Matrix>& m, const std::string& name, Counted counted) {
    detail::check_entries(
        m, name, [&](Eigen::Index i, Eigen::Index j, float v) { return !counted(i, j) || std::isfinite(v); }, "");
}

}  // namespace attn
