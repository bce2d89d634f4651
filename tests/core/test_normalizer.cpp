// Tests of src/text/normalizer.hpp: each normalizer a tokenizer.json may name, on cases
// worked out by hand from Unicode's rules (NFC/NFD: UAX #15; lower case: the Final_Sigma
// rule), each character keeping the bytes of the text it came from; the kinds the engine
// does not run are refused by name.

#include "text/normalizer.hpp"
#include "base/json_value.hpp"
#include "base/types.hpp"
#include "matchers.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <tuple>
#include <vector>

using testing::code_of;
using testing::message_of;

namespace {

attn::Normalizer normalizer(const std::string& json) {
    const attn::JsonValue root = attn::parse_json(json);
    return attn::Normalizer::read(&root, "tokenizer.json");
}

struct Normalized {
    std::string text;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> spans;
};

Normalized run(const attn::Normalizer& n, const std::string& text) {
    attn::NormText chars = attn::norm_text(text, 0, text.size());
    n.apply(chars);
    Normalized out{attn::norm_utf8(chars), {}};
    for (const auto& c : chars) out.spans.emplace_back(c.begin, c.end);
    return out;
}

using Spans = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

}  // namespace

TEST_CASE("normalizer: none, null or an empty Sequence keeps the text and its bytes") {
    CHECK(attn::Normalizer::read(nullptr, "tokenizer.json").empty());
    CHECK(normalizer("null").empty());
    const auto r = run(normalizer(R"({"type": "Sequence", "normalizers": []})"), "a\xC3\xA9");
    CHECK(r.text == "a\xC3\xA9");
    CHECK(r.spans == Spans{{0, 1}, {1, 3}});
}

TEST_CASE("normalizer: Lowercase lowers each character, İ into two, and Σ at a word's end into ς") {
    const auto lower = normalizer(R"({"type": "Lowercase"})");
    CHECK(run(lower, "HeLLo W\xC3\x96RLD").text == "hello w\xC3\xB6rld");
    const auto dotted = run(lower, "\xC4\xB0x");  // İx → i̇x: both halves span İ's two bytes
    CHECK(dotted.text == "i\xCC\x87x");
    CHECK(dotted.spans == Spans{{0, 2}, {0, 2}, {2, 3}});
    // ΟΔΟΣ ΣΑ → οδος σα: the last Σ of a word is ς, one before a letter σ
    CHECK(run(lower, "\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3 \xCE\xA3\xCE\x91").text == "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82 \xCF\x83\xCE\xB1");
    CHECK(run(lower, "\xCE\xA3").text == "\xCF\x83");  // alone: no letter before it
}

TEST_CASE("normalizer: NFC composes, orders marks by combining class and spans what it joined") {
    const auto nfc = normalizer(R"({"type": "NFC"})");
    const auto e = run(nfc, "cafe\xCC\x81!");  // e + U+0301 → é
    CHECK(e.text == "caf\xC3\xA9!");
    CHECK(e.spans == Spans{{0, 1}, {1, 2}, {2, 3}, {3, 6}, {6, 7}});
    // ḉ's parts in another order: c, U+0301 (class 230), U+0327 (class 202) → U+1E09
    CHECK(run(nfc, "c\xCC\x81\xCC\xA7").text == "\xE1\xB8\x89");
    CHECK(run(nfc, "a\xCC\x88\xCC\x81").text == "\xC3\xA4\xCC\x81");  // ä, and no ä with an acute
    // a mark of the same class between blocks the second (a + U+0346 + U+0301 stays); one of a
    // lower class does not (a + U+0316 + U+0301 → á + U+0316)
    CHECK(run(nfc, "a\xCD\x86\xCC\x81").text == "a\xCD\x86\xCC\x81");
    CHECK(run(nfc, "a\xCC\x96\xCC\x81").text == "\xC3\xA1\xCC\x96");
    CHECK(run(nfc, "\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8").text == "\xEA\xB0\x81");  // ᄀ ᅡ ᆨ → 각 (Hangul)
    CHECK(run(nfc, "\xE2\x84\xAB").text == "\xC3\x85");  // Å (U+212B, a singleton) → Å (U+00C5)
    CHECK(run(nfc, "\xE0\xA4\x95\xE0\xA4\xBC").text == "\xE0\xA4\x95\xE0\xA4\xBC");  // क + nukta: an exclusion stays apart
    CHECK(run(nfc, "\xCC\x81" "a").text == "\xCC\x81" "a");  // a mark with no starter before it stays
}

