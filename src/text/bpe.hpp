#pragma once
// Byte-level BPE: GPT-2's (openai's encoder.py, transformers' GPT2Tokenizer), and the
// byte-level BPEs of tokenizer.json that split by another pattern first (Llama 3, Qwen2,
// Qwen3; SmolLM2's GPT-2 pattern after Digits):
//  1. the added tokens (<|endoftext|>, <|begin_of_text|>) are found in the text and become
//     their ids; between them (tokenizer_json.hpp's loop, with the file's normalizer),
//  2. the pre-tokenizer splits the text into pieces (pre_tokenizer.hpp: GPT-2's pattern
//       's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//     by default, Llama 3's or Qwen2's by a Split; \s is Unicode White_Space, as in
//     Python's `regex`);
//  3. each piece's UTF-8 bytes become printable characters (byte_to_unicode:
//     space → Ġ) and are merged pair by pair, the pair of lowest merge rank first
//     (leftmost first among equals), until no pair of the merge list is left; with
//     ignore_merges (Llama 3), a piece that is a whole vocabulary entry is that entry.

#include "text/pre_tokenizer.hpp"
#include "text/pretrained_tokenizer.hpp"
#include "text/tokenizer_json.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attn {

/// The printable character GPT-2 writes for each byte: 33–126, 161–172 and
/// 174–255 stand for themselves, the other 68 bytes are U+0100 + n in order.
char32_t byte_to_unicode(std::uint8_t byte);

/// The readable form of a token's bytes: UTF-8 decoded, a leading space shown
/// as "␣" (every space with `every_space`: SentencePiece's ▁), tab/newline/return
/// as \t \n \r, other control bytes and bytes that are not a whole UTF-8 character as \xHH.
std::string display_bytes(const std::string& bytes, bool every_space = false);

/// A BPE's merge list and its merge loop, shared by the byte-level and SentencePiece kinds.
class BpeMerges {
public:
    BpeMerges() = default;
    /// `merges`: pairs in rank order (the first is rank 0), each piece and their join in the
    /// vocabulary. Errors name `file` (bad_checkpoint).
    BpeMerges(const PieceVocabulary& vocab, const std::vector<std::pair<std::string, std::string>>& merges,
              const std::string& file);
    /// Merges `symbols` (ids) in place until no pair of the list is left, the pair of lowest
    /// rank first, leftmost among equals; `starts` gets each final symbol's first position in
    /// the symbols given. O(n log n): a linked list over the positions and a priority queue,
    /// into which at most 3n pairs are pushed (`pushes` is increased by their number).
    void merge(std::vector<std::int32_t>& symbols, std::vector<std::int32_t>& starts, std::uint64_t& pushes) const;

private:
    struct Merge {
        std::int32_t rank, id;
    };
    static std::uint64_t pair_key(std::int32_t a, std::int32_t b) {
        return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
    }
    std::unordered_map<std::uint64_t, Merge> merges_;
};

class BpeTokenizer : public PipelineTokenizer {
public:
    /// GPT-2's: `vocab`: every piece (in the byte alphabet), with the 256 single bytes;
    /// `merges` in rank order; `specials`: tokens matched in the text as they are (in the
    /// vocabulary). Errors name `vocab_file` or `merges_file` (bad_checkpoint).
    BpeTokenizer(PieceVocabulary vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                 std::vector<std::string> specials, const std::string& vocab_file, const std::string& merges_file);
    /// A tokenizer.json's (read_bpe_json) whose pre-tokenizer ends with ByteLevel.
    BpeTokenizer(BpeModelFile model, TokenizerPipeline pipeline, const std::string& file);

    /// The tokens' bytes as UTF-8 (bytes that are no whole character: U+FFFD); an added
    /// token is its content.
    std::string decode(const std::vector<std::int32_t>& ids) const override;
    std::int32_t vocab_size() const override { return vocab_.size(); }
    std::string piece(std::int32_t id) const override { return vocab_.piece(id); }
    TokenizerKind kind() const override { return kind_; }
    std::string display(const std::string& bytes) const override { return display_bytes(bytes); }

    /// The ids of one pre-tokenized piece's bytes after all merges.
    std::vector<std::int32_t> merge(const std::string& bytes) const;

private:
    void encode_text(const NormText& text, std::vector<PretrainedToken>& out) const override;
    void check_bytes(const std::string& file);
    /// The bytes a piece stands for.
    std::string piece_bytes(std::int32_t id) const;

    PieceVocabulary vocab_;
    BpeMerges merges_;
    TokenizerKind kind_ = TokenizerKind::byte_level_bpe;
    bool ignore_merges_ = false;
    std::array<std::int32_t, 256> byte_ids_{};
    std::unordered_map<char32_t, std::uint8_t> unicode_to_byte_;
};

/// GPT-2's files: vocab.json ({"piece": id}) and merges.txt ("a b" per line,
/// after an optional "#version" line); <|endoftext|> is special when present.
std::unique_ptr<PretrainedTokenizer> read_bpe_files(const std::string& vocab_json, const std::string& merges_txt);
/// A tokenizer.json whose model.type is "BPE": a byte-level BPE (its pre-tokenizer ends with
/// ByteLevel) or a SentencePiece-style one (no pre-tokenizer: sentencepiece.hpp).
std::unique_ptr<PretrainedTokenizer> read_bpe_tokenizer_json(const JsonValue& root);

}  // namespace attn
