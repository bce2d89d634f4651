// Tests of src/text/tokenizer.hpp: the documented word-splitting rules, byte
// offsets, UTF-8 validation and the hashed vocabulary.

#include "text/tokenizer.hpp"
#include "base/types.hpp"
#include "reference.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

using Catch::Matchers::Contains;

namespace {

std::vector<std::string> texts(const std::vector<attn::Token>& tokens) {
    std::vector<std::string> out;
    for (const auto& t : tokens) out.push_back(t.text);
    return out;
}

void check_substrings(const std::string& sentence, const std::vector<attn::Token>& tokens) {
    for (const auto& t : tokens) {
        INFO("sentence: " << sentence << "  token: " << t.text << " [" << t.start << ", " << t.end << ")");
        REQUIRE(t.start < t.end);
        REQUIRE(t.end <= sentence.size());
        CHECK(t.text == sentence.substr(t.start, t.end - t.start));
        CHECK(ref::valid_utf8(t.text));
    }
}

std::string expect_error(const std::string& bytes) {
    try {
        attn::tokenize(bytes);
    } catch (const attn::Error& e) {
        return e.what();
    }
    return "<no error>";
}

}  // namespace

TEST_CASE("tokenize: each CJK ideograph is a token, kana runs stay words and end where the script changes", "[tokenizer]") {
    // BERT's basic tokenizer makes every CJK ideograph a token of its own.
    const std::string ja = "猫はマットの上に座った";
    CHECK(texts(attn::tokenize(ja)) == std::vector<std::string>{"猫", "は", "マット", "の", "上", "に", "座", "った"});
    check_substrings(ja, attn::tokenize(ja));
    CHECK(texts(attn::tokenize("我爱北京。")) == std::vector<std::string>{"我", "爱", "北", "京", "。"});
    CHECK(texts(attn::tokenize("東京タワーはtall")) == std::vector<std::string>{"東", "京", "タワー", "は", "tall"});
    // an extension-B ideograph (4 UTF-8 bytes) and a compatibility ideograph
    CHECK(texts(attn::tokenize("𠮷野家 豈")) == std::vector<std::string>{"𠮷", "野", "家", "豈"});
    // Hangul keeps its words (Korean writes spaces)
    CHECK(texts(attn::tokenize("안녕하세요 세계")) == std::vector<std::string>{"안녕하세요", "세계"});
}

TEST_CASE("tokenize: punctuation is split off with byte offsets", "[tokenizer]") {
    const std::string s = "Hello, world!";
    const auto tokens = attn::tokenize(s);
    REQUIRE(texts(tokens) == std::vector<std::string>{"Hello", ",", "world", "!"});
    CHECK(tokens[0].start == 0);
    CHECK(tokens[0].end == 5);
    CHECK(tokens[1].start == 5);
    CHECK(tokens[1].end == 6);
    CHECK(tokens[2].start == 7);
    CHECK(tokens[2].end == 12);
    CHECK(tokens[3].start == 12);
    CHECK(tokens[3].end == 13);
    check_substrings(s, tokens);
}

TEST_CASE("tokenize: whitespace separates tokens and is dropped", "[tokenizer]") {
    const std::string s = "  the\tcat \n sat  ";
    const auto tokens = attn::tokenize(s);
    REQUIRE(texts(tokens) == std::vector<std::string>{"the", "cat", "sat"});
    CHECK(tokens[0].start == 2);
    CHECK(tokens[0].end == 5);
    CHECK(tokens[1].start == 6);
    CHECK(tokens[2].start == 12);
    CHECK(tokens[2].end == 15);
    CHECK(attn::tokenize("").empty());
    CHECK(attn::tokenize(" \t\n ").empty());
}