TEST_CASE("normalizer: NFD decomposes fully and orders marks by combining class") {
    const auto nfd = normalizer(R"({"type": "NFD"})");
    const auto e = run(nfd, "\xC3\xA9");
    CHECK(e.text == "e\xCC\x81");
    CHECK(e.spans == Spans{{0, 2}, {0, 2}});
    CHECK(run(nfd, "a\xCC\x81\xCC\xA7").text == "a\xCC\xA7\xCC\x81");  // class 202 before 230
    CHECK(run(nfd, "\xEA\xB0\x81").text == "\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8");
}

TEST_CASE("normalizer: Strip, Prepend and Replace, in a Sequence, as Llama 2's file writes them") {
    const auto llama2 = normalizer(R"({"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]})");
    const auto r = run(llama2, "Hi  you");
    CHECK(r.text == "\xE2\x96\x81Hi\xE2\x96\x81\xE2\x96\x81you");
    CHECK(r.spans == Spans{{0, 1}, {0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}});  // the prepended ▁ spans H
    CHECK(run(llama2, "").text.empty());  // nothing is prepended to no text
    CHECK(llama2.prepends("\xE2\x96\x81"));
    CHECK(llama2.writes("\xE2\x96\x81"));
    CHECK_FALSE(normalizer(R"({"type": "NFC"})").writes("\xE2\x96\x81"));

    const auto strip = normalizer(R"({"type": "Strip", "strip_left": true, "strip_right": false})");
    CHECK(run(strip, " \t a b \n").text == "a b \n");
    CHECK(run(normalizer(R"({"type": "Strip"})"), "\xE3\x80\x80" "a ").text == "a");  // U+3000 is white space
    // occurrences left to right, never overlapping; a longer replacement spans what it replaced
    const auto aa = normalizer(R"({"type": "Replace", "pattern": {"String": "aa"}, "content": "b"})");
    const auto three = run(aa, "aaa");
    CHECK(three.text == "ba");
    CHECK(three.spans == Spans{{0, 2}, {2, 3}});
    CHECK(run(aa, "abaabaaaa").text == "abbbbb");
    CHECK(run(normalizer(R"({"type": "Replace", "pattern": {"String": "x"}, "content": ""})"), "axbx").text == "ab");
}

TEST_CASE("normalizer: the kinds the engine does not run are refused by name, with the file") {
    const auto fails = [](const std::string& json, const std::string& needle) {
        INFO(json);
        CHECK(code_of([&] { normalizer(json); }) == attn::Error::Code::bad_checkpoint);
        CHECK_THAT(message_of([&] { normalizer(json); }), Catch::Matchers::Contains(needle));
    };
    fails(R"({"type": "NFKC"})", "tokenizer.json: the normalizer \"NFKC\" is not one this engine runs");
    fails(R"({"type": "StripAccents"})", "the normalizer \"StripAccents\" is not one this engine runs");
    fails(R"({"type": "BertNormalizer", "lowercase": true})", "the normalizer \"BertNormalizer\" is not one");
    fails(R"({"type": "Precompiled", "precompiled_charsmap": "AA=="})", "the normalizer \"Precompiled\" is not one");
    fails(R"({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "NFKD"}]})", "the normalizer \"NFKD\"");
    fails(R"({"type": "Replace", "pattern": {"Regex": " +"}, "content": " "})", "the normalizer Replace has a Regex pattern");
    fails(R"({"type": "Replace", "pattern": {"String": ""}, "content": "x"})", "no non-empty {\"String\": …} pattern");
    fails(R"({"type": "Prepend"})", "the normalizer Prepend has no string \"prepend\"");
    fails(R"({"type": "Strip", "strip_left": "yes"})", "the normalizer Strip: strip_left is not true or false");
    fails(R"({"normalizers": []})", "the normalizer has no \"type\"");
    std::string deep = R"({"type": "NFC"})";
    for (int i = 0; i < 10; ++i) deep = R"({"type": "Sequence", "normalizers": [)" + deep + "]}";
    fails(deep, "nests Sequences more than 8 deep");
}
