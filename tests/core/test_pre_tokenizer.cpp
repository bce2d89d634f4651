// Tests of src/text/pre_tokenizer.hpp: Llama 3's and Qwen2's split patterns on cases
// worked out by hand from the regular expressions (alternatives in order, greedy, with
// backtracking), Digits, ByteLevel's prefix space, and the refusals by name of what the
// engine does not run. GPT-2's pattern is tested in test_bpe.cpp (pre_tokenize).

#include "text/pre_tokenizer.hpp"
#include "text/unicode.hpp"
#include "base/json_value.hpp"
#include "base/types.hpp"
#include "matchers.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using testing::code_of;
using testing::message_of;

namespace {

using V = std::vector<std::string>;

std::u32string utf32(const std::string& s) {
    std::u32string out;
    for (const auto& cp : attn::unicode::code_points(s)) out += cp.value;
    return out;
}

std::string utf8(const std::u32string& s) {
    std::string out;
    for (char32_t c : s) attn::unicode::append_utf8(out, c);
    return out;
}

V split(attn::SplitPattern pattern, const std::string& text) {
    const std::u32string s = utf32(text);
    V out;
    for (const auto& [b, e] : attn::split_by_pattern(pattern, s)) out.push_back(utf8(s.substr(b, e - b)));
    return out;
}

const std::string kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

std::string json_quote(const std::string& s) {
    std::string out = "\"";
    for (char c : s) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return out + "\"";
}

attn::PreTokenizer pre(const std::string& json) {
    const attn::JsonValue root = attn::parse_json(json);
    return attn::PreTokenizer::read(&root, "tokenizer.json");
}

V pieces(const attn::PreTokenizer& p, const std::string& text) {
    V out;
    for (const attn::NormText& piece : p.apply(attn::norm_text(text, 0, text.size()))) out.push_back(attn::norm_utf8(piece));
    return out;
}

}  // namespace

TEST_CASE("pre-tokenizer: Llama 3's pattern, cases worked out by hand") {
    using attn::SplitPattern;
    const auto l = [](const std::string& t) { return split(SplitPattern::numbers_in_threes, t); };
    CHECK(l("Hello world") == V{"Hello", " world"});
    CHECK(l("I'M don't") == V{"I", "'M", " don", "'t"});                 // contractions in any case
    CHECK(l("it'S 'sun") == V{"it", "'S", " '", "sun"});                 // " '" is punctuation with its space
    CHECK(l("WE'LL THEY'VE YOU'RE HE'D") == V{"WE", "'LL", " THEY", "'VE", " YOU", "'RE", " HE", "'D"});
    CHECK(l("x'\xC5\xBF") == V{"x", "'\xC5\xBF"});                        // (?i) folds ſ to s: a contraction
    CHECK(l("12345 6") == V{"123", "45", " ", "6"});                      // digits in runs of 1 to 3, no space before
    CHECK(l("abc1234") == V{"abc", "123", "4"});
    CHECK(l("\"Hello !!x") == V{"\"Hello", " !!", "x"});                  // one non-letter before a word joins it
    CHECK(l("!!Hello") == V{"!!", "Hello"});
    CHECK(l("\tword") == V{"\tword"});                                    // a tab too (not \r or \n)
    CHECK(l("a\xE3\x80\x80" "b") == V{"a", "\xE3\x80\x80" "b"});           // U+3000 likewise
    CHECK(l("...\n\nok") == V{"...\n\n", "ok"});                          // punctuation takes the newlines after it
    CHECK(l("a  b") == V{"a", " ", " b"});
    CHECK(l("x\n\ny") == V{"x", "\n\n", "y"});                            // \s*[\r\n]+: up to the last newline
    CHECK(l("  \n  x") == V{"  \n", " ", " x"});
    CHECK(l("a \r\nb") == V{"a", " \r\n", "b"});
    CHECK(l("end   ") == V{"end", "   "});                                // \s+(?!\S) at the end: the whole run
    CHECK(l("\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96") == V{"\xE4\xBD\xA0\xE5\xA5\xBD", "\xEF\xBC\x8C\xE4\xB8\x96"});  // 你好，世
    CHECK(l("\xF0\x9F\x98\x80 ok") == V{"\xF0\x9F\x98\x80", " ok"});
    CHECK(l("").empty());
}

