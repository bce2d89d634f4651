// Tests of src/text/bpe.hpp on small vocabularies written here: the byte
// alphabet, the pre-tokenizer's pattern (cases worked out by hand from the
// regular expression), merges by rank against a slow obvious reference, special
// tokens, offsets, display text, decode, and every kind of bad file and text.
// The real GPT-2 vocabulary is tested in tests/js/pretrained-tokenizer.test.mjs.

#include "text/bpe.hpp"
#include "text/tokenizer.hpp"
#include "checkpoints/pretrained.hpp"
#include "families/family.hpp"
#include "base/types.hpp"
#include "matchers.hpp"

#include "bpe_reference.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

using testing::code_of;
using testing::message_of;

namespace {

std::string utf8(char32_t c) {
    std::string s;
    if (c < 0x80) s += static_cast<char>(c);
    else if (c < 0x800) s += {static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
    else s += {static_cast<char>(0xE0 | (c >> 12)), static_cast<char>(0x80 | ((c >> 6) & 0x3F)), static_cast<char>(0x80 | (c & 0x3F))};
    return s;
}

// The byte alphabet by its rule, written separately from bpe.cpp's.
std::string byte_piece(unsigned char b) {
    static std::vector<std::string> table;
    if (table.empty()) {
        int n = 0;
        for (int x = 0; x < 256; ++x) {
            const bool printable = (x >= 33 && x <= 126) || (x >= 161 && x <= 172) || x >= 174;
            table.push_back(utf8(printable ? static_cast<char32_t>(x) : static_cast<char32_t>(256 + n++)));
        }
    }
    return table[b];
}
std::string pieces_of(const std::string& bytes) {
    std::string s;
    for (unsigned char b : bytes) s += byte_piece(b);
    return s;
}

// vocab.json of the 256 bytes plus `extra` pieces (ids 256, 257, …)
std::string vocab_json(const std::vector<std::string>& extra) {
    std::string out = "{";
    int id = 0;
    const auto put = [&](const std::string& piece) {
        std::string quoted = "\"";
        for (char c : piece) quoted += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
        if (id) out += ", ";
        out += quoted + "\": " + std::to_string(id);
        ++id;
    };
    for (int b = 0; b < 256; ++b) put(byte_piece(static_cast<unsigned char>(b)));
    for (const std::string& p : extra) put(p);
    return out + "}";
}

// A small BPE: merges (as byte text pairs) in rank order, their joins in the vocabulary.
std::unique_ptr<attn::PretrainedTokenizer> small_bpe(const std::vector<std::pair<std::string, std::string>>& merges,
                                                     const std::vector<std::string>& more = {}) {
    std::vector<std::string> extra;
    std::string txt = "#version: 0.2\n";
    for (const auto& [a, b] : merges) {
        for (const std::string& p : {a, b, a + b})
            if (p.size() > 1) extra.push_back(pieces_of(p));
        txt += pieces_of(a) + " " + pieces_of(b) + "\n";
    }
    for (const std::string& m : more) extra.push_back(m);
    std::set<std::string> seen;
    std::vector<std::string> unique;
    for (const std::string& e : extra)
        if (seen.insert(e).second) unique.push_back(e);
    return attn::read_family_tokenizer("gpt2", "", vocab_json(unique), txt, "", "");
}

std::vector<std::string> pieces(const std::vector<attn::PretrainedToken>& tokens) {
    std::vector<std::string> out;
    for (const auto& t : tokens) out.push_back(t.text);
    return out;
}

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> out;
    for (const auto& [b, e] : attn::pre_tokenize(text)) out.push_back(text.substr(b, e - b));
    return out;
}

/// The reference merge loop (bpe_reference.hpp) on a word's bytes.
std::vector<std::string> reference_bpe(const std::string& bytes, const std::vector<std::pair<std::string, std::string>>& merges) {
    std::vector<std::string> word;
    for (char c : bytes) word.push_back(std::string(1, c));
    return testing::reference_bpe(word, merges);
}

}  // namespace

TEST_CASE("bpe: the byte alphabet maps printable bytes to themselves and the other 68 to U+0100 + n in order") {
    CHECK(attn::byte_to_unicode(' ') == 0x120);   // Ġ
    CHECK(attn::byte_to_unicode('\n') == 0x10A);  // Ċ
    CHECK(attn::byte_to_unicode(0) == 0x100);
    CHECK(attn::byte_to_unicode('!') == '!');
    CHECK(attn::byte_to_unicode('~') == '~');
    CHECK(attn::byte_to_unicode(127) == 0x121);   // after the 33 bytes 0 … 32
    CHECK(attn::byte_to_unicode(160) == 0x142);
    CHECK(attn::byte_to_unicode(173) == 0x143);   // the soft hyphen, the 68th
    CHECK(attn::byte_to_unicode(174) == 174);
    std::set<char32_t> all;
    for (int b = 0; b < 256; ++b) all.insert(attn::byte_to_unicode(static_cast<std::uint8_t>(b)));
    CHECK(all.size() == 256);
}

