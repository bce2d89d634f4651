#pragma once
// Unicode for the subword tokenizers (bpe.cpp, wordpiece.cpp): the character
// classes GPT-2's pre-tokenizer and BERT's basic tokenizer test, lower-casing
// and canonical decomposition, from generated tables (unicode/tables.cpp, made by
// unicode/gen_tables.py from Python's unicodedata; unicode_version() says which
// Unicode). UTF-8 decoding is the word tokenizer's strict decode_utf8.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::unicode {

bool is_letter(char32_t c);       ///< general category L*  (\p{L})
bool is_number(char32_t c);       ///< general category N*  (\p{N})
bool is_punctuation(char32_t c);  ///< general category P*
bool is_mark(char32_t c);         ///< general category Mn (non-spacing marks: accents)
bool is_control(char32_t c);      ///< general category C* (controls, format, unassigned, private use)
bool is_space(char32_t c);        ///< White_Space (\s in Python's `regex`)
const char* unicode_version();

/// Appends the lower case of c (Python's str.lower() of one character; no
/// context, so a final sigma stays σ).
void append_lower(std::u32string& out, char32_t c);
/// Appends the canonical decomposition (NFD) of c, Hangul syllables included.
/// Combining marks keep their order (no canonical reordering).
void append_nfd(std::u32string& out, char32_t c);

/// The canonical combining class of c (0 for a starter): NFC's and NFD's canonical ordering.
int combining_class(char32_t c);
/// The primary composite of the pair (a, b) (NFC's canonical composition, Hangul included),
/// or 0 when the pair does not compose.
char32_t compose(char32_t a, char32_t b);

/// The length of c in UTF-8 (1–4 bytes).
inline std::size_t utf8_length(char32_t c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }
/// Appends c as UTF-8 (c must be a Unicode scalar value).
void append_utf8(std::string& out, char32_t c);

/// The length of the valid UTF-8 sequence at bytes[i] (1–4), or 0 when none starts there.
std::size_t utf8_sequence_length(std::string_view bytes, std::size_t i);
/// The bytes as UTF-8, each byte that is not part of a valid sequence replaced by U+FFFD.
std::string utf8_replacing_invalid(std::string_view bytes);

/// One code point of a UTF-8 text and its bytes [begin, end).
struct CodePoint {
    char32_t value;
    std::uint32_t begin, end;
};
/// Decodes strictly (decode_utf8's rules and its attn::Error, code bad_text).
std::vector<CodePoint> code_points(std::string_view text);

}  // namespace attn::unicode
