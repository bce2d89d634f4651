#pragma once
// The core's one JSON reader, for every JSON text it reads back: the
// .safetensors header (safetensors.cpp) and the checkpoint metadata (model
// config, task, vocabulary). Strict RFC 8259 syntax; every access
// bounds-checked; nesting limited so hostile input cannot exhaust the stack;
// duplicate keys rejected; members kept in file order; integer literals kept
// exact (int64) besides their double value, so 64-bit offsets survive.
// Throws attn::Error naming the byte offset.

#include "base/types.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace attn {

struct JsonValue {
    enum class Type { null, boolean, number, string, array, object };
    Type type = Type::null;
    bool boolean = false;
    double number = 0;
    /// For a number: true when its literal is an integer (no '.', no exponent)
    /// within int64, whose exact value is `integer`.
    bool is_integer = false;
    std::int64_t integer = 0;
    std::string string;
    std::vector<JsonValue> array;
    std::vector<std::pair<std::string, JsonValue>> object;  ///< members in file order, keys unique

    bool is(Type t) const { return type == t; }
    /// The member `key` of an object, or nullptr.
    const JsonValue* get(const std::string& key) const;
};

struct JsonOptions {
    int max_depth = 64;  ///< objects and arrays nested deeper than this are an error
    /// An integer literal beyond int64 is an error (otherwise it is only a double).
    bool exact_integers = false;
    /// Error messages: "<prefix>invalid <what> at byte N: …", with this code.
    std::string prefix;
    std::string what = "JSON";
    Error::Code code = Error::Code::bad_input;
    /// Called before a duplicate key is rejected, with the keys of the enclosing
    /// objects (outermost first) and the duplicate: it may throw a message of its own.
    std::function<void(const std::vector<std::string>& path, const std::string& key)> on_duplicate;
};

/// Parses a whole JSON text (surrounding whitespace allowed, nothing else).
JsonValue parse_json(const std::string& text, const JsonOptions& options);
JsonValue parse_json(const std::string& text, int max_depth = 64);

}  // namespace attn
