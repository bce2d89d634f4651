// Tests of src/text/added_tokens.hpp: the matcher finds what a slow obvious reference
// finds (at each position from the left, the longest token there) on random texts and
// token lists, stays within 2 automaton moves per byte of text whatever the list (100,000
// tokens on a 30 KB text: issue #36 item 3), and added_tokens settings it cannot honour are
// refused by name.

#include "text/added_tokens.hpp"
#include "text/pretrained_tokenizer.hpp"
#include "base/json_value.hpp"
#include "base/types.hpp"
#include "matchers.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

using testing::code_of;
using testing::message_of;

namespace {

// The reference: at each byte from the left, the longest token that starts there (the
// first listed among equals); else one byte on.
std::vector<attn::TextSegment> reference_split(const std::string& text, const std::vector<std::string>& tokens) {
    std::vector<attn::TextSegment> out;
    std::size_t plain = 0;
    for (std::size_t at = 0; at < text.size();) {
        std::int32_t best = -1;
        for (std::size_t t = 0; t < tokens.size(); ++t)
            if (text.compare(at, tokens[t].size(), tokens[t]) == 0 &&
                (best < 0 || tokens[t].size() > tokens[static_cast<std::size_t>(best)].size()))
                best = static_cast<std::int32_t>(t);
        if (best < 0) {
            ++at;
            continue;
        }
        if (at > plain) out.push_back({plain, at, -1});
        const std::size_t end = at + tokens[static_cast<std::size_t>(best)].size();
        out.push_back({at, end, best});
        at = plain = end;
    }
    if (plain < text.size()) out.push_back({plain, text.size(), -1});
    return out;
}

bool same(const std::vector<attn::TextSegment>& a, const std::vector<attn::TextSegment>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].begin != b[i].begin || a[i].end != b[i].end || a[i].special != b[i].special) return false;
    return true;
}

std::string random_word(std::mt19937& rng, int max_len, const char* alphabet) {
    const std::size_t n = std::char_traits<char>::length(alphabet);
    std::string s;
    for (int k = 1 + static_cast<int>(rng() % static_cast<unsigned>(max_len)); k > 0; --k) s += alphabet[rng() % n];
    return s;
}

}  // namespace

TEST_CASE("added tokens: the matcher finds the leftmost, then longest, token as the reference does, on random texts") {
    std::mt19937 rng(37);
    for (int trial = 0; trial < 400; ++trial) {
        std::vector<std::string> tokens;
        for (int k = 1 + static_cast<int>(rng() % 8); k > 0; --k) tokens.push_back(random_word(rng, 5, "abc"));
        const std::string text = random_word(rng, 60, "abcd");
        const attn::TokenMatcher matcher(tokens);
        std::uint64_t steps = 0;
        const auto got = matcher.split(text, steps);
        INFO("text " << text << ", " << tokens.size() << " tokens, first " << tokens[0]);
        REQUIRE(same(got, reference_split(text, tokens)));
        CHECK(steps <= 2 * text.size());
    }
}

TEST_CASE("added tokens: a token listed twice is found by its first index, and no match cuts a UTF-8 character") {
    std::uint64_t steps = 0;
    const attn::TokenMatcher twice({"<s>", "ab", "<s>"});
    const auto segments = twice.split("x<s>ab", steps);
    REQUIRE(segments.size() == 3);
    CHECK(segments[1].special == 0);
    CHECK(segments[2].special == 1);
    // "\xA9" is the last byte of é (C3 A9): it is never a token inside the character
    const attn::TokenMatcher inside({"\xA9" "b"});
    const auto whole = inside.split("\xC3\xA9" "b", steps);
    REQUIRE(whole.size() == 1);
    CHECK(whole[0].special == -1);
    CHECK(attn::TokenMatcher().split("abc", steps).size() == 1);
    CHECK(attn::TokenMatcher().split("", steps).empty());
}

TEST_CASE("added tokens: 100,000 tokens on a 30 KB text take at most 2 automaton moves per byte (issue #36)") {
    // the hostile file of the issue: many tokens that share prefixes with the text everywhere
    std::vector<std::string> tokens;
    for (int i = 0; i < 100000; ++i) tokens.push_back("<tok" + std::to_string(i) + ">");
    const attn::TokenMatcher matcher(tokens);
    std::string text;
    std::vector<std::size_t> placed;
    while (text.size() < 30000) {
        text += "<tok words <to <tok1 ";
        placed.push_back(text.size());
        text += "<tok" + std::to_string(text.size() * 7 % 100000) + ">";
    }
    std::uint64_t steps = 0;
    const auto segments = matcher.split(text, steps);
    CHECK(steps <= 2 * text.size());
    std::vector<std::size_t> found;
    for (const auto& s : segments)
        if (s.special >= 0) {
            found.push_back(s.begin);
            CHECK(text.substr(s.begin, s.end - s.begin) == tokens[static_cast<std::size_t>(s.special)]);
        }
    CHECK(found == placed);
}

TEST_CASE("added tokens: settings the engine does not run are refused by name, and the text they may hold is bounded") {
    const auto read = [](const std::string& json) {
        attn::PieceVocabulary vocab;
        vocab.add("a", 0, "tokenizer.json");
        return attn::read_added_token_list(attn::parse_json(json), vocab, "tokenizer.json");
    };
    const auto tokens = read(R"({"added_tokens": [{"id": 1, "content": "<s>", "special": true},
        {"id": 2, "content": "<think>", "special": false, "normalized": false}, {"id": 3, "content": "hey"}]})");
    REQUIRE(tokens.size() == 3);
    CHECK((tokens[0].special && !tokens[0].normalized));
    CHECK((!tokens[1].special && !tokens[1].normalized));
    CHECK((!tokens[2].special && tokens[2].normalized));  // the library's default for a non-special token
    for (const char* option : {"lstrip", "rstrip", "single_word"}) {
        const std::string json = std::string(R"({"added_tokens": [{"id": 1, "content": "<mask>", ")") + option + "\": true}]}";
        INFO(option);
        CHECK(code_of([&] { read(json); }) == attn::Error::Code::bad_checkpoint);
        CHECK_THAT(message_of([&] { read(json); }),
                   Catch::Matchers::Contains(std::string("added_tokens[0] \"<mask>\": ") + option + " is true"));
    }
    CHECK_THAT(message_of([&] { read(R"({"added_tokens": [{"id": 1, "content": "x", "special": 1}]})"); }),
               Catch::Matchers::Contains("special is not true or false"));
    std::string big = R"({"added_tokens": [)";
    const std::string long_token(1 << 20, 'x');
    for (int i = 0; i < 5; ++i) big += (i ? ", " : "") + std::string(R"({"id": )") + std::to_string(i + 1) + R"(, "content": ")" + long_token + std::to_string(i) + "\"}";
    big += "]}";
    CHECK_THAT(message_of([&] { read(big); }), Catch::Matchers::Contains("the added_tokens hold more than 4194304 bytes"));
}
