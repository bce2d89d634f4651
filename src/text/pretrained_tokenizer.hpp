#pragma once
// What the subword tokenizers share (bpe.cpp, wordpiece.cpp, and read_tokenizer
// in pretrained_tokenizer.cpp): the vocabulary, the file limits and the text check.

#include "base/json_value.hpp"
#include "base/limits.hpp"
#include "base/types.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attn {

/// The kinds of subword tokenizer this engine reads. A model family (families/family.hpp)
/// names the kind its files must make; this layer knows no family.
enum class TokenizerKind {
    any,             ///< whichever the files make (attn tokenize and createTokenizer without a family)
    byte_level_bpe,  ///< byte-level BPE: tokenizer.json (model.type "BPE"), or vocab.json + merges.txt
    wordpiece,       ///< WordPiece: tokenizer.json (model.type "WordPiece"), or vocab.txt
};

/// "any", "byte_level_bpe", "wordpiece" (buildInfo().families' tokenizer).
const char* tokenizer_kind_name(TokenizerKind kind);

/// A model's tokenizer: our word tokenizer, a byte-level BPE or a WordPiece.
/// (Not `Token`: that name is the word tokenizer's, tokenizer.hpp, and a second
/// attn::Token in the same program breaks the one-definition rule.)
struct PretrainedToken {
    std::int32_t id = 0;
    std::string text;         ///< the vocabulary's piece ("Ġworld", "##ing", "[CLS]")
    std::string display;      ///< readable: byte-level bytes decoded, the leading space shown as "␣"; WordPiece as is
    std::int32_t begin = -1;  ///< byte offsets of the piece in the user's text; -1 for added tokens ([CLS], [SEP])
    std::int32_t end = -1;
};

class PretrainedTokenizer {
public:
    virtual ~PretrainedTokenizer() = default;
    /// Throws attn::Error (bad_text, too_many_tokens) for invalid UTF-8 or too long a text.
    virtual std::vector<PretrainedToken> encode(const std::string& text) const = 0;
    virtual std::string decode(const std::vector<std::int32_t>& ids) const = 0;
    virtual std::int32_t vocab_size() const = 0;
    virtual std::string piece(std::int32_t id) const = 0;
    virtual std::int32_t mask_id() const { return -1; }  ///< WordPiece's [MASK], -1 without one
    virtual TokenizerKind kind() const = 0;
    /// The readable text of decoded bytes, as encode() writes PretrainedToken::display
    /// (a generated token's display is written by this too, so that the two agree).
    virtual std::string display(const std::string& bytes) const { return bytes; }
};

/// Who asks read_tokenizer for a tokenizer: the kind the files must make, and for its
/// messages the asker's name and title ("no tokenizer files for <name>", "is not BPE (<title>)");
/// both empty for `any`. A family fills it (families/family.hpp: read_family_tokenizer).
struct TokenizerRequest {
    TokenizerKind kind = TokenizerKind::any;
    std::string name;
    std::string title;
};

/// Reads a tokenizer from the files' texts (empty string = file absent), tokenizer.json
/// first: byte-level BPE from tokenizer.json (model.type "BPE"; merges as "a b" strings or
/// pairs) or vocab.json + merges.txt; WordPiece from tokenizer.json or vocab.txt,
/// lower-casing per the config / tokenizer_config.json. Only the request's kind is read
/// (any: whichever the files are). Throws attn::Error (bad_checkpoint) naming the file and
/// the problem.
std::unique_ptr<PretrainedTokenizer> read_tokenizer(const TokenizerRequest& request, const std::string& tokenizer_json,
                                                    const std::string& vocab_json, const std::string& merges_txt,
                                                    const std::string& vocab_txt, const std::string& tokenizer_config_json);

/// The tokenizer files that make a tokenizer of this kind, each choice a set of files, in the
/// order read_tokenizer tries them (any: every kind's).
std::vector<std::vector<std::string>> tokenizer_file_choices(TokenizerKind kind);

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
