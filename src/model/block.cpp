#include "model/block.hpp"

#include "kernels/bounds.hpp"

#include <cmath>

namespace attn {

bool causal_of(const ModelConfig& config, const ForwardOptions& options) {
    return options.causal_override < 0 ? config.causal : options.causal_override == 1;
}

void relative_positions(const ModelConfig& config, int first, int T, RelativePositions& out) {
    if (config.positional == Positional::rope) {
        // a row's angles do not depend on how many rows are made: a table from position 0 serves any shorter T
        const RopeTable& t = out.rope;
        const bool covers = t.first == first && t.rows >= T && t.half == head_dim_of(config) / 2 && first == 0;
        if (!covers) rope_table(head_dim_of(config), rope_settings(config), first, T, out.rope);
    }
    if (config.positional == Positional::alibi && static_cast<int>(out.alibi.size()) != config.heads)
        out.alibi = alibi_slopes(config.heads);
}

AttentionRun attention_run(const ModelConfig& config, int B, int T, const std::vector<int>& lengths,
                           const ForwardOptions& options, int layer, const RelativePositions* positions) {
    AttentionRun run;
    run.B = B;
    run.T = T;
    run.lengths = &lengths;
    run.causal = causal_of(config, options);
    const int D = head_dim_of(config);
    const bool scale = options.scale_override < 0 ? config.scale : options.scale_override == 1;
    run.scale = scale ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(D))) : 1.0f;
    run.layer = layer;
    run.options = &options;
    if (acts_in_attention(config.positional) && !positions)
        throw Error(Error::Code::internal, std::string("the attention of a ") + positional_name(config.positional) +
                                               " model needs its relative positions");
    if (config.positional == Positional::rope) run.rope = &positions->rope;
    if (config.positional == Positional::alibi) run.alibi = &positions->alibi;
    return run;
}

namespace {

/// rmsnorm: hands the rms of each row a norm divided by (1 / its cache's rstd) to rec as `point`.
void record_rms(const ModelConfig& cfg, const Tap& rec, Point point, int layer, const LayerNormCache& cache) {
    if (!cfg.rmsnorm || !rec.wants(point, layer)) return;
    Matrix rms(static_cast<Eigen::Index>(cache.rstd.size()), 1);
    for (std::size_t i = 0; i < cache.rstd.size(); ++i) rms(static_cast<Eigen::Index>(i), 0) = 1.0f / cache.rstd[i];
    rec(point, layer, rms);
}

}  // namespace

void block_forward(const ModelConfig& cfg, const LayerParams<const float*>& p, const AttentionRun& run, LayerState& c,
                   Matrix& x, AttentionStatsSum* stats, const Tap& rec) {
    const bool post = cfg.norm == Norm::post;
    const int l = run.layer;
    Matrix tmp;
    c.input = x;
    rec(Point::block_in, l, c.input);
    if (cfg.layernorm && !post) {
        norm_forward(cfg, c.input, p.ln1_gain, p.ln1_bias, c.normed, c.ln1);
        record_rms(cfg, rec, Point::attn_norm_rms, l, c.ln1);
    } else {
        c.normed = c.input;
    }
    rec(Point::attn_norm, l, c.normed);
    attention_forward(cfg, p, c.normed, run, c.attention, tmp, stats, rec);
    if (post) {
        c.sum1 = c.input + tmp;
        norm_forward(cfg, c.sum1, p.ln1_gain, p.ln1_bias, c.mid, c.ln1);
    } else {
        c.mid = c.input + tmp;
    }
    rec(Point::attn_residual, l, post ? c.sum1 : c.mid);
    x = c.mid;
    if (cfg.mlp > 0) {
        if (cfg.layernorm && !post) {
            norm_forward(cfg, c.mid, p.ln2_gain, p.ln2_bias, c.m, c.ln2);
            record_rms(cfg, rec, Point::ffn_norm_rms, l, c.ln2);
        } else {
            c.m = c.mid;
            if (post) record_rms(cfg, rec, Point::ffn_norm_rms, l, c.ln1);
        }
        rec(Point::ffn_norm, l, c.m);
        mlp_forward(cfg, p, c.m, c.mlp, tmp);
        if (cfg.gated_mlp) {
            rec(Point::ffn_gate, l, c.mlp.gate);
            rec(Point::ffn_up, l, c.mlp.pre);
        }
        rec(Point::ffn_hidden, l, c.mlp.act);
        rec(Point::ffn_out, l, tmp);
        if (post) {
            c.sum2 = c.mid + tmp;
            norm_forward(cfg, c.sum2, p.ln2_gain, p.ln2_bias, x, c.ln2);
        } else {
            x += tmp;
        }
    } else if (post) {
        rec(Point::ffn_norm, l, c.mid);  // what an MLP would read: LN1(residual)
        record_rms(cfg, rec, Point::ffn_norm_rms, l, c.ln1);
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
            norm_backward(cfg, c.sum2, p.ln2_gain, c.ln2, dx, dsum2, g.ln2_gain, g.ln2_bias);
            mlp_backward(cfg, p, g, c.m, c.mlp, dsum2, dm);
            dmid = dsum2 + dm;
        } else {
            dmid = dx;
        }
        Matrix dsum1 = Matrix::Zero(N, C);  // mid = LN1(input + MHA(input))
        norm_backward(cfg, c.sum1, p.ln1_gain, c.ln1, dmid, dsum1, g.ln1_gain, g.ln1_bias);
        rec(Point::d_attn_out, l, dsum1);
        attention_backward(cfg, p, g, c.normed, run, c.attention, dsum1, da, score_grad_sq, rec);
        dx = dsum1 + da;
        rec(Point::d_block_in, l, dx);
        return;
    }
    if (cfg.mlp > 0) {  // x = mid + MLP(m), m = LN2(mid)
        mlp_backward(cfg, p, g, c.m, c.mlp, dx, dm);
        if (cfg.layernorm)
            norm_backward(cfg, c.mid, p.ln2_gain, c.ln2, dm, dx, g.ln2_gain, g.ln2_bias);
        else
            dx += dm;
    }
    // mid = input + MHA(normed), normed = LN1(input)
    rec(Point::d_attn_out, l, dx);
    attention_backward(cfg, p, g, c.normed, run, c.attention, dx, da, score_grad_sq, rec);
    if (cfg.layernorm)
        norm_backward(cfg, c.input, p.ln1_gain, c.ln1, da, dx, g.ln1_gain, g.ln1_bias);
    else
        dx += da;
    rec(Point::d_block_in, l, dx);
}

