#include "multi_head.hpp"

#include "attention.hpp"
#include "bounds.hpp"
#include "gemm.hpp"

#include <string>

namespace attn {
namespace {

void check_shapes(const Eigen::Ref<const Matrix>& x, const Weights& w, int heads, const MaskMatrix& mask) {
    const Eigen::Index c = x.cols(), t = x.rows();
    if (heads < 1) throw Error("heads must be at least 1, got " + std::to_string(heads));
    if (c % heads != 0)
        throw Error("d_model " + std::to_string(c) + " is not divisible by " + std::to_string(heads) + " heads");
    validate_weights(w, static_cast<int>(c));
    if (mask.rows() != t || mask.cols() != t)
        throw Error("mask is " + std::to_string(mask.rows()) + "x" + std::to_string(mask.cols()) + ", expected " +
                    std::to_string(t) + "x" + std::to_string(t) + " (tokens x tokens)");
    check_bounded(x, "x");  // finite and within ±1e6, like the weights (bounds.hpp)
}

/// The trace of no tokens (T = 0): every matrix with 0 rows (0×D, 0×0, 0×C).
/// Returned before any per-head slicing: a head's columns of a 0-row matrix
/// would offset its null data pointer.
MultiHeadTrace empty_trace(int heads, Eigen::Index c) {
    const Eigen::Index d = c / heads;
    MultiHeadTrace out;
    out.heads.resize(static_cast<std::size_t>(heads));
    for (HeadTrace& h : out.heads) {
        h.query.resize(0, d);
        h.key.resize(0, d);
        h.value.resize(0, d);
        h.scores.resize(0, 0);
        h.scaled.resize(0, 0);
        h.weights.resize(0, 0);
        h.output.resize(0, d);
    }
    out.concat.resize(0, c);
    out.output.resize(0, c);
    return out;
}

}  // namespace

MultiHeadTrace multi_head_attention(const Eigen::Ref<const Matrix>& x, const Weights& w, int heads,
                                    const MaskMatrix& mask, bool scale) {
    check_shapes(x, w, heads, mask);
    if (x.rows() == 0) return empty_trace(heads, x.cols());
    const Eigen::Index t = x.rows(), c = x.cols(), d = c / heads;
    const float factor = score_scale(static_cast<int>(d), scale);

    MultiHeadTrace out;
    out.heads.resize(static_cast<std::size_t>(heads));
    out.concat.resize(t, c);
    const PackedLhs xp(x);  // x packed once for the 3H projections
    for (int h = 0; h < heads; ++h) {
        HeadTrace& ht = out.heads[static_cast<std::size_t>(h)];
        // Each head projects with its own D columns (as in the reference); the
        // kernels' sums do not depend on a column's position anyway, so heads
        // with equal weights give bit-identical results.
        xp.times(w.w_query.middleCols(h * d, d), ht.query);  // (T, C)·(C, D)
        xp.times(w.w_key.middleCols(h * d, d), ht.key);      // (T, D)
        xp.times(w.w_value.middleCols(h * d, d), ht.value);  // (T, D)
        gemm_bt(ht.query, ht.key, ht.scores);                // (T, D)·(D, T)
        ht.scaled = ht.scores * factor;                      // (T, T)
        masked_softmax(ht.scaled, mask, ht.weights);         // (T, T)
        gemm(ht.weights, ht.value, ht.output);               // (T, T)·(T, D)
        out.concat.middleCols(h * d, d) = ht.output;
    }
    gemm(out.concat, w.w_output, out.output);  // (T, C)
    return out;
}

MultiHeadTrace multi_head_attention_reference(const Eigen::Ref<const Matrix>& x, const Weights& w, int heads,
                                              const MaskMatrix& mask, bool scale) {
    check_shapes(x, w, heads, mask);
    if (x.rows() == 0) return empty_trace(heads, x.cols());
    const Eigen::Index t = x.rows(), c = x.cols(), d = c / heads;
    const float factor = score_scale(static_cast<int>(d), scale);

    MultiHeadTrace out;
    out.heads.resize(static_cast<std::size_t>(heads));
    out.concat.resize(t, c);
    for (int h = 0; h < heads; ++h) {
        HeadTrace& ht = out.heads[static_cast<std::size_t>(h)];
        // Each head projects with its own D columns, so heads with equal
        // weights give bit-identical results (slicing one T×C product would
        // round a column differently depending on where it sits).
        ht.query.noalias() = x * w.w_query.middleCols(h * d, d);  // (T, C)·(C, D)
        ht.key.noalias() = x * w.w_key.middleCols(h * d, d);      // (T, D)
        ht.value.noalias() = x * w.w_value.middleCols(h * d, d);  // (T, D)
        attention_scores(ht.query, ht.key, ht.scores);  // (T, T)
        ht.scaled = ht.scores * factor;                 // (T, T)
        masked_softmax(ht.scaled, mask, ht.weights);    // (T, T)
        attention_output(ht.weights, ht.value, ht.output);  // (T, D)
        out.concat.middleCols(h * d, d) = ht.output;
    }
    out.output.noalias() = out.concat * w.w_output;  // (T, C)
    return out;
}

Matrix multi_head_output(const Eigen::Ref<const Matrix>& x, const Weights& w, int heads, const MaskMatrix& mask,
                         bool scale) {
    // The independent reference of the fast path (fast_attention.cpp): Eigen's
    // own products, none of the hand-written kernels; one score buffer is
    // reused across heads.
    check_shapes(x, w, heads, mask);
    if (x.rows() == 0) return Matrix(0, x.cols());
    const Eigen::Index t = x.rows(), c = x.cols(), d = c / heads;
    const float factor = score_scale(static_cast<int>(d), scale);
    Matrix concat(t, c), q(t, d), k(t, d), v(t, d), scores(t, t), weights(t, t), head_out(t, d);
    for (int h = 0; h < heads; ++h) {
        q.noalias() = x * w.w_query.middleCols(h * d, d);  // (T, C)·(C, D)
        k.noalias() = x * w.w_key.middleCols(h * d, d);
        v.noalias() = x * w.w_value.middleCols(h * d, d);
        attention_scores(q, k, scores);  // (T, T)
        scores *= factor;
        masked_softmax(scores, mask, weights);
        attention_output(weights, v, head_out);  // (T, D)
        concat.middleCols(h * d, d) = head_out;
    }
    Matrix y(t, c);
    y.noalias() = concat * w.w_output;  // (T, C)
    return y;
}

}  // namespace attn