TEST_CASE("bpe: the pre-tokenizer splits as GPT-2's pattern does (cases worked out by hand)") {
    using V = std::vector<std::string>;
    CHECK(split("Hello world") == V{"Hello", " world"});
    CHECK(split("a  b") == V{"a", " ", " b"});             // \s+(?!\S) leaves the last space to " b"
    CHECK(split("a   b") == V{"a", "  ", " b"});
    CHECK(split("x\n\ny") == V{"x", "\n", "\n", "y"});       // the last newline is no optional space: \s+
    CHECK(split("  end  ") == V{" ", " end", "  "});        // whitespace at the end stays whole
    CHECK(split("don't") == V{"don", "'t"});
    CHECK(split("we'll they've I'm you're he'd it's") ==
          V{"we", "'ll", " they", "'ve", " I", "'m", " you", "'re", " he", "'d", " it", "'s"});
    CHECK(split("it'S 'sun") == V{"it", "'", "S", " '", "sun"});  // contractions are lower case; " '" is punctuation
    CHECK(split("''s") == V{"''", "s"});                    // a punctuation run takes both apostrophes
    CHECK(split("12ab 3.5") == V{"12", "ab", " 3", ".", "5"});
    CHECK(split(" !!x") == V{" !!", "x"});
    CHECK(split("a\xC2\xA0" "b") == V{"a", "\xC2\xA0", "b"});  // NBSP is whitespace, not an optional space
    CHECK(split("\xC3\xA9t\xC3\xA9 \xE2\x85\xA0") == V{"\xC3\xA9t\xC3\xA9", " \xE2\x85\xA0"});  // été Ⅰ (Nl)
    CHECK(split("\xF0\x9F\x98\x80 ok") == V{"\xF0\x9F\x98\x80", " ok"});  // 😀 is other
    CHECK(split("").empty());
    CHECK(split(" ") == V{" "});
    CHECK(split("a ") == V{"a", " "});
}

TEST_CASE("bpe: merges apply lowest rank first, as the reference loop does, over random words") {
    const std::vector<std::pair<std::string, std::string>> merges = {
        {"a", "b"}, {"b", "a"}, {"ab", "a"}, {"a", "a"}, {"aa", "b"}, {"c", "ab"}, {"aba", "b"}, {"b", "b"},
        {"bb", "c"}, {"ca", "b"}, {"aa", "aa"}, {"c", "c"},
    };
    const auto tok = small_bpe(merges);
    auto* bpe = dynamic_cast<attn::BpeTokenizer*>(tok.get());
    REQUIRE(bpe != nullptr);
    std::mt19937 rng(7);
    for (int trial = 0; trial < 500; ++trial) {
        std::string word;
        const int n = 1 + static_cast<int>(rng() % 14);
        for (int i = 0; i < n; ++i) word += "abc"[rng() % 3];
        std::vector<std::string> got;
        for (std::int32_t id : bpe->merge(word)) got.push_back(tok->piece(id));
        std::vector<std::string> want;
        for (const std::string& p : reference_bpe(word, merges)) want.push_back(pieces_of(p));
        INFO("word " << word);
        REQUIRE(got == want);
    }
}

TEST_CASE("bpe: encode gives pieces, ids, offsets and display text") {
    const auto tok = small_bpe({{" ", "w"}, {" w", "o"}, {"h", "i"}});
    const auto tokens = tok->encode("hi  wo\xE2\x80\x99");
    REQUIRE(pieces(tokens) == std::vector<std::string>{"hi", pieces_of(" "), pieces_of(" wo"), pieces_of("\xE2"),
                                                        pieces_of("\x80"), pieces_of("\x99")});
    CHECK(tokens[0].display == "hi");
    CHECK(tokens[1].display == "\xE2\x90\xA3");          // ␣
    CHECK(tokens[2].display == "\xE2\x90\xA3wo");
    CHECK(tokens[3].display == "\\xE2");
    CHECK(tokens[5].display == "\\x99");
    CHECK(std::make_pair(tokens[0].begin, tokens[0].end) == std::make_pair(0, 2));
    CHECK(std::make_pair(tokens[2].begin, tokens[2].end) == std::make_pair(3, 6));
    for (int i = 3; i < 6; ++i) CHECK(std::make_pair(tokens[i].begin, tokens[i].end) == std::make_pair(6, 9));
    CHECK(tokens[0].id == tok->encode("hi")[0].id);
    CHECK(tok->decode({tokens[0].id, tokens[2].id}) == "hi wo");
    CHECK(tok->decode({tokens[3].id}) == "\xEF\xBF\xBD");  // a partial character decodes to U+FFFD
    CHECK(attn::display_bytes("\n\t\x01") == "\\n\\t\\x01");
}