void check_block_finite(const ModelConfig& cfg, const AttentionRun& run, const LayerState& c, const Matrix& x) {
    if (all_finite(x)) return;
    // where the first NaN or infinity appears, in the order the block computes
    // (q has H heads of width D; k and v have H_kv, query head h reading K/V head h / (H / H_kv))
    const int l = run.layer, H = cfg.heads, D = head_dim_of(cfg), group = H / kv_heads_of(cfg);
    const auto at = [&](Point point, int head = -1) { throw_not_finite(point, {l, head, 0}); };
    if (!all_finite(c.input)) at(Point::block_in);
    if (!all_finite(c.normed)) at(Point::attn_norm);
    const AttentionCache& a = c.attention;
    const std::int64_t per_head = a.weights.size() / (std::int64_t{run.B} * H);  // T·S weights of one (b, h)
    for (int h = 0; h < H; ++h) {
        const int kv = h / group;
        if (!all_finite(a.q.middleCols(h * D, D))) at(Point::q, h);
        if (!all_finite(a.k.middleCols(kv * D, D))) at(Point::k, h);
        if (!all_finite(a.v.middleCols(kv * D, D))) at(Point::v, h);
        // finite scores give finite weights (each exp(s − max) ≤ 1, their sum ≥ 1): weights that
        // are not come from scores that overflowed
        for (int b = 0; b < run.B; ++b) {
            const float* w = a.weights.data() + static_cast<std::size_t>((std::int64_t{b} * H + h) * per_head);
            if (!all_finite(w, static_cast<std::size_t>(per_head))) at(Point::scores, h);
        }
    }
    if (!all_finite(a.concat)) at(Point::attn_concat);
    const bool post = cfg.norm == Norm::post;
    if (!all_finite(post ? c.sum1 : c.mid)) at(Point::attn_out);  // concat·W_O overflowed
    if (post && !all_finite(c.mid)) at(Point::attn_residual);
    if (cfg.mlp > 0) {
        if (!all_finite(c.m)) at(Point::ffn_norm);
        if (cfg.gated_mlp && !all_finite(c.mlp.gate)) at(Point::ffn_gate);
        if (cfg.gated_mlp && !all_finite(c.mlp.pre)) at(Point::ffn_up);
        if (!all_finite(c.mlp.act)) at(Point::ffn_hidden);
        at(Point::ffn_out);
    }
    at(Point::block_out);
}

void check_finite(Point point, const Eigen::Ref<const Matrix>& value, int row) {
    if (!all_finite(value)) throw_not_finite(point, {-1, -1, row});
}

void final_norm_forward(const ModelConfig& cfg, const ParamPtrs& p, const Matrix& x, LayerNormCache& cache, Matrix& h,
                        const Tap& rec) {
    if (cfg.layernorm && cfg.norm == Norm::pre) {
        norm_forward(cfg, x, p.final_ln_gain, p.final_ln_bias, h, cache);
        record_rms(cfg, rec, Point::final_norm_rms, -1, cache);
    } else {
        h = x;
    }
    rec(Point::final_norm, -1, h);
}

}  // namespace attn
