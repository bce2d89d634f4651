// Tests of src/text/continuation.hpp (a text whose end a model wrote) on a small
// byte-level BPE written here: a character split over several generated tokens
// is one character of the text, each of those tokens spans it, and the text
// without the last token is what the ids before it decode to (issue #36, 9:
// GPT-2 writes 🐈 as three tokens; decoded one by one they were three U+FFFD
// and their offsets ran past the text). Offsets worked out by hand, then
// properties over random byte sequences.

#include "text/continuation.hpp"
#include "families/family.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

namespace {

std::string utf8(char32_t c) {
    std::string s;
    if (c < 0x80) s += static_cast<char>(c);
    else s += {static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
    return s;
}

// GPT-2's byte alphabet by its rule (printable bytes stand for themselves, the others U+0100 + n).
std::string piece_of(const std::string& bytes) {
    static std::vector<std::string> table;
    if (table.empty()) {
        int n = 0;
        for (int x = 0; x < 256; ++x) {
            const bool printable = (x >= 33 && x <= 126) || (x >= 161 && x <= 172) || x >= 174;
            table.push_back(utf8(printable ? static_cast<char32_t>(x) : static_cast<char32_t>(256 + n++)));
        }
    }
    std::string s;
    for (unsigned char b : bytes) s += table[b];
    return s;
}

// The 256 bytes (id = the byte) and one merge, " " + 0xF0 (id 256): the start of " 🐈" as GPT-2 splits it.
std::unique_ptr<attn::PretrainedTokenizer> byte_tokenizer() {
    std::string vocab = "{";
    const auto put = [&](const std::string& piece, int id) {
        std::string quoted;
        for (char c : piece) quoted += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
        vocab += (id ? ", \"" : "\"") + quoted + "\": " + std::to_string(id);
    };
    for (int b = 0; b < 256; ++b) put(piece_of(std::string(1, static_cast<char>(b))), b);
    put(piece_of(" \xF0"), 256);
    vocab += "}";
    return attn::read_family_tokenizer("gpt2", "", vocab, "#version: 0.2\n" + piece_of(" ") + " " + piece_of("\xF0") + "\n", "", "");
}

struct Span {
    std::int32_t begin, end;
    bool operator==(const Span& o) const { return begin == o.begin && end == o.end; }
};

std::vector<Span> generated_spans(const attn::Continuation& c) {
    std::vector<Span> out;
    for (std::size_t i = c.tokens.size() - static_cast<std::size_t>(c.used); i < c.tokens.size(); ++i) out.push_back({c.tokens[i].begin, c.tokens[i].end});
    return out;
}

const std::string kCat = "\xF0\x9F\x90\x88";  // 🐈
const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

namespace Catch {
template <>
struct StringMaker<Span> {
    static std::string convert(const Span& s) { return "[" + std::to_string(s.begin) + ", " + std::to_string(s.end) + ")"; }
};
}  // namespace Catch

TEST_CASE("continuation: a character written by several tokens is one character of the text, and each token spans it") {
    const auto tok = byte_tokenizer();
    const std::vector<std::int32_t> gen = {256, 0x9F, 0x90, 0x88};  // " \xF0", then the cat's last three bytes
    const std::string text = "Hi " + kCat;                              // 7 bytes
    const attn::Continuation c = attn::continue_text(*tok, text, gen);
    CHECK(c.used == 4);
    CHECK(c.prompt == "Hi");
    REQUIRE(c.tokens.size() == 2 + 4);  // "H", "i", then the four generated
    // the first starts at its space and ends with the cat; the others are inside the cat: all of it
    CHECK(generated_spans(c) == std::vector<Span>{{2, 7}, {3, 7}, {3, 7}, {3, 7}});
    // without the last token: the cat's first three bytes, each U+FFFD, as decode gives them
    CHECK(c.before_last == "Hi " + kReplacement + kReplacement + kReplacement);
}

TEST_CASE("continuation: while the character is incomplete, each of its bytes is a U+FFFD of the text, one per token") {
    const auto tok = byte_tokenizer();
    // after two of the four tokens the sentence is "Hi " + two U+FFFD (what "Next token" wrote then)
    const std::string text = "Hi " + kReplacement + kReplacement;
    const attn::Continuation c = attn::continue_text(*tok, text, {256, 0x9F});
    CHECK(c.used == 2);
    CHECK(generated_spans(c) == std::vector<Span>{{2, 6}, {6, 9}});
    CHECK(c.before_last == "Hi " + kReplacement);
    // the undo of that one: one token left
    const attn::Continuation back = attn::continue_text(*tok, c.before_last, {256});
    CHECK(back.used == 1);
    CHECK(generated_spans(back) == std::vector<Span>{{2, 6}});
    CHECK(back.before_last == "Hi");
}

TEST_CASE("continuation: whole-character tokens follow one another, and an edited text is all prompt") {
    const auto tok = byte_tokenizer();
    const attn::Continuation c = attn::continue_text(*tok, "Hi there", {' ', 't', 'h', 'e', 'r', 'e'});
    CHECK(c.used == 6);
    CHECK(c.prompt == "Hi");
    CHECK(generated_spans(c) == std::vector<Span>{{2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}});
    CHECK(c.before_last == "Hi ther");
    const attn::Continuation edited = attn::continue_text(*tok, "Hi there!", {' ', 't'});
    CHECK(edited.used == 0);
    CHECK(edited.prompt == "Hi there!");
    CHECK(edited.before_last == "Hi there!");
    CHECK(edited.tokens.size() == tok->encode("Hi there!").size());
}

TEST_CASE("continuation: for random bytes split into tokens, the offsets are character boundaries of the text, in order, covering its end") {
    const auto tok = byte_tokenizer();
    std::mt19937 rng(36);
    const std::vector<std::string> alphabet = {"a", " ", "\xC3\xA9", "\xE2\x82\xAC", kCat, "\x80", "\xF0\x9F", "\xE2"};
    for (int trial = 0; trial < 300; ++trial) {
        std::string bytes;
        const int n = 1 + static_cast<int>(rng() % 12);
        for (int i = 0; i < n; ++i) bytes += alphabet[rng() % alphabet.size()];
        std::vector<std::int32_t> gen;
        for (unsigned char b : bytes) gen.push_back(b);
        const std::string text = "ok" + tok->decode(gen);
        const attn::Continuation c = attn::continue_text(*tok, text, gen);
        INFO("trial " << trial << ", " << gen.size() << " ids");
        REQUIRE(c.used == static_cast<int>(gen.size()));
        const auto boundary = [&](std::int32_t at) {
            return at == static_cast<std::int32_t>(text.size()) || (static_cast<unsigned char>(text[static_cast<std::size_t>(at)]) & 0xC0) != 0x80;
        };
        const std::vector<Span> spans = generated_spans(c);
        CHECK(spans.front().begin == 2);
        CHECK(spans.back().end == static_cast<std::int32_t>(text.size()));
        for (std::size_t i = 0; i < spans.size(); ++i) {
            CHECK(spans[i].begin <= spans[i].end);
            CHECK(boundary(spans[i].begin));
            CHECK(boundary(spans[i].end));
            if (i) {
                CHECK(spans[i].begin >= spans[i - 1].begin);
                CHECK(spans[i].end >= spans[i - 1].end);
                CHECK(spans[i].begin <= spans[i - 1].end);  // no gap
            }
        }
        CHECK(c.before_last == "ok" + tok->decode(std::vector<std::int32_t>(gen.begin(), gen.end() - 1)));
    }
}
