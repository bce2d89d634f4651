#pragma once
// Strict UTF-8 decoding, the one decoder of every text that enters the core
// (sentences, JSON strings, safetensors names, tokenizer files).

#include <cstddef>
#include <string_view>
#include <vector>

namespace attn {

/// One decoded code point and where it sits in the text (byte offsets).
struct CodePoint {
    char32_t value;
    std::size_t start;
    std::size_t end;
};

/// Decodes UTF-8 strictly (no overlongs, surrogates or values above U+10FFFF),
/// with each code point's byte offsets. Throws attn::Error (bad_text) naming
/// the byte offset of the first invalid sequence.
std::vector<CodePoint> decode_with_offsets(std::string_view text);

/// The same, the code points alone.
std::vector<char32_t> decode_utf8(std::string_view text);

}  // namespace attn
