// libFuzzer harness of the subword tokenizers (src/text/bpe.hpp, sentencepiece.hpp,
// wordpiece.hpp and the tokenizer.json pipeline) on small vocabularies written here.
// Input: byte 0 = which tokenizer, the rest = the text:
//   bit 0 set: WordPiece (bit 1: without lower-casing);
//   bit 0 clear: a BPE, by bits 1–3:
//     0 GPT-2's files (vocab.json + merges.txt)
//     1 tokenizer.json: Split by Llama 3's pattern, ByteLevel, ignore_merges, a BOS template
//     2 tokenizer.json: NFC, Split by Qwen2's pattern, ByteLevel, added tokens
//     3 tokenizer.json: Digits then ByteLevel with GPT-2's pattern (SmolLM2)
//     4 tokenizer.json: Lowercase, ByteLevel with add_prefix_space (issue #36 item 6)
//     5 tokenizer.json: SentencePiece-style (Prepend + Replace ▁, byte_fallback, <s> template)
//     6 tokenizer.json: SentencePiece-style without byte fallback (fused <unk>)
//     7 tokenizer.json with settings from the input: the rest is "SECTIONS\0TEXT", SECTIONS
//       spliced into a file of the byte-level vocabulary (bit 4 clear) or the SentencePiece
//       one (bit 4 set) as its other keys ("normalizer": …, "pre_tokenizer": …, …)
// Invariants: reading a file refuses with bad_checkpoint only; encoding lets only attn::Error
// escape, bad_text exactly for invalid UTF-8, too_many_tokens exactly above
// kMaxSentenceBytes; every token is added by the template (-1, -1) or spans a non-empty range
// of the text on character boundaries, in order; the spans cover the text (unless the
// settings delete characters); decode(encode(text)) is the template's tokens then the text
// where the kind keeps it; the work (steps()) is linear in the text; WordPiece: [CLS] first,
// [SEP] last; the same text twice gives the same tokens.

#include "check.hpp"
#include "text/bpe.hpp"
#include "checkpoints/pretrained.hpp"
#include "families/family.hpp"
#include "text/tokenizer.hpp"
#include "text/unicode.hpp"
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

std::string utf8(char32_t u) {
    std::string p;
    attn::unicode::append_utf8(p, u);
    return p;
}

std::string quote(const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
}

const std::string G = "\xC4\xA0";  // Ġ
const std::string S = "\xE2\x96\x81";  // ▁

// The byte alphabet of GPT-2 (bpe.hpp) with a few merges; <|endoftext|> and <|bos|> last.
std::vector<std::string> byte_level_pieces() {
    std::vector<std::string> pieces;
    for (unsigned b = 0; b < 256; ++b) pieces.push_back(utf8(attn::byte_to_unicode(static_cast<std::uint8_t>(b))));
    // "Ã©" is é's bytes C3 A9 in the byte alphabet
    for (const std::string& p : {std::string("th"), std::string("the"), G + "t", G + "the", std::string("er"), std::string("he"),
                                 std::string("\xC3\x83\xC2\xA9"), std::string("12"), std::string("123"), G + "1",
                                 std::string("<|endoftext|>"), std::string("<|bos|>")})
        pieces.push_back(p);
    return pieces;
}
const char* const kByteLevelMerges = R"(["t h", "th e", "Ġ t", "Ġt he", "h e", "e r", "Ã ©", "1 2", "12 3", "Ġ 1"])";

std::string vocab_json(const std::vector<std::string>& pieces) {
    std::string v = "{";
    for (std::size_t i = 0; i < pieces.size(); ++i) v += (i ? ", " : "") + quote(pieces[i]) + ": " + std::to_string(i);
    return v + "}";
}

std::string template_of(const std::string& token, std::size_t id) {
    return R"("post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": )" + quote(token) +
           R"(, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}], "pair": [], "special_tokens": {)" + quote(token) +
           R"(: {"id": )" + quote(token) + R"(, "ids": [)" + std::to_string(id) + R"(], "tokens": [)" + quote(token) + "]}}}";
}

