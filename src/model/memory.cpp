// What training and running a model allocate (model.hpp: training_memory,
// learn_memory, run_memory) and the refusals above the limits, each naming
// the settings to lower.

#include "model/forward.hpp"
#include "model/model.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace attn {

namespace {

/// a·b in 64 bits; throws too_large instead of wrapping (the validated
/// limits keep every product of the estimate far below 2⁶³: this is the
/// guarantee, not the expected path).
std::int64_t mul(std::int64_t a, std::int64_t b) {
    std::int64_t out = 0;
    if (__builtin_mul_overflow(a, b, &out))
        throw Error(Error::Code::too_large, "a training size overflows 64 bits (" + std::to_string(a) + " × " +
                                                std::to_string(b) + ")");
    return out;
}

std::int64_t parameter_count(const ModelConfig& c) {
    std::int64_t n = 0;
    for (const ParamInfo& p : parameter_layout(c)) n += mul(p.rows, p.cols);
    return n;
}

/// What the modern decoders' options (model.hpp) add to a layer's buffers beyond a
/// model of the same C whose Q, K, V and concat are N×C each, in floats per row: wider
/// Q, K, V and concat (H·D or H_kv·D above C), the gated MLP's gate (F), the q/k norms'
/// inputs and statistics. 0 for our models, GPT-2 and BERT.
std::int64_t modern_row_extra(const ModelConfig& c) {
    const std::int64_t C = c.d_model, QC = std::int64_t{c.heads} * head_dim_of(c),
                       KC = std::int64_t{kv_heads_of(c)} * head_dim_of(c);
    std::int64_t extra = std::max<std::int64_t>(0, 2 * QC + 2 * KC - 4 * C);
    if (c.gated_mlp) extra += c.mlp;
    if (c.qk_norm) extra += QC + KC + c.heads + kv_heads_of(c);
    return extra;
}

/// The widest Q (H·D) beside C, for the products' operands.
std::int64_t query_width(const ModelConfig& c) { return std::int64_t{c.heads} * head_dim_of(c); }

}  // namespace

std::string format_bytes(std::int64_t bytes) {
    char buf[48];
    const double b = static_cast<double>(bytes);
    if (b >= 1e9)
        std::snprintf(buf, sizeof buf, "%.1f GB", b / 1e9);
    else if (b >= 1e6)
        std::snprintf(buf, sizeof buf, "%.0f MB", b / 1e6);
    else
        std::snprintf(buf, sizeof buf, "%.0f kB", std::max(1.0, b / 1e3));
    return buf;
}

