// Tests of src/text/wordpiece.hpp on a vocabulary written here, with the
// expected tokens worked out by hand from BERT's algorithm (transformers'
// BasicTokenizer + WordpieceTokenizer): cleaning, lower-casing and accents,
// CJK, punctuation, "##" pieces, the 100-character limit, [MASK], offsets,
// both readers, and bad files.

#include "checkpoints/pretrained.hpp"
#include "families/family.hpp"
#include "text/tokenizer.hpp"
#include "base/types.hpp"
#include "matchers.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

using testing::code_of;
using testing::message_of;

namespace {

// ids are line numbers
const std::vector<std::string> kPieces = {
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "un", "##aff", "##able", ",", "!", ".",
    "\xE7\x8C\xAB" /* 猫 */, "cat", "##s", "a", "##a", "'", "t", "don", "##t", "naive",
    "\xE1\x84\x92" /* ᄒ */, "##\xE1\x85\xA1" /* ##ᅡ */, "##\xE1\x86\xAB" /* ##ᆫ */, "Hello", "##llo", "he",
};

std::string vocab_txt() {
    std::string out;
    for (const std::string& p : kPieces) out += p + "\n";
    return out;
}

std::string tokenizer_json(bool lowercase) {
    std::string vocab = "{";
    for (std::size_t i = 0; i < kPieces.size(); ++i) vocab += (i ? ", \"" : "\"") + kPieces[i] + "\": " + std::to_string(i);
    vocab += "}";
    return std::string("{\"normalizer\": {\"type\": \"BertNormalizer\", \"clean_text\": true, \"handle_chinese_chars\": true, "
                       "\"strip_accents\": null, \"lowercase\": ") +
           (lowercase ? "true" : "false") +
           "}, \"model\": {\"type\": \"WordPiece\", \"unk_token\": \"[UNK]\", \"continuing_subword_prefix\": \"##\", "
           "\"max_input_chars_per_word\": 100, \"vocab\": " + vocab + "}}";
}

std::unique_ptr<attn::PretrainedTokenizer> bert(const std::string& config = "") {
    return attn::read_family_tokenizer("bert", "", "", "", vocab_txt(), config);
}

std::vector<std::int32_t> ids(const attn::PretrainedTokenizer& tok, const std::string& text) {
    std::vector<std::int32_t> out;
    for (const auto& t : tok.encode(text)) out.push_back(t.id);
    return out;
}

std::vector<std::pair<std::int32_t, std::int32_t>> spans(const attn::PretrainedTokenizer& tok, const std::string& text) {
    std::vector<std::pair<std::int32_t, std::int32_t>> out;
    for (const auto& t : tok.encode(text)) out.emplace_back(t.begin, t.end);
    return out;
}

using Ids = std::vector<std::int32_t>;
using Spans = std::vector<std::pair<std::int32_t, std::int32_t>>;
constexpr std::int32_t UNK = 1, CLS = 2, SEP = 3, MASK = 4;

}  // namespace

TEST_CASE("wordpiece: CLS and SEP around lower-cased words and split-off punctuation, with offsets") {
    const auto tok = bert();
    CHECK(ids(*tok, "Hello, World!") == Ids{CLS, 5, 10, 6, 11, SEP});
    CHECK(spans(*tok, "Hello, World!") == Spans{{-1, -1}, {0, 5}, {5, 6}, {7, 12}, {12, 13}, {-1, -1}});
    const auto tokens = tok->encode("Hello, World!");
    CHECK(tokens[1].text == "hello");
    CHECK(tokens[1].display == "hello");
    CHECK(tokens[0].text == "[CLS]");
    CHECK(ids(*tok, "") == Ids{CLS, SEP});
    CHECK(ids(*tok, " \t\n") == Ids{CLS, SEP});
    CHECK(tok->vocab_size() == static_cast<std::int32_t>(kPieces.size()));
}

TEST_CASE("wordpiece: lower-casing decomposes and drops accents (Héllo → hello, NAÏVE → naive)") {
    const auto tok = bert();
    CHECK(ids(*tok, "H\xC3\xA9llo") == Ids{CLS, 5, SEP});
    CHECK(spans(*tok, "H\xC3\xA9llo") == Spans{{-1, -1}, {0, 6}, {-1, -1}});
    CHECK(ids(*tok, "NA\xC3\x8FVE") == Ids{CLS, 22, SEP});
    CHECK(ids(*tok, "he\xCC\x81llo") == Ids{CLS, 5, SEP});  // a combining acute, dropped
    // 한 decomposes into its three jamo (NFD); each piece spans the whole syllable
    CHECK(ids(*tok, "\xED\x95\x9C") == Ids{CLS, 23, 24, 25, SEP});
    CHECK(spans(*tok, "\xED\x95\x9C") == Spans{{-1, -1}, {0, 3}, {0, 3}, {0, 3}, {-1, -1}});
}

