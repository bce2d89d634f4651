#pragma once
// One transformer block on the fast path, composed of the layer kinds
// (layers.hpp), and its backward beside it. The training forward, the run and
// trace forward (forward.hpp) and generation (generation.hpp) all run it:
//
//   pre-LN:  x = x + MHA(LN1(x));  if F > 0: x = x + MLP(LN2(x))
//   post-LN: x = LN1(x + MHA(x));  if F > 0: x = LN2(x + MLP(x))
//
// LN is LayerNorm, or RMSNorm with config.rmsnorm (a Llama block: RMSNorm,
// grouped-query attention with RoPE, the gated MLP with SiLU).
// Each intermediate is handed to the Tap as it is produced (block_in,
// attn_norm (+ its rms), the attention's, attn_residual, ffn_norm (+ its rms),
// ffn_gate, ffn_up, ffn_hidden, ffn_out, block_out; the backward's d_block_out,
// d_attn_out, the heads', d_block_in).
// Generation passes the layer's KV cache in the AttentionRun: the same block
// then computes its new rows over the cached keys.

#include "model/layers.hpp"
#include "model/tap.hpp"

#include <vector>

namespace attn {

/// What one block keeps of a forward for its backward.
struct LayerState {
    Matrix input;   ///< N×C residual stream in
    Matrix normed;  ///< N×C the attention's input (LN1 output in pre-LN; a copy of input otherwise)
    LayerNormCache ln1, ln2;
    AttentionCache attention;
    Matrix sum1;    ///< post-LN: input + attention output, before LN1
    Matrix mid;     ///< N×C: pre-LN input + attention output; post-LN LN1(sum1)
    Matrix m;       ///< N×C the MLP's input (pre-LN: LN2(mid))
    MlpCache mlp;
    Matrix sum2;    ///< post-LN: mid + MLP output, before LN2
};

/// Whether the attention is causal under `options` (ForwardOptions::causal_override).
bool causal_of(const ModelConfig& config, const ForwardOptions& options);

/// What every layer's attention of one forward reads of the relative positions:
/// RoPE's cos and sin of the call's positions, ALiBi's slopes (empty for the other kinds).
struct RelativePositions {
    RopeTable rope;
    std::vector<float> alibi;
};
/// Fills `out` for positions first … first+T−1 (kept when it already covers them).
void relative_positions(const ModelConfig& config, int first, int T, RelativePositions& out);

/// The attention of layer `layer` over B sequences of T rows, the first lengths[b] of
/// sequence b real: the mask and the scale of the config under `options` (its overrides),
/// RoPE's table and ALiBi's slopes from `positions` (null: neither; required for a
/// config with rope or alibi). lengths, options and positions must outlive the run.
AttentionRun attention_run(const ModelConfig& config, int B, int T, const std::vector<int>& lengths,
                           const ForwardOptions& options, int layer, const RelativePositions* positions = nullptr);

/// The forward of one block over the N×C rows x (its input, then its output); c keeps
/// what block_backward needs. Adds the attention's statistics to stats (null: none).
void block_forward(const ModelConfig& config, const LayerParams<const float*>& p, const AttentionRun& run,
                   LayerState& c, Matrix& x, AttentionStatsSum* stats, const Tap& rec);

/// The backward of one block: dx, ∂loss/∂(its output), becomes ∂loss/∂(its input);
/// accumulates the block's parameter gradients into g and Σ‖∂loss/∂scaled‖² into score_grad_sq.
void block_backward(const ModelConfig& config, const LayerParams<const float*>& p, const LayerParams<float*>& g,
                    const AttentionRun& run, const LayerState& c, Matrix& dx, double& score_grad_sq, const Tap& rec);

/// Throws attn::Error (not_finite, throw_not_finite) when the block's output x holds a NaN
/// or an infinity, naming where in the block the first one appears (from c, the block's
/// forward state: its input, LN1, each head's q, k, v, scores and weights, the heads' outputs,
/// the attention's output, the MLP's input, hidden layer and output). One pass over x when it
/// is finite, beside the block's products (C times as much work at least).
void check_block_finite(const ModelConfig& config, const AttentionRun& run, const LayerState& c, const Matrix& x);

/// Throws attn::Error (not_finite) when `value` (a model-level intermediate: the embeddings,
/// LN_f's output, logits from row `row` on) holds a NaN or an infinity.
void check_finite(Point point, const Eigen::Ref<const Matrix>& value, int row = 0);

/// h = LN_f(x) (pre-LN with layernorm), else a copy of x: the output head's input.
/// Hands final_norm (and final_norm_rms) to rec.
void final_norm_forward(const ModelConfig& config, const ParamPtrs& p, const Matrix& x, LayerNormCache& cache,
                        Matrix& h, const Tap& rec);

}  // namespace attn
