#include "base/utf8.hpp"

#include "base/types.hpp"

#include <string>

namespace attn {

std::vector<CodePoint> decode_with_offsets(std::string_view s) {
    std::vector<CodePoint> out;
    out.reserve(s.size());
    std::size_t i = 0;
    const auto fail = [&](std::size_t at, const char* why) {
        throw Error(Error::Code::bad_text, "invalid UTF-8 at byte " + std::to_string(at) + ": " + why, Error::Kind::type);
    };
    while (i < s.size()) {
        const auto b0 = static_cast<unsigned char>(s[i]);
        int extra = 0;
        char32_t c = 0;
        char32_t min = 0;
        if (b0 < 0x80) {
            c = b0;
        } else if (b0 >= 0xC2 && b0 <= 0xDF) {
            extra = 1, c = b0 & 0x1F, min = 0x80;
        } else if (b0 >= 0xE0 && b0 <= 0xEF) {
            extra = 2, c = b0 & 0x0F, min = 0x800;
        } else if (b0 >= 0xF0 && b0 <= 0xF4) {
            extra = 3, c = b0 & 0x07, min = 0x10000;
        } else if (b0 >= 0x80 && b0 <= 0xBF) {
            fail(i, "unexpected continuation byte");
        } else {
            fail(i, "byte cannot start a character");
        }
        for (int k = 1; k <= extra; ++k) {
            if (i + k >= s.size()) fail(i, "sequence is cut off");
            const auto b = static_cast<unsigned char>(s[i + k]);
            if ((b & 0xC0) != 0x80) fail(i, "missing continuation byte");
            c = (c << 6) | (b & 0x3F);
        }
        if (extra > 0 && c < min) fail(i, "overlong encoding");
        if (c >= 0xD800 && c <= 0xDFFF) fail(i, "surrogate code point");
        if (c > 0x10FFFF) fail(i, "code point above U+10FFFF");
        out.push_back({c, i, i + extra + 1});
        i += extra + 1;
    }
    return out;
}

std::vector<char32_t> decode_utf8(std::string_view text) {
    std::vector<char32_t> out;
    for (const CodePoint& cp : decode_with_offsets(text)) out.push_back(cp.value);
    return out;
}

}  // namespace attn