namespace {

/// Why m is refused: the largest part named with the settings that make it, the limit, what to lower.
std::string refusal(const TrainingMemory& m, const ModelConfig& c, int batch, int length) {
    const std::string limit = "; the limit for training is " + format_bytes(kMaxTrainingBytes) + " in all";
    std::string what;
    const std::int64_t model_bytes = m.parameters + m.gradients + m.optimizer;
    if (m.attention >= m.activations + m.scratch && m.attention >= model_bytes)
        what = "batch " + std::to_string(batch) + " × " + std::to_string(c.heads) + " heads × " +
               std::to_string(length) + "² tokens × " + std::to_string(c.layers) + (c.layers == 1 ? " layer" : " layers") +
               " needs " + format_bytes(m.attention) + " of attention weights (" + format_bytes(m.total()) +
               " for the whole step)" + limit + " — lower batch, heads, length or layers";
    else if (m.activations + m.scratch >= model_bytes)
        what = "batch " + std::to_string(batch) + " × " + std::to_string(length) + " tokens × " +
               std::to_string(c.layers) + (c.layers == 1 ? " layer" : " layers") + " of width " +
               std::to_string(std::max({c.d_model, c.vocab, c.mlp})) + " needs " +
               format_bytes(m.activations + m.scratch) + " of activations (" + format_bytes(m.total()) +
               " for the whole step)" + limit + " — lower batch, length, layers, d_model, mlp or the vocabulary";
    else
        what = "a model of " + std::to_string(m.parameters / 4) + " parameters needs " + format_bytes(model_bytes) +
               " for its weights, gradients and AdamW state (" + format_bytes(m.total()) + " for the whole step)" +
               limit + " — lower d_model, layers, mlp or the vocabulary";
    return what;
}

/// training_memory() without the training limits' check (a loaded model's learn_memory uses it too).
TrainingMemory memory_parts(const ModelConfig& c, int batch, int length) {
    if (batch < 1) throw Error("a batch needs at least 1 sequence, got " + std::to_string(batch));
    if (length < 1) throw Error("a sequence needs at least 1 token, got " + std::to_string(length));
    constexpr std::int64_t kFloat = sizeof(float);  // ids and targets are int32: the same 4 bytes
    const std::int64_t B = batch, T = length, C = c.d_model, H = c.heads, D = head_dim_of(c), F = c.mlp, V = c.vocab,
                       L = c.layers, P = parameter_count(c), QC = query_width(c);
    const std::int64_t N = mul(B, T), TT = mul(T, T), extra = modern_row_extra(c);
    const bool mlp = F > 0;
    TrainingMemory m;
    m.parameters = mul(P, kFloat);
    m.gradients = mul(P, kFloat);
    m.optimizer = mul(mul(P, 5), kFloat);
    // per layer: input, normed, q, k, v, concat, mid (+ m with an MLP): N×C each;
    // pre, act: N×F; LayerNorm means and rstds: N each. After the layers:
    // x_final, normed_final (N×C), logits and their gradient (N×V), final
    // LayerNorm statistics (2N); ids and targets, the batch's and the model's
    // copies (4N) and the lengths (B).
    // (the modern options: modern_row_extra per row)
    const std::int64_t per_layer = mul(N, C) * ((mlp ? 8 : 7) + (c.norm == Norm::post ? 2 : 0)) + mul(mul(N, F), 2) + mul(N, 4) +
                                   mul(N, extra);
    m.activations = mul(mul(per_layer, L) + mul(mul(N, C), 2 + (c.embed_layernorm ? 1 : 0) + (c.output_transform ? 3 : 0)) + mul(mul(N, V), 2) + mul(N, 6) + B, kFloat);
    m.attention = mul(mul(mul(mul(L, B), H), TT), kFloat);
    // forward: x and tmp (N×C), the sinusoids (T×C), scores (T×T), a head's output (T×D);
    // backward: dx, its LayerNorm copy, dconcat, dq, dk, dv, da, dm (N×C), dact (N×F),
    // tmp (the largest weight gradient or N×C), dp and ds (T×T); the gemm
    // workspace: both operands of a product packed, rows and columns padded
    // (kernels.hpp: tiles of 4 rows, panels of 8 columns; 8 is a bound of both).
    // (the modern options: the wider dconcat, dq, dk, dv and the gate's gradient, modern_row_extra;
    // RoPE's table, T×D)
    const std::int64_t widest = std::max({C, V, F, QC});
    const std::int64_t operand = std::max({mul(N + 8, widest + 8), mul(C + 8, widest + 8), mul(F + 8, C + 8),
                                           mul(T + 8, T + 8), mul(V + 8, C + 8)});
    const std::int64_t largest_weight = std::max({mul(V, C), mul(C, F), mul(C, C), mul(N, C), mul(C, QC)});
    m.scratch = mul(mul(mul(N, C), 10 + (c.output_transform ? 2 : 0) + (c.embed_layernorm ? 1 : 0)) + mul(N, F) + largest_weight + mul(TT, 3) + mul(T, C) + mul(T, D) +
                        mul(operand, 2) + mul(N, extra) + (c.positional == Positional::rope ? mul(T, D) : 0),
                    kFloat);
    if (!m.fits()) m.refusal = refusal(m, c, batch, length);
    return m;
}

}  // namespace

TrainingMemory training_memory(const ModelConfig& c, int batch, int length) {
    validate_model_config(c);
    return memory_parts(c, batch, length);
}

