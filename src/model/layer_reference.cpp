// The double-precision reference of each layer kind (layer_reference.hpp):
// plain loops, one sequence at a time.

#include "model/layer_reference.hpp"

#include <algorithm>
#include <cmath>

namespace attn::reference {
namespace {

/// y = x·W (+ b) for W (x.cols × cols) and, when present, a bias b.
Mat affine_ref(const Mat& x, const Param& w, const Param& b, int cols) {
    Mat y(x.rows, cols);
    for (int i = 0; i < x.rows; ++i)
        for (int j = 0; j < cols; ++j) {
            double s = b ? b(0, j) : 0.0;
            for (int k = 0; k < x.cols; ++k) s += x(i, k) * w(k, j);
            y(i, j) = s;
        }
    return y;
}

/// For y = x·W (+ b): accumulates dW = xᵀ·dy (and db = Σ_i dy_i) and returns dx = dy·Wᵀ.
Mat affine_ref_back(const Mat& x, const Mat& dy, const Param& w, const Param& b) {
    Mat dx(x.rows, x.cols);
    for (int k = 0; k < x.cols; ++k)
        for (int j = 0; j < dy.cols; ++j) {
            double s = 0;
            for (int i = 0; i < x.rows; ++i) s += x(i, k) * dy(i, j);
            w.add(k, j, s);
        }
    if (b)
        for (int i = 0; i < dy.rows; ++i)
            for (int j = 0; j < dy.cols; ++j) b.add(0, j, dy(i, j));
    for (int i = 0; i < x.rows; ++i)
        for (int k = 0; k < x.cols; ++k) {
            double s = 0;
            for (int j = 0; j < dy.cols; ++j) s += dy(i, j) * w(k, j);
            dx(i, k) = s;
        }
    return dx;
}

const double kPiRef = 3.14159265358979323846;

std::vector<double> column_block(const Mat& m, int col0, int cols) {
    std::vector<double> out;
    for (int i = 0; i < m.rows; ++i)
        for (int j = 0; j < cols; ++j) out.push_back(m(i, col0 + j));
    return out;
}

}  // namespace

// ---- the tensors by name ----

Tensors::Tensors(const ModelConfig& config, const std::vector<double>& params, std::vector<double>* grads)
    : params_(params), grads_(grads) {
    for (const ParamInfo& p : parameter_layout(config)) index_[p.name] = p;
}

Param Tensors::operator[](const std::string& name) const {
    const auto it = index_.find(name);
    if (it == index_.end()) return {};
    const ParamInfo& p = it->second;
    return {params_.data() + p.offset, grads_ ? grads_->data() + p.offset : nullptr, p.cols};
}

EmbeddingParams Tensors::embedding() const {
    const Tensors& t = *this;
    return {t["embed"], t["pos"], t["token_type"], t["embed_ln.gain"], t["embed_ln.bias"]};
}

AttentionParams Tensors::attention(int layer) const {
    const std::string l = "layers." + std::to_string(layer) + ".";
    const Tensors& t = *this;
    return {t[l + "w_query"], t[l + "b_query"], t[l + "w_key"],    t[l + "b_key"],
            t[l + "w_value"], t[l + "b_value"], t[l + "w_output"], t[l + "b_output"],
            t[l + "q_norm.gain"], t[l + "k_norm.gain"]};
}

MlpParams Tensors::mlp(int layer) const {
    const std::string l = "layers." + std::to_string(layer) + ".mlp.";
    const Tensors& t = *this;
    return {t[l + "w_gate"], t[l + "b_gate"], t[l + "w_in"], t[l + "b_in"], t[l + "w_out"], t[l + "b_out"]};
}

// ---- the relative positions' constants, from their rules ----

std::vector<double> rope_theta(int head_dim, const RopeSettings& r) {
    std::vector<double> theta;
    for (int i = 0; 2 * i < head_dim; ++i) {
        const double base_theta = 1.0 / std::pow(r.base, static_cast<double>(2 * i) / head_dim);
        double t = base_theta;
        if (r.scaling == RopeScaling::llama3) {
            // the wavelength against the original context: long ones slowed by the factor, short
            // ones kept, a linear blend of the two rates between
            const double wavelength = 2 * kPiRef / base_theta;
            const double low_wavelength = r.original_context / r.low_freq_factor;
            const double high_wavelength = r.original_context / r.high_freq_factor;
            if (wavelength > low_wavelength) {
                t = base_theta / r.factor;
            } else if (!(wavelength < high_wavelength)) {
                const double smooth =
                    (r.original_context / wavelength - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
                t = smooth * base_theta + (1 - smooth) * base_theta / r.factor;
            }
        }
        theta.push_back(t);
    }
    return theta;
}

std::vector<double> alibi_slope(int heads) {
    // the largest power of two n ≤ H: a geometric sequence with start and ratio 2^(−8/n);
    // the remaining heads take the odd terms of the sequence of 2n heads
    int n = 1;
    while (2 * n <= heads) n *= 2;
    std::vector<double> m;
    const double ratio = std::pow(2.0, -8.0 / n);
    double x = ratio;
    for (int h = 0; h < n; ++h, x *= ratio) m.push_back(x);
    const double half_ratio = std::pow(2.0, -8.0 / (2 * n));
    for (int k = 0; static_cast<int>(m.size()) < heads; ++k) m.push_back(std::pow(half_ratio, 2 * k + 1));
    return m;
}

HeadParams Tensors::head() const {
    const Tensors& t = *this;
    return {t["embed"], t["unembed"], t["unembed_bias"], t["head.w_transform"], t["head.b_transform"],
            t["head.ln.gain"], t["head.ln.bias"]};
}

// ---- activations ----

double activation(Activation kind, double x) {
    if (kind == Activation::silu) return x / (1.0 + std::exp(-x));
    if (kind == Activation::gelu_tanh) {
        const double c = std::sqrt(2.0 / kPiRef);
        return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
    }
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

double activation_grad(Activation kind, double x) {
    if (kind == Activation::silu) {  // d/dx x/(1 + e^−x) = (1 + e^−x + x·e^−x) / (1 + e^−x)²
        const double e = std::exp(-x);
        return (1.0 + e + x * e) / ((1.0 + e) * (1.0 + e));
    }
    if (kind == Activation::gelu_tanh) {
        const double c = std::sqrt(2.0 / kPiRef);
        const double t = std::tanh(c * (x + 0.044715 * x * x * x));
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3.0 * 0.044715 * x * x);
    }
    return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-x * x / 2.0) / std::sqrt(2.0 * kPiRef);
}

// ---- LayerNorm ----

LayerNormActs layernorm_forward(const Mat& x, const Param& gain, const Param& bias, double eps) {
    LayerNormActs n{Mat(x.rows, x.cols), {}, {}};
    for (int i = 0; i < x.rows; ++i) {
        double mu = 0;
        for (int j = 0; j < x.cols; ++j) mu += x(i, j);
        mu /= x.cols;
        double var = 0;
        for (int j = 0; j < x.cols; ++j) var += (x(i, j) - mu) * (x(i, j) - mu);
        var /= x.cols;
        const double inv = 1.0 / std::sqrt(var + eps);
        n.mean.push_back(mu);
        n.inv_sigma.push_back(inv);
        for (int j = 0; j < x.cols; ++j) n.y(i, j) = (x(i, j) - mu) * inv * gain(0, j) + bias(0, j);
    }
    return n;
}

Mat layernorm_backward(const Mat& x, const LayerNormActs& n, const Mat& dy, const Param& gain, const Param& bias) {
    const int C = x.cols;
    Mat dx(x.rows, C);
    for (int i = 0; i < x.rows; ++i) {
        // y_j = x̂_j·g_j + b_j, x̂_j = (x_j − μ)·s, s = (var + ε)^(−1/2)
        std::vector<double> xhat(C), dxhat(C);
        double sum_d = 0, sum_dx = 0;
        for (int j = 0; j < C; ++j) {
            xhat[j] = (x(i, j) - n.mean[i]) * n.inv_sigma[i];
            dxhat[j] = dy(i, j) * gain(0, j);
            gain.add(0, j, dy(i, j) * xhat[j]);
            bias.add(0, j, dy(i, j));
            sum_d += dxhat[j];
            sum_dx += dxhat[j] * xhat[j];
        }
        for (int j = 0; j < C; ++j) dx(i, j) = n.inv_sigma[i] * (dxhat[j] - sum_d / C - xhat[j] * sum_dx / C);
    }
    return dx;
}

// ---- RMSNorm ----

LayerNormActs rmsnorm_forward(const Mat& x, const Param& gain, double eps) {
    LayerNormActs n{Mat(x.rows, x.cols), {}, {}};
    for (int i = 0; i < x.rows; ++i) {
        double ms = 0;
        for (int j = 0; j < x.cols; ++j) ms += x(i, j) * x(i, j);
        ms /= x.cols;
        const double inv = 1.0 / std::sqrt(ms + eps);
        n.mean.push_back(0.0);
        n.inv_sigma.push_back(inv);
        for (int j = 0; j < x.cols; ++j) n.y(i, j) = x(i, j) * inv * gain(0, j);
    }
    return n;
}

Mat rmsnorm_backward(const Mat& x, const LayerNormActs& n, const Mat& dy, const Param& gain) {
    const int C = x.cols;
    Mat dx(x.rows, C);
    for (int i = 0; i < x.rows; ++i) {
        // y_j = x_j·s·g_j, s = (Σ x²/C + ε)^(−1/2), ∂s/∂x_k = −s³·x_k/C
        const double s = n.inv_sigma[i];
        double dot = 0;  // Σ_j dy_j·g_j·x_j
        for (int j = 0; j < C; ++j) {
            dot += dy(i, j) * gain(0, j) * x(i, j);
            gain.add(0, j, dy(i, j) * x(i, j) * s);
        }
        for (int k = 0; k < C; ++k) dx(i, k) = dy(i, k) * gain(0, k) * s - dot * s * s * s * x(i, k) / C;
    }
    return dx;
}

// ---- embedding ----

EmbeddingActs embedding_forward(const ModelConfig& cfg, const EmbeddingParams& p, const std::vector<std::int32_t>& ids) {
    const int T = static_cast<int>(ids.size()), C = cfg.d_model;
    EmbeddingActs e;
    e.sum = Mat(T, C);
    for (int t = 0; t < T; ++t)
        for (int j = 0; j < C; ++j) {
            double pos = 0;
            if (cfg.positional == Positional::learned) pos = p.pos(t, j);
            if (cfg.positional == Positional::sinusoidal) {
                const int i2 = j - j % 2;
                const double angle = t / std::pow(10000.0, static_cast<double>(i2) / C);
                pos = j % 2 == 0 ? std::sin(angle) : std::cos(angle);
            }
            e.sum(t, j) = p.embed(ids[static_cast<std::size_t>(t)], j) + pos + (cfg.token_types > 0 ? p.token_type(0, j) : 0.0);
        }
    if (cfg.embed_layernorm) {
        e.ln = layernorm_forward(e.sum, p.ln_gain, p.ln_bias, cfg.ln_eps);
        e.out = e.ln.y;
    } else {
        e.out = e.sum;
    }
    return e;
}

void embedding_backward(const ModelConfig& cfg, const EmbeddingParams& p, const std::vector<std::int32_t>& ids,
                        const EmbeddingActs& e, const Mat& dout) {
    const int T = static_cast<int>(ids.size()), C = cfg.d_model;
    const Mat dx = cfg.embed_layernorm ? layernorm_backward(e.sum, e.ln, dout, p.ln_gain, p.ln_bias) : dout;
    for (int t = 0; t < T; ++t)
        for (int j = 0; j < C; ++j) {
            p.embed.add(ids[static_cast<std::size_t>(t)], j, dx(t, j));
            if (cfg.positional == Positional::learned) p.pos.add(t, j, dx(t, j));
            if (cfg.token_types > 0) p.token_type.add(0, j, dx(t, j));
        }
}

// ---- attention ----

namespace {

/// RoPE: the pair (d, d + D/2) of every head of every row i turned by angle (i·θ_d)·sign.
void rotate(Mat& m, int heads, int D, const std::vector<double>& theta, double sign) {
    for (int i = 0; i < m.rows; ++i)
        for (int h = 0; h < heads; ++h)
            for (int d = 0; d < D / 2; ++d) {
                const double angle = sign * i * theta[static_cast<std::size_t>(d)];
                const double a = m(i, h * D + d), b = m(i, h * D + d + D / 2);
                m(i, h * D + d) = a * std::cos(angle) - b * std::sin(angle);
                m(i, h * D + d + D / 2) = a * std::sin(angle) + b * std::cos(angle);
            }
}

/// qk_norm: each head's D values of every row RMSNormed with gain g; the 1/rms per row and head into inv.
Mat head_rmsnorm(const Mat& m, int heads, int D, const Param& g, double eps, std::vector<double>& inv) {
    Mat out(m.rows, m.cols);
    inv.clear();
    for (int i = 0; i < m.rows; ++i)
        for (int h = 0; h < heads; ++h) {
            double ms = 0;
            for (int d = 0; d < D; ++d) ms += m(i, h * D + d) * m(i, h * D + d);
            const double s = 1.0 / std::sqrt(ms / D + eps);
            inv.push_back(s);
            for (int d = 0; d < D; ++d) out(i, h * D + d) = m(i, h * D + d) * s * g(0, d);
        }
    return out;
}

/// Its backward: ∂loss/∂ the input from dy, accumulating g's gradient.
Mat head_rmsnorm_back(const Mat& m, int heads, int D, const Param& g, const std::vector<double>& inv, const Mat& dy) {
    Mat dx(m.rows, m.cols);
    for (int i = 0; i < m.rows; ++i)
        for (int h = 0; h < heads; ++h) {
            const double s = inv[static_cast<std::size_t>(i) * heads + h];
            double dot = 0;
            for (int d = 0; d < D; ++d) {
                dot += dy(i, h * D + d) * g(0, d) * m(i, h * D + d);
                g.add(0, d, dy(i, h * D + d) * m(i, h * D + d) * s);
            }
            for (int d = 0; d < D; ++d)
                dx(i, h * D + d) = dy(i, h * D + d) * g(0, d) * s - dot * s * s * s * m(i, h * D + d) / D;
        }
    return dx;
}

int head_width(const AttentionRun& run, int C) { return run.head_dim > 0 ? run.head_dim : C / run.heads; }
int kv_count(const AttentionRun& run) { return run.kv_heads > 0 ? run.kv_heads : run.heads; }

}  // namespace

AttentionActs attention_forward(const AttentionParams& p, const Mat& a, const AttentionRun& run) {
    const int T = a.rows, C = a.cols, H = run.heads, D = head_width(run, C), Hkv = kv_count(run), group = H / Hkv;
    AttentionActs A;
    A.q = affine_ref(a, p.w_query, p.b_query, H * D);
    A.k = affine_ref(a, p.w_key, p.b_key, Hkv * D);
    A.v = affine_ref(a, p.w_value, p.b_value, Hkv * D);
    if (run.qk_norm) {
        A.q_proj = A.q;
        A.k_proj = A.k;
        A.q = head_rmsnorm(A.q_proj, H, D, p.q_norm, run.eps, A.q_inv_rms);
        A.k = head_rmsnorm(A.k_proj, Hkv, D, p.k_norm, run.eps, A.k_inv_rms);
    }
    if (run.positional == Positional::rope) {
        const std::vector<double> theta = rope_theta(D, run.rope);
        A.q_before_rope = A.q;
        A.k_before_rope = A.k;
        rotate(A.q, H, D, theta, 1.0);
        rotate(A.k, Hkv, D, theta, 1.0);
    }
    const std::vector<double> slopes = run.positional == Positional::alibi ? alibi_slope(H) : std::vector<double>(H, 0.0);
    A.concat = Mat(T, H * D);
    for (int h = 0; h < H; ++h) {
        const int g = h / group;
        Mat w(T, T);
        for (int i = 0; i < T; ++i) {
            int n = 0;
            double mx = -1e300;
            bool any = false;
            std::vector<double> s(T, 0.0);
            for (int j = 0; j < T; ++j) {
                if (!run.allowed(i, j)) continue;
                ++n;
                double dot = 0;
                for (int d = 0; d < D; ++d) dot += A.q(i, h * D + d) * A.k(j, g * D + d);
                s[j] = dot * run.scale - slopes[static_cast<std::size_t>(h)] * std::abs(i - j);
                mx = any ? std::max(mx, s[j]) : s[j];
                any = true;
            }
            if (run.uniform) {
                for (int j = 0; j < T; ++j) w(i, j) = run.allowed(i, j) ? 1.0 / n : 0.0;
                continue;
            }
            double z = 0;
            for (int j = 0; j < T; ++j)
                if (run.allowed(i, j)) z += std::exp(s[j] - mx);
            for (int j = 0; j < T; ++j) w(i, j) = run.allowed(i, j) ? std::exp(s[j] - mx) / z : 0.0;
        }
        if (run.on(h))
            for (int i = 0; i < T; ++i)
                for (int d = 0; d < D; ++d) {
                    double o = 0;
                    for (int j = 0; j < T; ++j) o += w(i, j) * A.v(j, g * D + d);
                    A.concat(i, h * D + d) = o;
                }
        A.weights.push_back(w);
    }
    A.out = affine_ref(A.concat, p.w_output, p.b_output, C);
    return A;
}

Mat attention_backward(const AttentionParams& p, const Mat& a, const AttentionRun& run, const AttentionActs& A,
                       const Mat& dout, std::vector<ReferenceHeadGrads>* heads, double* score_grad_sq) {
    const int T = a.rows, C = a.cols, H = run.heads, D = head_width(run, C), Hkv = kv_count(run), group = H / Hkv;
    const Mat dconcat = affine_ref_back(A.concat, dout, p.w_output, p.b_output);
    Mat dq(T, H * D), dk(T, Hkv * D), dv(T, Hkv * D);
    for (int h = 0; h < H; ++h) {
        const int g = h / group;
        const Mat& w = A.weights[static_cast<std::size_t>(h)];
        ReferenceHeadGrads* rh = heads ? &(*heads)[static_cast<std::size_t>(h)] : nullptr;
        // an ablated head's output never reaches the loss: all of its gradients are zero
        const bool on = run.on(h);
        Mat dws(T, T), dsc(T, T), dk_h(T, D), dv_h(T, D), dq_h(T, D);  // this head's share of dK, dV
        if (on)
            for (int j = 0; j < T; ++j)
                for (int d = 0; d < D; ++d) {
                    double s = 0;
                    for (int i = 0; i < T; ++i) s += w(i, j) * dconcat(i, h * D + d);
                    dv_h(j, d) = s;
                }
        for (int i = 0; on && i < T; ++i) {
            // dw_ij = Σ_d dO_id·v_jd; softmax: ds_ij = w_ij·(dw_ij − Σ_k w_ik·dw_ik)
            std::vector<double> dw(T, 0.0);
            double r = 0;
            for (int j = 0; j < T; ++j) {
                for (int d = 0; d < D; ++d) dw[j] += dconcat(i, h * D + d) * A.v(j, g * D + d);
                r += w(i, j) * dw[j];
                dws(i, j) = dw[j];
            }
            if (run.uniform) continue;  // constant weights: nothing reaches the scores
            for (int j = 0; j < T; ++j) {
                if (!run.allowed(i, j)) continue;
                dsc(i, j) = w(i, j) * (dw[j] - r);  // (ALiBi's bias is a constant: nothing more)
                if (score_grad_sq) *score_grad_sq += dsc(i, j) * dsc(i, j);
                const double ds = dsc(i, j) * run.scale;
                for (int d = 0; d < D; ++d) {
                    dq_h(i, d) += ds * A.k(j, g * D + d);
                    dk_h(j, d) += ds * A.q(i, h * D + d);
                }
            }
        }
        for (int i = 0; i < T; ++i)
            for (int d = 0; d < D; ++d) {
                dq(i, h * D + d) = dq_h(i, d);
                dk(i, g * D + d) += dk_h(i, d);
                dv(i, g * D + d) += dv_h(i, d);
            }
        if (rh) {
            rh->d_output = on ? column_block(dconcat, h * D, D) : std::vector<double>(static_cast<std::size_t>(T) * D, 0.0);
            rh->d_weights = dws.v;
            rh->d_scaled = dsc.v;
            rh->d_scores = dsc.v;
            for (double& v : rh->d_scores) v *= run.scale;
            rh->d_query = dq_h.v;
            rh->d_key = dk_h.v;
            rh->d_value = dv_h.v;
        }
    }
    if (run.positional == Positional::rope) {  // the rotation's transpose: turned back
        const std::vector<double> theta = rope_theta(D, run.rope);
        rotate(dq, H, D, theta, -1.0);
        rotate(dk, Hkv, D, theta, -1.0);
    }
    if (run.qk_norm) {
        dq = head_rmsnorm_back(A.q_proj, H, D, p.q_norm, A.q_inv_rms, dq);
        dk = head_rmsnorm_back(A.k_proj, Hkv, D, p.k_norm, A.k_inv_rms, dk);
    }
    Mat da = affine_ref_back(a, dq, p.w_query, p.b_query);
    const Mat da_k = affine_ref_back(a, dk, p.w_key, p.b_key);
    const Mat da_v = affine_ref_back(a, dv, p.w_value, p.b_value);
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < C; ++j) da(i, j) += da_k(i, j) + da_v(i, j);
    return da;
}

