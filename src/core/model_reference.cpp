// The independent reference of the model's loss and gradients: one sequence at
// a time, plain loops in double precision, nothing shared with model.cpp's
// fast path (no gemm, no Eigen products, its own LayerNorm, softmax, GELU and
// sinusoid). Slow and obvious on purpose: the fast path and the finite
// differences are both checked against it.

#include "model.hpp"

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

struct Norm {
    Mat y;                      // output
    std::vector<double> mean, inv_sigma;
};

Norm layernorm(const Mat& x, const Named& p, const std::string& prefix) {
    Norm n{Mat(x.rows, x.cols), {}, {}};
    for (int i = 0; i < x.rows; ++i) {
        double mu = 0;
        for (int j = 0; j < x.cols; ++j) mu += x(i, j);
        mu /= x.cols;
        double var = 0;
        for (int j = 0; j < x.cols; ++j) var += (x(i, j) - mu) * (x(i, j) - mu);
        var /= x.cols;
        const double inv = 1.0 / std::sqrt(var + 1e-5);
        n.mean.push_back(mu);
        n.inv_sigma.push_back(inv);
        for (int j = 0; j < x.cols; ++j)
            n.y(i, j) = (x(i, j) - mu) * inv * p.w(prefix + ".gain", 0, j) + p.w(prefix + ".bias", 0, j);
    }
    return n;
}

/// Returns dx for dy; accumulates the gain and bias gradients.
Mat layernorm_back(const Mat& x, const Norm& n, const Mat& dy, Named& p, const std::string& prefix) {
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

/// y = x·W for a parameter W (rows × cols).
Mat times(const Mat& x, const Named& p, const std::string& name, int cols) {
    Mat y(x.rows, cols);
    for (int i = 0; i < x.rows; ++i)
        for (int j = 0; j < cols; ++j) {
            double s = 0;
            for (int k = 0; k < x.cols; ++k) s += x(i, k) * p.w(name, k, j);
            y(i, j) = s;
        }
    return y;
}

/// For y = x·W: accumulates dW = xᵀ·dy and returns dx = dy·Wᵀ.
Mat times_back(const Mat& x, const Mat& dy, Named& p, const std::string& name) {
    Mat dx(x.rows, x.cols);
    for (int k = 0; k < x.cols; ++k)
        for (int j = 0; j < dy.cols; ++j) {
            double s = 0;
            for (int i = 0; i < x.rows; ++i) s += x(i, k) * dy(i, j);
            p.g(name, k, j, s);
        }
    for (int i = 0; i < x.rows; ++i)
        for (int k = 0; k < x.cols; ++k) {
            double s = 0;
            for (int j = 0; j < dy.cols; ++j) s += dy(i, j) * p.w(name, k, j);
            dx(i, k) = s;
        }
    return dx;
}

double gelu_ref(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_ref_grad(double x) {
    const double pi = 3.14159265358979323846;
    return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-x * x / 2.0) / std::sqrt(2.0 * pi);
}

struct LayerActs {
    Mat in, a, q, k, v, concat, mid, m, pre, act;
    Norm n1, n2;
    std::vector<Mat> weights;  // per head, T×T
};

}  // namespace