std::int64_t learn_memory(const ModelConfig& c, int length) {
    validate_inference_config(c);
    const TrainingMemory m = memory_parts(c, 1, length);
    const std::int64_t T = length, C = c.d_model, H = c.heads, D = head_dim_of(c), F = c.mlp, V = c.vocab;
    // the trace: logits, probabilities and d_logits (T×V each); every layer's vectors
    // (input, normed, residual, mlp_*, output, concat, the attention's output: 8 T×C, 2 T×F;
    // d_output, d_input and d_attention: 3 T×C); the asked layer's heads: per head 3 T×T and
    // 4 T×D of the forward and 4 T×T and 3 T×D of the gradients; the embeddings (5 T×C); the
    // layer's gradients (at most 4C² + 2CF + 4C + F + 4C floats), and a row-major copy of
    // the largest product matrix (C·max(C, F)) that the backward of a model whose weights
    // are panels (Parameters::use_panels) multiplies by.
    // (the modern options: the gated MLP's gate and up (2 T×F) and the rms rows (2 T) per
    // layer, the heads' q, k before RoPE and their gradients (4 T×D), the layer's tensors
    // beyond the bound above, a wider product matrix)
    std::int64_t layer_params = 0;
    for (const ParamInfo& p : parameter_layout(c))
        if (p.name.compare(0, 9, "layers.0.") == 0) layer_params += mul(p.rows, p.cols);
    const std::int64_t modern_trace = mul(mul(T, c.gated_mlp ? 2 * F : 0) + (c.rmsnorm ? 2 * T : 0), c.layers) +
                                      (c.positional == Positional::rope ? mul(H, mul(mul(T, D), 4)) : 0);
    const std::int64_t trace = mul(mul(T, V), 3) + mul(mul(mul(T, C), 11) + mul(mul(T, F), 2), c.layers) +
                               mul(H, mul(mul(T, T), 7) + mul(mul(T, D), 7)) + mul(mul(T, C), 5) + modern_trace;
    const std::int64_t bound = mul(mul(C, C), 4) + mul(mul(C, F), 2) + mul(C, 8) + F;
    const std::int64_t layer = bound + mul(C, std::max(C, F)) + std::max<std::int64_t>(0, layer_params - bound) +
                               std::max<std::int64_t>(0, mul(C, query_width(c)) - mul(C, std::max(C, F)));
    return m.activations + m.attention + m.scratch + mul(trace + layer, 4);
}

void check_training_memory(const ModelConfig& c, int batch, int length) {
    const TrainingMemory m = training_memory(c, batch, length);
    if (!m.fits()) throw Error(Error::Code::too_large, m.refusal);
}

