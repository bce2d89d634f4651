#pragma once
// What the subword tokenizers share (bpe.cpp, wordpiece.cpp, and read_tokenizer
// in pretrained_tokenizer.cpp): the vocabulary, the file limits and the text check.

#include "json_value.hpp"
#include "pretrained.hpp"
#include "types.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attn {

/// Largest tokenizer file read (tokenizer.json of the big multilingual models is about 20 MB).
inline constexpr std::size_t kMaxTokenizerFileBytes = 64u << 20;

/// An attn::Error with code bad_checkpoint: "<file>: <what>".
[[noreturn]] void bad_tokenizer_file(const std::string& file, const std::string& what);

/// Pieces by id, ids by piece. Ids are dense: 0 … size-1, each once.
class PieceVocabulary {
public:
    /// Adds `piece` as `id`; the same piece again with the same id is accepted
    /// (a tokenizer.json lists its special tokens in the vocabulary and in
    /// added_tokens). Anything else that clashes is an error naming `file`.
    void add(const std::string& piece, std::int64_t id, const std::string& file);
    /// Checks the ids are 0 … size-1 without gaps, the size at most kMaxInferenceVocab.
    void finish(const std::string& file) const;
    /// A JSON object {"piece": id, …} (vocab.json, tokenizer.json's model.vocab).
    void add_json_object(const JsonValue& object, const std::string& file);

    std::int32_t size() const { return static_cast<std::int32_t>(pieces_.size()); }
    std::int32_t find(const std::string& piece) const;  ///< -1 when absent
    /// The piece of id; attn::Error (bad_input) naming the id and the size otherwise.
    const std::string& piece(std::int32_t id) const;

private:
    std::vector<std::string> pieces_;
    std::vector<bool> filled_;
    std::unordered_map<std::string, std::int32_t> ids_;
};

/// Parses a tokenizer file's JSON (code bad_checkpoint, the file named); an empty text is an error.
JsonValue parse_tokenizer_json(const std::string& text, const std::string& file);

/// The added_tokens of a tokenizer.json (content, id) that are special or
/// never split, into the vocabulary; returns their contents.
std::vector<std::string> read_added_tokens(const JsonValue& root, PieceVocabulary& vocab, const std::string& file);

/// Checks a text to encode: at most kMaxSentenceBytes (too_many_tokens), valid UTF-8 (bad_text).
void check_tokenizer_text(const std::string& text);

/// The byte ranges [begin, end) of `text` that are one of `specials` (the
/// longest that matches at a position wins) and of the text between them
/// (special = false), in order; the ranges cover the text.
struct TextSegment {
    std::size_t begin, end;
    std::int32_t special;  ///< index into specials, or -1
};
std::vector<TextSegment> split_on_specials(const std::string& text, const std::vector<std::string>& specials);

}  // namespace attn
