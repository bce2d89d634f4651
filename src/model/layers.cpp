#include "model/layers.hpp"

#include "kernels/gemm.hpp"
#include "attention/positional.hpp"

#include <algorithm>
#include <cmath>

namespace attn {
namespace {

void add_row_vector(Matrix& m, const float* v) {
    for (Eigen::Index i = 0; i < m.rows(); ++i)
        for (Eigen::Index j = 0; j < m.cols(); ++j) m(i, j) += v[j];
}

void add_column_sums(const Matrix& m, float* out) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
        double s = 0;
        for (Eigen::Index i = 0; i < m.rows(); ++i) s += m(i, j);
        out[j] += static_cast<float>(s);
    }
}

/// y = x·W (+ b): W (rows × cols) at w, as panels when `panels` and it fits_panels(cols)
/// (Parameters::use_panels), b (cols) at b or null.
void affine(const Eigen::Ref<const Matrix>& x, const float* w, const float* b, int rows, int cols, Matrix& y,
            bool panels = false) {
    if (panels && fits_panels(cols))
        gemm_panels(x, w, rows, cols, y);
    else
        gemm(x, as_matrix(w, rows, cols), y);
    if (b) add_row_vector(y, b);
}

/// W (rows × cols) at w row-major: w itself, or (stored as panels) unpacked into tmp.
Eigen::Map<const Matrix> row_major(const float* w, int rows, int cols, bool panels, Matrix& tmp) {
    if (!(panels && fits_panels(cols))) return as_matrix(w, rows, cols);
    tmp.resize(rows, cols);
    unpack_matrix_panels(w, rows, cols, tmp.data());
    return Eigen::Map<const Matrix>(tmp.data(), rows, cols);
}

/// For y = x·W (+ b): dW += xᵀ·dy, db += Σ_rows dy (a null dw or db: that gradient is not asked for).
void affine_grads(const Eigen::Ref<const Matrix>& x, const Matrix& dy, float* dw, float* db, int rows, int cols,
                  Matrix& tmp) {
    if (dw) {
        gemm_at(x, dy, tmp);  // (rows, N)·(N, cols)
        Eigen::Map<Matrix>(dw, rows, cols) += tmp;
    }
    if (db) add_column_sums(dy, db);
}

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;

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
/// `end` on are not written.
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

/// The keys row i of a sequence of `len` real tokens may see: 0 … end−1.
int row_end(int i, int len, bool causal) { return causal ? std::min(i + 1, len) : len; }

}  // namespace

// ---- activations ------------------------------------------------------------------------

float activation(Activation kind, float x) {
    const double v = x;
    if (kind == Activation::gelu_tanh)
        return static_cast<float>(0.5 * v * (1.0 + std::tanh(kSqrt2OverPi * (v + 0.044715 * v * v * v))));
    return static_cast<float>(0.5 * v * (1.0 + std::erf(v * kInvSqrt2)));
}

float activation_grad(Activation kind, float x) {
    const double v = x;
    if (kind == Activation::gelu_tanh) {
        const double u = kSqrt2OverPi * (v + 0.044715 * v * v * v);
        const double t = std::tanh(u);
        const double du = kSqrt2OverPi * (1.0 + 3.0 * 0.044715 * v * v);
        return static_cast<float>(0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * du);
    }
    const double cdf = 0.5 * (1.0 + std::erf(v * kInvSqrt2));
    const double pdf = kInvSqrt2Pi * std::exp(-0.5 * v * v);
    return static_cast<float>(cdf + v * pdf);
}

// ---- LayerNorm ----------------------------------------------------------------------------

