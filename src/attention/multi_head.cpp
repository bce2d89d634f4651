#include "attention/multi_head.hpp"

#include "attention/attention.hpp"
#include "kernels/bounds.hpp"
#include "kernels/gemm.hpp"
#include "attention/validate.hpp"

#include <string>

namespace attn {
namespace {

void check_shapes(const Eigen::Ref<const Matrix>& x, const Weights& w, int heads, const MaskMatrix& mask,
                  const AttentionPositions& positions) {
    check_attention_inputs(x, w, heads, mask.rows(), mask.cols());
    check_positions(positions, x.cols() / heads);
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
        h.row_max.resize(0);
        h.row_sum.resize(0);
        h.weights.resize(0, 0);
        h.output.resize(0, d);
    }
    out.concat.resize(0, c);
    out.output.resize(0, c);
    return out;
}

/// The products on the hand-written SIMD kernels (gemm.hpp); x packed once
/// for the 3H projections.
struct KernelProducts {
    explicit KernelProducts(const Eigen::Ref<const Matrix>& x) : xp(x) {}
    void project(const Eigen::Ref<const Matrix>& w_cols, Matrix& out) const { xp.times(w_cols, out); }  // (T, C)·(C, D)
    static void scores(const Matrix& q, const Matrix& k, Matrix& s) { gemm_bt(q, k, s); }       // (T, D)·(D, T)
    static void output(const Matrix& a, const Matrix& v, Matrix& o) { gemm(a, v, o); }          // (T, T)·(T, D)
    static void final(const Matrix& concat, const Matrix& w_o, Matrix& y) { gemm(concat, w_o, y); }
    PackedLhs xp;
};

/// The same products with Eigen's own (the references).
struct EigenProducts {
    void project(const Eigen::Ref<const Matrix>& w_cols, Matrix& out) const { out.noalias() = x * w_cols; }
    static void scores(const Matrix& q, const Matrix& k, Matrix& s) { attention_scores(q, k, s); }
    static void output(const Matrix& a, const Matrix& v, Matrix& o) { attention_output(a, v, o); }
    static void final(const Matrix& concat, const Matrix& w_o, Matrix& y) { y.noalias() = concat * w_o; }
    const Eigen::Ref<const Matrix>& x;
};

/// RoPE: each row t of m (T×D, one head) rotated by position t's angles.
void rotate_rows(Matrix& m, const RopeTable& table) {
    for (Eigen::Index t = 0; t < m.rows(); ++t)
        rope_rotate_row(m.data() + t * m.cols(), 1, static_cast<int>(m.cols()), table.cos_row(static_cast<int>(t)),
                        table.sin_row(static_cast<int>(t)));
}

/// ALiBi: −slope·|i − j| added to every entry (i, j) of the scaled scores (T×T).
void add_alibi(Matrix& s, float slope) {
    for (Eigen::Index i = 0; i < s.rows(); ++i)
        for (Eigen::Index j = 0; j < s.cols(); ++j) s(i, j) -= slope * static_cast<float>(i > j ? i - j : j - i);
}

/// The per-head loop, written once for the three entry points: head h's
/// Q, K, V, scores, softmax and output, its output into concat's D columns.
/// kKeep: every head keeps its own intermediates in heads[h] (scaled and the
/// softmax row statistics included); otherwise heads[0] is scratch reused by
/// every head and the scores are scaled in place (one score buffer).
template <bool kKeep, typename Products>
void attend_heads(const Products& p, const Weights& w, int heads, const MaskMatrix& mask, bool scale,
                  const AttentionPositions& positions, std::vector<HeadTrace>& out, Matrix& concat) {
    const Eigen::Index d = concat.cols() / heads;
    const float factor = score_scale(static_cast<int>(d), scale);
    const bool rope = positions.kind == Positional::rope, alibi = positions.kind == Positional::alibi;
    RopeTable table;
    if (rope) rope_table(static_cast<int>(d), positions.rope, 0, static_cast<int>(concat.rows()), table);
    const std::vector<float> slopes = alibi ? alibi_slopes(heads) : std::vector<float>{};
    Matrix biased;
    for (int h = 0; h < heads; ++h) {
        HeadTrace& ht = out[kKeep ? static_cast<std::size_t>(h) : 0];
        // Each head projects with its own D columns, so heads with equal
        // weights give bit-identical results (slicing one T×C product would
        // round a column differently depending on where it sits).
        p.project(w.w_query.middleCols(h * d, d), ht.query);  // (T, D)
        p.project(w.w_key.middleCols(h * d, d), ht.key);      // (T, D)
        p.project(w.w_value.middleCols(h * d, d), ht.value);  // (T, D)
        if (rope) {  // q and k turned by their positions, before they meet
            if constexpr (kKeep) {
                ht.query_before_rope = ht.query;
                ht.key_before_rope = ht.key;
            }
            rotate_rows(ht.query, table);
            rotate_rows(ht.key, table);
        }
        p.scores(ht.query, ht.key, ht.scores);                // (T, T)
        if constexpr (kKeep) {
            ht.scaled = ht.scores * factor;  // (T, T)
            if (alibi) {  // the softmax reads scaled − m_h·|i − j|; the trace keeps scaled as it is
                biased = ht.scaled;
                add_alibi(biased, slopes[static_cast<std::size_t>(h)]);
            }
            masked_softmax(alibi ? biased : ht.scaled, mask, ht.weights, &ht.row_max, &ht.row_sum);
        } else {
            ht.scores *= factor;
            if (alibi) add_alibi(ht.scores, slopes[static_cast<std::size_t>(h)]);
            masked_softmax(ht.scores, mask, ht.weights);
        }
        p.output(ht.weights, ht.value, ht.output);  // (T, D)
        concat.middleCols(h * d, d) = ht.output;
    }
}

template <typename Products>
MultiHeadTrace traced(const Products& p, const Eigen::Ref<const Matrix>& x, const Weights& w, int heads,
                      const MaskMatrix& mask, bool scale, const AttentionPositions& positions) {
    MultiHeadTrace out;
    out.heads.resize(static_cast<std::size_t>(heads));
    out.concat.resize(x.rows(), x.cols());
    attend_heads<true>(p, w, heads, mask, scale, positions, out.heads, out.concat);
    p.final(out.concat, w.w_output, out.output);  // (T, C)
    return out;
}

}  // namespace

