#include "model/block.hpp"

#include <cmath>

namespace attn {

bool causal_of(const ModelConfig& config, const ForwardOptions& options) {
    return options.causal_override < 0 ? config.causal : options.causal_override == 1;
}

AttentionRun attention_run(const ModelConfig& config, int B, int T, const std::vector<int>& lengths,
                           const ForwardOptions& options, int layer) {
    AttentionRun run;
    run.B = B;
    run.T = T;
    run.lengths = &lengths;
    run.causal = causal_of(config, options);
    const int D = config.d_model / config.heads;
    const bool scale = options.scale_override < 0 ? config.scale : options.scale_override == 1;
    run.scale = scale ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(D))) : 1.0f;
    run.layer = layer;
    run.options = &options;
    return run;
}

void block_forward(const ModelConfig& cfg, const LayerParams<const float*>& p, const AttentionRun& run, LayerState& c,
                   Matrix& x, AttentionStatsSum* stats, const Tap& rec) {
    const bool post = cfg.norm == Norm::post;
    const int l = run.layer;
    Matrix tmp;
    c.input = x;
    rec(Point::block_in, l, c.input);
    if (cfg.layernorm && !post)
        layernorm_forward(c.input, p.ln1_gain, p.ln1_bias, cfg.ln_eps, c.normed, c.ln1);
    else
        c.normed = c.input;
    rec(Point::attn_norm, l, c.normed);
    attention_forward(cfg, p, c.normed, run, c.attention, tmp, stats, rec);
    if (post) {
        c.sum1 = c.input + tmp;
        layernorm_forward(c.sum1, p.ln1_gain, p.ln1_bias, cfg.ln_eps, c.mid, c.ln1);
    } else {
        c.mid = c.input + tmp;
    }
    rec(Point::attn_residual, l, post ? c.sum1 : c.mid);
    x = c.mid;
    if (cfg.mlp > 0) {
        if (cfg.layernorm && !post)
            layernorm_forward(c.mid, p.ln2_gain, p.ln2_bias, cfg.ln_eps, c.m, c.ln2);
        else
            c.m = c.mid;
        rec(Point::ffn_norm, l, c.m);
        mlp_forward(cfg, p, c.m, c.mlp, tmp);
        rec(Point::ffn_hidden, l, c.mlp.act);
        rec(Point::ffn_out, l, tmp);
        if (post) {
            c.sum2 = c.mid + tmp;
            layernorm_forward(c.sum2, p.ln2_gain, p.ln2_bias, cfg.ln_eps, x, c.ln2);
        } else {
            x += tmp;
        }
    } else if (post) {
        rec(Point::ffn_norm, l, c.mid);  // what an MLP would read: LN1(residual)
    }
    rec(Point::block_out, l, x);
}

void block_backward(const ModelConfig& cfg, const LayerParams<const float*>& p, const LayerParams<float*>& g,
                    const AttentionRun& run, const LayerState& c, Matrix& dx, double& score_grad_sq, const Tap& rec) {
    const int N = static_cast<int>(dx.rows()), C = cfg.d_model, l = run.layer;
    rec(Point::d_block_out, l, dx);
    Matrix dm, da;
    if (cfg.norm == Norm::post) {
        Matrix dmid;
        if (cfg.mlp > 0) {  // x = LN2(mid + MLP(mid))
            Matrix dsum2 = Matrix::Zero(N, C);
            layernorm_backward(c.sum2, p.ln2_gain, c.ln2, dx, dsum2, g.ln2_gain, g.ln2_bias);
            mlp_backward(cfg, p, g, c.m, c.mlp, dsum2, dm);
            dmid = dsum2 + dm;
        } else {
            dmid = dx;
        }
        Matrix dsum1 = Matrix::Zero(N, C);  // mid = LN1(input + MHA(input))
        layernorm_backward(c.sum1, p.ln1_gain, c.ln1, dmid, dsum1, g.ln1_gain, g.ln1_bias);
        rec(Point::d_attn_out, l, dsum1);
        attention_backward(cfg, p, g, c.normed, run, c.attention, dsum1, da, score_grad_sq, rec);
        dx = dsum1 + da;
        rec(Point::d_block_in, l, dx);
        return;
    }
    if (cfg.mlp > 0) {  // x = mid + MLP(m), m = LN2(mid)
        mlp_backward(cfg, p, g, c.m, c.mlp, dx, dm);
        if (cfg.layernorm)
            layernorm_backward(c.mid, p.ln2_gain, c.ln2, dm, dx, g.ln2_gain, g.ln2_bias);
        else
            dx += dm;
    }
    // mid = input + MHA(normed), normed = LN1(input)
    rec(Point::d_attn_out, l, dx);
    attention_backward(cfg, p, g, c.normed, run, c.attention, dx, da, score_grad_sq, rec);
    if (cfg.layernorm)
        layernorm_backward(c.input, p.ln1_gain, c.ln1, da, dx, g.ln1_gain, g.ln1_bias);
    else
        dx += da;
    rec(Point::d_block_in, l, dx);
}

void final_norm_forward(const ModelConfig& cfg, const ParamPtrs& p, const Matrix& x, LayerNormCache& cache, Matrix& h,
                        const Tap& rec) {
    if (cfg.layernorm && cfg.norm == Norm::pre)
        layernorm_forward(x, p.final_ln_gain, p.final_ln_bias, cfg.ln_eps, h, cache);
    else
        h = x;
    rec(Point::final_norm, -1, h);
}

}  // namespace attn
