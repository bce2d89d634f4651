#pragma once
// A small strict JSON reader for the few JSON texts the core reads back: the
// checkpoint metadata (model config, task, vocabulary). RFC 8259 syntax;
// numbers are kept as doubles; nesting is limited so hostile input cannot
// exhaust the stack. Throws attn::Error naming the byte offset.

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attn {

struct JsonValue {
    enum class Type { null, boolean, number, string, array, object };
    Type type = Type::null;
    bool boolean = false;
    double number = 0;
    std::string string;
    std::vector<JsonValue> array;
    std::map<std::string, JsonValue> object;

    bool is(Type t) const { return type == t; }
    /// The member `key` of an object, or nullptr.
    const JsonValue* get(const std::string& key) const;
};

/// Parses a whole JSON text (surrounding whitespace allowed, nothing else).
JsonValue parse_json(const std::string& text, int max_depth = 64);

}  // namespace attn
