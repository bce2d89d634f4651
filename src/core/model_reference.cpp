// The independent reference of the model's loss and gradients: one sequence at
// a time, plain loops in double precision, nothing shared with model.cpp's
// fast path (no gemm, no Eigen products, its own LayerNorm, softmax, GELU and
// sinusoid). Slow and obvious on purpose: the fast path and the finite
// differences are both checked against it.

#include "model.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

namespace attn {
namespace {

/// A row-major double matrix as a flat vector.
struct Mat {
    int rows = 0, cols = 0;
    std::vector<double> v;
    Mat() = default;
    Mat(int r, int c) : rows(r), cols(c), v(static_cast<std::size_t>(r) * c, 0.0) {}
    double& operator()(int i, int j) { return v[static_cast<std::size_t>(i) * cols + j]; }
    double operator()(int i, int j) const { return v[static_cast<std::size_t>(i) * cols + j]; }
};

/// Named read access to the parameters and write access to the gradients.
class Named {
public:
    Named(const ModelConfig& config, const std::vector<double>& params, std::vector<double>* grads)
        : params_(params), grads_(grads) {
        for (const ParamInfo& p : parameter_layout(config)) index_[p.name] = p;
    }
    /// Entry (r, c) of a parameter (vectors: r = 0).
    double w(const std::string& name, int r, int c) const {
        const ParamInfo& p = index_.at(name);
        return params_[p.offset + static_cast<std::size_t>(r) * p.cols + c];
    }
    void g(const std::string& name, int r, int c, double value) {
        if (!grads_) return;
        const ParamInfo& p = index_.at(name);
        (*grads_)[p.offset + static_cast<std::size_t>(r) * p.cols + c] += value;
    }

private:
    const std::vector<double>& params_;
    std::vector<double>* grads_;
    std::unordered_map<std::string, ParamInfo> index_;
};

std::string L(int l, const char* leaf) { return "layers." + std::to_string(l) + "." + leaf; }

struct LN {
    Mat y;                      // output
    std::vector<double> mean, inv_sigma;
};

LN layernorm(const Mat& x, const Named& p, const std::string& prefix, double eps) {
    LN n{Mat(x.rows, x.cols), {}, {}};
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
        for (int j = 0; j < x.cols; ++j)
            n.y(i, j) = (x(i, j) - mu) * inv * p.w(prefix + ".gain", 0, j) + p.w(prefix + ".bias", 0, j);
    }
    return n;
}

/// Returns dx for dy; accumulates the gain and bias gradients.
Mat layernorm_back(const Mat& x, const LN& n, const Mat& dy, Named& p, const std::string& prefix) {
    const int C = x.cols;
    Mat dx(x.rows, C);
    for (int i = 0; i < x.rows; ++i) {
        // y_j = x̂_j·g_j + b_j, x̂_j = (x_j − μ)·s, s = (var + ε)^(−1/2)
        std::vector<double> xhat(C), dxhat(C);
        double sum_d = 0, sum_dx = 0;
        for (int j = 0; j < C; ++j) {
            xhat[j] = (x(i, j) - n.mean[i]) * n.inv_sigma[i];
            dxhat[j] = dy(i, j) * p.w(prefix + ".gain", 0, j);
            p.g(prefix + ".gain", 0, j, dy(i, j) * xhat[j]);
            p.g(prefix + ".bias", 0, j, dy(i, j));
            sum_d += dxhat[j];
            sum_dx += dxhat[j] * xhat[j];
        }
        for (int j = 0; j < C; ++j) dx(i, j) = n.inv_sigma[i] * (dxhat[j] - sum_d / C - xhat[j] * sum_dx / C);
    }
    return dx;
}

/// y = x·W (+ b) for a parameter W (rows × cols) and, when bias is non-empty, a bias b.
Mat times(const Mat& x, const Named& p, const std::string& name, int cols, const std::string& bias = "") {
    Mat y(x.rows, cols);
    for (int i = 0; i < x.rows; ++i)
        for (int j = 0; j < cols; ++j) {
            double s = bias.empty() ? 0.0 : p.w(bias, 0, j);
            for (int k = 0; k < x.cols; ++k) s += x(i, k) * p.w(name, k, j);
            y(i, j) = s;
        }
    return y;
}

/// For y = x·W (+ b): accumulates dW = xᵀ·dy (and db = Σ_i dy_i) and returns dx = dy·Wᵀ.
Mat times_back(const Mat& x, const Mat& dy, Named& p, const std::string& name, const std::string& bias = "") {
    Mat dx(x.rows, x.cols);
    for (int k = 0; k < x.cols; ++k)
        for (int j = 0; j < dy.cols; ++j) {
            double s = 0;
            for (int i = 0; i < x.rows; ++i) s += x(i, k) * dy(i, j);
            p.g(name, k, j, s);
        }
    if (!bias.empty())
        for (int i = 0; i < dy.rows; ++i)
            for (int j = 0; j < dy.cols; ++j) p.g(bias, 0, j, dy(i, j));
    for (int i = 0; i < x.rows; ++i)
        for (int k = 0; k < x.cols; ++k) {
            double s = 0;
            for (int j = 0; j < dy.cols; ++j) s += dy(i, j) * p.w(name, k, j);
            dx(i, k) = s;
        }
    return dx;
}

const double kPi = 3.14159265358979323846;

double act_ref(Activation kind, double x) {
    if (kind == Activation::gelu_tanh) {
        const double c = std::sqrt(2.0 / kPi);
        return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
    }
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
double act_ref_grad(Activation kind, double x) {
    if (kind == Activation::gelu_tanh) {
        const double c = std::sqrt(2.0 / kPi);
        const double t = std::tanh(c * (x + 0.044715 * x * x * x));
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3.0 * 0.044715 * x * x);
    }
    return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-x * x / 2.0) / std::sqrt(2.0 * kPi);
}

