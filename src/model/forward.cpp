// The forward and backward driver (forward.hpp): the embedding, the blocks,
// LN_f, the output head and the loss; the backward from the loss down.

#include "model/forward.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace attn {

using detail::ForwardState;

void validate_batch(const ModelConfig& c, const Batch& batch) {
    if (batch.batch < 1) throw Error("a batch needs at least 1 sequence, got " + std::to_string(batch.batch));
    if (batch.length < 1 || batch.length > c.context)
        throw Error("sequence length " + std::to_string(batch.length) + " is outside 1 … the model's context " +
                    std::to_string(c.context));
    const std::int64_t n = std::int64_t{batch.batch} * batch.length;
    if (static_cast<std::int64_t>(batch.ids.size()) != n || static_cast<std::int64_t>(batch.targets.size()) != n)
        throw Error("a batch of " + std::to_string(batch.batch) + "×" + std::to_string(batch.length) + " needs " +
                    std::to_string(n) + " ids and targets, got " + std::to_string(batch.ids.size()) + " and " +
                    std::to_string(batch.targets.size()));
    if (!batch.lengths.empty() && batch.lengths.size() != static_cast<std::size_t>(batch.batch))
        throw Error("lengths has " + std::to_string(batch.lengths.size()) + " entries for " +
                    std::to_string(batch.batch) + " sequences");
    for (int b = 0; b < batch.batch; ++b) {
        const int len = batch.real_length(b);
        if (len < 0 || len > batch.length)
            throw Error("sequence " + std::to_string(b) + " has length " + std::to_string(len) + ", outside 0 … " +
                        std::to_string(batch.length));
        for (int t = 0; t < batch.length; ++t) {
            const std::int32_t id = batch.id(b, t), target = batch.target(b, t);
            if (id < 0 || id >= c.vocab)
                throw Error("token id " + std::to_string(id) + " at sequence " + std::to_string(b) + ", position " +
                            std::to_string(t) + " is outside the vocabulary 0 … " + std::to_string(c.vocab - 1));
            if (target < kNoTarget || target >= c.vocab)
                throw Error("target " + std::to_string(target) + " at sequence " + std::to_string(b) +
                            ", position " + std::to_string(t) + " is outside −1 … " + std::to_string(c.vocab - 1));
            if (t >= len && target != kNoTarget)
                throw Error("sequence " + std::to_string(b) + " has a target at position " + std::to_string(t) +
                            ", past its length " + std::to_string(len));
        }
    }
}

namespace {

/// The output head of a recorded run, kTraceLogitRows positions at a time, each block's
/// logits handed to the tap (which keeps them, their softmax and its top-k as the
/// recorder says), so the unembedding is never packed whole for one large product (154 MB
/// at GPT-2 small) and, without the trace's logits, no N×V matrix is ever whole. The
/// products' entries do not depend on the rows beside them (gemm.hpp): the whole product's numbers.
CrossEntropy head_in_blocks(const ModelConfig& cfg, const ParamPtrs& p, const Matrix& h,
                            const std::vector<std::int32_t>& targets, const Tap& rec, bool finite) {
    const int N = static_cast<int>(h.rows());
    Matrix rows, logits;
    HeadCache head;
    CrossEntropy out;
    double loss = 0;
    for (int r0 = 0; r0 < N; r0 += kTraceLogitRows) {
        const int n = std::min(kTraceLogitRows, N - r0);
        rows = h.middleRows(r0, n);
        head_forward(cfg, p, rows, head, logits);
        if (finite) check_finite(Point::logits, logits, r0);
        const std::vector<std::int32_t> block_targets(targets.begin() + r0, targets.begin() + r0 + n);
        const CrossEntropy ce = cross_entropy(logits, block_targets, nullptr);
        loss += ce.loss * ce.targets;
        out.targets += ce.targets;
        out.correct += ce.correct;
        if (cfg.output_transform) rec.rows(Point::head_transform, r0, head.transformed);
        rec.rows(Point::logits, r0, logits);
    }
    out.loss = out.targets > 0 ? loss / out.targets : 0.0;
    return out;
}

}  // namespace

