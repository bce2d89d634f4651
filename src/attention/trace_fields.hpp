#pragma once
// The one table of a trace's fields: their order, their names (snake_case)
// and their values. Two writers walk it: json.cpp (the CLI's JSON, names as
// written here) and src/bindings/convert.cpp (the JS objects, every name
// camelCased by camel_case(): "w_query" → "wQuery", "row_max" → "rowMax").
// A new field is added here once and appears on both sides.
//
// A writer W provides
//   w.field(name, value, where)   value: int, std::uint32_t, std::int64_t, bool, std::string,
//                                 Matrix, MaskMatrix or Vector
//   w.object(name, where, body)   a nested object whose fields body() writes
//   w.list(name, items, each)     an array of objects, each(item) writing one
// `where` is Where::everywhere, or Where::js_only for the fields the CLI's JSON
// leaves out (it prints them in its text header instead; the JSON's keys are a
// documented, tested contract).

#include "attention/trace.hpp"

#include <cstdint>
#include <string>

namespace attn::trace_fields {

enum class Where { everywhere, js_only };

template <typename W>
void token(W& w, const Token& t) {
    constexpr Where all = Where::everywhere;
    w.field("text", t.text, all);
    w.field("id", static_cast<int>(t.id), all);
    w.field("start", static_cast<std::int64_t>(t.start), all);  // UTF-8 byte offsets
    w.field("end", static_cast<std::int64_t>(t.end), all);
}

template <typename W>
void head(W& w, const HeadTrace& h) {
    constexpr Where all = Where::everywhere;
    w.field("query", h.query, all);
    w.field("key", h.key, all);
    w.field("value", h.value, all);
    w.field("scores", h.scores, all);
    w.field("scaled", h.scaled, all);
    w.field("row_max", h.row_max, all);
    w.field("row_sum", h.row_sum, all);
    w.field("weights", h.weights, all);
    w.field("output", h.output, all);
    // rope only: the query and key before their rotation (query and key are after it)
    if (h.query_before_rope.size() > 0) w.field("query_before_rope", h.query_before_rope, all);
    if (h.key_before_rope.size() > 0) w.field("key_before_rope", h.key_before_rope, all);
}

template <typename W>
void trace(W& w, const Trace& tr) {
    constexpr Where all = Where::everywhere, js = Where::js_only;
    const Config& c = tr.config;
    w.object("config", all, [&] {
        w.field("d_model", c.d_model, all);
        w.field("heads", c.heads, all);
        w.field("d_head", tr.d_head, all);
        w.field("seed", c.seed, all);
        w.field("positional", std::string(positional_name(c.positional)), all);
        w.field("mask", std::string(mask_name(c.mask)), all);
        w.field("scale", c.scale, all);
        w.field("pad_to", c.pad_to, js);
        w.field("lowercase", c.lowercase, js);
        w.field("share_heads", c.share_heads, js);
    });
    w.list("tokens", tr.tokens, [&](const Token& t) { token(w, t); });
    w.field("real_tokens", tr.real_tokens, js);
    w.field("embeddings", tr.embeddings, all);
    w.field("positional", tr.positional, all);
    w.field("input", tr.input, all);
    // rope: θᵢ (the angle of position m is m·θᵢ); alibi: each head's slope (bias −m_h·|i − j|)
    if (tr.rope_frequencies.size() > 0) w.field("rope_frequencies", tr.rope_frequencies, all);
    if (tr.alibi_slopes.size() > 0) w.field("alibi_slopes", tr.alibi_slopes, all);
    w.field("w_query", tr.weights.w_query, all);
    w.field("w_key", tr.weights.w_key, all);
    w.field("w_value", tr.weights.w_value, all);
    w.field("w_output", tr.weights.w_output, all);
    w.field("mask", tr.mask, all);
    w.list("heads", tr.heads, [&](const HeadTrace& h) { head(w, h); });
    w.field("concat", tr.concat, all);
    w.field("output", tr.output, all);
}

/// The JS name of a field: snake_case → camelCase ("d_model" → "dModel").
inline std::string camel_case(const char* name) {
    std::string out;
    bool upper = false;
    for (const char* p = name; *p; ++p) {
        if (*p == '_') {
            upper = true;
        } else {
            out += upper && *p >= 'a' && *p <= 'z' ? static_cast<char>(*p - 'a' + 'A') : *p;
            upper = false;
        }
    }
    return out;
}

}  // namespace attn::trace_fields