TEST_CASE("pre-tokenizer: Qwen2's pattern is Llama 3's with one digit at a time") {
    using attn::SplitPattern;
    CHECK(split(SplitPattern::single_numbers, "12345 6") == V{"1", "2", "3", "4", "5", " ", "6"});
    CHECK(split(SplitPattern::single_numbers, "x\xD9\xA3\xD9\xA4") == V{"x", "\xD9\xA3", "\xD9\xA4"});  // Arabic-Indic digits are \p{N}
    CHECK(split(SplitPattern::single_numbers, "I'M don't") == split(SplitPattern::numbers_in_threes, "I'M don't"));
}

TEST_CASE("pre-tokenizer: a Sequence of Split and ByteLevel reads as Llama 3's file writes it") {
    const auto p = pre(R"({"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": )" +
                       json_quote(kLlama3) +
                       R"(}, "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", "add_prefix_space": false,
                       "trim_offsets": true, "use_regex": false}]})");
    CHECK(p.byte_level());
    CHECK(p.splits());
    CHECK(pieces(p, "Hello 12345") == V{"Hello", " ", "123", "45"});
}

TEST_CASE("pre-tokenizer: Digits before ByteLevel (SmolLM2), and ByteLevel's prefix space") {
    const auto smol = pre(R"({"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": true},
        {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}]})");
    CHECK(smol.byte_level());
    CHECK_FALSE(smol.splits());
    CHECK(pieces(smol, "a 12b") == V{"a", " ", "1", "2", "b"});  // GPT-2's pattern alone: "a", " 12", "b"
    // every \p{N} character, as the tokenizers library's char::is_numeric: ½ (No), ٣ (Nd), Ⅻ (Nl)
    CHECK(pieces(smol, "x\xC2\xBD\xD9\xA3\xE2\x85\xAB") == V{"x", "\xC2\xBD", "\xD9\xA3", "\xE2\x85\xAB"});
    const auto runs = pre(R"({"type": "Digits", "individual_digits": false})");
    CHECK(pieces(runs, "a12b3") == V{"a", "12", "b", "3"});
    const auto prefix = pre(R"({"type": "ByteLevel", "add_prefix_space": true})");
    CHECK(pieces(prefix, "Hello world") == V{" Hello", " world"});
    CHECK(pieces(prefix, " Hello") == V{" Hello"});  // no second space
    const auto spaced = prefix.apply(attn::norm_text("Hi", 0, 2));
    REQUIRE(spaced.size() == 1);
    CHECK((spaced[0][0].begin == 0 && spaced[0][0].end == 1));  // the added space spans the first character
    CHECK(attn::PreTokenizer::byte_level_default().byte_level());
    CHECK(attn::PreTokenizer::read(nullptr, "tokenizer.json").empty());
}

TEST_CASE("pre-tokenizer: what the engine does not run is refused by name, with the file") {
    const auto fails = [](const std::string& json, const std::string& needle) {
        INFO(json);
        CHECK(code_of([&] { pre(json); }) == attn::Error::Code::bad_checkpoint);
        CHECK_THAT(message_of([&] { pre(json); }), Catch::Matchers::Contains(needle));
    };
    fails(R"({"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated", "invert": false})",
          "tokenizer.json: the Split pattern \"\\p{N}{1,3}\" is not one this engine knows: it runs GPT-2's, Llama 3's and Qwen2's");
    fails(R"({"type": "Split", "pattern": {"Regex": )" + json_quote(kLlama3) + R"(}, "behavior": "Removed"})",
          "the pre_tokenizer Split: behavior \"Removed\" is not Isolated");
    fails(R"({"type": "Split", "pattern": {"Regex": )" + json_quote(kLlama3) + R"(}, "behavior": "Isolated", "invert": true})",
          "invert is true");
    fails(R"({"type": "Split", "pattern": {"String": " "}, "behavior": "Isolated"})", "has no {\"Regex\": …} pattern");
    fails(R"({"type": "Metaspace", "replacement": "▁"})", "the pre_tokenizer \"Metaspace\" is not one this engine runs");
    fails(R"({"type": "BertPreTokenizer"})", "the pre_tokenizer \"BertPreTokenizer\" is not one");
    fails(R"({"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}, {"type": "Digits"}]})",
          "the pre_tokenizer has a step after ByteLevel");
    fails(R"({"type": "ByteLevel", "add_prefix_space": 1})", "add_prefix_space is not true or false");
}
