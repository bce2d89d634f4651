#pragma once
// Adapters between the core's Eigen types and JS values. Only the binding
// layer includes Emscripten headers; the core never does.

#include "model/model.hpp"
#include "model/model_schema.hpp"
#include "checkpoints/pretrained.hpp"
#include "train/tasks.hpp"
#include "attention/trace.hpp"

#include <emscripten/val.h>

#include <initializer_list>
#include <string>
#include <utility>

namespace attn::js {

/// {rows, cols, data: Float32Array} — data is a copy, never a view into the
/// wasm heap, so it stays valid when memory grows.
emscripten::val matrix_to_js(const Eigen::Ref<const Matrix>& m);
/// {rows, cols, data: Uint8Array}, 1 = may attend.
emscripten::val mask_to_js(const MaskMatrix& m);
emscripten::val vector_to_js(const Vector& v);
/// {rows, cols, data} (data any array-like of numbers) → Matrix. Throws
/// attn::Error naming `what` when the shape does not match the data.
Matrix matrix_from_js(const emscripten::val& v, const std::string& what);
MaskMatrix mask_from_js(const emscripten::val& v, const std::string& what);

/// {wQuery, wKey, wValue, wOutput} → Weights; throws attn::Error naming a bad matrix.
Weights weights_from_js(const emscripten::val& w);

/// One head, the fields of core/trace_fields.hpp camelCased: {query, key,
/// value, scores, scaled, rowMax, rowSum, weights, output}.
emscripten::val head_trace_to_js(const HeadTrace& head);
/// {text, id, start, end} (UTF-8 byte offsets).
emscripten::val token_to_js(const Token& token);
/// A pretrained tokenizer's tokens: [{id, piece, text, start, end}], the names of
/// token_to_js (text: the readable form; piece: the vocabulary's; UTF-8 byte
/// offsets, -1 for added tokens such as [CLS]). The tokenizer's encode and the
/// pretrained model's tokenize and trace all give this shape.
emscripten::val pretrained_tokens_to_js(const std::vector<PretrainedToken>& tokens);
/// o[row.js] = the row's value of `m` (a number, a boolean or a choice's name).
void set_model_setting(emscripten::val& o, const ModelSetting& row, const ModelConfig& m);
/// A model's config: every row of the model schema (model_schema.hpp), by its JS key
/// (Trainer.config, and a pretrained model's config before its postNorm).
emscripten::val model_config_to_js(const ModelConfig& m);
/// The trace: core/trace_fields.hpp's table with camelCase names.
emscripten::val trace_to_js(const Trace& trace);
/// A model's trace (ModelTrace) as Trainer.trace and PretrainedModel.trace give it: the
/// table of model/model_trace_fields.hpp with camelCase names (the layers' weights, biases
/// and LayerNorm gains, and the final LayerNorm's, from `params`), after
/// config: model_config_to_js(m), and each layer's pattern scores beside its heads
/// (patterns, head_patterns with the task's own keys). The callers add their tokens and
/// what else is theirs (a trained model's grammar; a pretrained model's generated count,
/// the top tokens' texts).
emscripten::val model_trace_to_js(const ModelConfig& m, const ModelTrace& trace, const Parameters& params,
                                  const std::vector<AnswerKey>& task_keys = {});
/// {name: {score, rows}} of one head's pattern scores (score null when no row is scored).
emscripten::val pattern_scores_to_js(const std::vector<PatternScore>& scores);
/// o.patterns = [per head: {name: {score, rows}}], beside o.heads (the core's head_patterns).
void set_head_patterns(emscripten::val& o, const std::vector<std::vector<PatternScore>>& patterns);
/// o[name] = matrix_to_js(m) for each (name, m).
using MatrixField = std::pair<const char*, Eigen::Ref<const Matrix>>;
void set_matrices(emscripten::val& o, std::initializer_list<MatrixField> fields);

/// The weights a layer's backward object shows beside its gradients: W_O and the
/// gradients of W_Q, W_K, W_V, W_O.
struct LayerBackwardWeights {
    Eigen::Ref<const Matrix> w_output, d_query, d_key, d_value, d_output;
};
/// One layer of a backward trace, the shape of Trainer.backwardTrace's and
/// PretrainedModel.backwardTrace's layers (engine.d.ts): {normed, dStreamIn, dStreamOut,
/// dAttention, wOutput, dWQuery, dWKey, dWValue, dWOutput, heads: [{query, key, value,
/// weights, dOutput, dWeights, dScaled, dScores, dQuery, dKey, dValue}]}.
emscripten::val layer_backward_to_js(const LayerTrace& forward, const LayerGradTrace& grads,
                                     const LayerBackwardWeights& weights);

/// The settings object the JS wrapper normalised (every field present);
/// without weights, run() takes the seeded ones from the caller's cache.
Config config_from_js(const emscripten::val& settings);

}  // namespace attn::js