// A byte-level tokenizer.json with `sections` as its other keys.
std::string byte_level_json(const std::string& sections, const std::string& model_extra = "") {
    const std::vector<std::string> pieces = byte_level_pieces();
    const std::size_t eot = pieces.size() - 2, bos = pieces.size() - 1;
    return R"({"added_tokens": [{"id": )" + std::to_string(eot) + R"(, "content": "<|endoftext|>", "special": true, "normalized": false},
        {"id": )" + std::to_string(bos) + R"(, "content": "<|bos|>", "special": true, "normalized": false}], )" +
           sections + R"(, "model": {"type": "BPE")" + model_extra + ", \"vocab\": " + vocab_json(pieces) +
           ", \"merges\": " + kByteLevelMerges + "}}";
}

std::string byte_level_template() { return template_of("<|bos|>", byte_level_pieces().size() - 1); }

// A SentencePiece-style tokenizer.json (<unk> 0, <s> 1, </s> 2, <0x00> … <0xFF>, pieces).
std::string sentencepiece_json(const std::string& sections, bool byte_fallback) {
    std::vector<std::string> pieces = {"<unk>", "<s>", "</s>"};
    static const char* const kHex = "0123456789ABCDEF";
    for (unsigned b = 0; b < 256; ++b) pieces.push_back(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">");
    for (const std::string& p : {S, std::string("t"), std::string("h"), std::string("e"), std::string("a"), S + "t",
                                 std::string("he"), S + "the", S + "th", S + S, std::string("\xC3\xA9"), std::string("\xE7\x8C\xAB")})
        pieces.push_back(p);
    return R"({"added_tokens": [{"id": 0, "content": "<unk>", "special": true, "normalized": false},
        {"id": 1, "content": "<s>", "special": true, "normalized": false}, {"id": 2, "content": "</s>", "special": true, "normalized": false}], )" +
           sections + R"(, "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": )" +
           (byte_fallback ? "true" : "false") + ", \"vocab\": " + vocab_json(pieces) + ", \"merges\": [\"" + S + " t\", \"h e\", \"" + S +
           "t h\", \"" + S + "th e\", \"" + S + " " + S + "\"]}}";
}

const std::string kSentencePieceSections =
    R"("normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}, "pre_tokenizer": null, )" +
    template_of("<s>", 1);

const char* const kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+)";
const char* const kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+)";

std::string split_then_byte_level(const char* pattern) {
    return std::string(R"("pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": ")") + pattern +
           R"("}, "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]})";
}

std::unique_ptr<attn::PretrainedTokenizer> from_json(const std::string& json) {
    return attn::read_family_tokenizer("", json, "", "", "", "");
}

// GPT-2's files: the byte-level vocabulary as vocab.json, its merges as merges.txt.
std::unique_ptr<attn::PretrainedTokenizer> make_gpt2() {
    const std::string merges = "#version: 0.2\nt h\nth e\n" + G + " t\n" + G + "t he\nh e\ne r\n\xC3\x83 \xC2\xA9\n1 2\n12 3\n" + G + " 1\n";
    return attn::read_family_tokenizer("gpt2", "", vocab_json(byte_level_pieces()), merges, "", "");
}

struct Kind {
    std::unique_ptr<attn::PretrainedTokenizer> tok;
    std::string decoded_prefix;  ///< what decode(encode(text)) has before the text
    bool keeps_text;             ///< decode(encode(text)) is the prefix and the text
};