void layernorm_forward(const Matrix& x, const float* gain, const float* bias, float eps, Matrix& y,
                       LayerNormCache& cache) {
    const Eigen::Index n = x.rows(), c = x.cols();
    y.resize(n, c);
    cache.mean.resize(static_cast<std::size_t>(n));
    cache.rstd.resize(static_cast<std::size_t>(n));
    for (Eigen::Index i = 0; i < n; ++i) {
        const float* xi = x.data() + i * c;
        double s = 0;
        for (Eigen::Index j = 0; j < c; ++j) s += xi[j];
        const double mu = s / static_cast<double>(c);
        double v = 0;
        for (Eigen::Index j = 0; j < c; ++j) v += (xi[j] - mu) * (xi[j] - mu);
        const float r = static_cast<float>(1.0 / std::sqrt(v / static_cast<double>(c) + static_cast<double>(eps)));
        const float m = static_cast<float>(mu);
        cache.mean[static_cast<std::size_t>(i)] = m;
        cache.rstd[static_cast<std::size_t>(i)] = r;
        float* yi = y.data() + i * c;
        for (Eigen::Index j = 0; j < c; ++j) yi[j] = (xi[j] - m) * r * gain[j] + bias[j];
    }
}

///   dx = (g·dy − mean(g·dy) − x̂·mean(g·dy ⊙ x̂)) / σ
void layernorm_backward(const Matrix& x, const float* gain, const LayerNormCache& cache, const Matrix& dy, Matrix& dx,
                        float* dgain, float* dbias) {
    const Eigen::Index n = x.rows(), c = x.cols();
    std::vector<float> xhat(static_cast<std::size_t>(c)), gdy(static_cast<std::size_t>(c));
    for (Eigen::Index i = 0; i < n; ++i) {
        const float* xi = x.data() + i * c;
        const float* dyi = dy.data() + i * c;
        const float m = cache.mean[static_cast<std::size_t>(i)], r = cache.rstd[static_cast<std::size_t>(i)];
        double sum_g = 0, sum_gx = 0;
        for (Eigen::Index j = 0; j < c; ++j) {
            const float h = (xi[j] - m) * r;
            xhat[static_cast<std::size_t>(j)] = h;
            const float g = gain[j] * dyi[j];
            gdy[static_cast<std::size_t>(j)] = g;
            sum_g += g;
            sum_gx += static_cast<double>(g) * h;
            if (dgain) dgain[j] += dyi[j] * h;  // null: not asked for (Model::backward_layer)
            if (dbias) dbias[j] += dyi[j];
        }
        const float mean_g = static_cast<float>(sum_g / static_cast<double>(c));
        const float mean_gx = static_cast<float>(sum_gx / static_cast<double>(c));
        float* dxi = dx.data() + i * c;
        for (Eigen::Index j = 0; j < c; ++j)
            dxi[j] += (gdy[static_cast<std::size_t>(j)] - mean_g - xhat[static_cast<std::size_t>(j)] * mean_gx) * r;
    }
}

// ---- embedding ----------------------------------------------------------------------------

void embedding_forward(const ModelConfig& config, const ParamPtrs& p, const std::vector<std::int32_t>& ids, int B,
                       int T, EmbeddingCache& cache, Matrix& x, ModelTrace* trace) {
    const int C = config.d_model, N = B * T;
    const auto embed = as_matrix(p.embed, config.vocab, C);
    if (config.positional == Positional::sinusoidal && cache.sinusoid.rows() != T)
        cache.sinusoid = positional_encoding(Positional::sinusoidal, T, C, 0);
    x.resize(N, C);
    for (int b = 0; b < B; ++b)
        for (int t = 0; t < T; ++t) {
            const int row = b * T + t;
            x.row(row) = embed.row(ids[static_cast<std::size_t>(row)]);
            if (config.positional == Positional::learned) x.row(row) += as_matrix(p.pos, config.context, C).row(t);
            if (config.positional == Positional::sinusoidal) x.row(row) += cache.sinusoid.row(t);
            if (config.token_types > 0) x.row(row) += as_matrix(p.token_type, config.token_types, C).row(0);
        }
    if (trace) {
        trace->embeddings.resize(T, C);
        for (int t = 0; t < T; ++t) trace->embeddings.row(t) = embed.row(ids[static_cast<std::size_t>(t)]);
        if (config.positional == Positional::learned)
            trace->positional = as_matrix(p.pos, config.context, C).topRows(T);
        else if (config.positional == Positional::sinusoidal)
            trace->positional = cache.sinusoid;
        else
            trace->positional.setZero(T, C);
        if (config.token_types > 0)
            trace->token_type = as_matrix(p.token_type, config.token_types, C).row(0).replicate(T, 1);
    }
    if (config.embed_layernorm) {
        cache.sum = x;
        layernorm_forward(cache.sum, p.embed_ln_gain, p.embed_ln_bias, config.ln_eps, x, cache.ln);
        if (trace) trace->embed_normed = x;
    }
}