TEST_CASE("wordpiece: greedy longest match with ## continuations, a word no pieces spell or over 100 characters is UNK") {
    const auto tok = bert();
    CHECK(ids(*tok, "unaffable") == Ids{CLS, 7, 8, 9, SEP});
    CHECK(spans(*tok, "unaffable") == Spans{{-1, -1}, {0, 2}, {2, 5}, {5, 9}, {-1, -1}});
    CHECK(ids(*tok, "cats cat") == Ids{CLS, 14, 15, 14, SEP});
    CHECK(ids(*tok, "dogs") == Ids{CLS, UNK, SEP});
    CHECK(spans(*tok, "x dogs") == Spans{{-1, -1}, {0, 1}, {2, 6}, {-1, -1}});
    CHECK(ids(*tok, "unaffablex") == Ids{CLS, UNK, SEP});  // the whole word, not its spelled start
    Ids hundred = {CLS, 16};
    for (int i = 0; i < 99; ++i) hundred.push_back(17);
    hundred.push_back(SEP);
    CHECK(ids(*tok, std::string(100, 'a')) == hundred);
    CHECK(ids(*tok, std::string(101, 'a')) == Ids{CLS, UNK, SEP});
    CHECK(spans(*tok, std::string(101, 'a')) == Spans{{-1, -1}, {0, 101}, {-1, -1}});
    CHECK(ids(*tok, "don't") == Ids{CLS, 20, 18, 19, SEP});
}

TEST_CASE("wordpiece: CJK ideographs stand alone, punctuation by ASCII range or Unicode P*") {
    const auto tok = bert();
    CHECK(ids(*tok, "\xE7\x8C\xAB\xE7\x8C\xAB") == Ids{CLS, 13, 13, SEP});
    CHECK(spans(*tok, "\xE7\x8C\xAB\xE7\x8C\xAB") == Spans{{-1, -1}, {0, 3}, {3, 6}, {-1, -1}});
    CHECK(ids(*tok, "a\xE7\x8C\xAB" "a") == Ids{CLS, 16, 13, 16, SEP});
    CHECK(ids(*tok, "hello$") == Ids{CLS, 5, UNK, SEP});             // $ is ASCII 36: split, unknown
    CHECK(ids(*tok, "hello\xE3\x80\x82") == Ids{CLS, 5, UNK, SEP});  // 。 is Po
    CHECK(ids(*tok, "hello.world") == Ids{CLS, 5, 12, 6, SEP});
}

TEST_CASE("wordpiece: cleaning drops NUL, U+FFFD and control characters, whitespace separates") {
    const auto tok = bert();
    CHECK(ids(*tok, std::string("hel\0lo", 6)) == Ids{CLS, 5, SEP});
    CHECK(spans(*tok, std::string("hel\0lo", 6)) == Spans{{-1, -1}, {0, 6}, {-1, -1}});
    CHECK(ids(*tok, "he\xE2\x80\x8Bllo") == Ids{CLS, 5, SEP});      // U+200B (Cf)
    CHECK(ids(*tok, "hel\xEF\xBF\xBDlo") == Ids{CLS, 5, SEP});      // U+FFFD
    CHECK(ids(*tok, "hello\tworld\nhello\r\xC2\xA0world") == Ids{CLS, 5, 6, 5, 6, SEP});
    CHECK(ids(*tok, "hello\xE2\x80\xA8world") == Ids{CLS, 5, 6, SEP});  // U+2028 splits
}

TEST_CASE("wordpiece: MASK written in brackets in the text stays one token, lower-case mask in brackets is text") {
    const auto tok = bert();
    CHECK(tok->mask_id() == MASK);
    CHECK(ids(*tok, "hello [MASK] world") == Ids{CLS, 5, MASK, 6, SEP});
    CHECK(spans(*tok, "hello [MASK] world") == Spans{{-1, -1}, {0, 5}, {6, 12}, {13, 18}, {-1, -1}});
    CHECK(ids(*tok, "hello[MASK].") == Ids{CLS, 5, MASK, 12, SEP});
    CHECK(ids(*tok, "[mask]") == Ids{CLS, UNK, UNK, UNK, SEP});
}

