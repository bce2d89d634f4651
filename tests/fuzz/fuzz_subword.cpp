// libFuzzer harness of the subword tokenizers (src/text/bpe.hpp, wordpiece.hpp)
// on small vocabularies written here. Input: byte 0 = which (bit 0: WordPiece,
// bit 1: WordPiece without lower-casing), the rest = the text.
// Invariants: only attn::Error escapes, bad_text exactly for invalid UTF-8 and
// too_many_tokens exactly above kMaxSentenceBytes; BPE: the tokens' bytes are
// the text (decode gives it back), offsets ordered, inside the text, on
// character boundaries; WordPiece: [CLS] first, [SEP] last, every other token a
// non-empty span of the text on character boundaries, in order; the same text
// twice gives the same tokens.

#include "check.hpp"
#include "text/bpe.hpp"
#include "checkpoints/pretrained.hpp"
#include "families/family.hpp"
#include "text/tokenizer.hpp"
#include "base/types.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

bool valid_utf8(const std::string& s) {
    try {
        attn::decode_utf8(s);
        return true;
    } catch (const attn::Error&) {
        return false;
    }
}

bool boundary(const std::string& s, std::int32_t at) {
    return at == static_cast<std::int32_t>(s.size()) || (static_cast<unsigned char>(s[static_cast<std::size_t>(at)]) & 0xC0) != 0x80;
}

// The byte alphabet of GPT-2 (bpe.hpp) with a few merges and <|endoftext|>.
std::unique_ptr<attn::PretrainedTokenizer> make_bpe() {
    std::string vocab = "{";
    std::vector<std::string> pieces;
    for (unsigned b = 0; b < 256; ++b) {
        std::string p;
        const char32_t u = attn::byte_to_unicode(static_cast<std::uint8_t>(b));
        if (u < 0x80) p += static_cast<char>(u);
        else p += {static_cast<char>(0xC0 | (u >> 6)), static_cast<char>(0x80 | (u & 0x3F))};
        pieces.push_back(p);
    }
    const std::string G = "\xC4\xA0";  // Ġ
    // "Ã©" is é's bytes C3 A9 in the byte alphabet
    for (const char* p : {"th", "the", "\xC4\xA0t", "\xC4\xA0the", "er", "he", "\xC3\x83\xC2\xA9", "<|endoftext|>"}) pieces.push_back(p);
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        std::string q;
        for (char c : pieces[i]) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
        vocab += (i ? ", \"" : "\"") + q + "\": " + std::to_string(i);
    }
    vocab += "}";
    const std::string merges = "#version: 0.2\nt h\nth e\n" + G + " t\nh e\n" + G + "t he\ne r\n\xC3\x83 \xC2\xA9\n";
    return attn::read_family_tokenizer("gpt2", "", vocab, merges, "", "");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::unique_ptr<attn::PretrainedTokenizer> bpe = make_bpe();
    static const std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n##s\ncat\n##at\na\n##a\n,\n.\n\xE7\x8C\xAB\nhe\n##llo\n";
    static const std::unique_ptr<attn::PretrainedTokenizer> lower = attn::read_family_tokenizer("bert", "", "", "", vocab, "");
    static const std::unique_ptr<attn::PretrainedTokenizer> cased =
        attn::read_family_tokenizer("bert", "", "", "", vocab, "{\"do_lower_case\": false}");
    if (size == 0) return 0;
    const attn::PretrainedTokenizer& tok = (data[0] & 1) ? ((data[0] & 2) ? *cased : *lower) : *bpe;
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);

    std::vector<attn::PretrainedToken> tokens;
    try {
        tokens = tok.encode(text);
    } catch (const attn::Error& e) {
        if (text.size() > attn::kMaxSentenceBytes) {
            FUZZ_CHECK(e.code() == attn::Error::Code::too_many_tokens, "long text: %s", e.what());
        } else {
            FUZZ_CHECK(e.code() == attn::Error::Code::bad_text && !valid_utf8(text), "refused: %s", e.what());
        }
        return 0;
    }
    FUZZ_CHECK(text.size() <= attn::kMaxSentenceBytes && valid_utf8(text), "accepted a bad text");
    const auto n = static_cast<std::int32_t>(text.size());
    if (!(data[0] & 1)) {
        std::vector<std::int32_t> ids;
        std::int32_t last_begin = 0;
        for (const auto& t : tokens) {
            FUZZ_CHECK(t.begin >= last_begin && t.begin < t.end && t.end <= n, "span [%d, %d)", t.begin, t.end);
            FUZZ_CHECK(boundary(text, t.begin) && boundary(text, t.end), "span [%d, %d) cuts a character", t.begin, t.end);
            last_begin = t.begin;
            ids.push_back(t.id);
        }
        FUZZ_CHECK(tok.decode(ids) == text, "decode(encode(text)) differs");
    } else {
        FUZZ_CHECK(tokens.size() >= 2 && tokens.front().id == 2 && tokens.back().id == 3, "no [CLS] … [SEP]");
        std::int32_t last_begin = 0;
        for (std::size_t i = 1; i + 1 < tokens.size(); ++i) {
            const auto& t = tokens[i];
            FUZZ_CHECK(t.begin >= last_begin && t.begin < t.end && t.end <= n, "piece %zu span [%d, %d)", i, t.begin, t.end);
            FUZZ_CHECK(boundary(text, t.begin) && boundary(text, t.end), "piece %zu cuts a character", i);
            FUZZ_CHECK(t.id >= 0 && t.id < tok.vocab_size(), "piece %zu id %d", i, t.id);
            last_begin = t.begin;
        }
    }
    const std::vector<attn::PretrainedToken> again = tok.encode(text);
    FUZZ_CHECK(again.size() == tokens.size(), "a second run differs");
    for (std::size_t i = 0; i < tokens.size(); ++i) FUZZ_CHECK(again[i].id == tokens[i].id, "a second run differs at %zu", i);
    return 0;
}