TEST_CASE("bpe: decode(encode(text)) is the text, and the tokens' bytes are the text, for random texts") {
    const auto tok = small_bpe({{" ", "t"}, {"t", "h"}, {" t", "h"}, {"e", "r"}, {"\xC3", "\xA9"}});
    const std::vector<std::string> parts = {"the", " ", "  ", "er", "\xC3\xA9", "\n", "'s", "9", "!", "\xE7\x8C\xAB", "\xF0\x9F\x98\x80"};
    std::mt19937 rng(11);
    for (int trial = 0; trial < 300; ++trial) {
        std::string text;
        for (int k = static_cast<int>(rng() % 8); k >= 0; --k) text += parts[rng() % parts.size()];
        const auto tokens = tok->encode(text);
        std::vector<std::int32_t> ids;
        std::int32_t last_end = 0;
        for (const auto& t : tokens) {
            ids.push_back(t.id);
            REQUIRE(t.begin >= 0);
            REQUIRE(t.begin <= last_end);
            REQUIRE(t.end <= static_cast<std::int32_t>(text.size()));
            last_end = std::max(last_end, t.end);
        }
        INFO(text);
        CHECK(last_end == static_cast<std::int32_t>(text.size()));
        CHECK(tok->decode(ids) == text);
    }
}

TEST_CASE("bpe: <|endoftext|> in the text is its own token, between pieces split on their own") {
    const auto tok = small_bpe({{"h", "i"}}, {"<|endoftext|>"});
    const auto tokens = tok->encode("hi <|endoftext|>hi<|endoftext|>");
    REQUIRE(pieces(tokens) == std::vector<std::string>{"hi", pieces_of(" "), "<|endoftext|>", "hi", "<|endoftext|>"});
    CHECK(tokens[2].id == 256 + 1);
    CHECK(std::make_pair(tokens[2].begin, tokens[2].end) == std::make_pair(3, 16));
    CHECK(tokens[2].display == "<|endoftext|>");
    CHECK(tok->decode({tokens[2].id}) == "<|endoftext|>");
    CHECK(tok->mask_id() == -1);
}

TEST_CASE("bpe: tokenizer.json with merges as strings or pairs reads like vocab.json + merges.txt") {
    const std::string v = vocab_json({pieces_of("hi"), pieces_of(" h"), "<|endoftext|>"});
    const std::string strings = "{\"model\": {\"type\": \"BPE\", \"vocab\": " + v +
                                ", \"merges\": [\"h i\", \"" + pieces_of(" ") + " h\"]}, \"added_tokens\": "
                                "[{\"id\": 258, \"content\": \"<|endoftext|>\", \"special\": true}]}";
    const std::string pairs = "{\"model\": {\"type\": \"BPE\", \"vocab\": " + v +
                              ", \"merges\": [[\"h\", \"i\"], [\"" + pieces_of(" ") + "\", \"h\"]]}, \"added_tokens\": "
                              "[{\"id\": 258, \"content\": \"<|endoftext|>\", \"special\": true}]}";
    const std::string merges = "#version: 0.2\nh i\n" + pieces_of(" ") + " h\n";
    const std::string text = "hi hi<|endoftext|> h";
    const auto ids = [&](const std::unique_ptr<attn::PretrainedTokenizer>& tok) {
        std::vector<std::int32_t> out;
        for (const auto& t : tok->encode(text)) out.push_back(t.id);
        return out;
    };
    // "hi" → hi; " hi" → Ġ hi (h i ranks before Ġ h); the special; " h" → Ġh
    const std::vector<std::int32_t> want = {256, ' ', 256, 258, 257};
    CHECK(ids(attn::read_family_tokenizer("gpt2", strings, "", "", "", "")) == want);
    CHECK(ids(attn::read_family_tokenizer("gpt2", pairs, "", "", "", "")) == want);
    CHECK(ids(attn::read_family_tokenizer("", "", vocab_json({pieces_of("hi"), pieces_of(" h"), "<|endoftext|>"}), merges, "", "")) == want);
}

