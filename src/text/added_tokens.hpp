#pragma once
// Added and special tokens (<|endoftext|>, <s>, [CLS], a tokenizer.json's added_tokens):
// found in a text as they are written, before the tokenizer's own splitting, the way the
// Hugging Face tokenizers library finds them (the leftmost match first, the longest one at
// that position). A hostile file may list 100,000 of them: TokenMatcher finds them in time
// linear in the text (an Aho–Corasick automaton), not tokens × bytes.

#include "base/json_value.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

class PieceVocabulary;

/// One entry of a tokenizer.json's added_tokens.
struct AddedToken {
    std::string content;
    std::int32_t id = 0;
    bool special = false;
    /// Matched in the normalized text (after the normalizer) rather than in the text as written.
    bool normalized = false;
};

/// The added_tokens of a tokenizer.json, each put into the vocabulary (its id and content).
/// Refuses (bad_checkpoint, naming `file` and the token) what this engine does not do:
/// single_word, lstrip, rstrip; and more than kMaxAddedTokenBytes of token text.
std::vector<AddedToken> read_added_token_list(const JsonValue& root, PieceVocabulary& vocab, const std::string& file);

/// The added tokens' text this engine reads at most (their automaton takes ~25 bytes per byte
/// of it). The Hub's largest lists are tens of kilobytes (Llama 3's 256 tokens: 7 KB).
inline constexpr std::size_t kMaxAddedTokenBytes = 4u << 20;

/// A range [begin, end) of a text: one of the tokens (its index into the matcher's list), or
/// the text between them (token = -1).
struct TextSegment {
    std::size_t begin, end;
    std::int32_t special;  ///< index into the matcher's tokens, or -1
};

/// Finds a fixed list of tokens in texts: at the leftmost position where one starts, the
/// longest; then on after it (leftmost-longest, as the tokenizers library's Aho–Corasick).
/// The automaton is built over the reversed tokens and run from the text's end, so that the
/// state at a byte names the longest token starting there: O(text) steps, whatever the list.
class TokenMatcher {
public:
    TokenMatcher() = default;
    /// `tokens`: non-empty byte strings; split() reports their indices. A token listed twice
    /// is reported by its first index.
    explicit TokenMatcher(const std::vector<std::string>& tokens);

    bool empty() const { return lengths_.empty(); }
    /// The segments of `text`, in order, covering it: the tokens found and the text between.
    /// A match must start and end on UTF-8 character boundaries. `steps` is increased by the
    /// automaton's moves (at most 2 per byte of text: a structural bound for tests).
    std::vector<TextSegment> split(std::string_view text, std::uint64_t& steps) const;

private:
    /// The node reached from `node` by `byte`, or -1.
    std::int32_t child(std::int32_t node, unsigned char byte) const;

    // node n's edges are [first_edge_[n], first_edge_[n + 1]), sorted by byte
    std::vector<std::int32_t> first_edge_, edge_target_;
    std::vector<unsigned char> edge_byte_;
    std::vector<std::int32_t> fail_;   ///< node → the node of its longest proper suffix
    std::vector<std::int32_t> match_;  ///< node → the longest token that is a suffix of it, or -1
    std::vector<std::size_t> lengths_;  ///< token → its length in bytes
};

}  // namespace attn
