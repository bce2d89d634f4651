#include "text/continuation.hpp"

#include <algorithm>

namespace attn {

namespace {

bool continuation_byte(char c) {
    return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

/// Bytes of the character of the valid UTF-8 `s` that starts at `at`.
std::size_t char_length(const std::string& s, std::size_t at) {
    std::size_t n = 1;
    while (at + n < s.size() && continuation_byte(s[at + n])) ++n;
    return n;
}

std::vector<std::int32_t> ids_of(const std::vector<std::int32_t>& ids, std::size_t first, std::size_t last) {
    return std::vector<std::int32_t>(ids.begin() + static_cast<std::ptrdiff_t>(first), ids.begin() + static_cast<std::ptrdiff_t>(last));
}

}  // namespace

Continuation continue_text(const PretrainedTokenizer& tokenizer, const std::string& text,
                           const std::vector<std::int32_t>& generated) {
    Continuation c;
    c.prompt = text;
    c.before_last = text;
    std::string tail;  // decode(generated): what the text ends with when the ids wrote it
    if (!generated.empty()) {
        tail = tokenizer.decode(generated);
        if (tail.size() <= text.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0) {
            c.prompt = text.substr(0, text.size() - tail.size());
            c.used = static_cast<int>(generated.size());
        }
    }
    c.tokens = tokenizer.encode(c.prompt);
    if (c.used == 0) return c;
    const std::size_t base = c.prompt.size();
    // The ids in groups that end at a character boundary of the tail (a group decoded alone is
    // the tail's next bytes; most groups are one id, a character split over ids makes a longer
    // one). Inside a group, the decode of its ids up to j either is the tail's next bytes (id j
    // ends at a boundary) or differs where a character is still incomplete (its bytes decode to
    // U+FFFD there): id j then spans that character, and the next id starts with it.
    std::size_t group_at = 0;  // where the group starts in the tail
    std::size_t first = 0;     // the group's first id
    for (std::size_t i = 0; i < generated.size(); ++i) {
        const std::string decoded = tokenizer.decode(ids_of(generated, first, i + 1));
        const bool boundary = tail.compare(group_at, decoded.size(), decoded) == 0;
        if (!boundary && i + 1 < generated.size()) continue;
        std::size_t start = group_at;
        for (std::size_t j = first; j <= i; ++j) {
            const std::string part = j == i ? decoded : tokenizer.decode(ids_of(generated, first, j + 1));
            std::size_t end = group_at + part.size();
            std::size_t next = end;
            if (tail.compare(group_at, part.size(), part) != 0) {
                // the first byte where they differ, back to the start of the tail's character there
                std::size_t k = group_at;
                while (k - group_at < part.size() && k < tail.size() && part[k - group_at] == tail[k]) ++k;
                while (k > group_at && k < tail.size() && continuation_byte(tail[k])) --k;
                next = k;
                end = k < tail.size() ? k + char_length(tail, k) : k;
            }
            const std::int32_t id = generated[j];
            c.tokens.push_back(PretrainedToken{id, tokenizer.piece(id), tokenizer.display(tokenizer.decode({id})),
                                               static_cast<std::int32_t>(base + std::min(start, end)),
                                               static_cast<std::int32_t>(base + end)});
            start = next;
        }
        group_at += decoded.size();
        first = i + 1;
    }
    c.before_last = c.prompt + tokenizer.decode(ids_of(generated, 0, generated.size() - 1));
    return c;
}

}  // namespace attn