void embedding_backward(const ModelConfig& config, const ParamPtrs& p, const GradPtrs& g,
                        const std::vector<std::int32_t>& ids, int B, int T, const EmbeddingCache& cache,
                        const Matrix& dx) {
    const int C = config.d_model, N = B * T;
    Matrix dsum_buf;
    const Matrix* dsum = &dx;
    if (config.embed_layernorm) {
        dsum_buf.setZero(N, C);
        layernorm_backward(cache.sum, p.embed_ln_gain, cache.ln, dx, dsum_buf, g.embed_ln_gain, g.embed_ln_bias);
        dsum = &dsum_buf;
    }
    Eigen::Map<Matrix> dembed(g.embed, config.vocab, C);
    for (int i = 0; i < N; ++i) dembed.row(ids[static_cast<std::size_t>(i)]) += dsum->row(i);
    if (config.positional == Positional::learned) {
        Eigen::Map<Matrix> dpos(g.pos, config.context, C);
        for (int i = 0; i < N; ++i) dpos.row(i % T) += dsum->row(i);
    }
    if (config.token_types > 0) {
        Eigen::Map<Matrix> dtype(g.token_type, config.token_types, C);
        for (int i = 0; i < N; ++i) dtype.row(0) += dsum->row(i);
    }
}

// ---- attention ----------------------------------------------------------------------------

void attention_forward(const ModelConfig& config, const LayerParams<const float*>& p, const Matrix& a,
                       const AttentionRun& run, AttentionCache& c, Matrix& out, AttentionStatsSum* stats,
                       MultiHeadTrace* trace) {
    const int B = run.B, T = run.T, C = config.d_model, H = config.heads, D = C / H, N = B * T;
    const ForwardOptions& options = *run.options;
    const bool uniform = options.uniform_attention;
    affine(a, p.w_query, p.b_query, C, C, c.q, p.panels);  // (N, C)·(C, C)
    affine(a, p.w_key, p.b_key, C, C, c.k, p.panels);
    affine(a, p.w_value, p.b_value, C, C, c.v, p.panels);
    c.weights.assign(static_cast<std::size_t>(std::int64_t{B} * H * T * T), 0.0f);
    c.concat.setZero(N, C);
    if (trace) trace->heads.assign(static_cast<std::size_t>(H), HeadTrace{});
    Matrix scores, head_out;
    for (int b = 0; b < B; ++b) {
        const int len = (*run.lengths)[static_cast<std::size_t>(b)];
        for (int h = 0; h < H; ++h) {
            const bool enabled = options.head_on(run.layer, h);
            float* w = c.weights.data() + static_cast<std::size_t>((std::int64_t{b} * H + h) * T * T);
            const auto q = c.q.block(b * T, h * D, T, D), k = c.k.block(b * T, h * D, T, D);
            gemm_bt(q, k, scores);  // (T, D)·(D, T)
            HeadTrace* ht = trace ? &trace->heads[static_cast<std::size_t>(h)] : nullptr;
            if (ht) {
                ht->row_max.setZero(T);
                ht->row_sum.setZero(T);
            }
            // hidden keys stay exact zeros
            for (int i = 0; i < T; ++i) {
                const int end = row_end(i, len, run.causal);
                float* wi = w + static_cast<std::size_t>(i) * T;
                const float* si = scores.data() + static_cast<std::ptrdiff_t>(i) * T;
                if (end <= 0) continue;
                const RowWeights row = attention_row(si, run.scale, end, uniform, wi);
                if (ht) {
                    // under uniform attention: the softmax of n equal scores, max 0 and sum n
                    ht->row_max(i) = uniform ? 0.0f : row.max;
                    ht->row_sum(i) = uniform ? static_cast<float>(end) : static_cast<float>(row.sum);
                }
                if (stats && i < len) {  // statistics over the real queries
                    // entropy without a log per entry: log p_j = (s_j − max) − log Z,
                    // so H = log Z − Σ_j p_j·(s_j − max)
                    double mean = 0, m2 = 0, expect = 0;
                    for (int j = 0; j < end; ++j) mean += si[j] * run.scale;
                    mean /= end;
                    for (int j = 0; j < end; ++j) {
                        const double sj = si[j] * run.scale;
                        m2 += (sj - mean) * (sj - mean);
                        expect += wi[j] * (sj - row.max);
                    }
                    stats->variance += m2 / end;
                    stats->entropy += uniform ? std::log(static_cast<double>(end)) : std::max(0.0, std::log(row.sum) - expect);
                    ++stats->rows;
                }
            }
            const Eigen::Map<const Matrix> weights(w, T, T);
            if (ht) {
                ht->query = q;
                ht->key = k;
                ht->value = c.v.block(b * T, h * D, T, D);
                ht->scores = scores;
                ht->scaled = scores * run.scale;
                ht->weights = weights;
                gemm(weights, ht->value, ht->output);  // the head's own output, ablated or not
            }
            if (!enabled) continue;  // an ablated head's output stays zero in the concatenation
            gemm(weights, c.v.block(b * T, h * D, T, D), head_out);  // (T, T)·(T, D)
            c.concat.block(b * T, h * D, T, D) = head_out;
        }
    }
    affine(c.concat, p.w_output, p.b_output, C, C, out, p.panels);  // (N, C)
    if (trace) {
        trace->concat = c.concat;
        trace->output = out;
    }
}