std::vector<Kind> make_kinds() {
    std::vector<Kind> kinds;
    kinds.push_back({make_gpt2(), "", true});
    kinds.push_back({from_json(byte_level_json(split_then_byte_level(kLlama3) + ", " + byte_level_template(), R"(, "ignore_merges": true)")),
                     "<|bos|>", true});
    kinds.push_back({from_json(byte_level_json(R"("normalizer": {"type": "NFC"}, )" + split_then_byte_level(kQwen2))), "", false});
    kinds.push_back({from_json(byte_level_json(R"("pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": true},
        {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}]})")), "", true});
    kinds.push_back({from_json(byte_level_json(R"("normalizer": {"type": "Lowercase"}, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": true, "use_regex": true})")),
                     "", false});
    kinds.push_back({from_json(sentencepiece_json(kSentencePieceSections, true)), "<s>", true});
    kinds.push_back({from_json(sentencepiece_json(kSentencePieceSections, false)), "<s>", false});
    return kinds;
}

// Checks the tokens of a BPE: spans, coverage, decode, the work done, a second run.
void check_bpe(const attn::PretrainedTokenizer& tok, const std::string& text, const std::vector<attn::PretrainedToken>& tokens,
               const Kind* kind, std::uint64_t steps) {
    const auto n = static_cast<std::int32_t>(text.size());
    std::vector<std::int32_t> ids;
    std::vector<bool> covered(text.size(), false);
    std::int32_t last_begin = 0;
    for (const auto& t : tokens) {
        ids.push_back(t.id);
        FUZZ_CHECK(t.id >= 0 && t.id < tok.vocab_size(), "id %d", t.id);
        if (t.begin == -1 && t.end == -1) continue;  // the template's
        FUZZ_CHECK(t.begin >= last_begin && t.begin < t.end && t.end <= n, "span [%d, %d)", t.begin, t.end);
        FUZZ_CHECK(boundary(text, t.begin) && boundary(text, t.end), "span [%d, %d) cuts a character", t.begin, t.end);
        for (std::int32_t i = t.begin; i < t.end; ++i) covered[static_cast<std::size_t>(i)] = true;
        last_begin = t.begin;
    }
    if (kind) {
        for (std::size_t i = 0; i < covered.size(); ++i) FUZZ_CHECK(covered[i], "byte %zu is in no token", i);
        // the work: the automata's 2 moves per byte, the merge loop's 3 pairs per symbol (a
        // normalizer may make at most a few symbols of a byte)
        FUZZ_CHECK(steps <= 16 * (text.size() + 4), "%llu steps for %zu bytes", static_cast<unsigned long long>(steps), text.size());
        // SentencePiece decodes ▁ as a space: a ▁ written in the text does not come back
        if (kind->keeps_text && text.find(S) == std::string::npos)
            FUZZ_CHECK(tok.decode(ids) == kind->decoded_prefix + text, "decode(encode(text)) differs");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::vector<Kind> kinds = make_kinds();
    static const std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n##s\ncat\n##at\na\n##a\n,\n.\n\xE7\x8C\xAB\nhe\n##llo\n";
    static const std::unique_ptr<attn::PretrainedTokenizer> lower = attn::read_family_tokenizer("bert", "", "", "", vocab, "");
    static const std::unique_ptr<attn::PretrainedTokenizer> cased =
        attn::read_family_tokenizer("bert", "", "", "", vocab, "{\"do_lower_case\": false}");
    if (size == 0) return 0;
    const bool wordpiece = data[0] & 1;
    const unsigned which = (data[0] >> 1) & 7;
    std::string text(reinterpret_cast<const char*>(data + 1), size - 1);

    // kind 7: the settings come from the input
    std::unique_ptr<attn::PretrainedTokenizer> fuzzed;
    if (!wordpiece && which == 7) {
        const std::size_t nul = text.find('\0');
        if (nul == std::string::npos) return 0;
        const std::string sections = text.substr(0, nul);
        text = text.substr(nul + 1);
        try {
            fuzzed = from_json((data[0] & 16) ? sentencepiece_json(sections, true) : byte_level_json(sections));
        } catch (const attn::Error& e) {
            FUZZ_CHECK(e.code() == attn::Error::Code::bad_checkpoint, "a file refused with %s: %s", attn::error_code_name(e.code()), e.what());
            return 0;
        }
    }
    const Kind* kind = wordpiece || which == 7 ? nullptr : &kinds[which];
    const attn::PretrainedTokenizer& tok = wordpiece ? ((data[0] & 2) ? *cased : *lower) : fuzzed ? *fuzzed : *kind->tok;

    std::vector<attn::PretrainedToken> tokens;
    const std::uint64_t before = tok.steps();
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
    const std::uint64_t steps = tok.steps() - before;
    FUZZ_CHECK(text.size() <= attn::kMaxSentenceBytes && valid_utf8(text), "accepted a bad text");
    const auto n = static_cast<std::int32_t>(text.size());
    if (!wordpiece) {
        check_bpe(tok, text, tokens, kind, steps);
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
        // the automaton's 2 moves per byte, and per character of a word at most 6 lookups
        // (the longest piece, "##llo", has 5 bytes), a word being at most 100 characters
        FUZZ_CHECK(steps <= 2 * text.size() + 8 * (text.size() + 1), "%llu steps for %zu bytes", static_cast<unsigned long long>(steps), text.size());
    }
    const std::vector<attn::PretrainedToken> again = tok.encode(text);
    FUZZ_CHECK(again.size() == tokens.size(), "a second run differs");
    for (std::size_t i = 0; i < tokens.size(); ++i) FUZZ_CHECK(again[i].id == tokens[i].id, "a second run differs at %zu", i);
    return 0;
}
