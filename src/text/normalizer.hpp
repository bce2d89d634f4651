#pragma once
// A tokenizer.json's "normalizer": what the text becomes before it is split and merged
// (Llama 2's Prepend("▁") + Replace(" ", "▁"), Qwen's NFC, a Lowercase, ...), each
// character keeping the bytes of the user's text it came from, so that every token can
// name its span of the text. The kinds this engine runs are listed in Normalizer::read;
// any other is refused by name (bad_checkpoint), never skipped.

#include "base/json_value.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

/// One character of a normalized text and the bytes [begin, end) of the user's text it
/// came from (a character the normalizer added takes the span of the one it was put before).
struct NormChar {
    char32_t value;
    std::uint32_t begin, end;
};
using NormText = std::vector<NormChar>;

/// The characters of text[begin, end) (valid UTF-8), each spanning its own bytes.
NormText norm_text(const std::string& text, std::size_t begin, std::size_t end);
/// The UTF-8 of some characters.
std::string norm_utf8(const NormText& chars, std::size_t from, std::size_t to);
inline std::string norm_utf8(const NormText& chars) { return norm_utf8(chars, 0, chars.size()); }

class Normalizer {
public:
    /// The steps of tokenizer.json's "normalizer" (null or absent: none). Runs: Lowercase,
    /// NFC, NFD, Strip, Prepend, Replace with a string pattern, and a Sequence of them.
    /// Refuses any other kind (NFKC, StripAccents, BertNormalizer, Precompiled, a Regex
    /// pattern …) naming it and `file`.
    static Normalizer read(const JsonValue* json, const std::string& file);

    bool empty() const { return steps_.empty(); }
    /// Normalizes one piece of text (the text between two added tokens), in place.
    void apply(NormText& text) const;
    /// Whether the steps start with Prepend(`s`) (SentencePiece's "▁" before every piece of text).
    bool prepends(const std::string& s) const;
    /// Whether a Prepend or Replace step writes `s` (SentencePiece's "▁").
    bool writes(const std::string& s) const;

private:
    enum class Kind { lowercase, nfc, nfd, strip, prepend, replace };
    struct Step {
        Kind kind;
        std::u32string from, to;  ///< replace: the pattern and its replacement; prepend: `to`
        bool left = true, right = true;  ///< strip: which ends
    };
    std::vector<Step> steps_;
    static void read_into(const JsonValue& json, const std::string& file, std::vector<Step>& steps, int depth);
};

}  // namespace attn