void attention_backward(const ModelConfig& config, const LayerParams<const float*>& p, const LayerParams<float*>& g,
                        const Matrix& a, const AttentionRun& run, const AttentionCache& c, const Matrix& dout,
                        Matrix& da, double& score_grad_sq, std::vector<HeadGradTrace>* trace) {
    const int B = run.B, T = run.T, C = config.d_model, H = config.heads, D = C / H, N = B * T;
    const ForwardOptions& options = *run.options;
    Matrix tmp, dconcat, dq(N, C), dk(N, C), dv(N, C), dp, ds(T, T), w;
    // out = concat·W_O + b_O
    affine_grads(c.concat, dout, g.w_output, g.b_output, C, C, tmp);
    gemm_bt(dout, row_major(p.w_output, C, C, p.panels, w), dconcat);  // (N, C)·(C, C)
    if (trace) trace->assign(static_cast<std::size_t>(H), HeadGradTrace{});
    for (int b = 0; b < B; ++b) {
        const int len = (*run.lengths)[static_cast<std::size_t>(b)];
        for (int h = 0; h < H; ++h) {
            HeadGradTrace* gt = trace ? &(*trace)[static_cast<std::size_t>(h)] : nullptr;
            auto dq_bh = dq.block(b * T, h * D, T, D), dk_bh = dk.block(b * T, h * D, T, D),
                 dv_bh = dv.block(b * T, h * D, T, D);
            if (!options.head_on(run.layer, h)) {  // its output never reached the loss
                dq_bh.setZero();
                dk_bh.setZero();
                dv_bh.setZero();
                if (gt) {
                    gt->d_output.setZero(T, D);
                    gt->d_weights.setZero(T, T);
                    gt->d_scaled.setZero(T, T);
                    gt->d_scores.setZero(T, T);
                    gt->d_query.setZero(T, D);
                    gt->d_key.setZero(T, D);
                    gt->d_value.setZero(T, D);
                }
                continue;
            }
            const float* w = c.weights.data() + static_cast<std::size_t>((std::int64_t{b} * H + h) * T * T);
            const Eigen::Map<const Matrix> weights(w, T, T);
            const auto d_out = dconcat.block(b * T, h * D, T, D);
            gemm_at(weights, d_out, tmp);  // dV = Pᵀ·dO: (T, T)·(T, D)
            dv_bh = tmp;
            gemm_bt(d_out, c.v.block(b * T, h * D, T, D), dp);  // dP = dO·Vᵀ: (T, D)·(D, T)
            if (gt) {
                gt->d_output = d_out;
                gt->d_weights = dp;
                gt->d_value = tmp;
            }
            if (options.uniform_attention) {  // constant weights: nothing reaches the scores
                dq_bh.setZero();
                dk_bh.setZero();
                if (gt) {
                    gt->d_scaled.setZero(T, T);
                    gt->d_scores.setZero(T, T);
                    gt->d_query.setZero(T, D);
                    gt->d_key.setZero(T, D);
                }
                continue;
            }
            if (gt) gt->d_scaled.setZero(T, T);
            // softmax JVP per row: dS′ = P ⊙ (dP − Σ_j P·dP); hidden keys have P = 0, dS′ = 0
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
                    if (gt) gt->d_scaled(i, j) = gij;
                    dsi[j] = gij * run.scale;  // through scaled = scores · scale
                }
                for (int j = std::max(end, 0); j < T; ++j) dsi[j] = 0.0f;
            }
            gemm(ds, c.k.block(b * T, h * D, T, D), tmp);  // dQ = dS·K: (T, T)·(T, D)
            dq_bh = tmp;
            if (gt) gt->d_query = tmp;
            gemm_at(ds, c.q.block(b * T, h * D, T, D), tmp);  // dK = dSᵀ·Q: (T, T)·(T, D)
            dk_bh = tmp;
            if (gt) {
                gt->d_key = tmp;
                gt->d_scores = ds;
            }
        }
    }
    affine_grads(a, dq, g.w_query, g.b_query, C, C, tmp);
    affine_grads(a, dk, g.w_key, g.b_key, C, C, tmp);
    affine_grads(a, dv, g.w_value, g.b_value, C, C, tmp);
    gemm_bt(dq, row_major(p.w_query, C, C, p.panels, w), da);  // (N, C)·(C, C)
    gemm_bt(dk, row_major(p.w_key, C, C, p.panels, w), tmp);
    da += tmp;
    gemm_bt(dv, row_major(p.w_value, C, C, p.panels, w), tmp);
    da += tmp;
}