TEST_CASE("tokenize: apostrophe between letters stays inside the word", "[tokenizer]") {
    CHECK(texts(attn::tokenize("didn't")) == std::vector<std::string>{"didn't"});
    // U+2019 RIGHT SINGLE QUOTATION MARK = E2 80 99
    CHECK(texts(attn::tokenize("didn\xE2\x80\x99t")) == std::vector<std::string>{"didn\xE2\x80\x99t"});
    CHECK(texts(attn::tokenize("rock'n'roll")) == std::vector<std::string>{"rock'n'roll"});
    CHECK(texts(attn::tokenize("don't!")) == std::vector<std::string>{"don't", "!"});
}

TEST_CASE("tokenize: hyphen between letters stays inside the word", "[tokenizer]") {
    CHECK(texts(attn::tokenize("well-known")) == std::vector<std::string>{"well-known"});
    // U+2010 HYPHEN = E2 80 90, U+2011 NON-BREAKING HYPHEN = E2 80 91
    CHECK(texts(attn::tokenize("well\xE2\x80\x90known")) == std::vector<std::string>{"well\xE2\x80\x90known"});
    CHECK(texts(attn::tokenize("well\xE2\x80\x91known")) == std::vector<std::string>{"well\xE2\x80\x91known"});
    // Not between two letters: a token of its own.
    CHECK(texts(attn::tokenize("end- start")) == std::vector<std::string>{"end", "-", "start"});
    CHECK(texts(attn::tokenize("-start")) == std::vector<std::string>{"-", "start"});
}

TEST_CASE("tokenize: quotes not between letters are separate tokens", "[tokenizer]") {
    const std::string s = "rock 'n' roll";
    const auto tokens = attn::tokenize(s);
    REQUIRE(texts(tokens) == std::vector<std::string>{"rock", "'", "n", "'", "roll"});
    CHECK(tokens[1].start == 5);
    CHECK(tokens[2].start == 6);
    CHECK(tokens[3].start == 7);
    CHECK(tokens[4].start == 9);
    check_substrings(s, tokens);
    // Curly quotes likewise: U+2019 around n.
    CHECK(texts(attn::tokenize("rock \xE2\x80\x99n\xE2\x80\x99 roll")) ==
          std::vector<std::string>{"rock", "\xE2\x80\x99", "n", "\xE2\x80\x99", "roll"});
}

TEST_CASE("tokenize: precomposed and combining accents stay in one word", "[tokenizer]") {
    // "café" with U+00E9 (C3 A9): 5 bytes.
    const std::string pre = "caf\xC3\xA9";
    auto tokens = attn::tokenize(pre);
    REQUIRE(tokens.size() == 1);
    CHECK(tokens[0].text == pre);
    CHECK(tokens[0].start == 0);
    CHECK(tokens[0].end == 5);
    // "café" as e + U+0301 COMBINING ACUTE ACCENT (CC 81): 6 bytes.
    const std::string comb = "cafe\xCC\x81";
    tokens = attn::tokenize(comb);
    REQUIRE(tokens.size() == 1);
    CHECK(tokens[0].text == comb);
    CHECK(tokens[0].start == 0);
    CHECK(tokens[0].end == 6);
    // In a sentence, followed by punctuation.
    tokens = attn::tokenize("un cafe\xCC\x81, s'il");
    CHECK(texts(tokens) == std::vector<std::string>{"un", "cafe\xCC\x81", ",", "s'il"});
}

TEST_CASE("tokenize: CJK without spaces splits into ideographs and kana runs", "[tokenizer]") {
    const std::string s = "\xE7\x8C\xAB\xE3\x81\x8C\xE5\xA5\xBD\xE3\x81\x8D";  // 猫が好き
    const auto tokens = attn::tokenize(s);
    REQUIRE(tokens.size() == 4);  // 猫 が 好 き
    CHECK(tokens[0].text == "\xE7\x8C\xAB");
    CHECK(tokens[1].text == "\xE3\x81\x8C");
    CHECK(tokens[1].start == 3);
    CHECK(tokens[3].end == 12);
}

