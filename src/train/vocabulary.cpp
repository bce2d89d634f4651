// Vocabulary: token strings <-> ids (tasks.hpp), and the tokenizer over a long
// text in bounded pieces that the text task also reads its corpus with.

#include "train/task_base.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

namespace attn {

// ---- vocabulary -------------------------------------------------------------------

Vocabulary::Vocabulary(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
    if (tokens_.empty() || tokens_[0] != kPadText)
        throw Error(std::string("vocabulary: token 0 must be \"") + kPadText + "\"");
    for (std::size_t i = 0; i < tokens_.size(); ++i)
        if (!index_.emplace(tokens_[i], static_cast<int>(i)).second)
            throw Error("vocabulary: duplicate token '" + tokens_[i] + "'");
}

const std::string& Vocabulary::text(int id) const {
    if (id < 0 || id >= size())
        throw Error("vocabulary: id " + std::to_string(id) + " is out of range 0.." + std::to_string(size() - 1));
    return tokens_[static_cast<std::size_t>(id)];
}

int Vocabulary::find(const std::string& text) const {
    const auto it = index_.find(text);
    return it == index_.end() ? -1 : it->second;
}

namespace task_detail {

/// A long text tokenized in pieces of at most kMaxSentenceBytes, each cut after
/// an ASCII whitespace byte (never inside a word or a UTF-8 sequence; a piece
/// without any whitespace is cut at a code-point boundary), so the tokenizer's
/// working memory is bounded by a piece, not by the corpus. Offsets are the
/// text's.
std::vector<Token> tokenize_long(const std::string& text, const TokenizeOptions& options) {
    std::vector<Token> out;
    const auto space = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; };
    std::size_t i = 0;
    while (i < text.size()) {
        std::size_t end = std::min(text.size(), i + kMaxSentenceBytes);
        if (end < text.size()) {
            std::size_t cut = end;
            while (cut > i && !space(text[cut - 1])) --cut;
            if (cut == i) {
                cut = end;
                while (cut > i && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
            }
            end = cut;
        }
        std::vector<Token> piece;
        try {
            piece = tokenize(std::string_view(text).substr(i, end - i), options);
        } catch (const Error& e) {
            throw Error("(in the part starting at byte " + std::to_string(i) + ") " + e.what(), e.kind());
        }
        for (Token& t : piece) {
            t.start += i;
            t.end += i;
            out.push_back(std::move(t));
        }
        i = end;
    }
    return out;
}

}  // namespace task_detail

std::vector<std::int32_t> Vocabulary::encode(const std::string& text) const {
    TokenizeOptions options;
    options.lowercase = true;
    const int unknown = find("[UNK]");
    std::vector<std::int32_t> ids;
    for (const Token& token : task_detail::tokenize_long(text, options)) {
        int id = find(token.text);
        if (id < 0) {
            if (unknown < 0) throw Error("vocabulary: the token '" + token.text + "' is not in the vocabulary");
            id = unknown;
        }
        ids.push_back(id);
    }
    return ids;
}

}  // namespace attn
