#pragma once
// The backward pass of one sentence through a trained model, for `attn grad
// --model` and the playground's Learn steps: the targets a checkpoint's task
// sets (or the user picks), the loss, every parameter gradient and every
// gradient intermediate per layer and head (Model::backward with a Recorder).

#include "model/model.hpp"
#include "train/trainer.hpp"

#include <map>
#include <string>
#include <vector>

namespace attn {

/// The default targets of a sentence for a checkpoint's task (metadata "task"):
/// text → the next token at every position but the last; coreference → the
/// antecedent (the noun the task's answer key marks) at each "it". Throws
/// attn::Error (bad_input) when the task sets no target on this sentence
/// (another task, or no "it" the key can resolve): then pass targets by hand.
std::vector<std::int32_t> default_targets(const std::map<std::string, std::string>& metadata,
                                          const std::vector<std::int32_t>& ids);

/// One forward and backward of a batch of one (ids, targets of the same
/// length; kNoTarget where no loss) on `params`; `scale` overrides the
/// config's 1/√D (the playground's switch), -1 keeps it. `pad_to` > ids.size()
/// appends [PAD] ids (no target) up to that length, hidden as keys (lengths).
struct BackwardTrace {
    ModelConfig config;  ///< the model's, with `scale` applied
    Batch batch;
    double loss = 0;
    Parameters grads;
    Recorder recorder;  ///< trace (the forward) and gradients (every intermediate)
};
BackwardTrace backward_trace(const ModelConfig& config, const Parameters& params, const std::vector<std::int32_t>& ids,
                             const std::vector<std::int32_t>& targets, int scale = -1, int pad_to = 0);

/// One plain SGD step by hand (the playground's "take one step"): θ ← θ − lr·g
/// for the parameters `grads` holds gradients of. layer < 0: every parameter;
/// layer ≥ 0 with head ≥ 0: that head's share of the layer's attention only
/// (columns h·D … (h+1)·D − 1 of W_Q, W_K, W_V and of their biases, rows
/// h·D … of W_O). No optimizer state is read or written. Returns the step's
/// size ‖Δθ‖ (in double). Throws attn::Error: lr not finite or outside
/// (0, kMaxSgdRate] (not_finite / bad_input), layer or head outside the model,
/// grads of another layout (bad_shape), or a step whose result is not finite
/// (not_finite; `params` is then left as it was).
inline constexpr double kMaxSgdRate = 100.0;
/// How many steps by hand a pretrained model keeps to undo (the oldest is dropped past it): each keeps
/// the values it changed, ~9 MB for a whole-layer step on GPT-2 small. The page's link holds as many.
inline constexpr int kMaxUndoSteps = 20;
double sgd_step(const ModelConfig& config, Parameters& params, const Parameters& grads, double lr, int layer = -1,
                int head = -1);

/// A loaded (pretrained) model's default targets for a sentence: GPT-2 (causal):
/// the next token at every position but the last; BERT: at each [MASK] (mask_id)
/// the model's own likeliest fill (so the loss starts from the model's answer; the
/// user may pick another). Throws attn::Error (bad_input): a one-token GPT-2
/// sentence, a BERT sentence without [MASK] (saying how to add one).
std::vector<std::int32_t> pretrained_default_targets(Model& model, const std::vector<std::int32_t>& ids,
                                                     std::int32_t mask_id);

/// One forward and backward of a loaded model (no Trainer, no gradients for every
/// parameter): the parameter gradients of `layer` only (Model::backward_layer), the
/// gradient intermediates of that layer's heads, d_logits and the probabilities.
/// `scale` as backward_trace's (-1 the model's own).
struct PretrainedBackward {
    ModelConfig config;  ///< the model's, with `scale` applied
    Batch batch;
    double loss = 0;
    int layer = 0;
    LayerGradients grads;
    Recorder recorder;  ///< layer = vectors = `layer`: the forward's heads and the gradients of that layer
};
PretrainedBackward pretrained_backward(Model& model, const std::vector<std::int32_t>& ids,
                                       const std::vector<std::int32_t>& targets, int layer, int scale = -1);

/// What a step by hand changed, to put it back bit for bit: [begin, end) ranges of the
/// flat parameters and their old values, in order.
struct SgdUndo {
    std::vector<std::pair<std::size_t, std::size_t>> ranges;
    std::vector<float> old;
};
/// sgd_step for a loaded model's one-layer gradients: head ≥ 0 that head's share of
/// the layer's attention (as sgd_step), head < 0 the whole layer's attention (W_Q, W_K,
/// W_V, W_O and their biases). Returns ‖Δθ‖; fills `undo` (when given) before moving
/// anything. The same refusals as sgd_step (params left as they were).
double sgd_step_layer(const ModelConfig& config, Parameters& params, const LayerGradients& grads, double lr, int head,
                      SgdUndo* undo = nullptr);
/// Puts back what sgd_step_layer changed (exact).
void undo_sgd(Parameters& params, const SgdUndo& undo);

/// backward_trace_json's shape for a loaded model: "params" and "grads" hold the
/// asked layer's tensors only, "layers" has L entries of which only that layer's
/// "heads" is filled (the others []), plus "layer": the asked layer.
std::string pretrained_backward_json(const Parameters& params, const PretrainedBackward& b);

/// gradient_dump_json's document plus "layers": [{"heads": [{d_output,
/// d_weights, d_scaled, d_scores, d_query, d_key, d_value}]}] (the trace's
/// keys with a d_ prefix), "d_logits" and "probabilities".
std::string backward_trace_json(const Parameters& params, const BackwardTrace& b);

}  // namespace attn