MultiHeadTrace multi_head_attention(const Eigen::Ref<const Matrix>& x, const Weights& w, int heads,
                                    const MaskMatrix& mask, bool scale, const AttentionPositions& positions) {
    check_shapes(x, w, heads, mask, positions);
    if (x.rows() == 0) return empty_trace(heads, x.cols());
    return traced(KernelProducts(x), x, w, heads, mask, scale, positions);
}

MultiHeadTrace multi_head_attention_reference(const Eigen::Ref<const Matrix>& x, const Weights& w, int heads,
                                              const MaskMatrix& mask, bool scale,
                                              const AttentionPositions& positions) {
    check_shapes(x, w, heads, mask, positions);
    if (x.rows() == 0) return empty_trace(heads, x.cols());
    return traced(EigenProducts{x}, x, w, heads, mask, scale, positions);
}

Matrix multi_head_output(const Eigen::Ref<const Matrix>& x, const Weights& w, int heads, const MaskMatrix& mask,
                         bool scale, const AttentionPositions& positions) {
    // The independent reference of the fast path (fast_attention.cpp): Eigen's
    // own products, none of the hand-written kernels; one score buffer is
    // reused across heads.
    check_shapes(x, w, heads, mask, positions);
    if (x.rows() == 0) return Matrix(0, x.cols());
    std::vector<HeadTrace> scratch(1);
    Matrix concat(x.rows(), x.cols()), y;
    const EigenProducts p{x};
    attend_heads<false>(p, w, heads, mask, scale, positions, scratch, concat);
    p.final(concat, w.w_output, y);  // (T, C)
    return y;
}

}  // namespace attn