double reference_loss_and_grads(const ModelConfig& cfg, const std::vector<double>& params, const Batch& batch,
                                std::vector<double>* grads) {
    validate_model_config(cfg);
    const int T = batch.length, C = cfg.d_model, H = cfg.heads, D = C / H, V = cfg.vocab, F = cfg.mlp;
    std::size_t total = 0;
    for (const ParamInfo& p : parameter_layout(cfg)) total += p.size();
    if (params.size() != total)
        throw Error("reference: " + std::to_string(params.size()) + " parameters for a layout of " +
                    std::to_string(total));
    if (grads) grads->assign(total, 0.0);
    Named p(cfg, params, grads);
    const double scale = cfg.scale ? 1.0 / std::sqrt(static_cast<double>(D)) : 1.0;

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
                x(t, j) = p.w("embed", batch.id(b, t), j) + pos;
            }
        std::vector<LayerActs> acts(static_cast<std::size_t>(cfg.layers));
        for (int l = 0; l < cfg.layers; ++l) {
            LayerActs& A = acts[static_cast<std::size_t>(l)];
            A.in = x;
            if (cfg.layernorm) {
                A.n1 = layernorm(x, p, L(l, "ln1"));
                A.a = A.n1.y;
            } else {
                A.a = x;
            }
            A.q = times(A.a, p, L(l, "w_query"), C);
            A.k = times(A.a, p, L(l, "w_key"), C);
            A.v = times(A.a, p, L(l, "w_value"), C);
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
            const Mat y = times(A.concat, p, L(l, "w_output"), C);
            A.mid = Mat(T, C);
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < C; ++j) A.mid(i, j) = x(i, j) + y(i, j);
            x = A.mid;
            if (F > 0) {
                if (cfg.layernorm) {
                    A.n2 = layernorm(x, p, L(l, "ln2"));
                    A.m = A.n2.y;
                } else {
                    A.m = x;
                }
                A.pre = times(A.m, p, L(l, "mlp.w_in"), F);
                A.act = Mat(T, F);
                for (int i = 0; i < T; ++i)
                    for (int j = 0; j < F; ++j) {
                        A.pre(i, j) += p.w(L(l, "mlp.b_in"), 0, j);
                        A.act(i, j) = gelu_ref(A.pre(i, j));
                    }
                const Mat out = times(A.act, p, L(l, "mlp.w_out"), C);
                for (int i = 0; i < T; ++i)
                    for (int j = 0; j < C; ++j) x(i, j) += out(i, j) + p.w(L(l, "mlp.b_out"), 0, j);
            }
        }
        Norm nf;
        Mat xf = x;
        if (cfg.layernorm) {
            nf = layernorm(x, p, "final_ln");
            xf = nf.y;
        }
        Mat logits(T, V);
        for (int i = 0; i < T; ++i)
            for (int v = 0; v < V; ++v) {
                double s = 0;
                for (int j = 0; j < C; ++j) s += xf(i, j) * (cfg.tied ? p.w("embed", v, j) : p.w("unembed", j, v));
                logits(i, v) = s;
            }
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
                        p.g("embed", v, j, dlogits(i, v) * xf(i, j));
                    else
                        p.g("unembed", j, v, dlogits(i, v) * xf(i, j));
                }
                dx(i, j) = s;
            }
        if (cfg.layernorm) dx = layernorm_back(x, nf, dx, p, "final_ln");
        for (int l = cfg.layers - 1; l >= 0; --l) {
            LayerActs& A = acts[static_cast<std::size_t>(l)];
            if (F > 0) {
                // x_out = mid + GELU(m·W_in + b_in)·W_out + b_out
                for (int i = 0; i < T; ++i)
                    for (int j = 0; j < C; ++j) p.g(L(l, "mlp.b_out"), 0, j, dx(i, j));
                Mat dact = times_back(A.act, dx, p, L(l, "mlp.w_out"));
                for (int i = 0; i < T; ++i)
                    for (int j = 0; j < F; ++j) {
                        dact(i, j) *= gelu_ref_grad(A.pre(i, j));
                        p.g(L(l, "mlp.b_in"), 0, j, dact(i, j));
                    }
                Mat dm = times_back(A.m, dact, p, L(l, "mlp.w_in"));
                if (cfg.layernorm) dm = layernorm_back(A.mid, A.n2, dm, p, L(l, "ln2"));
                for (int i = 0; i < T; ++i)
                    for (int j = 0; j < C; ++j) dx(i, j) += dm(i, j);
            }
            // mid = in + concat·W_O
            const Mat dconcat = times_back(A.concat, dx, p, L(l, "w_output"));
            Mat dq(T, C), dk(T, C), dv(T, C);
            for (int h = 0; h < H; ++h) {
                const Mat& w = A.weights[static_cast<std::size_t>(h)];
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
                    }
                    for (int j = 0; j < T; ++j) {
                        if (!allowed(i, j)) continue;
                        const double ds = w(i, j) * (dw[j] - r) * scale;
                        for (int d = 0; d < D; ++d) {
                            dq(i, h * D + d) += ds * A.k(j, h * D + d);
                            dk(j, h * D + d) += ds * A.q(i, h * D + d);
                        }
                    }
                }
            }
            Mat da = times_back(A.a, dq, p, L(l, "w_query"));
            const Mat da_k = times_back(A.a, dk, p, L(l, "w_key"));
            const Mat da_v = times_back(A.a, dv, p, L(l, "w_value"));
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < C; ++j) da(i, j) += da_k(i, j) + da_v(i, j);
            if (cfg.layernorm) da = layernorm_back(A.in, A.n1, da, p, L(l, "ln1"));
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < C; ++j) dx(i, j) += da(i, j);
        }
        for (int t = 0; t < T; ++t)
            for (int j = 0; j < C; ++j) {
                p.g("embed", batch.id(b, t), j, dx(t, j));
                if (cfg.positional == Positional::learned) p.g("pos", t, j, dx(t, j));
            }
    }
    return loss;
}

}  // namespace attn