TEST_CASE("wordpiece: do_lower_case false keeps case and accents") {
    const auto tok = bert("{\"do_lower_case\": false}");
    CHECK(ids(*tok, "Hello hello") == Ids{CLS, 26, 5, SEP});
    CHECK(ids(*tok, "H\xC3\xA9llo") == Ids{CLS, UNK, SEP});
    CHECK(ids(*tok, "hello") == ids(*attn::read_family_tokenizer("bert", tokenizer_json(false), "", "", "", ""), "hello"));
    CHECK(ids(*attn::read_family_tokenizer("bert", tokenizer_json(false), "", "", "", ""), "Hello") == Ids{CLS, 26, SEP});
}

TEST_CASE("wordpiece: tokenizer.json gives the same tokens as vocab.txt") {
    const auto a = bert();
    const auto b = attn::read_family_tokenizer("", tokenizer_json(true), "", "", "", "");
    for (const char* text : {"Hello, World!", "H\xC3\xA9llo unaffable cats dogs", "hello [MASK] \xE7\x8C\xAB", "don't"}) {
        INFO(text);
        CHECK(ids(*a, text) == ids(*b, text));
        CHECK(spans(*a, text) == spans(*b, text));
    }
    CHECK(b->mask_id() == MASK);
    CHECK(a->decode({7, 8, 9, 11}) == "unaffable !");
    CHECK(a->piece(8) == "##aff");
}

TEST_CASE("wordpiece: bad files are bad_checkpoint errors naming the file, bad text is bad_text") {
    const auto fails = [](const std::function<void()>& f, const std::string& needle) {
        INFO(needle);
        CHECK(code_of(f) == attn::Error::Code::bad_checkpoint);
        CHECK_THAT(message_of(f), Catch::Matchers::Contains(needle));
    };
    fails([] { attn::read_family_tokenizer("bert", "", "", "", "[CLS]\n[SEP]\nhello\n", ""); }, "vocab.txt: the vocabulary has no [UNK]");
    fails([] { attn::read_family_tokenizer("bert", "", "", "", "[UNK]\n[SEP]\n", ""); }, "vocab.txt: the vocabulary has no [CLS]");
    fails([] { attn::read_family_tokenizer("bert", "", "", "", "[UNK]\n\n[CLS]\n", ""); }, "vocab.txt: line 2 is empty");
    fails([] { attn::read_family_tokenizer("bert", "", "", "", "[UNK]\n[UNK]\n", ""); }, "\"[UNK]\" has two ids, 0 and 1");
    fails([] { attn::read_family_tokenizer("bert", "", "", "", "[UNK]\n\xFF\n", ""); }, "vocab.txt: invalid UTF-8 at byte 6");
    fails([] { attn::read_family_tokenizer("bert", "", "", "", "", ""); }, "no tokenizer files for bert");
    fails([] { attn::read_family_tokenizer("bert", "", "", "", vocab_txt(), "{\"do_lower_case\": 1}"); }, "tokenizer_config.json: do_lower_case is not true, false or null");
    fails([] { attn::read_family_tokenizer("bert", "", "", "", vocab_txt(), "{"); }, "tokenizer_config.json: invalid JSON");
    fails([] { attn::read_family_tokenizer("bert", "{\"model\": {\"type\": \"WordPiece\"}}", "", "", "", ""); }, "tokenizer.json: model.vocab is not an object");
    fails([] { attn::read_family_tokenizer("bert", "{\"model\": {\"type\": \"BPE\"}}", "", "", "", ""); }, "tokenizer.json: model.type \"BPE\" is not WordPiece (BERT)");
    std::string big;
    for (int i = 0; i < 262145; ++i) big += "p" + std::to_string(i) + "\n";
    fails([&] { attn::read_family_tokenizer("bert", "", "", "", big, ""); }, "the largest vocabulary we run");
    const auto tok = bert();
    CHECK(code_of([&] { tok->encode("hello \xC3"); }) == attn::Error::Code::bad_text);
    CHECK(code_of([&] { tok->encode(std::string(attn::kMaxSentenceBytes + 1, ' ')); }) == attn::Error::Code::too_many_tokens);
}