namespace {

/// run_memory()'s parts, in floats.
struct RunParts {
    std::int64_t run = 0;      ///< the forward's own buffers and the products' workspace
    std::int64_t logits = 0;   ///< the output head: whole logits (and the trace's copies), or one block's
    std::int64_t vectors = 0;  ///< the trace's embeddings, final vectors and the kept layers' vectors
    std::int64_t heads = 0;    ///< the kept layers' heads (Q, K, V, scores, scaled, weights, output)
    std::int64_t total() const { return run + logits + vectors + heads; }
};

/// What a forward-only run allocates (forward_pass with keep = false), buffer by buffer.
RunParts run_parts(const ModelConfig& c, int batch, int length, const TraceKeep* keep) {
    const std::int64_t B = batch, T = length, C = c.d_model, H = c.heads, D = head_dim_of(c), F = c.mlp, V = c.vocab,
                       L = c.layers, QC = query_width(c);
    const std::int64_t N = mul(B, T), NC = mul(N, C), TT = mul(T, T), TC = mul(T, C);
    RunParts r;
    // the one LayerState reused by every layer: input, normed, sum1, mid, m, sum2 (6 N×C), q, k, v,
    // concat (4 N×C), the weights (B·H·T²), pre and act (2 N×F), 4 LayerNorm statistics (N each);
    // x and a block's tmp (2 N×C); after the layers x_final and normed_final (2 N×C) and their
    // statistics (2 N); the embedding's sum before LN_e (N×C), statistics (2 N) and sinusoids (T×C);
    // one head's scores (T×T) and output (T×D)
    r.run = mul(NC, 15) + mul(mul(N, F), 2) + mul(mul(B, H), TT) + mul(N, 8) + TC + TT + mul(T, D);
    // the modern options (modern_row_extra per row; RoPE's table, the copies of q and k a trace
    // keeps before the rotation, ALiBi's biased row)
    r.run += mul(N, modern_row_extra(c)) +
             (c.positional == Positional::rope ? mul(T, D) + (keep ? mul(N, QC + std::int64_t{kv_heads_of(c)} * D) : 0) : 0) +
             (c.positional == Positional::alibi ? T : 0);
    // and 1 MB for what is not counted one by one: ids, targets, lengths, the allocator's headers
    r.run += (1 << 20) / 4;
    // the products' workspace: row tiles of a left operand (at most N rows, of C, F or T columns) and
    // the packed right operand: a weight (C×C, C×F, F×C), K or V of a head (D×T, T×D), or a block of
    // 64 columns of the unembedding (C×64); kernels.hpp pads rows to 4 and columns to 8
    const std::int64_t right = std::max({mul(C + 8, C + 8), mul(C + 8, F + 8), mul(T + 8, D + 8), mul(C + 8, 64),
                                         mul(C + 8, QC + 8)});
    r.run += mul(N + 8, std::max({C, F, T, QC}) + 8) + right;
    if (!keep) {
        // logits (N×V), the unembedding packed whole for the one product ((V + 8)×C), the
        // cross-entropy's exps (V), the MLM head's pre, act and transformed (3 N×C)
        r.logits = mul(N, V) + mul(V + 8, C + 8) + V + (c.output_transform ? mul(NC, 3) : 0);
        return r;
    }
    // a recorded run's head, in blocks of R rows (head_in_blocks): the normed rows, the head cache
    // (3 R×C), logits and probabilities (2 R×V), the cross-entropy's and row_softmax's exps (V floats,
    // V doubles), the top-k's order (V ints); the trace's logits and probabilities (2 T×V) when kept
    const std::int64_t R = std::min<std::int64_t>(kTraceLogitRows, N);
    r.logits = mul(mul(R, C), 4) + mul(mul(R, V), 2) + 4 * V + (keep->logits ? mul(mul(T, V), 2) : 0);
    const std::int64_t k = std::min<std::int64_t>(std::max(keep->top_k, 0), V);
    r.logits += mul(mul(T, k), 2);  // top_ids, top_p
    // embeddings, positional, token_type, embed_normed, final_normed, transformed (6 T×C); the mask
    // (T² bytes) and ids
    r.vectors = mul(TC, 6) + TT / 4 + 1 + T;
    // per layer whose vectors are kept: input, normed, residual, mlp_normed, mlp_output, output, the
    // attention's concat and output (8 T×C), mlp_hidden (T×F)
    const std::int64_t vector_layers = keep->vectors < 0 ? L : 1, head_layers = keep->layer < 0 ? L : 1;
    r.vectors += mul(vector_layers, mul(TC, 8) + mul(T, F) + (c.gated_mlp ? mul(T, 2 * F) : 0) + (c.rmsnorm ? 2 * T : 0));
    // per layer whose heads are kept: each head's scores, scaled, weights (3 T×T), query, key,
    // value, output (4 T×D), row_max, row_sum (2 T); the attention's concat and output (2 T×C)
    // (rope: the query and key before the rotation, 2 T×D more; a concat of H·D)
    r.heads = mul(head_layers, mul(H, mul(TT, 3) + mul(T, (c.positional == Positional::rope ? 6 : 4) * D) + 2 * T) +
                                   mul(TC, 2) + mul(T, std::max<std::int64_t>(0, QC - C)));
    return r;
}

/// Why a run of `length` tokens keeping `keep` is refused: its size, its largest parts, what to ask instead.
std::string run_refusal(const std::string& what, const RunParts& r, const TraceKeep* keep) {
    std::string out = what + " needs " + format_bytes(r.total() * 4) + ", more than the " +
                      format_bytes(kMaxTrainingBytes) + " limit";
    if (!keep) return out + " — use fewer tokens";
    struct Part {
        std::int64_t floats;
        std::string name, way;  // way: empty when it is already the least there is
    };
    std::vector<Part> parts = {
        {r.logits, keep->logits ? "the full logits and probabilities" : "the output head", keep->logits ? "ask for the top-k next tokens instead of the full logits" : ""},
        {r.vectors, keep->vectors < 0 ? "every layer's vectors" : "the vectors of one layer", keep->vectors < 0 ? "keep one layer's vectors" : ""},
        {r.heads, keep->layer < 0 ? "every layer's heads" : "the heads of one layer", keep->layer < 0 ? "trace one layer" : ""},
    };
    std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.floats > b.floats; });
    out += " (";
    std::vector<std::string> ways;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        out += (i ? "; " : "") + parts[i].name + " " + format_bytes(parts[i].floats * 4);
        if (!parts[i].way.empty()) ways.push_back(parts[i].way);
    }
    out += ") — ";
    for (const std::string& w : ways) out += w + ", ";
    return out + (ways.empty() ? "use fewer tokens" : "or use fewer tokens");
}

}  // namespace

std::int64_t run_memory(const ModelConfig& config, int batch, int length, const TraceKeep* keep) {
    return run_parts(config, batch, length, keep).total() * 4;
}

void check_run_memory(const ModelConfig& config, int batch, int length, const TraceKeep* keep,
                      const std::string& what) {
    const RunParts parts = run_parts(config, batch, length, keep);
    if (parts.total() * 4 > kMaxTrainingBytes) throw Error(Error::Code::too_large, run_refusal(what, parts, keep));
}

}  // namespace attn
