// Tests of src/text/sentencepiece.hpp on a small Llama-2-shaped tokenizer.json written
// here: the normalizer's ▁, merges over the whole text as a slow reference loop does them,
// byte fallback, fused unknown pieces, ignore_merges, the template's <s> marked as added,
// offsets, display, decode back to the text, and a 20,000-character text without a space
// merged with a number of queued pairs linear in its length. The real Llama 2 file is tested
// in tests/js/tokenizer-modern.test.mjs.

#include "text/sentencepiece.hpp"
#include "families/family.hpp"
#include "text/pretrained_tokenizer.hpp"
#include "base/types.hpp"
#include "matchers.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <utility>
#include <vector>

using testing::code_of;
using testing::message_of;

namespace {

const std::string S = "\xE2\x96\x81";  // ▁

struct Files {
    std::vector<std::string> pieces;  // by id, after <unk> <s> </s> and the 256 byte pieces
    std::vector<std::pair<std::string, std::string>> merges;
    bool byte_fallback = true, fuse_unk = true, ignore_merges = false, unk = true;
};

std::string quote(const std::string& s) {
    std::string out = "\"";
    for (char c : s) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return out + "\"";
}

std::string byte_piece(unsigned b) {
    static const char* const kHex = "0123456789ABCDEF";
    return std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
}

// ids: <unk> 0, <s> 1, </s> 2, <0x00> … <0xFF> 3 … 258, then f.pieces from 259
std::string tokenizer_json(const Files& f) {
    std::vector<std::string> vocab = {"<unk>", "<s>", "</s>"};
    for (unsigned b = 0; b < 256; ++b)
        if (f.byte_fallback) vocab.push_back(byte_piece(b));
        else vocab.push_back("<unused" + std::to_string(b) + ">");
    vocab.insert(vocab.end(), f.pieces.begin(), f.pieces.end());
    std::string v = "{";
    for (std::size_t i = 0; i < vocab.size(); ++i) v += (i ? ", " : "") + quote(vocab[i]) + ": " + std::to_string(i);
    v += "}";
    std::string m = "[";
    for (std::size_t i = 0; i < f.merges.size(); ++i) m += (i ? ", " : "") + quote(f.merges[i].first + " " + f.merges[i].second);
    m += "]";
    return R"({"version": "1.0", "truncation": null, "padding": null,
      "added_tokens": [{"id": 0, "content": "<unk>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
                       {"id": 1, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
                       {"id": 2, "content": "</s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
      "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
      "pre_tokenizer": null,
      "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                         "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
      "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
      "model": {"type": "BPE", "dropout": null, "unk_token": )" + std::string(f.unk ? "\"<unk>\"" : "null") +
           R"(, "continuing_subword_prefix": null, "end_of_word_suffix": null, "fuse_unk": )" + (f.fuse_unk ? "true" : "false") +
           R"(, "byte_fallback": )" + (f.byte_fallback ? "true" : "false") + R"(, "ignore_merges": )" + (f.ignore_merges ? "true" : "false") +
           R"(, "vocab": )" + v + R"(, "merges": )" + m + "}}";
}

std::unique_ptr<attn::PretrainedTokenizer> tokenizer(const Files& f) { return attn::read_family_tokenizer("", tokenizer_json(f), "", "", "", ""); }

Files small() {
    Files f;
    f.pieces = {S, "a", "b", "c", S + "a", "ab", S + "ab", "ca", S + S};
    f.merges = {{S, "a"}, {"a", "b"}, {S + "a", "b"}, {"c", "a"}, {S, S}};
    return f;
}

std::vector<std::int32_t> ids(const std::vector<attn::PretrainedToken>& tokens) {
    std::vector<std::int32_t> out;
    for (const auto& t : tokens) out.push_back(t.id);
    return out;
}

using Ids = std::vector<std::int32_t>;
using Span = std::pair<std::int32_t, std::int32_t>;
constexpr std::int32_t P = 259;  // the first piece after the specials and bytes

// The merge loop as a reference: find the pair of lowest rank, merge every occurrence of it
// left to right, repeat (pieces as strings).
std::vector<std::string> reference_bpe(std::vector<std::string> word, const std::vector<std::pair<std::string, std::string>>& merges) {
    for (;;) {
        std::size_t best = merges.size();
        for (std::size_t i = 0; i + 1 < word.size(); ++i)
            for (std::size_t r = 0; r < best; ++r)
                if (merges[r].first == word[i] && merges[r].second == word[i + 1]) best = r;
        if (best == merges.size()) return word;
        std::vector<std::string> next;
        for (std::size_t i = 0; i < word.size(); ++i) {
            if (i + 1 < word.size() && word[i] == merges[best].first && word[i + 1] == merges[best].second) {
                next.push_back(word[i] + word[i + 1]);
                ++i;
            } else {
                next.push_back(word[i]);
            }
        }
        word = next;
    }
}

}  // namespace

TEST_CASE("sentencepiece: ▁ before the text and for each space, merges, <s> added, offsets, display and decode") {
    const auto tok = tokenizer(small());
    CHECK(tok->kind() == attn::TokenizerKind::sentencepiece_bpe);
    const auto tokens = tok->encode("ab ab");
    // ▁ a b ▁ a b → (▁ a) twice → (▁a b) twice
    REQUIRE(ids(tokens) == Ids{1, P + 6, P + 6});
    CHECK(tokens[0].text == "<s>");
    CHECK(Span(tokens[0].begin, tokens[0].end) == Span(-1, -1));  // added by the template
    CHECK(Span(tokens[1].begin, tokens[1].end) == Span(0, 2));    // Prepend's ▁ spans the first character
    CHECK(Span(tokens[2].begin, tokens[2].end) == Span(2, 5));    // the space's ▁ spans the space
    CHECK(tokens[1].text == S + "ab");
    CHECK(tokens[1].display == "\xE2\x90\xA3" "ab");  // ␣ab
    CHECK(tok->decode(ids(tokens)) == "<s>ab ab");    // the template's token, then the text
    CHECK(tok->decode({P + 6}) == " ab");             // a token on its own keeps its space (a continuation)
    CHECK(tok->display(tok->decode({P + 8})) == "\xE2\x90\xA3\xE2\x90\xA3");  // ▁▁: every space shown
    CHECK(ids(tok->encode("")) == Ids{1});
    // an added token in the text: the text after it gets its own ▁, which decode removes again
    const auto around = tok->encode("ab</s>ab");
    CHECK(ids(around) == Ids{1, P + 6, 2, P + 6});
    CHECK(Span(around[2].begin, around[2].end) == Span(2, 6));
    CHECK(tok->decode(ids(around)) == "<s>ab</s>ab");
}

TEST_CASE("sentencepiece: a character the vocabulary lacks is its bytes, each spanning the character") {
    const auto tok = tokenizer(small());
    const auto tokens = tok->encode("\xE7\x8C\xAB" "c");  // 猫c
    // ▁ 猫(E7 8C AB) c: the bytes as <0xE7> <0x8C> <0xAB> (ids 3 + byte)
    REQUIRE(ids(tokens) == Ids{1, P, 3 + 0xE7, 3 + 0x8C, 3 + 0xAB, P + 3});
    for (int i = 1; i <= 4; ++i) CHECK(Span(tokens[static_cast<std::size_t>(i)].begin, tokens[static_cast<std::size_t>(i)].end) == Span(0, 3));
    CHECK(Span(tokens[5].begin, tokens[5].end) == Span(3, 4));
    CHECK(tokens[2].text == "<0xE7>");
    CHECK(tokens[2].display == "\\xE7");
    CHECK(tok->decode(ids(tokens)) == "<s>\xE7\x8C\xAB" "c");
    CHECK(tok->decode({3 + 0xE7}) == "\xEF\xBF\xBD");  // a byte that is no whole character: U+FFFD
}

TEST_CASE("sentencepiece: without byte fallback, unknown characters are one fused <unk>, and without <unk> an error") {
    Files f = small();
    f.byte_fallback = false;
    const auto fused = tokenizer(f);
    const auto tokens = fused->encode("\xE7\x8C\xAB\xE7\x8A\xAC" "c");  // 猫犬c
    REQUIRE(ids(tokens) == Ids{1, P, 0, P + 3});
    CHECK(Span(tokens[2].begin, tokens[2].end) == Span(0, 6));
    CHECK(fused->decode(ids(tokens)) == "<s><unk>c");  // (without byte fallback, <unk> is a piece of the text)
    f.fuse_unk = false;
    CHECK(ids(tokenizer(f)->encode("\xE7\x8C\xAB\xE7\x8A\xAC")) == Ids{1, P, 0, 0});
    f.unk = false;
    const auto none = tokenizer(f);
    CHECK(code_of([&] { none->encode("\xE7\x8C\xAB"); }) == attn::Error::Code::bad_text);
    CHECK_THAT(message_of([&] { none->encode("\xE7\x8C\xAB"); }), Catch::Matchers::Contains("the character U+732B is not in"));
}

TEST_CASE("sentencepiece: merges over the whole text agree with the reference loop on random texts") {
    const Files f = small();
    const auto tok = tokenizer(f);
    std::mt19937 rng(2);
    for (int trial = 0; trial < 300; ++trial) {
        std::string text;
        for (int k = static_cast<int>(rng() % 16); k >= 0; --k) text += "abc  "[rng() % 5];
        std::vector<std::string> word = {S};
        for (char c : text) word.push_back(c == ' ' ? S : std::string(1, c));
        std::vector<std::string> got;
        const auto tokens = tok->encode(text);
        for (std::size_t i = 1; i < tokens.size(); ++i) got.push_back(tokens[i].text);
        INFO(text);
        REQUIRE(got == reference_bpe(word, f.merges));
        CHECK(tok->decode(ids(tokens)) == "<s>" + text);
    }
}

TEST_CASE("sentencepiece: ignore_merges takes a text that is a whole piece as that piece") {
    Files f = small();
    f.pieces.push_back(S + "cab");  // no merges make it
    CHECK(ids(tokenizer(f)->encode("cab")) == Ids{1, P, P + 3, P + 5});  // ▁ c (ab): "a b" ranks before "c a"
    f.ignore_merges = true;
    CHECK(ids(tokenizer(f)->encode("cab")) == Ids{1, P + 9});
}

TEST_CASE("sentencepiece: a 20,000-character text without a space queues a number of pairs linear in its length") {
    Files f;
    f.pieces = {S, "a"};
    std::string piece = "a";
    for (int k = 0; k < 14; ++k) {  // a a → aa, aa aa → aaaa, … (the quadratic case of a naive loop)
        f.merges.emplace_back(piece, piece);
        piece += piece;
        f.pieces.push_back(piece);
    }
    const auto tok = tokenizer(f);
    const std::string text(20000, 'a');
    const std::uint64_t before = tok->steps();
    const auto tokens = tok->encode(text);
    // the added-token automaton's 2 moves per byte, the merge loop's 3 pairs per symbol
    CHECK(tok->steps() - before <= 5 * (text.size() + 1));
    std::size_t letters = 0;
    for (std::size_t i = 2; i < tokens.size(); ++i) letters += tokens[i].text.size();
    CHECK(letters == text.size());
    CHECK(tokens.size() < 40);
    CHECK(tok->decode(ids(tokens)) == "<s>" + text);
}

TEST_CASE("sentencepiece: a family asking for another kind refuses it by name, and files that do not fit are refused") {
    const std::string json = tokenizer_json(small());
    CHECK_THAT(message_of([&] { attn::read_family_tokenizer("gpt2", json, "", "", "", ""); }),
               Catch::Matchers::Contains("tokenizer.json: it is a SentencePiece-style BPE (Llama 2), not a byte-level BPE "
                                         "split by GPT-2's pattern (GPT-2)"));
    const auto replaced = [&](const std::string& from, const std::string& to) {
        std::string out = json;
        return out.replace(out.find(from), from.size(), to);
    };
    std::string bad = replaced("{\"type\": \"ByteFallback\"}", "{\"type\": \"ByteLevel\"}");
    CHECK_THAT(message_of([&] { attn::read_family_tokenizer("", bad, "", "", "", ""); }),
               Catch::Matchers::Contains("the decoder \"ByteLevel\" does not fit a SentencePiece-style BPE"));
    bad = replaced("\"pre_tokenizer\": null", "\"pre_tokenizer\": {\"type\": \"Digits\"}");
    CHECK_THAT(message_of([&] { attn::read_family_tokenizer("", bad, "", "", "", ""); }),
               Catch::Matchers::Contains("the pre_tokenizer does not end with ByteLevel"));
}