TEST_CASE("wordpiece: max_input_chars_per_word above the engine's cap (100) is capped: a 3,000-letter word is UNK at once") {
    // issue #36: with max_input_chars_per_word 1e9 a 3,000-letter word took seconds (every
    // candidate of every start looked up)
    std::string json = tokenizer_json(true);
    const std::string from = "\"max_input_chars_per_word\": 100";
    json.replace(json.find(from), from.size(), "\"max_input_chars_per_word\": 1000000000");
    const auto tok = attn::read_family_tokenizer("bert", json, "", "", "", "");
    const std::uint64_t before = tok->steps();
    CHECK(ids(*tok, std::string(3000, 'a')) == Ids{CLS, UNK, SEP});
    CHECK(ids(*tok, std::string(101, 'a')) == Ids{CLS, UNK, SEP});
    Ids hundred = {CLS, 16};
    for (int i = 0; i < 99; ++i) hundred.push_back(17);
    hundred.push_back(SEP);
    CHECK(ids(*tok, std::string(100, 'a')) == hundred);
    // a word of n letters: at most n lookups from each start, and none longer than the longest
    // piece ("##able": 6 bytes), so at most 6 per start here
    const std::uint64_t before_words = tok->steps();
    CHECK(before_words - before <= 2 * (3000 + 101));  // the [UNK] words: only the specials' automaton
    const std::string words = std::string(100, 'a') + " " + std::string(100, 'b');
    ids(*tok, words);
    CHECK(tok->steps() - before_words <= 2 * words.size() + 6 * 200);
    // a file asking for fewer keeps its own
    json.replace(json.find("1000000000"), 10, "3");
    CHECK(ids(*attn::read_family_tokenizer("bert", json, "", "", "", ""), "aaaa aaa") == Ids{CLS, UNK, 16, 17, 17, SEP});
}

TEST_CASE("wordpiece: 100,000 added tokens on a 30 KB text take at most 2 automaton moves per byte (issue #36)") {
    std::string json = tokenizer_json(true);
    std::string vocab_tail, added = "\"added_tokens\": [";
    const auto first = static_cast<std::int32_t>(kPieces.size());
    for (std::int32_t i = 0; i < 100000; ++i) {
        const std::string t = "[unused" + std::to_string(i) + "]";
        added += (i ? ", " : "") + std::string("{\"id\": ") + std::to_string(first + i) + ", \"content\": \"" + t + "\", \"special\": true}";
        vocab_tail += ", \"" + t + "\": " + std::to_string(first + i);
    }
    added += "], ";
    json.insert(1, added);
    json.insert(json.rfind("}}"), vocab_tail);
    const auto tok = attn::read_family_tokenizer("bert", json, "", "", "", "");
    std::string text;
    while (text.size() < 30000) text += "hello [unused7] world [unused [unused99999]";
    const std::uint64_t before = tok->steps();
    const auto tokens = tok->encode(text);
    CHECK(tok->steps() - before <= 2 * text.size() + 6 * text.size());
    CHECK(tokens[2].id == first + 7);
    CHECK(tokens[2].text == "[unused7]");
}

TEST_CASE("wordpiece: a tokenizer.json normalizer or pre_tokenizer other than BERT's is refused by name") {
    std::string json = tokenizer_json(true);
    const std::string normalizer = json.substr(json.find("{\"type\": \"BertNormalizer\""), json.find("}, \"model\"") - json.find("{\"type\": \"BertNormalizer\"") + 1);
    std::string lower = json;
    lower.replace(lower.find(normalizer), normalizer.size(), "{\"type\": \"Lowercase\"}");
    CHECK(code_of([&] { attn::read_family_tokenizer("bert", lower, "", "", "", ""); }) == attn::Error::Code::bad_checkpoint);
    CHECK_THAT(message_of([&] { attn::read_family_tokenizer("bert", lower, "", "", "", ""); }),
               Catch::Matchers::Contains("tokenizer.json: the normalizer \"Lowercase\" is not one this engine runs for a WordPiece"));
    std::string pre = json;
    pre.insert(1, "\"pre_tokenizer\": {\"type\": \"Whitespace\"}, ");
    CHECK_THAT(message_of([&] { attn::read_family_tokenizer("bert", pre, "", "", "", ""); }),
               Catch::Matchers::Contains("the pre_tokenizer \"Whitespace\" is not one this engine runs for a WordPiece"));
    pre = json;
    pre.insert(1, "\"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}, ");
    CHECK(ids(*attn::read_family_tokenizer("bert", pre, "", "", "", ""), "Hello") == Ids{CLS, 5, SEP});
}
