#include "text/unicode.hpp"

#include "text/tokenizer.hpp"
#include "text/unicode/tables.hpp"

#include <algorithm>
#include <utility>

namespace attn::unicode {
namespace {

bool in(const tables::CodeRange* table, std::size_t size, char32_t c) {
    const tables::CodeRange* end = table + size;
    // the first range whose last >= c
    const tables::CodeRange* r =
        std::lower_bound(table, end, c, [](const tables::CodeRange& range, char32_t x) { return range.last < x; });
    return r != end && r->first <= c;
}

// Hangul syllables decompose by formula (Unicode §3.12).
constexpr char32_t kHangulFirst = 0xAC00, kHangulLast = 0xD7A3;
constexpr char32_t kLeadBase = 0x1100, kVowelBase = 0x1161, kTrailBase = 0x11A7;
constexpr char32_t kVowels = 21, kTrails = 28;

}  // namespace

bool is_letter(char32_t c) { return in(tables::letter, tables::letter_size, c); }
bool is_number(char32_t c) { return in(tables::number, tables::number_size, c); }
bool is_punctuation(char32_t c) { return in(tables::punctuation, tables::punctuation_size, c); }
bool is_mark(char32_t c) { return in(tables::mark, tables::mark_size, c); }
bool is_control(char32_t c) { return in(tables::control, tables::control_size, c); }
bool is_space(char32_t c) { return in(tables::space, tables::space_size, c); }
const char* unicode_version() { return tables::unicode_version; }

void append_lower(std::u32string& out, char32_t c) {
    if (c < 0x80) {
        out += (c >= U'A' && c <= U'Z') ? c + 32 : c;
        return;
    }
    if (c == 0x130) {  // İ: the one code point whose lower case is two
        out += U'i';
        out += char32_t(0x307);
        return;
    }
    const tables::CodeMap* end = tables::lower + tables::lower_size;
    const tables::CodeMap* m =
        std::lower_bound(tables::lower, end, c, [](const tables::CodeMap& map, char32_t x) { return map.from < x; });
    out += (m != end && m->from == c) ? m->to : c;
}

void append_nfd(std::u32string& out, char32_t c) {
    if (c < 0xC0) {
        out += c;
        return;
    }
    if (c >= kHangulFirst && c <= kHangulLast) {
        const char32_t s = c - kHangulFirst;
        out += kLeadBase + s / (kVowels * kTrails);
        out += kVowelBase + (s % (kVowels * kTrails)) / kTrails;
        if (s % kTrails) out += kTrailBase + s % kTrails;
        return;
    }
    const tables::Decomposition* end = tables::decomposition + tables::decomposition_size;
    const tables::Decomposition* d = std::lower_bound(
        tables::decomposition, end, c, [](const tables::Decomposition& dec, char32_t x) { return dec.code < x; });
    if (d == end || d->code != c) {
        out += c;
        return;
    }
    for (char32_t part : d->parts)
        if (part) out += part;
}

int combining_class(char32_t c) {
    if (c < 0x300) return 0;
    const tables::CombiningClass* end = tables::combining + tables::combining_size;
    const tables::CombiningClass* r = std::lower_bound(
        tables::combining, end, c, [](const tables::CombiningClass& range, char32_t x) { return range.last < x; });
    return r != end && r->first <= c ? r->value : 0;
}

char32_t compose(char32_t a, char32_t b) {
    // Hangul: a leading consonant and a vowel make an LV syllable, an LV syllable and a trailing consonant an LVT
    if (a >= kLeadBase && a < kLeadBase + 19 && b >= kVowelBase && b < kVowelBase + kVowels)
        return kHangulFirst + ((a - kLeadBase) * kVowels + (b - kVowelBase)) * kTrails;
    if (a >= kHangulFirst && a <= kHangulLast && (a - kHangulFirst) % kTrails == 0 && b > kTrailBase &&
        b < kTrailBase + kTrails)
        return a + (b - kTrailBase);
    const tables::Composition* end = tables::composition + tables::composition_size;
    const tables::Composition* m =
        std::lower_bound(tables::composition, end, std::make_pair(a, b), [](const tables::Composition& x, std::pair<char32_t, char32_t> k) {
            return x.first != k.first ? x.first < k.first : x.second < k.second;
        });
    return m != end && m->first == a && m->second == b ? m->composed : 0;
}

void append_utf8(std::string& out, char32_t c) {
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else if (c < 0x800) {
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        out += static_cast<char>(0xE0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (c >> 18));
        out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    }
}

std::size_t utf8_sequence_length(std::string_view bytes, std::size_t i) {
    const auto b0 = static_cast<unsigned char>(bytes[i]);
    if (b0 < 0x80) return 1;
    std::size_t len;
    char32_t c, min;
    if (b0 >= 0xC2 && b0 <= 0xDF) len = 2, c = b0 & 0x1F, min = 0x80;
    else if (b0 >= 0xE0 && b0 <= 0xEF) len = 3, c = b0 & 0x0F, min = 0x800;
    else if (b0 >= 0xF0 && b0 <= 0xF4) len = 4, c = b0 & 0x07, min = 0x10000;
    else return 0;
    if (i + len > bytes.size()) return 0;
    for (std::size_t k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(bytes[i + k]);
        if ((b & 0xC0) != 0x80) return 0;
        c = (c << 6) | (b & 0x3F);
    }
    if (c < min || (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF) return 0;
    return len;
}

std::string utf8_replacing_invalid(std::string_view bytes) {
    std::string out;
    for (std::size_t i = 0; i < bytes.size();) {
        const std::size_t len = utf8_sequence_length(bytes, i);
        if (len == 0) {
            out += "\xEF\xBF\xBD";  // U+FFFD
            ++i;
        } else {
            out.append(bytes.substr(i, len));
            i += len;
        }
    }
    return out;
}

std::vector<CodePoint> code_points(std::string_view text) {
    const std::vector<char32_t> values = decode_utf8(text);
    std::vector<CodePoint> out;
    out.reserve(values.size());
    std::uint32_t at = 0;
    for (char32_t c : values) {
        const auto next = static_cast<std::uint32_t>(at + utf8_length(c));
        out.push_back({c, at, next});
        at = next;
    }
    return out;
}

}  // namespace attn::unicode
