#pragma once
// A byte-level BPE's pre-tokenizer: how the (normalized) text is cut into the pieces that
// are merged one by one. Three published patterns are written out by hand (no regular
// expression engine): a Split or a ByteLevel pre-tokenizer naming any other is refused by
// name. The patterns, as tokenizer.json writes them:
//   GPT-2 (ByteLevel's own, use_regex: true; SmolLM2 after Digits):
//     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   Llama 3 (a Split before ByteLevel with use_regex: false):
//     (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   Qwen2 (Qwen2, Qwen2.5, Qwen3): Llama 3's with \p{N} for \p{N}{1,3}.
// \s is Unicode White_Space, \p{L} and \p{N} the general categories (unicode.hpp); the
// alternatives are tried in order at each position, as the regular expression does.

#include "base/json_value.hpp"
#include "text/normalizer.hpp"

#include <string>
#include <utility>
#include <vector>

namespace attn {

/// The split patterns this engine runs (the opening comment's texts), named by what tells
/// them apart: ByteLevel's own (GPT-2's), numbers in runs of up to three (Llama 3's), each
/// number on its own (Qwen2's).
enum class SplitPattern { byte_level, numbers_in_threes, single_numbers };

/// The pieces of a text by a pattern, as [begin, end) indices into `text` (code points).
std::vector<std::pair<std::size_t, std::size_t>> split_by_pattern(SplitPattern pattern, const std::u32string& text);

/// GPT-2's pieces of a valid UTF-8 text, as byte ranges [begin, end).
std::vector<std::pair<std::size_t, std::size_t>> pre_tokenize(const std::string& text);

class PreTokenizer {
public:
    /// GPT-2's: ByteLevel with its own pattern, no prefix space (vocab.json + merges.txt, and a
    /// tokenizer.json that says nothing of its splitting).
    static PreTokenizer byte_level_default();
    /// tokenizer.json's "pre_tokenizer" (null or absent: none). Runs ByteLevel (last),
    /// Split with one of the known patterns (behavior Isolated), Digits, and a Sequence of
    /// them. Refuses any other kind, pattern or setting by name, with `file`.
    static PreTokenizer read(const JsonValue* json, const std::string& file);

    bool empty() const { return steps_.empty(); }
    /// Whether it ends with ByteLevel (the pieces are then merged as bytes).
    bool byte_level() const { return !steps_.empty() && steps_.back().kind == Kind::byte_level; }
    /// Whether one of its steps is a Split (Llama 3's and Qwen2's tokenizers).
    bool splits() const;

    /// The pieces of one normalized text (between two added tokens), in order; ByteLevel's
    /// add_prefix_space puts a space (spanning the first character's bytes) before a piece
    /// that does not start with one.
    std::vector<NormText> apply(NormText text) const;

private:
    enum class Kind { split, digits, byte_level };
    struct Step {
        Kind kind;
        SplitPattern pattern = SplitPattern::byte_level;  ///< split, and byte_level with use_regex
        bool individual = false;                   ///< digits: each digit on its own, else runs of digits
        bool prefix_space = false;                 ///< byte_level: add_prefix_space
        bool use_regex = true;                     ///< byte_level: split by GPT-2's pattern
    };
    std::vector<Step> steps_;
    static void read_into(const JsonValue& json, const std::string& file, std::vector<Step>& steps, int depth);
};

}  // namespace attn
