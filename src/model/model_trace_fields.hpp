#pragma once
// The one table of a model trace's fields (ModelTrace, model.hpp), walked by the
// writers of trace_fields.hpp: the CLI's JSON (attention/json_writer.hpp, `attn run`,
// model_json.cpp; names as written here, no js_only field) and the JS objects of a
// trained and a pretrained model (src/bindings/convert.cpp, names camelCased:
// "attention_output" → "attentionOutput", "ln1_gain" → "ln1Gain").
//
// Two rules hold for every writer:
// - a matrix the trace did not keep is left out: an empty matrix (no token types,
//   no embedding LayerNorm, no MLP, no output transform, no logits asked for);
// - a layer whose vectors the trace did not keep (TraceKeep::vectors, its `input`
//   empty) is written as a summary: its heads' attention weights only (the other
//   layers a long pretrained trace shows in the model view), or no heads at all
//   when TraceKeep::layer skipped them too. "heads" is always there.
//
// The weights, biases and LayerNorm gains of a layer and the final LayerNorm come
// from the model's Parameters (js_only: the CLI prints no weights), written when the
// model has them and `params` is given. The document around the table (the config,
// the tokens) is the caller's: the CLI's model_config_json and word tokens, a
// trained model's or a pretrained model's own in JS.

#include "attention/trace_fields.hpp"
#include "model/model.hpp"

#include <string>

namespace attn::trace_fields {

/// `name`: `m` when the trace kept it (not empty).
template <typename W>
void kept(W& w, const char* name, const Matrix& m, Where where) {
    if (m.size() > 0) w.field(name, m, where);
}
template <typename W>
void kept(W& w, const char* name, const Vector& v, Where where) {
    if (v.size() > 0) w.field(name, v, where);
}

/// `name`: the parameter `tensor` (a row-major copy: 1×n for a bias or gain), when there is one.
template <typename W>
void parameter(W& w, const char* name, const Parameters* params, const std::string& tensor) {
    if (params && params->has(tensor)) w.field(name, params->matrix(tensor), Where::js_only);
}

/// Layer l of a model trace.
template <typename W>
void model_layer(W& w, const LayerTrace& lt, int l, const Parameters* params) {
    constexpr Where all = Where::everywhere;
    if (lt.input.size() == 0) {  // a summary: the vectors were not kept
        w.list("heads", lt.attention.heads, [&](const HeadTrace& h) { w.field("weights", h.weights, all); });
        return;
    }
    const std::string p = "layers." + std::to_string(l) + ".";
    kept(w, "input", lt.input, all);
    kept(w, "normed", lt.normed, all);  // the attention's input
    parameter(w, "w_query", params, p + "w_query");
    parameter(w, "w_key", params, p + "w_key");
    parameter(w, "w_value", params, p + "w_value");
    parameter(w, "w_output", params, p + "w_output");
    parameter(w, "b_query", params, p + "b_query");
    parameter(w, "b_key", params, p + "b_key");
    parameter(w, "b_value", params, p + "b_value");
    parameter(w, "b_output", params, p + "b_output");
    parameter(w, "ln1_gain", params, p + "ln1.gain");
    parameter(w, "ln1_bias", params, p + "ln1.bias");
    parameter(w, "q_norm_gain", params, p + "q_norm.gain");
    parameter(w, "k_norm_gain", params, p + "k_norm.gain");
    kept(w, "normed_rms", lt.normed_rms, all);  // rmsnorm: each row's rms
    w.list("heads", lt.attention.heads, [&](const HeadTrace& h) { head(w, h); });
    kept(w, "concat", lt.attention.concat, all);
    kept(w, "attention_output", lt.attention.output, all);  // concat·W_O (+ b_O)
    kept(w, "residual", lt.residual, all);
    kept(w, "mlp_normed", lt.mlp_normed, all);
    kept(w, "mlp_normed_rms", lt.mlp_normed_rms, all);
    kept(w, "mlp_gate", lt.mlp_gate, all);  // the gated MLP: gate (before its activation) and up
    kept(w, "mlp_up", lt.mlp_up, all);
    kept(w, "mlp_hidden", lt.mlp_hidden, all);
    kept(w, "mlp_output", lt.mlp_output, all);
    kept(w, "output", lt.output, all);  // the residual stream out
}

/// A model trace, after the document's config and tokens. params: the model's (the
/// js_only weights and gains), or nullptr.
template <typename W>
void model_trace(W& w, const ModelTrace& tr, const Parameters* params) {
    constexpr Where all = Where::everywhere, js = Where::js_only;
    w.field("length", tr.length, js);
    kept(w, "embeddings", tr.embeddings, all);
    kept(w, "positional", tr.positional, all);
    kept(w, "token_type", tr.token_type, all);
    kept(w, "embed_normed", tr.embed_normed, all);
    w.field("mask", tr.mask, all);
    int l = 0;
    w.list("layers", tr.layers, [&](const LayerTrace& lt) { model_layer(w, lt, l++, params); });
    kept(w, "final_normed", tr.final_normed, all);
    kept(w, "final_rms", tr.final_rms, all);
    // rope: θᵢ (position m's angle is m·θᵢ; the same in every layer); alibi: the heads' slopes
    kept(w, "rope_frequencies", tr.rope_frequencies, all);
    kept(w, "alibi_slopes", tr.alibi_slopes, all);
    kept(w, "transformed", tr.transformed, all);
    kept(w, "logits", tr.logits, all);
    kept(w, "probabilities", tr.probabilities, all);
    parameter(w, "final_ln_gain", params, "final_ln.gain");
    parameter(w, "final_ln_bias", params, "final_ln.bias");
    // the likeliest next tokens of each position, row-major T×k (TraceKeep::top_k)
    if (tr.top_k > 0)
        w.object("top", js, [&] {
            w.field("k", tr.top_k, js);
            w.field("ids", tr.top_ids, js);
            w.field("p", tr.top_p, js);
        });
}

}  // namespace attn::trace_fields
