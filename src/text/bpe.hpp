#pragma once
// GPT-2's byte-level BPE (openai's encoder.py, transformers' GPT2Tokenizer):
//  1. the text is split on the special tokens (<|endoftext|>), which become
//     their ids; between them,
//  2. the pre-tokenizer splits it into pieces by the pattern
//       's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//     (written out by hand in pre_tokenize; \s is Unicode White_Space, as in
//     Python's `regex`);
//  3. each piece's UTF-8 bytes become printable characters (byte_to_unicode:
//     space → Ġ) and are merged pair by pair, the pair of lowest merge rank first
//     (leftmost first among equals), until no pair of the merge list is left.

#include "text/pretrained_tokenizer.hpp"

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

/// The pre-tokenizer's pieces of a valid UTF-8 text, as byte ranges [begin, end).
std::vector<std::pair<std::size_t, std::size_t>> pre_tokenize(const std::string& text);

/// The readable form of a token's bytes: UTF-8 decoded, a leading space shown
/// as "␣", tab/newline/return as \t \n \r, other control bytes and bytes that
/// are not a whole UTF-8 character as \xHH.
std::string display_bytes(const std::string& bytes);

class BpeTokenizer : public PretrainedTokenizer {
public:
    /// `vocab`: every piece (in the byte alphabet), with the 256 single bytes;
    /// `merges`: pairs in rank order (the first is rank 0), each piece and
    /// their join in the vocabulary; `specials`: tokens matched in the text as
    /// they are (in the vocabulary). Errors name `merges_file` (bad_checkpoint).
    BpeTokenizer(PieceVocabulary vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                 std::vector<std::string> specials, const std::string& vocab_file, const std::string& merges_file);

    std::vector<PretrainedToken> encode(const std::string& text) const override;
    std::string decode(const std::vector<std::int32_t>& ids) const override;
    std::int32_t vocab_size() const override { return vocab_.size(); }
    std::string piece(std::int32_t id) const override { return vocab_.piece(id); }
    TokenizerKind kind() const override { return TokenizerKind::byte_level_bpe; }
    std::string display(const std::string& bytes) const override { return display_bytes(bytes); }

    /// The ids of one pre-tokenized piece's bytes after all merges.
    std::vector<std::int32_t> merge(const std::string& bytes) const;

private:
    struct Merge {
        std::int32_t rank, id;
    };
    static std::uint64_t pair_key(std::int32_t a, std::int32_t b) {
        return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
    }
    /// The bytes a piece stands for.
    std::string piece_bytes(std::int32_t id) const;

    PieceVocabulary vocab_;
    std::unordered_map<std::uint64_t, Merge> merges_;
    std::vector<std::string> specials_;
    std::vector<std::int32_t> special_ids_;
    std::array<std::int32_t, 256> byte_ids_{};
    std::unordered_map<char32_t, std::uint8_t> unicode_to_byte_;
};

/// GPT-2's files: vocab.json ({"piece": id}) and merges.txt ("a b" per line,
/// after an optional "#version" line); <|endoftext|> is special when present.
std::unique_ptr<PretrainedTokenizer> read_bpe_files(const std::string& vocab_json, const std::string& merges_txt);
/// A tokenizer.json whose model.type is "BPE" (merges as "a b" or ["a", "b"]).
std::unique_ptr<PretrainedTokenizer> read_bpe_tokenizer_json(const JsonValue& root);

}  // namespace attn