// ---- MLP ------------------------------------------------------------------------------------

void mlp_forward(const ModelConfig& config, const LayerParams<const float*>& p, const Matrix& m, MlpCache& c,
                 Matrix& out) {
    const int C = config.d_model, F = config.mlp;
    affine(m, p.w_in, p.b_in, C, F, c.pre, p.panels);  // (N, C)·(C, F)
    c.act.resize(c.pre.rows(), c.pre.cols());
    for (Eigen::Index i = 0; i < c.pre.size(); ++i) c.act.data()[i] = activation(config.activation, c.pre.data()[i]);
    affine(c.act, p.w_out, p.b_out, F, C, out, p.panels);  // (N, F)·(F, C)
}

void mlp_backward(const ModelConfig& config, const LayerParams<const float*>& p, const LayerParams<float*>& g,
                  const Matrix& m, const MlpCache& c, const Matrix& dout, Matrix& dm) {
    const int C = config.d_model, F = config.mlp;
    Matrix tmp, dact, w;
    affine_grads(c.act, dout, g.w_out, g.b_out, F, C, tmp);
    gemm_bt(dout, row_major(p.w_out, F, C, p.panels, w), dact);  // (N, C)·(C, F)
    for (Eigen::Index i = 0; i < dact.size(); ++i) dact.data()[i] *= activation_grad(config.activation, c.pre.data()[i]);
    affine_grads(m, dact, g.w_in, g.b_in, C, F, tmp);
    gemm_bt(dact, row_major(p.w_in, C, F, p.panels, w), dm);  // (N, F)·(F, C)
}

// ---- output head ------------------------------------------------------------------------------

