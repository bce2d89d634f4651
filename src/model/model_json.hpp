#pragma once
// JSON documents of the training engine, keys in snake_case like the trace's
// (json.hpp), matrices as arrays of rows, floats with 9 significant digits:
//   model_trace_json — `attn run`: config, tokens, per-layer trace, logits;
//   gradient_dump_json — `attn grad`: config, params, batch, loss, grads.

#include "model/model.hpp"
#include "text/tokenizer.hpp"

#include <string>
#include <vector>

namespace attn {

/// {"config", "tokens": [{text, id, start, end}], "embeddings", "positional",
/// "token_type" (token_types > 0), "embed_normed" (embed_layernorm), "mask",
/// "layers": [{input, normed, heads: [{query, key, value, scores, scaled,
/// weights, output}], concat, attention_output (= concat·W_O + b_O), residual
/// (= input + attention_output), mlp_normed (with an MLP, or post-LN),
/// mlp_hidden, mlp_output (with an MLP), output (the residual stream out)}],
/// "final_normed", "transformed" (output_transform), "logits", "probabilities"}:
/// the fields of model_trace_fields.hpp that are not js_only, after the config and
/// tokens. A layer that a one-layer trace skipped has "heads": []; a field the trace
/// did not keep is left out.
std::string model_trace_json(const ModelConfig& config, const std::vector<Token>& tokens, const ModelTrace& trace);

/// {"config", "params": {name: matrix or vector}, "batch": {ids, targets,
/// lengths (only when padded)}, "loss", "grads": {name: same shapes}}.
std::string gradient_dump_json(const ModelConfig& config, const Parameters& params, const Batch& batch, double loss,
                               const Parameters& grads);

}  // namespace attn
