// libFuzzer harness of the tokenizer (src/text/tokenizer.hpp).
// Input: byte 0 = options (bit 0: lowercase), the rest = the sentence bytes.
// Invariants: tokenize() and decode_utf8() agree on what is valid UTF-8 (and
// throw attn::Error, nothing else); tokens are ordered, non-empty,
// non-overlapping spans of the input; without lower-casing a token's text is
// exactly its bytes; ids are [UNK] or the hash of the text; what lies between
// tokens is whitespace (tokenizes to nothing); a token on its own tokenizes to
// itself; the result does not depend on running it twice.

#include "check.hpp"
#include "text/tokenizer.hpp"
#include "base/types.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

bool valid_utf8(std::string_view s) {
    try {
        attn::decode_utf8(s);
        return true;
    } catch (const attn::Error& e) {
        FUZZ_CHECK(e.kind() == attn::Error::Kind::type, "decode_utf8 error of kind range: %s", e.what());
        return false;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    attn::TokenizeOptions options;
    options.lowercase = data[0] & 1;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

    std::vector<attn::Token> tokens;
    try {
        tokens = attn::tokenize(text, options);
    } catch (const attn::Error& e) {
        if (text.size() > attn::kMaxSentenceBytes) return 0;  // refused before decoding, as documented
        FUZZ_CHECK(!valid_utf8(text), "tokenize refused valid UTF-8: %s", e.what());
        return 0;
    }
    FUZZ_CHECK(text.size() <= attn::kMaxSentenceBytes, "a sentence of %zu bytes was accepted", text.size());
    FUZZ_CHECK(valid_utf8(text), "tokenize accepted invalid UTF-8");

    std::size_t previous_end = 0;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const attn::Token& t = tokens[i];
        FUZZ_CHECK(t.start >= previous_end && t.end > t.start && t.end <= text.size(),
                   "token %zu spans [%zu, %zu) after %zu in %zu bytes", i, t.start, t.end, previous_end, text.size());
        const std::string_view bytes = text.substr(t.start, t.end - t.start);
        if (!options.lowercase) FUZZ_CHECK(t.text == bytes, "token %zu text differs from its bytes", i);
        FUZZ_CHECK(t.id == attn::kUnknownId || t.id == attn::token_id(t.text), "token %zu id %d", i, t.id);
        FUZZ_CHECK(t.id >= 1 && t.id < attn::kVocabSize, "token %zu id %d out of range", i, t.id);
        FUZZ_CHECK(attn::tokenize(text.substr(previous_end, t.start - previous_end)).empty(),
                   "the gap before token %zu is not whitespace", i);
        const std::vector<attn::Token> alone = attn::tokenize(bytes, options);
        FUZZ_CHECK(alone.size() == 1 && alone[0].text == t.text && alone[0].id == t.id,
                   "token %zu on its own gives %zu tokens", i, alone.size());
        previous_end = t.end;
    }
    FUZZ_CHECK(attn::tokenize(text.substr(previous_end)).empty(), "the text after the last token is not whitespace");

    const std::vector<attn::Token> again = attn::tokenize(text, options);
    FUZZ_CHECK(again.size() == tokens.size(), "a second run gives %zu tokens, not %zu", again.size(), tokens.size());
    for (std::size_t i = 0; i < tokens.size(); ++i)
        FUZZ_CHECK(again[i].text == tokens[i].text && again[i].start == tokens[i].start, "a second run differs at %zu", i);
    return 0;
}