void head_forward(const ModelConfig& config, const ParamPtrs& p, const Matrix& h, HeadCache& c, Matrix& logits) {
    const int C = config.d_model, V = config.vocab;
    const Matrix* x = &h;
    if (config.output_transform) {
        affine(h, p.head_w, p.head_b, C, C, c.pre);
        c.act.resize(c.pre.rows(), c.pre.cols());
        for (Eigen::Index i = 0; i < c.pre.size(); ++i) c.act.data()[i] = activation(config.activation, c.pre.data()[i]);
        layernorm_forward(c.act, p.head_ln_gain, p.head_ln_bias, config.ln_eps, c.transformed, c.ln);
        x = &c.transformed;
    }
    if (config.tied)
        gemm_bt(*x, as_matrix(p.embed, V, C), logits);  // (N, C)·(C, V)
    else
        gemm(*x, as_matrix(p.unembed, C, V), logits);  // (N, C)·(C, V)
    if (config.output_bias) add_row_vector(logits, p.unembed_bias);
}

void head_backward(const ModelConfig& config, const ParamPtrs& p, const GradPtrs& g, const Matrix& h,
                   const HeadCache& c, const Matrix& dlogits, Matrix& dh) {
    const int C = config.d_model, V = config.vocab;
    const Matrix& x = config.output_transform ? c.transformed : h;
    Matrix tmp, dx;
    Matrix& out = config.output_transform ? dx : dh;
    if (config.tied) {
        if (g.embed) {  // null: not asked for (Model::backward_layer)
            gemm_at(dlogits, x, tmp);  // (V, N)·(N, C) → (V, C)
            Eigen::Map<Matrix>(g.embed, V, C) += tmp;
        }
        gemm(dlogits, as_matrix(p.embed, V, C), out);  // (N, V)·(V, C)
    } else {
        if (g.unembed) {
            gemm_at(x, dlogits, tmp);  // (C, N)·(N, V)
            Eigen::Map<Matrix>(g.unembed, C, V) += tmp;
        }
        gemm_bt(dlogits, as_matrix(p.unembed, C, V), out);  // (N, V)·(V, C)
    }
    if (config.output_bias && g.unembed_bias) add_column_sums(dlogits, g.unembed_bias);
    if (!config.output_transform) return;
    Matrix dpre = Matrix::Zero(dx.rows(), dx.cols());
    layernorm_backward(c.act, p.head_ln_gain, c.ln, dx, dpre, g.head_ln_gain, g.head_ln_bias);
    for (Eigen::Index i = 0; i < dpre.size(); ++i) dpre.data()[i] *= activation_grad(config.activation, c.pre.data()[i]);
    affine_grads(h, dpre, g.head_w, g.head_b, C, C, tmp);
    gemm_bt(dpre, as_matrix(p.head_w, C, C), dh);
}

// ---- cross-entropy -----------------------------------------------------------------------------

CrossEntropy cross_entropy(const Matrix& logits, const std::vector<std::int32_t>& targets, Matrix* grad) {
    const int N = static_cast<int>(logits.rows()), V = static_cast<int>(logits.cols());
    CrossEntropy out;
    int count = 0;
    for (int i = 0; i < N; ++i) count += targets[static_cast<std::size_t>(i)] >= 0;
    out.targets = count;
    if (grad) grad->setZero(N, V);
    std::vector<float> e(grad ? 0 : static_cast<std::size_t>(V));
    double loss = 0;
    for (int i = 0; i < N; ++i) {
        const std::int32_t target = targets[static_cast<std::size_t>(i)];
        if (target < 0) continue;
        const float* li = logits.data() + static_cast<std::ptrdiff_t>(i) * V;
        int best = 0;
        float mx = li[0];
        for (int j = 1; j < V; ++j)
            if (li[j] > mx) {
                mx = li[j];
                best = j;
            }
        // one exp per logit, kept: gi = softmax(li) / count − onehot / count
        float* gi = grad ? grad->data() + static_cast<std::ptrdiff_t>(i) * V : e.data();
        double sum = 0;
        for (int j = 0; j < V; ++j) {
            gi[j] = std::exp(li[j] - mx);
            sum += gi[j];
        }
        loss += std::log(sum) - (static_cast<double>(li[target]) - mx);
        out.correct += best == target;
        if (!grad) continue;
        const float factor = static_cast<float>(1.0 / (sum * count));
        for (int j = 0; j < V; ++j) gi[j] *= factor;
        gi[target] -= 1.0f / static_cast<float>(count);
    }
    out.loss = count > 0 ? loss / count : 0.0;
    return out;
}

}  // namespace attn
