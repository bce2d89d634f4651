#pragma once
// The forward and backward driver of Model (model.hpp), internal to
// src/model: the embedding, the blocks (block.hpp), LN_f, the output head and
// the loss, and back; a Recorder's TraceTap (tap.hpp) keeps the trace.

#include "model/block.hpp"
#include "model/layers.hpp"
#include "model/model.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {
namespace detail {

/// What the last forward of a Model keeps.
struct ForwardState {
    ParamSlots slots;  ///< built once per Model (the layout cannot change: the config is fixed)
    int B = 0, T = 0;
    std::vector<int> lengths;
    std::vector<std::int32_t> ids, targets;
    ForwardOptions options;
    EmbeddingCache embedding;
    RelativePositions positions;     ///< RoPE's table and ALiBi's slopes (rope, alibi)
    std::vector<LayerState> layers;  ///< L when kept for backward, 1 (reused) when only run
    Matrix x_final, normed_final, logits, logits_grad;
    LayerNormCache final_ln;
    HeadCache head;
    int target_count = 0;
};

}  // namespace detail

/// Throws attn::Error naming what is wrong with a batch for this config (ids, targets, lengths).
void validate_batch(const ModelConfig& config, const Batch& batch);

/// The forward of a validated batch on `params` (of config's layout; s.slots are set
/// from it: where each tensor is, and whether the product matrices are panels).
/// keep: every layer's activations stay for backward (else one layer's buffers are
/// reused) and the logits' gradient is computed. With a recorder (a batch of one),
/// its TraceTap keeps the trace; a recorded run (keep false) computes the head in
/// blocks of kTraceLogitRows rows and leaves s.logits empty. check_finite: the
/// embeddings, each block's output and the logits are checked as they are made, and a
/// NaN or an infinity is refused where it first appears (not_finite: check_block_finite);
/// the training forward does not (the trainer refuses a step whose loss is not finite).
LossResult forward_pass(const ModelConfig& config, const Parameters& params, detail::ForwardState& s,
                        const Batch& batch, const ForwardOptions& options, Recorder* recorder, bool keep,
                        bool check_finite);

/// The backward of the last forward from the loss down to layer `lowest` (its
/// gradients included): the head, LN_f, then the blocks from the top. The one
/// loop of Model::backward (lowest 0, then the embeddings) and
/// Model::backward_layer. dx: out, ∂loss/∂(layer `lowest`'s input stream) (N, C).
/// Returns Σ ‖∂loss/∂scaled scores‖² of the layers visited.
double backward_to_layer(const ModelConfig& config, detail::ForwardState& s, const ParamPtrs& p, const GradPtrs& g,
                         int lowest, Recorder* recorder, Matrix& dx);

/// Throws attn::Error (too_large) when a forward-only run of batch × length tokens keeping
/// `keep` (null: no recorder) needs more than kMaxTrainingBytes (run_memory), the message
/// starting with `what` and naming what to ask for instead (memory.cpp).
void check_run_memory(const ModelConfig& config, int batch, int length, const TraceKeep* keep,
                      const std::string& what);

}  // namespace attn