TEST_CASE("tokenize: Arabic words split on the space", "[tokenizer]") {
    // مرحبا (5 letters × 2 bytes) + space + بالعالم (7 letters × 2 bytes)
    const std::string w1 = "\xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7";
    const std::string w2 = "\xD8\xA8\xD8\xA7\xD9\x84\xD8\xB9\xD8\xA7\xD9\x84\xD9\x85";
    REQUIRE(w1.size() == 10);
    REQUIRE(w2.size() == 14);
    const std::string s = w1 + " " + w2;
    const auto tokens = attn::tokenize(s);
    REQUIRE(texts(tokens) == std::vector<std::string>{w1, w2});
    CHECK(tokens[0].start == 0);
    CHECK(tokens[0].end == 10);
    CHECK(tokens[1].start == 11);
    CHECK(tokens[1].end == 25);
}

TEST_CASE("tokenize: emoji with variation selector, ZWJ sequence and skin tone are single tokens",
          "[tokenizer]") {
    const std::string heart = "\xE2\x9D\xA4\xEF\xB8\x8F";                  // U+2764 U+FE0F
    const std::string black_cat = "\xF0\x9F\x90\x88\xE2\x80\x8D\xE2\xAC\x9B";  // U+1F408 ZWJ U+2B1B
    const std::string thumbs = "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD";          // U+1F44D U+1F3FD
    const std::string s = "I " + heart + " " + black_cat + " " + thumbs;
    const auto tokens = attn::tokenize(s);
    REQUIRE(texts(tokens) == std::vector<std::string>{"I", heart, black_cat, thumbs});
    CHECK(tokens[1].start == 2);
    CHECK(tokens[1].end == 8);
    CHECK(tokens[2].start == 9);
    CHECK(tokens[2].end == 19);
    CHECK(tokens[3].start == 20);
    CHECK(tokens[3].end == 28);
    check_substrings(s, tokens);
}

TEST_CASE("tokenize: two emoji in a row are two tokens", "[tokenizer]") {
    const std::string smile = "\xF0\x9F\x99\x82";  // U+1F642
    const auto tokens = attn::tokenize(smile + smile);
    REQUIRE(texts(tokens) == std::vector<std::string>{smile, smile});
    CHECK(tokens[0].start == 0);
    CHECK(tokens[0].end == 4);
    CHECK(tokens[1].start == 4);
    CHECK(tokens[1].end == 8);
    // An emoji glued to a word is split from it.
    CHECK(texts(attn::tokenize("hi" + smile)) == std::vector<std::string>{"hi", smile});
}

TEST_CASE("tokenize: a flag (regional indicator pair) is one token", "[tokenizer]") {
    const std::string fr = "\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7";  // U+1F1EB U+1F1F7
    const auto tokens = attn::tokenize(fr);
    REQUIRE(tokens.size() == 1);
    CHECK(tokens[0].text == fr);
    CHECK(tokens[0].start == 0);
    CHECK(tokens[0].end == 8);
    CHECK(texts(attn::tokenize("Paris " + fr + "!")) == std::vector<std::string>{"Paris", fr, "!"});
}

TEST_CASE("tokenize: letters and digits form one word, other symbols stand alone", "[tokenizer]") {
    CHECK(texts(attn::tokenize("abc123 x2")) == std::vector<std::string>{"abc123", "x2"});
    CHECK(texts(attn::tokenize("3.14")) == std::vector<std::string>{"3", ".", "14"});
    CHECK(texts(attn::tokenize("a+b=c")) == std::vector<std::string>{"a", "+", "b", "=", "c"});
    CHECK(texts(attn::tokenize("(hi)")) == std::vector<std::string>{"(", "hi", ")"});
    CHECK(texts(attn::tokenize("wait...")) == std::vector<std::string>{"wait", ".", ".", "."});
}

