// Tests of src/text/unicode.hpp: the generated tables answer as the Unicode
// Character Database says for characters checked by hand (categories from
// UnicodeData.txt), lower-casing, canonical decomposition, UTF-8 helpers.

#include "text/unicode.hpp"
#include "base/types.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace attn::unicode;

TEST_CASE("unicode: letters, numbers, punctuation, marks, controls and White_Space by category") {
    for (char32_t c : {U'a', U'Z', char32_t(0xE9), char32_t(0x3B1), char32_t(0x5D0), char32_t(0x4E00), char32_t(0x3042),
                       char32_t(0x2B0), char32_t(0x1D400), char32_t(0xAA)})
        CHECK(is_letter(c));
    for (char32_t c : {U'1', U' ', U'!', U'_', char32_t(0x301), char32_t(0x1F600), char32_t(0xD7)}) CHECK_FALSE(is_letter(c));
    for (char32_t c : {U'0', U'9', char32_t(0xBD), char32_t(0xB2), char32_t(0x663), char32_t(0x2160), char32_t(0x2460)})
        CHECK(is_number(c));
    CHECK_FALSE(is_number(U'a'));
    for (char32_t c : {U'!', U'_', U'-', char32_t(0x3002), char32_t(0x2014), char32_t(0xBF), char32_t(0x201C)})
        CHECK(is_punctuation(c));
    for (char32_t c : {U'$', U'+', U'^', U'`', char32_t(0x1F600)}) CHECK_FALSE(is_punctuation(c));  // symbols (S*)
    CHECK(is_mark(0x301));
    CHECK(is_mark(0x5B4));
    CHECK_FALSE(is_mark(0x903));  // Mc, not Mn
    for (char32_t c : {char32_t(0), char32_t(7), char32_t(0x7F), char32_t(0x85), char32_t(0x200B), char32_t(0xFEFF),
                       char32_t(0xE000), char32_t(0x378)})
        CHECK(is_control(c));  // Cc, Cf, Co, Cn
    CHECK_FALSE(is_control(U'a'));
    for (char32_t c : {U' ', U'\t', U'\n', U'\v', U'\f', U'\r', char32_t(0x85), char32_t(0xA0), char32_t(0x1680),
                       char32_t(0x2000), char32_t(0x200A), char32_t(0x2028), char32_t(0x2029), char32_t(0x202F),
                       char32_t(0x205F), char32_t(0x3000)})
        CHECK(is_space(c));
    for (char32_t c : {char32_t(0x1C), char32_t(0x200B), char32_t(0xFEFF), char32_t(0x180E), U'a'}) CHECK_FALSE(is_space(c));
}

TEST_CASE("unicode: lower case and canonical decomposition") {
    const auto lower = [](char32_t c) {
        std::u32string s;
        append_lower(s, c);
        return s;
    };
    CHECK(lower(U'A') == U"a");
    CHECK(lower(0xC9) == U"\u00E9");
    CHECK(lower(0x3A3) == U"\u03C3");
    CHECK(lower(0x416) == U"\u0436");
    CHECK(lower(0x130) == U"i\u0307");
    CHECK(lower(0x212A) == U"k");  // KELVIN SIGN
    CHECK(lower(U'a') == U"a");
    const auto nfd = [](char32_t c) {
        std::u32string s;
        append_nfd(s, c);
        return s;
    };
    CHECK(nfd(0xE9) == U"e\u0301");
    CHECK(nfd(0x1E09) == U"c\u0327\u0301");   // ḉ: fully decomposed
    CHECK(nfd(0x212B) == U"A\u030A");         // ANGSTROM SIGN → Å → A + ring
    CHECK(nfd(0xD55C) == U"\u1112\u1161\u11AB");  // 한
    CHECK(nfd(0xAC00) == U"\u1100\u1161");        // 가: no trailing consonant
    CHECK(nfd(0xFB01) == U"\uFB01");          // ﬁ: a compatibility decomposition only
    CHECK(nfd(U'a') == U"a");
}

TEST_CASE("unicode: code points with byte offsets, invalid UTF-8 replaced or refused") {
    const auto cps = code_points("a\xC3\xA9\xE7\x8C\xAB\xF0\x9F\x98\x80");
    REQUIRE(cps.size() == 4);
    CHECK(cps[1].value == 0xE9);
    CHECK(cps[2].begin == 3);
    CHECK(cps[3].end == 10);
    CHECK_THROWS_AS(code_points("\xC3"), attn::Error);
    CHECK(utf8_replacing_invalid("a\xFF" "b\xE2\x82") == "a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD");
    CHECK(utf8_sequence_length("\xED\xA0\x80", 0) == 0);  // a surrogate
    CHECK(utf8_sequence_length("\xC0\x80", 0) == 0);      // overlong
    CHECK(utf8_sequence_length("\xF0\x9F\x98\x80", 0) == 4);
    std::string s;
    append_utf8(s, 0x1F600);
    CHECK(s == "\xF0\x9F\x98\x80");
}
