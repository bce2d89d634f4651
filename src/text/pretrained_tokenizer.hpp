#pragma once
// What the subword tokenizers share (bpe.cpp, sentencepiece.cpp, wordpiece.cpp, the
// tokenizer.json pipeline of tokenizer_json.cpp, and read_tokenizer in
// pretrained_tokenizer.cpp): the kinds, the vocabulary, the file limits and the text check.

#include "base/json_value.hpp"
#include "base/limits.hpp"
#include "base/types.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attn {

/// The kinds of subword tokenizer this engine reads. A model family (families/family.hpp)
/// names the kind its files must make; this layer knows no family. A tokenizer is of one of
/// the concrete kinds; `any` and `any_bpe` are only asked for.
enum class TokenizerKind {
    any,             ///< whichever the files make (attn tokenize and createTokenizer without a family)
    byte_level_bpe,  ///< byte-level BPE split by GPT-2's pattern (ByteLevel's own; SmolLM2: after Digits):
                     ///< tokenizer.json (model.type "BPE"), or vocab.json + merges.txt
    wordpiece,       ///< WordPiece: tokenizer.json (model.type "WordPiece"), or vocab.txt
    split_bpe,       ///< byte-level BPE after a Split pattern (Llama 3, Qwen2, Qwen3): tokenizer.json
    sentencepiece_bpe,  ///< SentencePiece-style BPE: ▁, byte fallback (Llama 2, TinyLlama): tokenizer.json
    any_bpe,         ///< any of the three BPE kinds from tokenizer.json (a family whose checkpoints come
                     ///< with either: Llama 3, TinyLlama and SmolLM2 are all LlamaForCausalLM)
};

/// "any", "byte_level_bpe", "wordpiece", "split_bpe", "sentencepiece_bpe", "any_bpe"
/// (buildInfo().families' tokenizer).
const char* tokenizer_kind_name(TokenizerKind kind);
/// The kind in words, for messages ("a byte-level BPE after a Split pattern (Llama 3, Qwen2)").
std::string tokenizer_kind_title(TokenizerKind kind);
/// Whether a request for `asked` takes a tokenizer of kind `made` (any takes all; any_bpe every BPE).
bool tokenizer_kind_accepts(TokenizerKind asked, TokenizerKind made);

/// A token of a model's tokenizer: a byte-level BPE, a SentencePiece-style BPE or a WordPiece.
/// (Not `Token`: that name is the word tokenizer's, tokenizer.hpp, and a second
/// attn::Token in the same program breaks the one-definition rule.)
struct PretrainedToken {
    std::int32_t id = 0;
    std::string text;         ///< the vocabulary's piece ("Ġworld", "▁world", "<0xE7>", "##ing", "[CLS]")
    /// readable: byte-level bytes decoded, the leading space shown as "␣"; SentencePiece's
    /// every ▁ as "␣" and byte pieces as \xHH; WordPiece as is
    std::string display;
    /// byte offsets of the piece in the user's text (a piece inside a character spans the
    /// character); -1 for the tokens the tokenizer adds ([CLS], [SEP], a template's BOS)
    std::int32_t begin = -1;
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

    /// The work encode() has done so far (the added-token automaton's moves, WordPiece's
    /// vocabulary probes, the pairs BPE's merge loop queued): tests bound it by the length of
    /// the texts rather than timing it.
    std::uint64_t steps() const { return steps_.load(std::memory_order_relaxed); }

protected:
    void count_steps(std::uint64_t n) const { steps_.fetch_add(n, std::memory_order_relaxed); }

private:
    mutable std::atomic<std::uint64_t> steps_{0};
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
/// first: a BPE from tokenizer.json (model.type "BPE"; merges as "a b" strings or pairs:
/// byte-level, or SentencePiece-style, bpe.hpp and sentencepiece.hpp) or, for GPT-2's kind,
/// vocab.json + merges.txt; WordPiece from tokenizer.json or vocab.txt, lower-casing per the
/// config / tokenizer_config.json. Only the request's kind is read (any: whichever the files
/// are). Throws attn::Error (bad_checkpoint) naming the file and the problem.
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

/// The added_tokens of a tokenizer.json (read_added_token_list: added_tokens.hpp), into the
/// vocabulary; returns their contents.
std::vector<std::string> read_added_tokens(const JsonValue& root, PieceVocabulary& vocab, const std::string& file);

/// A true/false setting of a tokenizer file's object: `fallback` when absent or null; else an
/// error "<file>: <what>: <key> is not true or false".
bool json_flag(const JsonValue& object, const char* key, bool fallback, const std::string& what, const std::string& file);

/// How deep a tokenizer.json's Sequences (of normalizers, pre-tokenizers, processors,
/// decoders) may nest: real files nest one deep.
inline constexpr int kMaxTokenizerSequenceDepth = 8;

/// Checks a text to encode: at most kMaxSentenceBytes (too_many_tokens), valid UTF-8 (bad_text).
void check_tokenizer_text(const std::string& text);

}  // namespace attn
