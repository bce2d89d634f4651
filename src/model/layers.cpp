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

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;

}  // namespace

// ---- the products every kind uses ---------------------------------------------------------

void affine(const Eigen::Ref<const Matrix>& x, const float* w, const float* b, int rows, int cols, Matrix& y,
            Storage panels) {
    if (panels == Storage::panels && fits_panels(cols))
        gemm_panels(x, w, rows, cols, y);
    else if (panels != Storage::row_major && fits_panels(cols))
        gemm_panels(x, half_values(w), format_of(panels), rows, cols, y);
    else
        gemm(x, as_matrix(w, rows, cols), y);
    if (b) add_row_vector(y, b);
}

Eigen::Map<const Matrix> row_major(const float* w, int rows, int cols, Storage panels, Matrix& tmp) {
    if (panels == Storage::row_major || !fits_panels(cols)) return as_matrix(w, rows, cols);
    tmp.resize(rows, cols);
    if (panels == Storage::panels)
        unpack_matrix_panels(w, rows, cols, tmp.data());
    else
        unpack_matrix_panels(half_values(w), format_of(panels), rows, cols, tmp.data());
    return Eigen::Map<const Matrix>(tmp.data(), rows, cols);
}

void affine_grads(const Eigen::Ref<const Matrix>& x, const Matrix& dy, float* dw, float* db, int rows, int cols,
                  Matrix& tmp) {
    if (dw) {
        gemm_at(x, dy, tmp);  // (rows, N)·(N, cols)
        Eigen::Map<Matrix>(dw, rows, cols) += tmp;
    }
    if (db) add_column_sums(dy, db);
}

// ---- activations ------------------------------------------------------------------------

float activation(Activation kind, float x) {
    const double v = x;
    if (kind == Activation::silu) return static_cast<float>(v / (1.0 + std::exp(-v)));  // x·σ(x)
    if (kind == Activation::gelu_tanh)
        return static_cast<float>(0.5 * v * (1.0 + std::tanh(kSqrt2OverPi * (v + 0.044715 * v * v * v))));
    return static_cast<float>(0.5 * v * (1.0 + std::erf(v * kInvSqrt2)));
}