// ---- MLP ----

MlpActs mlp_forward(Activation kind, const MlpParams& p, const Mat& m) {
    MlpActs A;
    const int F = p.w_in.cols, C = p.w_out.cols;
    A.pre = affine_ref(m, p.w_in, p.b_in, F);
    if (p.w_gate) A.gate = affine_ref(m, p.w_gate, p.b_gate, F);
    A.act = Mat(m.rows, F);
    for (int i = 0; i < m.rows; ++i)
        for (int j = 0; j < F; ++j)
            A.act(i, j) = p.w_gate ? activation(kind, A.gate(i, j)) * A.pre(i, j) : activation(kind, A.pre(i, j));
    A.out = affine_ref(A.act, p.w_out, p.b_out, C);
    return A;
}

Mat mlp_backward(Activation kind, const MlpParams& p, const Mat& m, const MlpActs& A, const Mat& dout) {
    Mat dact = affine_ref_back(A.act, dout, p.w_out, p.b_out);
    if (!p.w_gate) {
        for (int i = 0; i < dact.rows; ++i)
            for (int j = 0; j < dact.cols; ++j) dact(i, j) *= activation_grad(kind, A.pre(i, j));
        return affine_ref_back(m, dact, p.w_in, p.b_in);
    }
    // act = f(gate)·up: ∂/∂up = f(gate), ∂/∂gate = f′(gate)·up
    Mat dgate(dact.rows, dact.cols), dup(dact.rows, dact.cols);
    for (int i = 0; i < dact.rows; ++i)
        for (int j = 0; j < dact.cols; ++j) {
            dup(i, j) = dact(i, j) * activation(kind, A.gate(i, j));
            dgate(i, j) = dact(i, j) * activation_grad(kind, A.gate(i, j)) * A.pre(i, j);
        }
    Mat dm = affine_ref_back(m, dup, p.w_in, p.b_in);
    const Mat dm_gate = affine_ref_back(m, dgate, p.w_gate, p.b_gate);
    for (std::size_t i = 0; i < dm.v.size(); ++i) dm.v[i] += dm_gate.v[i];
    return dm;
}

