#include "text/added_tokens.hpp"

#include "text/pretrained_tokenizer.hpp"

#include <algorithm>
#include <numeric>

namespace attn {

namespace {

bool starts_character(std::string_view text, std::size_t at) {
    return at >= text.size() || (static_cast<unsigned char>(text[at]) & 0xC0) != 0x80;
}

}  // namespace

std::vector<AddedToken> read_added_token_list(const JsonValue& root, PieceVocabulary& vocab, const std::string& file) {
    std::vector<AddedToken> tokens;
    const JsonValue* added = root.get("added_tokens");
    if (!added || added->is(JsonValue::Type::null)) return tokens;
    if (!added->is(JsonValue::Type::array)) bad_tokenizer_file(file, "added_tokens is not a list");
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < added->array.size(); ++i) {
        const JsonValue& t = added->array[i];
        const std::string where = "added_tokens[" + std::to_string(i) + "]";
        const JsonValue* content = t.get("content");
        const JsonValue* id = t.get("id");
        if (!content || !content->is(JsonValue::Type::string) || !id || !id->is(JsonValue::Type::number) ||
            !id->is_integer)
            bad_tokenizer_file(file, where + " has no string content and whole id");
        const std::string named = where + " \"" + content->string + "\"";
        // the matching options this engine does not run: refused rather than matched otherwise
        for (const char* option : {"single_word", "lstrip", "rstrip"})
            if (json_flag(t, option, false, named, file))
                bad_tokenizer_file(file, named + ": " + option + " is true, which this engine does not run "
                                                         "(added tokens are matched exactly as written)");
        bytes += content->string.size();
        if (bytes > kMaxAddedTokenBytes)
            bad_tokenizer_file(file, "the added_tokens hold more than " + std::to_string(kMaxAddedTokenBytes) +
                                         " bytes of text (the engine's limit)");
        vocab.add(content->string, id->integer, file);
        AddedToken a;
        a.content = content->string;
        a.id = static_cast<std::int32_t>(id->integer);
        a.special = json_flag(t, "special", false, named, file);
        // the tokenizers library's default: special tokens match the text as written
        a.normalized = json_flag(t, "normalized", !a.special, named, file);
        tokens.push_back(std::move(a));
    }
    return tokens;
}