TEST_CASE("tokenize: token text equals the sentence bytes at its offsets and is valid UTF-8",
          "[tokenizer]") {
    // Units that must never be split: letters with combining marks, emoji
    // sequences, CJK, punctuation, and whitespace between them.
    const std::vector<std::string> units = {
        "a", "Z", "7", "\xC3\xA9", "e\xCC\x81", "\xC3\x9F", "\xCE\xA9", "\xD0\x96",
        "\xE7\x8C\xAB", "\xE3\x81\x8C", "\xD8\xB9", "\xE0\xA4\x95\xE0\xA5\x8D",  // क्
        ",", ".", "!", "?", "'", "-", "\"", "(", ")", "\xE2\x80\x99", "\xE2\x80\x94",  // — em dash
        "\xF0\x9F\x99\x82", "\xE2\x9D\xA4\xEF\xB8\x8F", "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD",
        "\xF0\x9F\x90\x88\xE2\x80\x8D\xE2\xAC\x9B", "\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7",
        " ", " ", "\t", "\n"};
    std::mt19937 rng(12345);
    std::uniform_int_distribution<std::size_t> pick(0, units.size() - 1);
    std::uniform_int_distribution<int> len(1, 25);
    for (int iter = 0; iter < 500; ++iter) {
        std::string s;
        std::vector<std::pair<std::size_t, std::size_t>> spans;  // non-whitespace units
        const int n = len(rng);
        for (int k = 0; k < n; ++k) {
            const std::string& u = units[pick(rng)];
            if (u != " " && u != "\t" && u != "\n") spans.emplace_back(s.size(), s.size() + u.size());
            s += u;
        }
        INFO("sentence: " << s);
        const auto tokens = attn::tokenize(s);
        check_substrings(s, tokens);
        // Tokens are in order and do not overlap.
        for (std::size_t i = 1; i < tokens.size(); ++i) CHECK(tokens[i - 1].end <= tokens[i].start);
        // Every non-whitespace unit lies inside exactly one token (nothing is
        // dropped, nothing is split).
        for (const auto& sp : spans) {
            int containing = 0;
            for (const auto& t : tokens)
                if (t.start <= sp.first && sp.second <= t.end) ++containing;
            INFO("unit at [" << sp.first << ", " << sp.second << ")");
            CHECK(containing == 1);
        }
        // Bytes outside every token are whitespace.
        std::vector<bool> covered(s.size(), false);
        for (const auto& t : tokens)
            for (std::size_t b = t.start; b < t.end; ++b) covered[b] = true;
        for (std::size_t b = 0; b < s.size(); ++b)
            if (!covered[b]) CHECK((s[b] == ' ' || s[b] == '\t' || s[b] == '\n'));
        // Ids of these (control-free) tokens are hashed ids.
        for (const auto& t : tokens) {
            CHECK(t.id >= 2);
            CHECK(t.id < attn::kVocabSize);
            CHECK(t.id == attn::token_id(t.text));
        }
    }
}

TEST_CASE("token_id: FNV-1a 32-bit of the bytes mod (kVocabSize-2) plus 2", "[tokenizer]") {
    // By hand for "a": basis 0x811C9DC5 xor 0x61 = 0x811C9DA4;
    //   0x811C9DA4 · 0x01000193 mod 2^32
    //   = (0x811C9DA4 << 24) + 0x811C9DA4 · 0x193          (mod 2^32)
    //   = 0xA4000000 + (2166136228 · 403 = 872952899884 ≡ 1074538796 = 0x400C292C)
    //   = 0xE40C292C = 3826002220.
    // 3826002220 mod 32766: 32766 · 116767 = 3825987522, remainder 14698; +2 → 14700.
    // (0x050C5D7E is FNV-1, multiply-then-xor, not FNV-1a.)
    CHECK(ref::fnv1a32("a") == 0xE40C292Cu);
    CHECK(attn::token_id("a") == 14700);
    // Independent loop for other texts, including multi-byte UTF-8.
    for (const std::string text : {"hello", "the", "Hello", ",", "caf\xC3\xA9", "\xF0\x9F\x99\x82",
                                   "didn't", "\xE7\x8C\xAB\xE3\x81\x8C\xE5\xA5\xBD\xE3\x81\x8D"}) {
        const std::int32_t expected =
            static_cast<std::int32_t>(ref::fnv1a32(text) % static_cast<std::uint32_t>(attn::kVocabSize - 2)) + 2;
        INFO("text: " << text);
        CHECK(attn::token_id(text) == expected);
    }
    // 0xE40C292C is above 2^31: the hash must be treated as unsigned.
    CHECK(attn::token_id("a") >= 2);
}

