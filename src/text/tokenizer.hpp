#pragma once
// Sentence → tokens. A deliberately simple, documented word tokenizer:
//  - runs of letters and digits of any script form one word (but every CJK
//    ideograph is a word of its own, as in BERT's basic tokenizer, and a
//    word ends where hiragana, katakana and other scripts meet); combining marks,
//    variation selectors, emoji modifiers and zero-width-joiner sequences stay
//    with the character before them, so no UTF-8 sequence or emoji is split;
//  - an apostrophe (' or ’) or hyphen (- ‐ ‑) between two letters stays inside
//    the word ("didn't", "well-known");
//  - every other punctuation mark or symbol (emoji included) is a token of its own;
//  - whitespace separates tokens and is dropped.
// Ids come from a fixed hashed vocabulary (FNV-1a of the token's UTF-8 bytes),
// identical on every platform.

#include "base/utf8.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

/// Vocabulary: id 0 is [PAD], id 1 is [UNK] (control characters), ids
/// 2 … kVocabSize-1 are FNV-1a hashes of the token text.
inline constexpr std::int32_t kVocabSize = 32768;
inline constexpr std::int32_t kPadId = 0;
inline constexpr std::int32_t kUnknownId = 1;
inline constexpr const char* kPadText = "[PAD]";
/// Longest sentence accepted, in UTF-8 bytes, checked before any work: it
/// bounds the tokenizer's memory (about 50 bytes per input byte at worst) and
/// holds any 20000-character text of the page (at most 3 bytes per UTF-16 unit).
inline constexpr std::size_t kMaxSentenceBytes = 65536;

struct Token {
    std::string text;    ///< the token's UTF-8 text (lower-cased if asked)
    std::int32_t id;     ///< vocabulary id
    std::size_t start;   ///< byte offset of the first byte in the sentence
    std::size_t end;     ///< byte offset one past the last byte: [start, end)
};

struct TokenizeOptions {
    bool lowercase = false;
    /// When non-zero, more tokens than this are an attn::Error ("the sentence
    /// has N tokens, above the limit of M"); tokens past the limit are counted,
    /// never built.
    std::size_t max_tokens = 0;
};

/// Splits a UTF-8 sentence into tokens. Throws attn::Error naming the problem
/// for a sentence above kMaxSentenceBytes (before looking at it), invalid
/// UTF-8 (kind type, naming the byte offset) and more than options.max_tokens
/// tokens.
std::vector<Token> tokenize(std::string_view sentence, const TokenizeOptions& options = {});

/// The vocabulary id of a token text: FNV-1a 32-bit of its bytes, mod
/// (kVocabSize - 2), plus 2.
std::int32_t token_id(std::string_view text);

/// A padding token placed at byte offset `at` (the sentence's length).
Token pad_token(std::size_t at);

}  // namespace attn
