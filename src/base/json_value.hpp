#pragma once
// The core's one JSON reader, for every JSON text it reads back: the
// .safetensors header (safetensors.cpp) and the checkpoint metadata (model
// config, task, vocabulary). Strict RFC 8259 syntax; every access
// bounds-checked; nesting limited so hostile input cannot exhaust the stack;
// duplicate keys rejected; members kept in file order; integer literals kept
// exact (int64) besides their double value, so 64-bit offsets survive; a UTF-8
// byte order mark before the value is skipped (editors on Windows write one).
// Memory is bounded by the input: a text whose values would take more than
// kJsonMemoryPerByte times its size is refused before anything is built.
// Throws attn::Error naming the byte offset.

#include "base/types.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace attn {

struct JsonValue {
    enum class Type : std::uint8_t { null, boolean, number, string, array, object };
    Type type = Type::null;
    bool boolean = false;
    /// For a number: true when its literal is an integer (no '.', no exponent)
    /// within int64, whose exact value is `integer`.
    bool is_integer = false;
    double number = 0;
    std::int64_t integer = 0;
    std::string string;
    std::vector<JsonValue> array;
    std::vector<std::pair<std::string, JsonValue>> object;  ///< members in file order, keys unique

    bool is(Type t) const { return type == t; }
    /// The member `key` of an object, or nullptr.
    const JsonValue* get(const std::string& key) const;
};

/// The most memory a parsed document may take per byte of its text. A value takes
/// sizeof(JsonValue) (104 bytes natively, 64 in wasm) whatever its text: "0," is 2 bytes, so a
/// 64 MiB list of zeros would take 3.4 GB (3.7 GB measured, its list grown by doubling). Real
/// files take far less: GPT-2's tokenizer.json 7 times its size (15 MiB for 2.1 MB, 14 measured),
/// with its merges as pairs in compact JSON (the densest real form) 17.5 times (26 MiB for
/// 1.5 MB, 23 measured). A text above the limit is refused (the options' code) by a first pass
/// that builds nothing; the worst text accepted at 64 MiB takes 2 GiB.
inline constexpr std::size_t kJsonMemoryPerByte = 32;
/// Below this, any document is accepted (a short text of small values is dense but small).
inline constexpr std::size_t kJsonMemoryFloor = std::size_t{16} << 20;

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