float activation_grad(Activation kind, float x) {
    const double v = x;
    if (kind == Activation::silu) {  // σ(x)·(1 + x·(1 − σ(x)))
        const double sig = 1.0 / (1.0 + std::exp(-v));
        return static_cast<float>(sig * (1.0 + v * (1.0 - sig)));
    }
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

// ---- RMSNorm --------------------------------------------------------------------------------

float rmsnorm_row(const float* x, int n, const float* gain, float eps, float* y) {
    double sq = 0;
    for (int j = 0; j < n; ++j) sq += static_cast<double>(x[j]) * x[j];
    const float r = static_cast<float>(1.0 / std::sqrt(sq / n + static_cast<double>(eps)));
    for (int j = 0; j < n; ++j) y[j] = x[j] * r * gain[j];
    return r;
}

void rmsnorm_row_backward(const float* x, int n, const float* gain, float r, const float* dy, float* dx, float* dgain) {
    // u = g ⊙ dy, x̂ = x·r:  dx = r·(u − x̂·mean(u ⊙ x̂))
    double sum_ux = 0;
    for (int j = 0; j < n; ++j) {
        const float h = x[j] * r;
        sum_ux += static_cast<double>(gain[j] * dy[j]) * h;
        if (dgain) dgain[j] += dy[j] * h;
    }
    const float mean_ux = static_cast<float>(sum_ux / n);
    for (int j = 0; j < n; ++j) dx[j] = (gain[j] * dy[j] - x[j] * r * mean_ux) * r;
}

void rmsnorm_forward(const Matrix& x, const float* gain, float eps, Matrix& y, LayerNormCache& cache) {
    const Eigen::Index n = x.rows(), c = x.cols();
    y.resize(n, c);
    cache.mean.clear();
    cache.rstd.resize(static_cast<std::size_t>(n));
    for (Eigen::Index i = 0; i < n; ++i)
        cache.rstd[static_cast<std::size_t>(i)] = rmsnorm_row(x.data() + i * c, static_cast<int>(c), gain, eps, y.data() + i * c);
}

void rmsnorm_backward(const Matrix& x, const float* gain, const LayerNormCache& cache, const Matrix& dy, Matrix& dx,
                      float* dgain) {
    const Eigen::Index n = x.rows(), c = x.cols();
    std::vector<float> d(static_cast<std::size_t>(c));
    for (Eigen::Index i = 0; i < n; ++i) {
        rmsnorm_row_backward(x.data() + i * c, static_cast<int>(c), gain, cache.rstd[static_cast<std::size_t>(i)],
                             dy.data() + i * c, d.data(), dgain);
        float* dxi = dx.data() + i * c;
        for (Eigen::Index j = 0; j < c; ++j) dxi[j] += d[static_cast<std::size_t>(j)];
    }
}

void norm_forward(const ModelConfig& config, const Matrix& x, const float* gain, const float* bias, Matrix& y,
                  LayerNormCache& cache) {
    if (config.rmsnorm)
        rmsnorm_forward(x, gain, config.ln_eps, y, cache);
    else
        layernorm_forward(x, gain, bias, config.ln_eps, y, cache);
}

void norm_backward(const ModelConfig& config, const Matrix& x, const float* gain, const LayerNormCache& cache,
                   const Matrix& dy, Matrix& dx, float* dgain, float* dbias) {
    if (config.rmsnorm)
        rmsnorm_backward(x, gain, cache, dy, dx, dgain);
    else
        layernorm_backward(x, gain, cache, dy, dx, dgain, dbias);
}

// ---- embedding ----------------------------------------------------------------------------

void embedding_forward(const ModelConfig& config, const ParamPtrs& p, const std::vector<std::int32_t>& ids, int B,
                       int T, EmbeddingCache& cache, Matrix& x, const Tap& rec, int first) {
    const int C = config.d_model, N = B * T;
    // row `id` of the token embedding into out (C floats), converted when stored as 16-bit
    const auto embed_row = [&](std::int32_t id, float* out) {
        if (p.embed_format != WeightFormat::f32)
            half::widen(half_values(p.embed) + static_cast<std::ptrdiff_t>(id) * C, static_cast<std::size_t>(C), p.embed_format, out);
        else
            std::copy_n(p.embed + static_cast<std::ptrdiff_t>(id) * C, C, out);
    };
    // a row of the sinusoids does not depend on how many are made: a sequence's T, or
    // (generation, first > 0) once up to the context
    if (config.positional == Positional::sinusoidal && cache.sinusoid.rows() < first + T)
        cache.sinusoid = positional_encoding(Positional::sinusoidal, first == 0 ? T : config.context, C, 0);
    x.resize(N, C);
    for (int b = 0; b < B; ++b)
        for (int t = 0; t < T; ++t) {
            const int row = b * T + t, pos = first + t;
            embed_row(ids[static_cast<std::size_t>(row)], x.row(row).data());
            if (config.positional == Positional::learned) x.row(row) += as_matrix(p.pos, config.context, C).row(pos);
            if (config.positional == Positional::sinusoidal) x.row(row) += cache.sinusoid.row(pos);
            if (config.token_types > 0) x.row(row) += as_matrix(p.token_type, config.token_types, C).row(0);
        }
    if (rec.wants(Point::token_embed, -1)) {  // a trace: one sequence
        Matrix e(T, C);
        for (int t = 0; t < T; ++t) embed_row(ids[static_cast<std::size_t>(t)], e.row(t).data());
        rec(Point::token_embed, -1, e);
    }
    if (config.positional == Positional::learned)
        rec(Point::pos_embed, -1, as_matrix(p.pos, config.context, C).middleRows(first, T));
    else if (config.positional == Positional::sinusoidal)
        rec(Point::pos_embed, -1, cache.sinusoid.middleRows(first, T));
    else
        rec(Point::pos_embed, -1, Matrix::Zero(T, C));
    if (config.token_types > 0)
        rec(Point::type_embed, -1, as_matrix(p.token_type, config.token_types, C).row(0).replicate(T, 1));
    if (config.embed_layernorm) {
        cache.sum = x;
        layernorm_forward(cache.sum, p.embed_ln_gain, p.embed_ln_bias, config.ln_eps, x, cache.ln);
        rec(Point::embed_norm, -1, x);
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

// ---- MLP ------------------------------------------------------------------------------------

void mlp_forward(const ModelConfig& config, const LayerParams<const float*>& p, const Matrix& m, MlpCache& c,
                 Matrix& out) {
    const int C = config.d_model, F = config.mlp;
    affine(m, p.w_in, p.b_in, C, F, c.pre, p.panels);  // (N, C)·(C, F)
    c.act.resize(c.pre.rows(), c.pre.cols());
    if (config.gated_mlp) {  // hidden = act(gate) ⊙ up, up = pre
        affine(m, p.w_gate, p.b_gate, C, F, c.gate, p.panels);  // (N, C)·(C, F)
        for (Eigen::Index i = 0; i < c.pre.size(); ++i)
            c.act.data()[i] = activation(config.activation, c.gate.data()[i]) * c.pre.data()[i];
    } else {
        for (Eigen::Index i = 0; i < c.pre.size(); ++i) c.act.data()[i] = activation(config.activation, c.pre.data()[i]);
    }
    affine(c.act, p.w_out, p.b_out, F, C, out, p.panels);  // (N, F)·(F, C)
}

void mlp_backward(const ModelConfig& config, const LayerParams<const float*>& p, const LayerParams<float*>& g,
                  const Matrix& m, const MlpCache& c, const Matrix& dout, Matrix& dm) {
    const int C = config.d_model, F = config.mlp;
    Matrix tmp, dact, w;
    affine_grads(c.act, dout, g.w_out, g.b_out, F, C, tmp);
    gemm_bt(dout, row_major(p.w_out, F, C, p.panels, w), dact);  // ∂loss/∂hidden: (N, C)·(C, F)
    if (!config.gated_mlp) {
        for (Eigen::Index i = 0; i < dact.size(); ++i) dact.data()[i] *= activation_grad(config.activation, c.pre.data()[i]);
        affine_grads(m, dact, g.w_in, g.b_in, C, F, tmp);
        gemm_bt(dact, row_major(p.w_in, C, F, p.panels, w), dm);  // (N, F)·(F, C)
        return;
    }
    // hidden = act(gate) ⊙ up: dgate = dhidden ⊙ up ⊙ act′(gate), dup = dhidden ⊙ act(gate)
    Matrix dgate(dact.rows(), dact.cols());
    for (Eigen::Index i = 0; i < dact.size(); ++i) {
        const float gi = c.gate.data()[i], dh = dact.data()[i];
        dgate.data()[i] = dh * c.pre.data()[i] * activation_grad(config.activation, gi);
        dact.data()[i] = dh * activation(config.activation, gi);
    }
    affine_grads(m, dact, g.w_in, g.b_in, C, F, tmp);
    affine_grads(m, dgate, g.w_gate, g.b_gate, C, F, tmp);
    gemm_bt(dact, row_major(p.w_in, C, F, p.panels, w), dm);  // dm = dup·W_inᵀ + dgate·W_gateᵀ
    gemm_bt(dgate, row_major(p.w_gate, C, F, p.panels, w), tmp);
    dm += tmp;
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
    const WeightFormat f = p.embed_format;  // embed and unembed: 16-bit, converted inside the product's packing
    if (config.tied && f != WeightFormat::f32)
        gemm_bt_half(*x, half_values(p.embed), f, V, C, logits);
    else if (config.tied)
        gemm_bt(*x, as_matrix(p.embed, V, C), logits);  // (N, C)·(C, V)
    else if (f != WeightFormat::f32)
        gemm_half(*x, half_values(p.unembed), f, C, V, logits);
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
        if (p.embed_format != WeightFormat::f32)
            gemm_half(dlogits, half_values(p.embed), p.embed_format, V, C, out);
        else
            gemm(dlogits, as_matrix(p.embed, V, C), out);  // (N, V)·(V, C)
    } else {
        if (g.unembed) {
            gemm_at(x, dlogits, tmp);  // (C, N)·(N, V)
            Eigen::Map<Matrix>(g.unembed, C, V) += tmp;
        }
        if (p.embed_format != WeightFormat::f32)
            gemm_bt_half(dlogits, half_values(p.unembed), p.embed_format, C, V, out);
        else
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
