// The independent reference of the model's loss and gradients: the blocks'
// composition (pre/post-LN, the residuals, the final LayerNorm) of the layer
// kinds' double references (layer_reference.hpp), one sequence at a time.
// Nothing shared with model.cpp's fast path. Slow and obvious on purpose: the
// fast path and the finite differences are both checked against it.

#include "model/layer_reference.hpp"
#include "model/model.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace attn {
namespace {

using reference::Mat;

Mat plus(const Mat& a, const Mat& b) {
    Mat c = a;
    for (std::size_t i = 0; i < c.v.size(); ++i) c.v[i] += b.v[i];
    return c;
}

/// What one block keeps of its forward for its backward.
struct BlockActs {
    Mat in, a, s1, mid, m, s2;
    reference::LayerNormActs n1, n2;
    reference::AttentionActs attention;
    reference::MlpActs mlp;
};

}  // namespace

double reference_loss_and_grads(const ModelConfig& cfg, const std::vector<double>& params, const Batch& batch,
                                std::vector<double>* grads, std::vector<std::vector<ReferenceHeadGrads>>* head_grads,
                                std::vector<double>* logits_out) {
    validate_inference_config(cfg);
    const int T = batch.length, H = cfg.heads, D = head_dim_of(cfg), F = cfg.mlp, V = cfg.vocab;
    std::size_t total = 0;
    for (const ParamInfo& p : parameter_layout(cfg)) total += p.size();
    if (params.size() != total)
        throw Error("reference: " + std::to_string(params.size()) + " parameters for a layout of " +
                    std::to_string(total));
    if (grads) grads->assign(total, 0.0);
    if (logits_out) logits_out->assign(static_cast<std::size_t>(batch.batch) * T * V, 0.0);
    if (head_grads) head_grads->assign(static_cast<std::size_t>(cfg.layers), std::vector<ReferenceHeadGrads>(static_cast<std::size_t>(H)));
    const reference::Tensors p(cfg, params, grads);
    const reference::EmbeddingParams pe = p.embedding();
    const reference::HeadParams ph = p.head();
    const double eps = cfg.ln_eps;
    const bool post = cfg.norm == Norm::post;
    const bool pre_ln = cfg.layernorm && !post;
    auto L = [](int l, const char* leaf) { return "layers." + std::to_string(l) + "." + leaf; };
    // the block norms and LN_f: LayerNorm, or RMSNorm (gain only) with rmsnorm
    auto norm = [&](const Mat& x, const std::string& name) {
        return cfg.rmsnorm ? reference::rmsnorm_forward(x, p[name + ".gain"], eps)
                           : reference::layernorm_forward(x, p[name + ".gain"], p[name + ".bias"], eps);
    };
    auto norm_back = [&](const Mat& x, const reference::LayerNormActs& acts, const Mat& dy, const std::string& name) {
        return cfg.rmsnorm ? reference::rmsnorm_backward(x, acts, dy, p[name + ".gain"])
                           : reference::layernorm_backward(x, acts, dy, p[name + ".gain"], p[name + ".bias"]);
    };

    int count = 0;
    for (std::int32_t t : batch.targets) count += t >= 0;
    double loss = 0;

    for (int b = 0; b < batch.batch; ++b) {
        reference::AttentionRun run;
        run.heads = H;
        run.kv_heads = kv_heads_of(cfg);
        run.head_dim = D;
        run.length = batch.real_length(b);
        run.causal = cfg.causal;
        run.scale = cfg.scale ? 1.0 / std::sqrt(static_cast<double>(D)) : 1.0;
        run.positional = cfg.positional;
        run.rope = rope_settings(cfg);
        run.qk_norm = cfg.qk_norm;
        run.eps = eps;
        const std::vector<std::int32_t> ids(batch.ids.begin() + static_cast<std::ptrdiff_t>(b) * T,
                                            batch.ids.begin() + static_cast<std::ptrdiff_t>(b + 1) * T);
        const std::vector<std::int32_t> targets(batch.targets.begin() + static_cast<std::ptrdiff_t>(b) * T,
                                                batch.targets.begin() + static_cast<std::ptrdiff_t>(b + 1) * T);
        // ---- forward ----
        const reference::EmbeddingActs embedded = reference::embedding_forward(cfg, pe, ids);
        Mat x = embedded.out;
        std::vector<BlockActs> acts(static_cast<std::size_t>(cfg.layers));
        for (int l = 0; l < cfg.layers; ++l) {
            BlockActs& A = acts[static_cast<std::size_t>(l)];
            A.in = x;
            if (pre_ln) {
                A.n1 = norm(x, L(l, "ln1"));
                A.a = A.n1.y;
            } else {
                A.a = x;
            }
            A.attention = reference::attention_forward(p.attention(l), A.a, run);
            if (post) {
                A.s1 = plus(x, A.attention.out);
                A.n1 = norm(A.s1, L(l, "ln1"));
                A.mid = A.n1.y;
            } else {
                A.mid = plus(x, A.attention.out);
            }
            x = A.mid;
            if (F > 0) {
                if (pre_ln) {
                    A.n2 = norm(x, L(l, "ln2"));
                    A.m = A.n2.y;
                } else {
                    A.m = x;
                }
                A.mlp = reference::mlp_forward(cfg.activation, p.mlp(l), A.m);
                if (post) {
                    A.s2 = plus(A.mid, A.mlp.out);
                    A.n2 = norm(A.s2, L(l, "ln2"));
                    x = A.n2.y;
                } else {
                    x = plus(A.mid, A.mlp.out);
                }
            }
        }
        reference::LayerNormActs nf;
        Mat xf = x;
        if (pre_ln) {
            nf = norm(x, "final_ln");
            xf = nf.y;
        }
        const reference::HeadActs head = reference::head_forward(cfg, ph, xf);
        if (logits_out)
            std::copy(head.logits.v.begin(), head.logits.v.end(), logits_out->begin() + static_cast<std::ptrdiff_t>(b) * T * V);
        const Mat dlogits = reference::cross_entropy(head.logits, targets, count, loss);
        if (!grads) continue;

        // ---- backward ----
        Mat dx = reference::head_backward(cfg, ph, xf, head, dlogits);
        if (pre_ln) dx = norm_back(x, nf, dx, "final_ln");
        for (int l = cfg.layers - 1; l >= 0; --l) {
            BlockActs& A = acts[static_cast<std::size_t>(l)];
            // dx: ∂loss/∂(the layer's output); dmid: ∂loss/∂mid
            Mat dmid = dx;
            if (F > 0) {
                Mat dsum = dx;  // ∂loss/∂(mid + MLP(m))
                if (post) dsum = norm_back(A.s2, A.n2, dx, L(l, "ln2"));
                Mat dm = reference::mlp_backward(cfg.activation, p.mlp(l), A.m, A.mlp, dsum);
                if (pre_ln) dm = norm_back(A.mid, A.n2, dm, L(l, "ln2"));
                dmid = plus(dsum, dm);
            }
            // pre-LN: mid = in + y; post-LN: mid = LN1(in + y); y = the attention's output
            const Mat dy = post ? norm_back(A.s1, A.n1, dmid, L(l, "ln1")) : dmid;
            std::vector<ReferenceHeadGrads>* rh = head_grads && b == 0 ? &(*head_grads)[static_cast<std::size_t>(l)] : nullptr;
            Mat da = reference::attention_backward(p.attention(l), A.a, run, A.attention, dy, rh);
            if (pre_ln) da = norm_back(A.in, A.n1, da, L(l, "ln1"));
            dx = plus(post ? dy : dmid, da);
        }
        reference::embedding_backward(cfg, pe, ids, embedded, dx);
    }
    return loss;
}

}  // namespace attn