TokenMatcher::TokenMatcher(const std::vector<std::string>& tokens) {
    if (tokens.empty()) return;
    lengths_.reserve(tokens.size());
    for (const std::string& t : tokens) lengths_.push_back(t.size());
    // 1. the trie of the reversed tokens, built in sorted order so that each new token shares
    //    the path of the previous one up to their common prefix: nodes get their parent and byte
    std::vector<std::string> reversed(tokens.size());
    for (std::size_t i = 0; i < tokens.size(); ++i) reversed[i].assign(tokens[i].rbegin(), tokens[i].rend());
    std::vector<std::int32_t> order(tokens.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) { return reversed[a] < reversed[b]; });
    std::vector<std::int32_t> parent = {-1}, token_at = {-1};
    std::vector<unsigned char> byte = {0};
    std::vector<std::int32_t> path = {0};  // the previous token's nodes, by depth
    const std::string* previous = nullptr;
    for (const std::int32_t t : order) {
        const std::string& r = reversed[static_cast<std::size_t>(t)];
        std::size_t common = 0;
        if (previous)
            while (common < r.size() && common < previous->size() && r[common] == (*previous)[common]) ++common;
        path.resize(common + 1);
        for (std::size_t d = common; d < r.size(); ++d) {
            parent.push_back(path.back());
            byte.push_back(static_cast<unsigned char>(r[d]));
            token_at.push_back(-1);
            path.push_back(static_cast<std::int32_t>(parent.size() - 1));
        }
        // a token listed twice keeps its first index
        std::int32_t& here = token_at[static_cast<std::size_t>(path.back())];
        if (here < 0 || t < here) here = t;
        previous = &r;
    }
    // 2. each node's edges side by side: a counting sort by parent keeps the creation order,
    //    which is by byte within a parent (the tokens were sorted)
    const std::size_t nodes = parent.size();
    first_edge_.assign(nodes + 1, 0);
    for (std::size_t n = 1; n < nodes; ++n) ++first_edge_[static_cast<std::size_t>(parent[n]) + 1];
    for (std::size_t n = 0; n < nodes; ++n) first_edge_[n + 1] += first_edge_[n];
    edge_target_.resize(nodes - 1);
    edge_byte_.resize(nodes - 1);
    std::vector<std::int32_t> fill(first_edge_.begin(), first_edge_.end() - 1);
    for (std::size_t n = 1; n < nodes; ++n) {
        const auto at = static_cast<std::size_t>(fill[static_cast<std::size_t>(parent[n])]++);
        edge_target_[at] = static_cast<std::int32_t>(n);
        edge_byte_[at] = byte[n];
    }
    // 3. failure links breadth first (a node's link is shallower, so already set), and each
    //    node's longest token: its own, else its link's
    fail_.assign(nodes, 0);
    match_.assign(nodes, -1);
    std::vector<std::int32_t> queue = {0};
    for (std::size_t q = 0; q < queue.size(); ++q) {
        const std::int32_t u = queue[q];
        for (std::int32_t e = first_edge_[static_cast<std::size_t>(u)]; e < first_edge_[static_cast<std::size_t>(u) + 1]; ++e) {
            const std::int32_t v = edge_target_[static_cast<std::size_t>(e)];
            const unsigned char b = edge_byte_[static_cast<std::size_t>(e)];
            std::int32_t link = 0;
            if (u != 0) {
                std::int32_t f = fail_[static_cast<std::size_t>(u)];
                while (f != 0 && child(f, b) < 0) f = fail_[static_cast<std::size_t>(f)];
                link = std::max(child(f, b), 0);
            }
            fail_[static_cast<std::size_t>(v)] = link;
            const std::int32_t own = token_at[static_cast<std::size_t>(v)];
            match_[static_cast<std::size_t>(v)] = own >= 0 ? own : match_[static_cast<std::size_t>(link)];
            queue.push_back(v);
        }
    }
}

std::int32_t TokenMatcher::child(std::int32_t node, unsigned char b) const {
    const auto first = edge_byte_.begin() + first_edge_[static_cast<std::size_t>(node)];
    const auto last = edge_byte_.begin() + first_edge_[static_cast<std::size_t>(node) + 1];
    const auto it = std::lower_bound(first, last, b);
    return it != last && *it == b ? edge_target_[static_cast<std::size_t>(it - edge_byte_.begin())] : -1;
}

std::vector<TextSegment> TokenMatcher::split(std::string_view text, std::uint64_t& steps) const {
    std::vector<TextSegment> out;
    if (empty()) {
        if (!text.empty()) out.push_back({0, text.size(), -1});
        return out;
    }
    // pass 1, from the end: the longest token starting at each byte (the automaton has read
    // the text after it, reversed, so its state's longest token suffix is that token)
    std::vector<std::int32_t> longest(text.size(), -1);
    std::int32_t state = 0;
    for (std::size_t i = text.size(); i-- > 0;) {
        const auto b = static_cast<unsigned char>(text[i]);
        std::int32_t next;
        while ((next = child(state, b)) < 0 && state != 0) {
            state = fail_[static_cast<std::size_t>(state)];
            ++steps;
        }
        state = std::max(next, 0);
        ++steps;
        longest[i] = match_[static_cast<std::size_t>(state)];
    }
    // pass 2, from the start: the leftmost match, then on after it
    std::size_t plain = 0;
    for (std::size_t at = 0; at < text.size();) {
        const std::int32_t t = longest[at];
        const std::size_t end = t < 0 ? at : at + lengths_[static_cast<std::size_t>(t)];
        if (t < 0 || !starts_character(text, at) || !starts_character(text, end)) {
            ++at;
            continue;
        }
        if (at > plain) out.push_back({plain, at, -1});
        out.push_back({at, end, t});
        at = plain = end;
    }
    if (plain < text.size()) out.push_back({plain, text.size(), -1});
    return out;
}

}  // namespace attn