TEST_CASE("bpe: bad files are bad_checkpoint errors naming the file and the problem") {
    using attn::Error;
    const std::string merges = "#version: 0.2\n";
    const auto fails = [](const std::function<void()>& f, const std::string& needle) {
        INFO(needle);
        CHECK(code_of(f) == Error::Code::bad_checkpoint);
        CHECK_THAT(message_of(f), Catch::Matchers::Contains(needle));
    };
    fails([&] { attn::read_family_tokenizer("gpt2", "", "", merges, "", ""); }, "vocab.json: the file is empty or missing");
    fails([&] { attn::read_family_tokenizer("gpt2", "", "{}", merges, "", ""); }, "vocab.json: the vocabulary is empty");
    fails([&] { attn::read_family_tokenizer("gpt2", "", "[1]", merges, "", ""); }, "vocab.json: the vocabulary is not a JSON object");
    fails([&] { attn::read_family_tokenizer("gpt2", "", "{\"a\": 0, \"b\": 2}", merges, "", ""); }, "vocab.json: no piece has the id 1");
    fails([&] { attn::read_family_tokenizer("gpt2", "", "{\"a\": 0, \"b\": 0}", merges, "", ""); }, "the id 0 is given to both \"a\" and \"b\"");
    fails([&] { attn::read_family_tokenizer("gpt2", "", "{\"a\": 0.5}", merges, "", ""); }, "the id of \"a\" is not a whole number");
    fails([&] { attn::read_family_tokenizer("gpt2", "", "{\"a\": 300000}", merges, "", ""); }, "the largest vocabulary we run");
    fails([&] { attn::read_family_tokenizer("gpt2", "", "{\"a\": 0, \"a\": 1}", merges, "", ""); }, "duplicate key");
    fails([&] { attn::read_family_tokenizer("gpt2", "", "{\"a\": 0}", merges, "", ""); }, "vocab.json: the vocabulary has no piece");
    fails([&] { attn::read_family_tokenizer("gpt2", "", vocab_json({}), "", "", ""); }, "merges.txt: the file is empty or missing");
    fails([&] { attn::read_family_tokenizer("gpt2", "", vocab_json({}), merges + "a\n", "", ""); }, "merges.txt: line 2 is not two pieces");
    fails([&] { attn::read_family_tokenizer("gpt2", "", vocab_json({}), merges + "a b c\n", "", ""); }, "merges.txt: line 2 is not two pieces");
    fails([&] { attn::read_family_tokenizer("gpt2", "", vocab_json({}), merges + "a zz\n", "", ""); }, "merges.txt: merge 1 \"a zz\": \"zz\" is not in the vocabulary");
    fails([&] { attn::read_family_tokenizer("gpt2", "", vocab_json({}), merges + "a b\n", "", ""); }, "their join \"ab\" is not in the vocabulary");
    fails([&] { attn::read_family_tokenizer("gpt2", "{\"model\": {\"type\": \"Unigram\"}}", "", "", "", ""); }, "tokenizer.json: model.type \"Unigram\" is not BPE");
    fails([&] { attn::read_family_tokenizer("gpt2", "{\"model\": {\"type\": \"BPE\", \"vocab\": {}}}", "", "", "", ""); }, "tokenizer.json: model.merges is not a list");
    fails([&] { attn::read_family_tokenizer("gpt2", "{\"model\": {\"type\": \"BPE\", \"vocab\": " + vocab_json({}) + ", \"merges\": [3]}}", "", "", "", ""); }, "tokenizer.json: model.merges[0] is neither");
    fails([&] { attn::read_family_tokenizer("gpt2", "{\"model\": ", "", "", "", ""); }, "tokenizer.json: invalid JSON at byte");
    fails([&] { attn::read_family_tokenizer("gpt2", "", "", "", "", ""); }, "no tokenizer files for gpt2");
    fails([&] { attn::read_family_tokenizer("gpt2", "", "", "", "[PAD]\n", ""); }, "no tokenizer files for gpt2");
    fails([&] { attn::read_family_tokenizer("mistral", "", "", "", "", ""); }, "unknown tokenizer family \"mistral\"");
}

TEST_CASE("bpe: invalid UTF-8 is bad_text naming the byte, too long a text too_many_tokens, before any work") {
    const auto tok = small_bpe({});
    CHECK(code_of([&] { tok->encode("ok\xFF"); }) == attn::Error::Code::bad_text);
    CHECK_THAT(message_of([&] { tok->encode("ok\xFF"); }), Catch::Matchers::Contains("invalid UTF-8 at byte 2"));
    CHECK(code_of([&] { tok->encode("\xE2\x82"); }) == attn::Error::Code::bad_text);
    CHECK(code_of([&] { tok->encode("\xED\xA0\x80"); }) == attn::Error::Code::bad_text);  // a surrogate
    CHECK(tok->encode(std::string(attn::kMaxSentenceBytes, 'a')).size() == attn::kMaxSentenceBytes);
    CHECK(code_of([&] { tok->encode(std::string(attn::kMaxSentenceBytes + 1, 'a')); }) == attn::Error::Code::too_many_tokens);
    CHECK(code_of([&] { tok->piece(256); }) == attn::Error::Code::bad_input);
    CHECK(code_of([&] { tok->decode({-1}); }) == attn::Error::Code::bad_input);
}
