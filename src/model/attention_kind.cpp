// The attention kind (layers.hpp): Q, K, V projections, (the per-head q/k
// RMSNorm, RoPE's rotation,) scores, scale, (ALiBi's bias,) mask, softmax, ×V,
// the output projection, and their backward. Query head h reads K/V head
// h / (H / H_kv) (grouped-query attention; H_kv = H: one each). The same code
// runs a whole sequence (training, run, trace) and generation's new rows over
// the KV cache: the cache only moves where the keys and values are read from.

#include "model/layers.hpp"

#include "kernels/gemm.hpp"

#include <algorithm>
#include <cmath>

namespace attn {
namespace {

/// What attention_row() found in a row: the largest scaled score over the
/// allowed keys and the softmax's denominator Σ_j exp(s_j·scale − max) (in
/// double; 0 under uniform attention, which computes no exponentials).
struct RowWeights {
    float max = 0;
    double sum = 0;
};

/// The attention weights of one query row over its allowed keys 0 … end−1
/// (end ≥ 1) from its unscaled scores: the softmax of scores·scale (pass 1:
/// max; pass 2: exp, sum in double; pass 3: normalise), or exactly 1/end on
/// each under uniform attention (ForwardOptions::uniform_attention). Keys from
/// `end` on are not written. (With ALiBi the caller passes the biased scaled scores
/// and a scale of 1.)
RowWeights attention_row(const float* scores, float scale, int end, bool uniform, float* weights) {
    RowWeights out;
    out.max = scores[0] * scale;
    for (int j = 1; j < end; ++j) out.max = std::max(out.max, scores[j] * scale);
    if (uniform) {
        for (int j = 0; j < end; ++j) weights[j] = 1.0f / static_cast<float>(end);
        return out;
    }
    for (int j = 0; j < end; ++j) {
        weights[j] = std::exp(scores[j] * scale - out.max);
        out.sum += weights[j];
    }
    const float inv = static_cast<float>(1.0 / out.sum);
    for (int j = 0; j < end; ++j) weights[j] *= inv;
    return out;
}

/// The keys the query at position i of a sequence of `len` real tokens may see: 0 … end−1.
int row_end(int i, int len, bool causal) { return causal ? std::min(i + 1, len) : len; }

/// Stores the call's keys and values (T×H_kv·D) at rows past … past+T−1 of a layer's cache;
/// its rows double as it fills, up to the model's context.
void store_rows(KvRows& kv, const Matrix& k, const Matrix& v, int past, int context) {
    const Eigen::Index need = past + k.rows();
    if (kv.keys.rows() < need) {
        const Eigen::Index rows = std::min<Eigen::Index>(context, std::max<Eigen::Index>({8, 2 * kv.keys.rows(), need}));
        kv.keys.conservativeResize(rows, k.cols());
        kv.values.conservativeResize(rows, v.cols());
    }
    kv.keys.middleRows(past, k.rows()) = k;
    kv.values.middleRows(past, v.rows()) = v;
}

/// RoPE on the N rows of m (B sequences of T rows; `heads` heads of D values per row):
/// row b·T + t turned by the table's row t (position past + t); inverse: the backward.
void rotate_rows(Matrix& m, int B, int T, int heads, int D, const RopeTable& table, bool inverse = false) {
    for (int b = 0; b < B; ++b)
        for (int t = 0; t < T; ++t)
            rope_rotate_row(m.data() + static_cast<std::ptrdiff_t>(b * T + t) * m.cols(), heads, D, table.cos_row(t),
                            table.sin_row(t), inverse);
}

/// qk_norm: every head's D values of every row of m RMSNormed with one gain of D, the
/// input kept in `in` and each head's 1/rms in rstd (rows × heads).
void head_norm_forward(Matrix& m, int heads, int D, const float* gain, float eps, Matrix& in, std::vector<float>& rstd) {
    in = m;
    rstd.resize(static_cast<std::size_t>(m.rows()) * heads);
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (int h = 0; h < heads; ++h) {
            const std::ptrdiff_t at = r * m.cols() + static_cast<std::ptrdiff_t>(h) * D;
            rstd[static_cast<std::size_t>(r) * heads + h] = rmsnorm_row(in.data() + at, D, gain, eps, m.data() + at);
        }
}

/// Its backward, in place: dm (∂loss/∂ the normed values) becomes ∂loss/∂ the input; dgain += (null: not asked).
void head_norm_backward(Matrix& dm, int heads, int D, const float* gain, const Matrix& in, const std::vector<float>& rstd,
                        float* dgain) {
    std::vector<float> row(static_cast<std::size_t>(D));
    for (Eigen::Index r = 0; r < dm.rows(); ++r)
        for (int h = 0; h < heads; ++h) {
            const std::ptrdiff_t at = r * dm.cols() + static_cast<std::ptrdiff_t>(h) * D;
            rmsnorm_row_backward(in.data() + at, D, gain, rstd[static_cast<std::size_t>(r) * heads + h], dm.data() + at,
                                 row.data(), dgain);
            std::copy(row.begin(), row.end(), dm.data() + at);
        }
}

}  // namespace

void attention_forward(const ModelConfig& config, const LayerParams<const float*>& p, const Matrix& a,
                       const AttentionRun& run, AttentionCache& c, Matrix& out, AttentionStatsSum* stats,
                       const Tap& rec) {
    const int B = run.B, T = run.T, C = config.d_model, H = config.heads, N = B * T, l = run.layer;
    const int D = head_dim_of(config), Hkv = kv_heads_of(config), group = H / Hkv, QC = H * D, KC = Hkv * D;
    const int S = run.past + T;  // keys per sequence: the cached ones, then the call's own
    const ForwardOptions& options = *run.options;
    const bool uniform = options.uniform_attention;
    affine(a, p.w_query, p.b_query, C, QC, c.q, p.panels);  // (N, C)·(C, H·D)
    affine(a, p.w_key, p.b_key, C, KC, c.k, p.panels);      // (N, C)·(C, H_kv·D)
    affine(a, p.w_value, p.b_value, C, KC, c.v, p.panels);
    if (config.qk_norm) {  // Qwen3: each head's q and k RMSNormed over its D values
        head_norm_forward(c.q, H, D, p.q_norm_gain, config.ln_eps, c.q_proj, c.q_rstd);
        head_norm_forward(c.k, Hkv, D, p.k_norm_gain, config.ln_eps, c.k_proj, c.k_rstd);
    }
    // RoPE: each row's q and k turned by their position (past + t) before the keys are
    // stored, so that a cached key keeps its own
    Matrix q_before, k_before;
    if (run.rope) {
        if (rec.wants(Point::q_before_rope, l)) {
            q_before = c.q;
            k_before = c.k;
        }
        rotate_rows(c.q, B, T, H, D, *run.rope);
        rotate_rows(c.k, B, T, Hkv, D, *run.rope);
    }
    // Sequence b's keys and values: rows b·S … of the call's own, or the cache's 0 … S−1.
    const Matrix* keys = &c.k;
    const Matrix* values = &c.v;
    if (run.cache) {
        store_rows(*run.cache, c.k, c.v, run.past, config.context);
        keys = &run.cache->keys;
        values = &run.cache->values;
    }
    c.weights.assign(static_cast<std::size_t>(std::int64_t{B} * H * T * S), 0.0f);
    c.concat.setZero(N, QC);
    const bool keep_rows = rec.wants(Point::row_max, l);
    Matrix scores, head_out, row_max, row_sum;
    std::vector<float> biased(run.alibi ? static_cast<std::size_t>(S) : 0);
    for (int b = 0; b < B; ++b) {
        const int len = (*run.lengths)[static_cast<std::size_t>(b)];
        for (int h = 0; h < H; ++h) {
            const int kv = h / group;  // the K/V head this query head reads
            const float slope = run.alibi ? (*run.alibi)[static_cast<std::size_t>(h)] : 0.0f;
            const bool enabled = options.head_on(l, h);
            float* w = c.weights.data() + static_cast<std::size_t>((std::int64_t{b} * H + h) * T * S);
            const auto q = c.q.block(b * T, h * D, T, D);
            const auto k = keys->block(b * S, kv * D, S, D), v = values->block(b * S, kv * D, S, D);
            gemm_bt(q, k, scores);  // (T, D)·(D, S)
            if (keep_rows) {
                row_max.setZero(T, 1);
                row_sum.setZero(T, 1);
            }
            // hidden keys stay exact zeros
            for (int i = 0; i < T; ++i) {
                const int end = row_end(run.past + i, run.past + len, run.causal);
                float* wi = w + static_cast<std::size_t>(i) * S;
                if (end <= 0) continue;
                // the softmax's input: si·scale, or with ALiBi si·scale − m_h·|i − j| (passed with scale 1)
                const float* si = scores.data() + static_cast<std::ptrdiff_t>(i) * S;
                float scale = run.scale;
                if (slope != 0.0f) {
                    const int pos = run.past + i;
                    for (int j = 0; j < end; ++j)
                        biased[static_cast<std::size_t>(j)] = si[j] * run.scale - slope * static_cast<float>(pos > j ? pos - j : j - pos);
                    si = biased.data();
                    scale = 1.0f;
                }
                const RowWeights row = attention_row(si, scale, end, uniform, wi);
                if (keep_rows) {
                    // under uniform attention: the softmax of n equal scores, max 0 and sum n
                    row_max(i, 0) = uniform ? 0.0f : row.max;
                    row_sum(i, 0) = uniform ? static_cast<float>(end) : static_cast<float>(row.sum);
                }
                if (stats && i < len) {  // statistics over the real queries
                    // entropy without a log per entry: log p_j = (s_j − max) − log Z,
                    // so H = log Z − Σ_j p_j·(s_j − max)
                    double mean = 0, m2 = 0, expect = 0;
                    for (int j = 0; j < end; ++j) mean += si[j] * scale;
                    mean /= end;
                    for (int j = 0; j < end; ++j) {
                        const double sj = si[j] * scale;
                        m2 += (sj - mean) * (sj - mean);
                        expect += wi[j] * (sj - row.max);
                    }
                    stats->variance += m2 / end;
                    stats->entropy += uniform ? std::log(static_cast<double>(end)) : std::max(0.0, std::log(row.sum) - expect);
                    ++stats->rows;
                }
            }
            const Eigen::Map<const Matrix> weights(w, T, S);
            rec(Point::q, l, h, q);
            rec(Point::k, l, h, k);
            rec(Point::v, l, h, v);
            if (q_before.size() > 0) {  // a trace (B = 1, no cache): the rotation's inputs
                rec(Point::q_before_rope, l, h, q_before.block(0, h * D, T, D));
                rec(Point::k_before_rope, l, h, k_before.block(0, kv * D, T, D));
            }
            rec(Point::scores, l, h, scores);
            rec(Point::scaled, l, h, scores * run.scale);  // (evaluated only when kept)
            if (keep_rows) {
                rec(Point::row_max, l, h, row_max);
                rec(Point::row_sum, l, h, row_sum);
            }
            rec(Point::weights, l, h, weights);
            // an ablated head's output stays zero in the concatenation; a trace still shows its own
            if (!enabled && !rec.wants(Point::head_out, l)) continue;
            gemm(weights, v, head_out);  // (T, S)·(S, D)
            rec(Point::head_out, l, h, head_out);
            if (enabled) c.concat.block(b * T, h * D, T, D) = head_out;
        }
    }
    affine(c.concat, p.w_output, p.b_output, QC, C, out, p.panels);  // (N, H·D)·(H·D, C)
    rec(Point::attn_concat, l, c.concat);
    rec(Point::attn_out, l, out);
}

void attention_backward(const ModelConfig& config, const LayerParams<const float*>& p, const LayerParams<float*>& g,
                        const Matrix& a, const AttentionRun& run, const AttentionCache& c, const Matrix& dout,
                        Matrix& da, double& score_grad_sq, const Tap& rec) {
    if (run.cache) throw Error(Error::Code::internal, "the attention's backward does not read a KV cache");
    const int B = run.B, T = run.T, C = config.d_model, H = config.heads, N = B * T, l = run.layer;
    const int D = head_dim_of(config), Hkv = kv_heads_of(config), group = H / Hkv, QC = H * D, KC = Hkv * D;
    const ForwardOptions& options = *run.options;
    const bool keep = rec.wants(Point::d_head_out, l);
    const bool keep_rope = run.rope && keep;
    Matrix tmp, dconcat, dq(N, QC), dk(N, KC), dv(N, KC), dp, ds(T, T), w, d_scaled, unrotated;
    // A K/V head's dK and dV sum over the query heads that read it: the group's first
    // head writes, the others add (with one head per group: written, as always).
    const auto put = [](auto&& into, const Matrix& value, bool first) {
        if (first)
            into = value;
        else
            into += value;
    };
    // keep_rope: one head's dQ or dK (T×D) turned back by each row's angles, for the trace
    const auto turned_back = [&](const Matrix& m) -> const Matrix& {
        unrotated = m;
        rotate_rows(unrotated, 1, T, 1, D, *run.rope, true);
        return unrotated;
    };
    // out = concat·W_O + b_O
    affine_grads(c.concat, dout, g.w_output, g.b_output, QC, C, tmp);
    gemm_bt(dout, row_major(p.w_output, QC, C, p.panels, w), dconcat);  // (N, C)·(C, H·D)
    for (int b = 0; b < B; ++b) {
        const int len = (*run.lengths)[static_cast<std::size_t>(b)];
        for (int h = 0; h < H; ++h) {
            const int kv = h / group;
            const bool first = h % group == 0;
            auto dq_bh = dq.block(b * T, h * D, T, D), dk_bh = dk.block(b * T, kv * D, T, D),
                 dv_bh = dv.block(b * T, kv * D, T, D);
            if (!options.head_on(l, h)) {  // its output never reached the loss
                dq_bh.setZero();
                if (first) {
                    dk_bh.setZero();
                    dv_bh.setZero();
                }
                if (keep)
                    for (Point z : {Point::d_head_out, Point::d_weights, Point::d_scaled, Point::d_scores, Point::d_q,
                                    Point::d_k, Point::d_v, Point::d_q_before_rope, Point::d_k_before_rope}) {
                        if (!run.rope && (z == Point::d_q_before_rope || z == Point::d_k_before_rope)) continue;
                        const bool square = z == Point::d_weights || z == Point::d_scaled || z == Point::d_scores;
                        rec(z, l, h, Matrix::Zero(T, square ? T : D));
                    }
                continue;
            }
            const float* w = c.weights.data() + static_cast<std::size_t>((std::int64_t{b} * H + h) * T * T);
            const Eigen::Map<const Matrix> weights(w, T, T);
            const auto d_out = dconcat.block(b * T, h * D, T, D);
            gemm_at(weights, d_out, tmp);  // dV = Pᵀ·dO: (T, T)·(T, D)
            put(dv_bh, tmp, first);
            gemm_bt(d_out, c.v.block(b * T, kv * D, T, D), dp);  // dP = dO·Vᵀ: (T, D)·(D, T)
            rec(Point::d_head_out, l, h, d_out);
            rec(Point::d_weights, l, h, dp);
            rec(Point::d_v, l, h, tmp);
            if (options.uniform_attention) {  // constant weights: nothing reaches the scores
                dq_bh.setZero();
                if (first) dk_bh.setZero();
                if (keep)
                    for (Point z : {Point::d_scaled, Point::d_scores, Point::d_q, Point::d_k, Point::d_q_before_rope,
                                    Point::d_k_before_rope}) {
                        if (!run.rope && (z == Point::d_q_before_rope || z == Point::d_k_before_rope)) continue;
                        rec(z, l, h, Matrix::Zero(T, z == Point::d_scaled || z == Point::d_scores ? T : D));
                    }
                continue;
            }
            if (keep) d_scaled.setZero(T, T);
            // softmax JVP per row: dS′ = P ⊙ (dP − Σ_j P·dP); hidden keys have P = 0, dS′ = 0.
            // (ALiBi's bias is a constant added to S′: its gradient passes unchanged.)
            for (int i = 0; i < T; ++i) {
                const int end = row_end(i, len, run.causal);
                const float* wi = w + static_cast<std::size_t>(i) * T;
                const float* dpi = dp.data() + static_cast<std::ptrdiff_t>(i) * T;
                float* dsi = ds.data() + static_cast<std::ptrdiff_t>(i) * T;
                double r = 0;
                for (int j = 0; j < end; ++j) r += static_cast<double>(wi[j]) * dpi[j];
                for (int j = 0; j < end; ++j) {
                    const float gij = wi[j] * (dpi[j] - static_cast<float>(r));
                    score_grad_sq += static_cast<double>(gij) * gij;
                    if (keep) d_scaled(i, j) = gij;
                    dsi[j] = gij * run.scale;  // through scaled = scores · scale
                }
                for (int j = std::max(end, 0); j < T; ++j) dsi[j] = 0.0f;
            }
            rec(Point::d_scaled, l, h, d_scaled);
            rec(Point::d_scores, l, h, ds);
            gemm(ds, c.k.block(b * T, kv * D, T, D), tmp);  // dQ = dS·K: (T, T)·(T, D)
            dq_bh = tmp;
            rec(Point::d_q, l, h, tmp);
            if (keep_rope) rec(Point::d_q_before_rope, l, h, turned_back(tmp));
            gemm_at(ds, c.q.block(b * T, h * D, T, D), tmp);  // dK = dSᵀ·Q: (T, T)·(T, D)
            put(dk_bh, tmp, first);
            rec(Point::d_k, l, h, tmp);
            if (keep_rope) rec(Point::d_k_before_rope, l, h, turned_back(tmp));
        }
    }
    if (run.rope) {  // RoPE's backward: the inverse rotation of the gradients
        rotate_rows(dq, B, T, H, D, *run.rope, true);
        rotate_rows(dk, B, T, Hkv, D, *run.rope, true);
    }
    if (config.qk_norm) {  // through each head's RMSNorm, to the projections' outputs
        head_norm_backward(dq, H, D, p.q_norm_gain, c.q_proj, c.q_rstd, g.q_norm_gain);
        head_norm_backward(dk, Hkv, D, p.k_norm_gain, c.k_proj, c.k_rstd, g.k_norm_gain);
    }
    affine_grads(a, dq, g.w_query, g.b_query, C, QC, tmp);
    affine_grads(a, dk, g.w_key, g.b_key, C, KC, tmp);
    affine_grads(a, dv, g.w_value, g.b_value, C, KC, tmp);
    gemm_bt(dq, row_major(p.w_query, C, QC, p.panels, w), da);  // (N, H·D)·(H·D, C)
    gemm_bt(dk, row_major(p.w_key, C, KC, p.panels, w), tmp);   // (N, H_kv·D)·(H_kv·D, C)
    da += tmp;
    gemm_bt(dv, row_major(p.w_value, C, KC, p.panels, w), tmp);
    da += tmp;
}

}  // namespace attn