// ---- output head ----

HeadActs head_forward(const ModelConfig& cfg, const HeadParams& p, const Mat& h) {
    const int T = h.rows, C = cfg.d_model, V = cfg.vocab;
    HeadActs A;
    A.xt = h;
    if (cfg.output_transform) {
        A.pre = affine_ref(h, p.w_transform, p.b_transform, C);
        A.act = Mat(T, C);
        for (int i = 0; i < T; ++i)
            for (int j = 0; j < C; ++j) A.act(i, j) = activation(cfg.activation, A.pre(i, j));
        A.ln = layernorm_forward(A.act, p.ln_gain, p.ln_bias, cfg.ln_eps);
        A.xt = A.ln.y;
    }
    A.logits = Mat(T, V);
    for (int i = 0; i < T; ++i)
        for (int v = 0; v < V; ++v) {
            double s = cfg.output_bias ? p.unembed_bias(0, v) : 0.0;
            for (int j = 0; j < C; ++j) s += A.xt(i, j) * (cfg.tied ? p.embed(v, j) : p.unembed(j, v));
            A.logits(i, v) = s;
        }
    return A;
}

Mat head_backward(const ModelConfig& cfg, const HeadParams& p, const Mat& h, const HeadActs& A, const Mat& dlogits) {
    const int T = h.rows, C = cfg.d_model, V = cfg.vocab;
    Mat dx(T, C);
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < C; ++j) {
            double s = 0;
            for (int v = 0; v < V; ++v) {
                s += dlogits(i, v) * (cfg.tied ? p.embed(v, j) : p.unembed(j, v));
                if (cfg.tied)
                    p.embed.add(v, j, dlogits(i, v) * A.xt(i, j));
                else
                    p.unembed.add(j, v, dlogits(i, v) * A.xt(i, j));
            }
            dx(i, j) = s;
        }
    if (cfg.output_bias)
        for (int i = 0; i < T; ++i)
            for (int v = 0; v < V; ++v) p.unembed_bias.add(0, v, dlogits(i, v));
    if (!cfg.output_transform) return dx;
    Mat dact = layernorm_backward(A.act, A.ln, dx, p.ln_gain, p.ln_bias);
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < C; ++j) dact(i, j) *= activation_grad(cfg.activation, A.pre(i, j));
    return affine_ref_back(h, dact, p.w_transform, p.b_transform);
}

// ---- cross-entropy ----

Mat cross_entropy(const Mat& logits, const std::vector<std::int32_t>& targets, int count, double& loss) {
    const int T = logits.rows, V = logits.cols;
    Mat dlogits(T, V);
    for (int i = 0; i < T; ++i) {
        const int target = targets[static_cast<std::size_t>(i)];
        if (target < 0) continue;
        double mx = logits(i, 0);
        for (int v = 1; v < V; ++v) mx = std::max(mx, logits(i, v));
        double z = 0;
        for (int v = 0; v < V; ++v) z += std::exp(logits(i, v) - mx);
        loss += -(logits(i, target) - mx - std::log(z)) / count;
        for (int v = 0; v < V; ++v) dlogits(i, v) = (std::exp(logits(i, v) - mx) / z - (v == target)) / count;
    }
    return dlogits;
}

}  // namespace attn::reference