TEST_CASE("tokenize: ids are hashed ids in range, equal for equal texts", "[tokenizer]") {
    const auto tokens = attn::tokenize("the cat and the hat , the end ,");
    REQUIRE(tokens.size() == 9);
    for (const auto& t : tokens) {
        CHECK(t.id >= 2);
        CHECK(t.id < attn::kVocabSize);
        CHECK(t.id == attn::token_id(t.text));
    }
    CHECK(tokens[0].id == tokens[3].id);
    CHECK(tokens[0].id == tokens[6].id);
    CHECK(tokens[5].id == tokens[8].id);
    CHECK(tokens[1].id != tokens[4].id);  // "cat" vs "hat" (distinct hashes, checked below)
    CHECK(ref::fnv1a32("cat") % 32766 != ref::fnv1a32("hat") % 32766);
}

TEST_CASE("tokenize: lowercase option lowers text and id but keeps original offsets", "[tokenizer]") {
    const std::string s = "Hello WORLD \xC3\x89lan";  // "Élan": É = C3 89
    attn::TokenizeOptions opt;
    opt.lowercase = true;
    const auto tokens = attn::tokenize(s, opt);
    REQUIRE(texts(tokens) == std::vector<std::string>{"hello", "world", "\xC3\xA9lan"});  // é = C3 A9
    CHECK(tokens[0].start == 0);
    CHECK(tokens[0].end == 5);
    CHECK(tokens[1].start == 6);
    CHECK(tokens[1].end == 11);
    CHECK(tokens[2].start == 12);
    CHECK(tokens[2].end == 17);
    CHECK(tokens[0].id == attn::token_id("hello"));
    CHECK(tokens[2].id == attn::token_id("\xC3\xA9lan"));
    // Without the option the case is kept.
    const auto kept = attn::tokenize(s);
    CHECK(texts(kept) == std::vector<std::string>{"Hello", "WORLD", "\xC3\x89lan"});
    CHECK(kept[0].id != tokens[0].id);
}

TEST_CASE("tokenize: invalid UTF-8 throws attn::Error naming UTF-8 and the byte offset", "[tokenizer]") {
    struct Case {
        std::string bytes;
        std::string offset;
        const char* what;
    };
    const std::vector<Case> cases = {
        {std::string("hello world") + "\x80", "11", "lone continuation byte 0x80"},
        {std::string("abcdefghijklm") + "\xC3", "13", "truncated 2-byte sequence at the end"},
        {std::string("abcdefghijklmnop") + "\xC3" + "A", "16", "truncated 2-byte sequence before ASCII"},
        {std::string("abcdefghijklmnopq") + "\xC0\xAF", "17", "overlong 2-byte encoding of '/'"},
        {std::string("abcdefghijklmnopqr") + "\xE0\x80\xAF", "18", "overlong 3-byte encoding of '/'"},
        {std::string("abcdefghijklmnopqrstu") + "\xF0\x82\x82\xAC", "21", "overlong 4-byte encoding of U+20AC"},
        {std::string("abcdefghijklmnopqrstuvwxyz0") + "\xC1\xBF", "27", "overlong lead byte 0xC1"},
        {std::string("abcdefghijklmnopqrs") + "\xED\xA0\x80", "19", "UTF-16 surrogate U+D800"},
        {std::string("abcdefghijklmnopqrstuvw") + "\xF4\x90\x80\x80", "23", "above U+10FFFF"},
        {std::string("abcdefghijklmnopqrstuvwxyz") + "\xFF", "26", "byte 0xFF"},
    };
    for (const auto& c : cases) {
        INFO(c.what);
        const std::string message = expect_error(c.bytes);
        INFO("message: " << message);
        CHECK_THAT(message, Contains("UTF-8"));
        CHECK_THAT(message, Contains(c.offset));
        CHECK_THROWS_AS(attn::decode_utf8(c.bytes), attn::Error);
        try {
            attn::decode_utf8(c.bytes);
        } catch (const attn::Error& e) {
            CHECK(e.kind() == attn::Error::Kind::type);
            CHECK_THAT(std::string(e.what()), Contains(c.offset));
        }
    }
}