Mat plus(const Mat& a, const Mat& b) {
    Mat c = a;
    for (std::size_t i = 0; i < c.v.size(); ++i) c.v[i] += b.v[i];
    return c;
}

struct LayerActs {
    Mat in, a, q, k, v, concat, s1, mid, m, pre, act, s2;
    LN n1, n2;
    std::vector<Mat> weights;  // per head, T×T
};

std::vector<double> block(const Mat& m, int col0, int cols) {
    std::vector<double> out;
    for (int i = 0; i < m.rows; ++i)
        for (int j = 0; j < cols; ++j) out.push_back(m(i, col0 + j));
    return out;
}

}  // namespace

double reference_loss_and_grads(const ModelConfig& cfg, const std::vector<double>& params, const Batch& batch,
                                std::vector<double>* grads, std::vector<std::vector<ReferenceHeadGrads>>* head_grads,
                                std::vector<double>* logits_out) {
    validate_inference_config(cfg);
    const int T = batch.length, C = cfg.d_model, H = cfg.heads, D = C / H, V = cfg.vocab, F = cfg.mlp;
    std::size_t total = 0;
    for (const ParamInfo& p : parameter_layout(cfg)) total += p.size();
    if (params.size() != total)
        throw Error("reference: " + std::to_string(params.size()) + " parameters for a layout of " +
                    std::to_string(total));
    if (grads) grads->assign(total, 0.0);
    if (logits_out) logits_out->assign(static_cast<std::size_t>(batch.batch) * T * V, 0.0);
    if (head_grads) head_grads->assign(static_cast<std::size_t>(cfg.layers), std::vector<ReferenceHeadGrads>(static_cast<std::size_t>(H)));
    Named p(cfg, params, grads);
    const double scale = cfg.scale ? 1.0 / std::sqrt(static_cast<double>(D)) : 1.0;
    const double eps = cfg.ln_eps;
    const bool post = cfg.norm == Norm::post;
    const bool final_ln = cfg.layernorm && !post;
    auto ab = [&](int l, const char* leaf) { return cfg.attn_bias ? L(l, leaf) : std::string(); };

    int count = 0;
    for (std::int32_t t : batch.targets) count += t >= 0;
    double loss = 0;

    for (int b = 0; b < batch.batch; ++b) {
        const int len = batch.real_length(b);
        auto allowed = [&](int i, int j) { return j < len && (!cfg.causal || j <= i); };
        // ---- forward ----
        Mat x(T, C);
        for (int t = 0; t < T; ++t)
            for (int j = 0; j < C; ++j) {
                double pos = 0;
                if (cfg.positional == Positional::learned) pos = p.w("pos", t, j);
                if (cfg.positional == Positional::sinusoidal) {
                    const int i2 = j - j % 2;
                    const double angle = t / std::pow(10000.0, static_cast<double>(i2) / C);
                    pos = j % 2 == 0 ? std::sin(angle) : std::cos(angle);
                }
                x(t, j) = p.w("embed", batch.id(b, t), j) + pos + (cfg.token_types > 0 ? p.w("token_type", 0, j) : 0.0);
            }
        const Mat x0 = x;
        LN ne;
        if (cfg.embed_layernorm) {
            ne = layernorm(x0, p, "embed_ln", eps);
            x = ne.y;
        }
        std::vector<LayerActs> acts(static_cast<std::size_t>(cfg.layers));
        for (int l = 0; l < cfg.layers; ++l) {
            LayerActs& A = acts[static_cast<std::size_t>(l)];
            A.in = x;
            if (cfg.layernorm && !post) {
                A.n1 = layernorm(x, p, L(l, "ln1"), eps);
                A.a = A.n1.y;
            } else {
                A.a = x;
            }
            A.q = times(A.a, p, L(l, "w_query"), C, ab(l, "b_query"));
            A.k = times(A.a, p, L(l, "w_key"), C, ab(l, "b_key"));
            A.v = times(A.a, p, L(l, "w_value"), C, ab(l, "b_value"));
            A.concat = Mat(T, C);
            for (int h = 0; h < H; ++h) {
                Mat w(T, T);
                for (int i = 0; i < T; ++i) {
                    double mx = -1e300;
                    bool any = false;
                    std::vector<double> s(T, 0.0);
                    for (int j = 0; j < T; ++j) {
                        if (!allowed(i, j)) continue;
                        double dot = 0;
                        for (int d = 0; d < D; ++d) dot += A.q(i, h * D + d) * A.k(j, h * D + d);
                        s[j] = dot * scale;
                        mx = any ? std::max(mx, s[j]) : s[j];
                        any = true;
                    }
                    double z = 0;
                    for (int j = 0; j < T; ++j)
                        if (allowed(i, j)) z += std::exp(s[j] - mx);
                    for (int j = 0; j < T; ++j) w(i, j) = allowed(i, j) ? std::exp(s[j] - mx) / z : 0.0;
                }
                for (int i = 0; i < T; ++i)
                    for (int d = 0; d < D; ++d) {
                        double o = 0;
                        for (int j = 0; j < T; ++j) o += w(i, j) * A.v(j, h * D + d);
                        A.concat(i, h * D + d) = o;
                    }
                A.weights.push_back(w);
            }
            const Mat y = times(A.concat, p, L(l, "w_output"), C, ab(l, "b_output"));
            if (post) {
                A.s1 = plus(x, y);
                A.n1 = layernorm(A.s1, p, L(l, "ln1"), eps);
                A.mid = A.n1.y;
            } else {
                A.mid = plus(x, y);
            }
            x = A.mid;
            if (F > 0) {
                if (cfg.layernorm && !post) {
                    A.n2 = layernorm(x, p, L(l, "ln2"), eps);
                    A.m = A.n2.y;
                } else {
                    A.m = x;
                }
                A.pre = times(A.m, p, L(l, "mlp.w_in"), F, L(l, "mlp.b_in"));
                A.act = Mat(T, F);
                for (int i = 0; i < T; ++i)
                    for (int j = 0; j < F; ++j) A.act(i, j) = act_ref(cfg.activation, A.pre(i, j));
                const Mat out = times(A.act, p, L(l, "mlp.w_out"), C, L(l, "mlp.b_out"));
                if (post) {
                    A.s2 = plus(A.mid, out);
                    A.n2 = layernorm(A.s2, p, L(l, "ln2"), eps);
                    x = A.n2.y;
                } else {
                    x = plus(A.mid, out);
                }
            }
        }
        LN nf;
        Mat xf = x;
        if (final_ln) {
            nf = layernorm(x, p, "final_ln", eps);
            xf = nf.y;
        }
        // the MLM head: xt = LN_t(act(xf·W_t + b_t))
        Mat hpre, hact, xt = xf;
        LN nt;
        if (cfg.output_transform) {
            hpre = times(xf, p, "head.w_transform", C, "head.b_transform");
            hact = Mat(T, C);
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < C; ++j) hact(i, j) = act_ref(cfg.activation, hpre(i, j));
            nt = layernorm(hact, p, "head.ln", eps);
            xt = nt.y;
        }
        Mat logits(T, V);
        for (int i = 0; i < T; ++i)
            for (int v = 0; v < V; ++v) {
                double s = cfg.output_bias ? p.w("unembed_bias", 0, v) : 0.0;
                for (int j = 0; j < C; ++j) s += xt(i, j) * (cfg.tied ? p.w("embed", v, j) : p.w("unembed", j, v));
                logits(i, v) = s;
            }
        if (logits_out)
            std::copy(logits.v.begin(), logits.v.end(), logits_out->begin() + static_cast<std::ptrdiff_t>(b) * T * V);
        Mat dlogits(T, V);
        for (int i = 0; i < T; ++i) {
            const int target = batch.target(b, i);
            if (target < 0) continue;
            double mx = logits(i, 0);
            for (int v = 1; v < V; ++v) mx = std::max(mx, logits(i, v));
            double z = 0;
            for (int v = 0; v < V; ++v) z += std::exp(logits(i, v) - mx);
            loss += -(logits(i, target) - mx - std::log(z)) / count;
            for (int v = 0; v < V; ++v) dlogits(i, v) = (std::exp(logits(i, v) - mx) / z - (v == target)) / count;
        }
        if (!grads) continue;

        // ---- backward ----
        Mat dx(T, C);
        for (int i = 0; i < T; ++i)
            for (int j = 0; j < C; ++j) {
                double s = 0;
                for (int v = 0; v < V; ++v) {
                    s += dlogits(i, v) * (cfg.tied ? p.w("embed", v, j) : p.w("unembed", j, v));
                    if (cfg.tied)
                        p.g("embed", v, j, dlogits(i, v) * xt(i, j));
                    else
                        p.g("unembed", j, v, dlogits(i, v) * xt(i, j));
                }
                dx(i, j) = s;
            }
        if (cfg.output_bias)
            for (int i = 0; i < T; ++i)
                for (int v = 0; v < V; ++v) p.g("unembed_bias", 0, v, dlogits(i, v));
        if (cfg.output_transform) {
            Mat dact = layernorm_back(hact, nt, dx, p, "head.ln");
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < C; ++j) dact(i, j) *= act_ref_grad(cfg.activation, hpre(i, j));
            dx = times_back(xf, dact, p, "head.w_transform", "head.b_transform");
        }
        if (final_ln) dx = layernorm_back(x, nf, dx, p, "final_ln");
        for (int l = cfg.layers - 1; l >= 0; --l) {
            LayerActs& A = acts[static_cast<std::size_t>(l)];
            // dx: ∂loss/∂(the layer's output); dmid: ∂loss/∂mid
            Mat dmid = dx;
            if (F > 0) {
                Mat dsum = dx;  // ∂loss/∂(mid + MLP(m))
                if (post) dsum = layernorm_back(A.s2, A.n2, dx, p, L(l, "ln2"));
                Mat dact = times_back(A.act, dsum, p, L(l, "mlp.w_out"), L(l, "mlp.b_out"));
                for (int i = 0; i < T; ++i)
                    for (int j = 0; j < F; ++j) dact(i, j) *= act_ref_grad(cfg.activation, A.pre(i, j));
                Mat dm = times_back(A.m, dact, p, L(l, "mlp.w_in"), L(l, "mlp.b_in"));
                if (cfg.layernorm && !post) dm = layernorm_back(A.mid, A.n2, dm, p, L(l, "ln2"));
                dmid = plus(dsum, dm);
            }
            // pre-LN: mid = in + y; post-LN: mid = LN1(in + y); y = concat·W_O + b_O
            const Mat dy = post ? layernorm_back(A.s1, A.n1, dmid, p, L(l, "ln1")) : dmid;
            const Mat dconcat = times_back(A.concat, dy, p, L(l, "w_output"), ab(l, "b_output"));
            Mat dq(T, C), dk(T, C), dv(T, C);
            for (int h = 0; h < H; ++h) {
                const Mat& w = A.weights[static_cast<std::size_t>(h)];
                ReferenceHeadGrads* rh = head_grads && b == 0 ? &(*head_grads)[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)] : nullptr;
                Mat dws(T, T), dsc(T, T);
                for (int j = 0; j < T; ++j)
                    for (int d = 0; d < D; ++d) {
                        double s = 0;
                        for (int i = 0; i < T; ++i) s += w(i, j) * dconcat(i, h * D + d);
                        dv(j, h * D + d) = s;
                    }
                for (int i = 0; i < T; ++i) {
                    // dw_ij = Σ_d dO_id·v_jd; softmax: ds_ij = w_ij·(dw_ij − Σ_k w_ik·dw_ik)
                    std::vector<double> dw(T, 0.0);
                    double r = 0;
                    for (int j = 0; j < T; ++j) {
                        for (int d = 0; d < D; ++d) dw[j] += dconcat(i, h * D + d) * A.v(j, h * D + d);
                        r += w(i, j) * dw[j];
                        dws(i, j) = dw[j];
                    }
                    for (int j = 0; j < T; ++j) {
                        if (!allowed(i, j)) continue;
                        dsc(i, j) = w(i, j) * (dw[j] - r);
                        const double ds = dsc(i, j) * scale;
                        for (int d = 0; d < D; ++d) {
                            dq(i, h * D + d) += ds * A.k(j, h * D + d);
                            dk(j, h * D + d) += ds * A.q(i, h * D + d);
                        }
                    }
                }
                if (rh) {
                    rh->d_output = block(dconcat, h * D, D);
                    rh->d_weights = dws.v;
                    rh->d_scaled = dsc.v;
                    rh->d_scores = dsc.v;
                    for (double& v : rh->d_scores) v *= scale;
                    rh->d_query = block(dq, h * D, D);
                    rh->d_key = block(dk, h * D, D);
                    rh->d_value = block(dv, h * D, D);
                }
            }
            Mat da = times_back(A.a, dq, p, L(l, "w_query"), ab(l, "b_query"));
            const Mat da_k = times_back(A.a, dk, p, L(l, "w_key"), ab(l, "b_key"));
            const Mat da_v = times_back(A.a, dv, p, L(l, "w_value"), ab(l, "b_value"));
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < C; ++j) da(i, j) += da_k(i, j) + da_v(i, j);
            if (cfg.layernorm && !post) da = layernorm_back(A.in, A.n1, da, p, L(l, "ln1"));
            dx = plus(post ? dy : dmid, da);
        }
        if (cfg.embed_layernorm) dx = layernorm_back(x0, ne, dx, p, "embed_ln");
        for (int t = 0; t < T; ++t)
            for (int j = 0; j < C; ++j) {
                p.g("embed", batch.id(b, t), j, dx(t, j));
                if (cfg.positional == Positional::learned) p.g("pos", t, j, dx(t, j));
                if (cfg.token_types > 0) p.g("token_type", 0, j, dx(t, j));
            }
    }
    return loss;
}

}  // namespace attn