LossResult forward_pass(const ModelConfig& cfg, const Parameters& params, ForwardState& s, const Batch& batch,
                        const ForwardOptions& options, Recorder* recorder, bool keep, bool finite) {
    if (recorder && batch.batch != 1)
        throw Error("a recorder keeps the trace of one sequence; the batch has " + std::to_string(batch.batch));
    if (s.slots.layers.size() != static_cast<std::size_t>(cfg.layers)) s.slots = resolve_slots(cfg);
    mark_panels(s.slots, params);
    const ParamPtrs p = bind(s.slots, params);
    const int B = batch.batch, T = batch.length;
    s.B = B;
    s.T = T;
    s.ids = batch.ids;
    s.targets = batch.targets;
    s.lengths.resize(static_cast<std::size_t>(B));
    for (int b = 0; b < B; ++b) s.lengths[static_cast<std::size_t>(b)] = batch.real_length(b);
    s.options = options;
    s.layers.resize(keep ? static_cast<std::size_t>(cfg.layers) : 1);

    TraceTap rec(recorder);
    rec.start_forward(cfg, batch.ids, s.lengths[0], causal_of(cfg, options));
    Matrix x;
    embedding_forward(cfg, p, s.ids, B, T, s.embedding, x, rec);
    if (finite) check_finite(cfg.embed_layernorm ? Point::embed_norm : Point::token_embed, x);
    relative_positions(cfg, 0, T, s.positions);
    AttentionStatsSum stats;
    for (int l = 0; l < cfg.layers; ++l) {
        const AttentionRun run = attention_run(cfg, B, T, s.lengths, s.options, l, &s.positions);
        LayerState& state = s.layers[keep ? static_cast<std::size_t>(l) : 0];
        block_forward(cfg, p.layers[static_cast<std::size_t>(l)], run, state, x, &stats, rec);
        if (finite) check_block_finite(cfg, run, state, x);
        rec.check_kept();  // (a trace keeps no NaN, even of a forward that is not checked: training's)
    }
    s.x_final = std::move(x);
    final_norm_forward(cfg, p, s.x_final, s.final_ln, s.normed_final, rec);
    if (finite) check_finite(Point::final_norm, s.normed_final);
    CrossEntropy ce;
    if (recorder && !keep) {  // a recorded run: the trace has the logits (when it keeps them); Model::logits() is empty
        s.logits.resize(0, 0);
        ce = head_in_blocks(cfg, p, s.normed_final, s.targets, rec, finite);
    } else {
        head_forward(cfg, p, s.normed_final, s.head, s.logits);
        if (finite) check_finite(Point::logits, s.logits);
        ce = cross_entropy(s.logits, s.targets, keep ? &s.logits_grad : nullptr);
        if (cfg.output_transform) rec.rows(Point::head_transform, 0, s.head.transformed);
        rec.rows(Point::logits, 0, s.logits);
    }
    s.target_count = ce.targets;
    LossResult result;
    result.loss = ce.loss;
    result.targets = ce.targets;
    result.correct = ce.correct;
    if (stats.rows > 0) {
        result.stats.score_variance = stats.variance / static_cast<double>(stats.rows);
        result.stats.row_entropy = stats.entropy / static_cast<double>(stats.rows);
    }
    return result;
}

double backward_to_layer(const ModelConfig& config, ForwardState& s, const ParamPtrs& p, const GradPtrs& g, int lowest,
                         Recorder* recorder, Matrix& dx) {
    const int N = s.B * s.T, C = config.d_model;
    TraceTap rec(recorder);
    rec.start_backward(config.layers);
    rec(Point::d_logits, -1, s.logits_grad);
    Matrix dh;
    head_backward(config, p, g, s.normed_final, s.head, s.logits_grad, dh);
    if (config.layernorm && config.norm == Norm::pre) {
        dx.setZero(N, C);
        norm_backward(config, s.x_final, p.final_ln_gain, s.final_ln, dh, dx, g.final_ln_gain, g.final_ln_bias);
    } else {
        dx = std::move(dh);
    }
    double score_grad_sq = 0;
    for (int l = config.layers - 1; l >= lowest; --l)
        block_backward(config, p.layers[static_cast<std::size_t>(l)], g.layers[static_cast<std::size_t>(l)],
                       attention_run(config, s.B, s.T, s.lengths, s.options, l, &s.positions),
                       s.layers[static_cast<std::size_t>(l)], dx, score_grad_sq, rec);
    return score_grad_sq;
}

}  // namespace attn