TEST_CASE("decode_utf8: decodes 1- to 4-byte sequences", "[tokenizer]") {
    // a (61), é U+00E9 (C3 A9), € U+20AC (E2 82 AC), 😀 U+1F600 (F0 9F 98 80)
    const auto cps = attn::decode_utf8("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
    REQUIRE(cps.size() == 4);
    CHECK(cps[0] == U'\x61');
    CHECK(cps[1] == U'\xE9');
    CHECK(cps[2] == U'\x20AC');
    CHECK(cps[3] == U'\x1F600');
    CHECK(attn::decode_utf8("").empty());
    // The extremes that are valid: U+10FFFF, U+FFFF, U+D7FF, U+E000.
    const auto edge = attn::decode_utf8("\xF4\x8F\xBF\xBF\xEF\xBF\xBF\xED\x9F\xBF\xEE\x80\x80");
    REQUIRE(edge.size() == 4);
    CHECK(edge[0] == U'\x10FFFF');
    CHECK(edge[1] == U'\xFFFF');
    CHECK(edge[2] == U'\xD7FF');
    CHECK(edge[3] == U'\xE000');
}

TEST_CASE("tokenize: a control character becomes an UNK token", "[tokenizer]") {
    const std::string s = "hello \x07 world";
    const auto tokens = attn::tokenize(s);
    REQUIRE(tokens.size() == 3);
    CHECK(tokens[0].text == "hello");
    CHECK(tokens[1].id == attn::kUnknownId);
    CHECK(tokens[1].start == 6);
    CHECK(tokens[1].end == 7);
    CHECK(tokens[1].text == "\x07");
    CHECK(tokens[2].text == "world");
    CHECK(tokens[2].id == attn::token_id("world"));
}

TEST_CASE("pad_token: text PAD, id 0, empty span at the given offset", "[tokenizer]") {
    const auto pad = attn::pad_token(17);
    CHECK(pad.text == "[PAD]");
    CHECK(pad.text == attn::kPadText);
    CHECK(pad.id == attn::kPadId);
    CHECK(pad.id == 0);
    CHECK(pad.start == 17);
    CHECK(pad.end == 17);
    CHECK(attn::kUnknownId == 1);
}

TEST_CASE("tokenize: emoji and symbols glued to a word are split off", "[tokenizer]") {
    // "every other punctuation mark or symbol (emoji included) is a token of its own"
    const std::vector<std::pair<std::string, const char*>> symbols = {
        {"\xF0\x9F\x99\x82", "U+1F642 slightly smiling face"},
        {"\xE2\x9C\x85", "U+2705 check mark button"},
        {"\xE2\xAD\x90", "U+2B50 star"},
        {"\xE2\x98\x80\xEF\xB8\x8F", "U+2600 U+FE0F sun"},
        {"\xC2\xA9\xEF\xB8\x8F", "U+00A9 U+FE0F copyright"},
        {"\xE2\x84\xA2", "U+2122 trade mark"},
        {"\xE2\x82\xAC", "U+20AC euro"},
        {"\xC2\xB0", "U+00B0 degree"},
        {"\xE3\x80\xBD\xEF\xB8\x8F", "U+303D U+FE0F part alternation mark"},
        {"\xE3\x8A\x97\xEF\xB8\x8F", "U+3297 U+FE0F circled ideograph congratulation (emoji)"},
        {"\xE3\x8A\x99\xEF\xB8\x8F", "U+3299 U+FE0F circled ideograph secret (emoji)"},
        {"\xF0\x9F\x80\x84", "U+1F004 mahjong red dragon"},
        {"\xF0\x9D\x84\x9E", "U+1D11E musical symbol G clef (So)"},
    };
    for (const auto& [sym, name] : symbols) {
        INFO(name);
        CHECK(texts(attn::tokenize("ok" + sym)) == std::vector<std::string>{"ok", sym});
        CHECK(texts(attn::tokenize(sym + "ok")) == std::vector<std::string>{sym, "ok"});
    }
}

TEST_CASE("tokenize: nothing but whitespace is dropped, even after a stray zero-width joiner",
          "[tokenizer]") {
    // "a <ZWJ>b": U+200D (E2 80 8D) at bytes 2..4 right after the space, 'b' at byte 5.
    // The joiner has no emoji before it to join; the word "b" must not vanish.
    const std::string s = "a \xE2\x80\x8D" "b";
    const auto tokens = attn::tokenize(s);
    INFO("tokens: " << tokens.size());
    bool b_covered = false;
    for (const auto& t : tokens)
        if (t.start <= 5 && 5 < t.end) b_covered = true;
    CHECK(b_covered);
    check_substrings(s, tokens);
    // The same after a tab and at the very start.
    for (const std::string& v : {std::string("x\t\xE2\x80\x8D" "yz"), std::string("\xE2\x80\x8D" "yz")}) {
        const auto tk = attn::tokenize(v);
        bool covered = false;
        for (const auto& t : tk)
            if (t.start <= v.size() - 2 && v.size() - 1 <= t.end) covered = true;
        INFO("sentence bytes " << v.size());
        CHECK(covered);
    }
}

TEST_CASE("tokenize: a sentence above 65536 bytes is an error naming its size, before any decoding", "[tokenizer]") {
    // 10 MB of text grew the tokenizer's buffers to about half a GB (24-byte
    // records per input byte), which a wasm memory never gives back.
    CHECK_NOTHROW(attn::tokenize(std::string(attn::kMaxSentenceBytes, 'a')));
    for (const std::string& big : {std::string(attn::kMaxSentenceBytes + 1, 'a'), std::string(10 << 20, '\xff')}) {
        std::string message = "<no error>";
        try {
            attn::tokenize(big);
        } catch (const attn::Error& e) {
            message = e.what();
            CHECK(e.kind() == attn::Error::Kind::range);
        }
        INFO(message);
        // the size, not "invalid UTF-8": the check comes before the work
        CHECK_THAT(message, Contains(std::to_string(big.size()) + " bytes of UTF-8, above the limit of 65536 bytes"));
    }
}

TEST_CASE("tokenize: with max_tokens more tokens are an error naming the count and the limit", "[tokenizer]") {
    std::string s;
    for (int i = 0; i < 3000; ++i) s += "w ";
    attn::TokenizeOptions o;
    o.max_tokens = 2048;
    std::string message = "<no error>";
    try {
        attn::tokenize(s, o);
    } catch (const attn::Error& e) {
        message = e.what();
    }
    CHECK(message == "the sentence has 3000 tokens, above the limit of 2048");
    o.max_tokens = 3000;
    CHECK(attn::tokenize(s, o).size() == 3000);
    CHECK(attn::tokenize(s).size() == 3000);  // no limit by default
}
