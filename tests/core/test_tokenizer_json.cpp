// Tests of src/text/tokenizer_json.hpp (and read_tokenizer's kinds) on byte-level
// tokenizer.json files written here: the settings a file gives are honoured (Lowercase and
// ByteLevel's add_prefix_space: issue #36 item 6; a Split pattern; ignore_merges; the
// template's BOS; added tokens matched after normalizing) or refused by name, never skipped;
// which kind a file makes and which a family takes. The real files (GPT-2, Llama 3, Qwen3)
// are tested in tests/js/tokenizer-modern.test.mjs.

#include "text/bpe.hpp"
#include "text/pretrained_tokenizer.hpp"
#include "text/unicode.hpp"
#include "families/family.hpp"
#include "base/types.hpp"
#include "matchers.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <set>
#include <string>
#include <vector>

using testing::code_of;
using testing::message_of;

namespace {

std::string piece_of(const std::string& bytes) {
    std::string s;
    for (unsigned char b : bytes) attn::unicode::append_utf8(s, attn::byte_to_unicode(b));
    return s;
}

std::string quote(const std::string& s) {
    std::string out = "\"";
    for (char c : s) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return out + "\"";
}

const std::string kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// A byte-level tokenizer.json: the 256 bytes (ids 0 … 255), then the joins of `merges` and
// `more` in order, then the added tokens; `sections` are the root's other keys, as JSON text.
struct ByteLevelFile {
    std::vector<std::pair<std::string, std::string>> merges;  // as bytes
    std::vector<std::string> more;                            // more pieces, as bytes
    std::vector<std::string> added;                           // added tokens (special, as written)
    std::string sections = R"("pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true})";
    std::string model_extra;

    std::vector<std::string> pieces() const {
        std::vector<std::string> out;
        for (unsigned b = 0; b < 256; ++b) out.push_back(piece_of(std::string(1, static_cast<char>(b))));
        std::set<std::string> seen(out.begin(), out.end());
        const auto put = [&](const std::string& p) {
            if (seen.insert(p).second) out.push_back(p);
        };
        for (const auto& [a, b] : merges) put(piece_of(a + b));
        for (const std::string& m : more) put(piece_of(m));
        for (const std::string& a : added) put(a);
        return out;
    }
    std::int32_t id(const std::string& bytes) const {
        const auto all = pieces();
        for (std::size_t i = 0; i < all.size(); ++i)
            if (all[i] == piece_of(bytes) || all[i] == bytes) return static_cast<std::int32_t>(i);
        return -1;
    }
    std::string json() const {
        const auto all = pieces();
        std::string v = "{";
        for (std::size_t i = 0; i < all.size(); ++i) v += (i ? ", " : "") + quote(all[i]) + ": " + std::to_string(i);
        v += "}";
        std::string m = "[";
        for (std::size_t i = 0; i < merges.size(); ++i) m += (i ? ", " : "") + quote(piece_of(merges[i].first) + " " + piece_of(merges[i].second));
        m += "]";
        std::string a = "[";
        for (std::size_t i = 0; i < added.size(); ++i)
            a += std::string(i ? ", " : "") + "{\"id\": " + std::to_string(id(added[i])) + ", \"content\": " + quote(added[i]) +
                 ", \"special\": true, \"normalized\": false}";
        a += "]";
        return "{\"added_tokens\": " + a + ", " + sections + ", \"model\": {\"type\": \"BPE\"" + model_extra +
               ", \"vocab\": " + v + ", \"merges\": " + m + "}}";
    }
};

std::vector<std::int32_t> ids(const attn::PretrainedTokenizer& tok, const std::string& text) {
    std::vector<std::int32_t> out;
    for (const auto& t : tok.encode(text)) out.push_back(t.id);
    return out;
}

std::unique_ptr<attn::PretrainedTokenizer> read(const std::string& json, const std::string& family = "") {
    return attn::read_family_tokenizer(family, json, "", "", "", "");
}

using Ids = std::vector<std::int32_t>;

ByteLevelFile hello_world() {
    ByteLevelFile f;
    f.merges = {{"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {" ", "hello"}, {"o", "r"}, {"w", "or"}, {"wor", "l"},
                {"worl", "d"}, {" ", "world"}, {"H", "e"}, {"He", "ll"}, {"Hell", "o"}, {"W", "or"}, {"Wor", "l"},
                {"Worl", "d"}, {" ", "World"}};
    return f;
}

}  // namespace

TEST_CASE("tokenizer.json: Lowercase and ByteLevel's add_prefix_space are honoured, not skipped (issue #36)") {
    ByteLevelFile plain = hello_world();
    const auto gpt2 = read(plain.json(), "gpt2");
    CHECK(ids(*gpt2, "Hello World") == Ids{plain.id("Hello"), plain.id(" World")});  // as GPT-2's [15496, 2159]
    ByteLevelFile f = hello_world();
    f.sections = R"("normalizer": {"type": "Lowercase"},
                    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true})";
    const auto tok = read(f.json(), "gpt2");
    CHECK(tok->kind() == attn::TokenizerKind::byte_level_bpe);
    const auto tokens = tok->encode("Hello World");
    // " hello" " world": lower case, and a space before the first word
    REQUIRE(ids(*tok, "Hello World") == Ids{f.id(" hello"), f.id(" world")});
    CHECK(tokens[0].begin == 0);
    CHECK(tokens[0].end == 5);  // the added space spans the H it was put before
    CHECK(tokens[1].begin == 5);
    CHECK(tokens[1].end == 11);
    CHECK(tokens[0].display == "\xE2\x90\xA3hello");
    CHECK(tok->decode(ids(*tok, "Hello World")) == " hello world");
}

TEST_CASE("tokenizer.json: a Split by Llama 3's pattern before ByteLevel makes a split_bpe, which GPT-2 refuses by name") {
    ByteLevelFile f;
    f.merges = {{"1", "2"}, {"12", "3"}, {" ", "1"}};
    f.sections = R"("pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": )" +
                 quote(kLlama3) + R"(}, "behavior": "Isolated", "invert": false},
                 {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]},
                 "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true})";
    const auto tok = read(f.json());
    CHECK(tok->kind() == attn::TokenizerKind::split_bpe);
    // " 1231" → " ", "123", "1" (Llama 3's digits: no space before them, runs of 3)
    CHECK(ids(*tok, " 1231") == Ids{f.id(" "), f.id("123"), f.id("1")});
    CHECK(code_of([&] { read(f.json(), "gpt2"); }) == attn::Error::Code::bad_checkpoint);
    CHECK_THAT(message_of([&] { read(f.json(), "gpt2"); }),
               Catch::Matchers::Contains("tokenizer.json: it is a byte-level BPE after a Split pattern (Llama 3, Qwen2), "
                                         "not a byte-level BPE split by GPT-2's pattern (GPT-2)"));
}

TEST_CASE("tokenizer.json: ignore_merges takes a piece that is a whole vocabulary entry as that entry (Llama 3)") {
    ByteLevelFile f;
    f.merges = {{"a", "b"}, {"b", "c"}};
    f.more = {"abc"};  // no merge makes it
    CHECK(ids(*read(f.json()), "abc") == Ids{f.id("ab"), f.id("c")});
    f.model_extra = R"(, "ignore_merges": true)";
    const auto tok = read(f.json());
    CHECK(ids(*tok, "abc") == Ids{f.id("abc")});
    CHECK(ids(*tok, "abcab") == Ids{f.id("ab"), f.id("c"), f.id("ab")});  // not whole: merged
}

TEST_CASE("tokenizer.json: the post_processor's template puts BOS first, marked as added (Llama 3.2's form)") {
    ByteLevelFile f = hello_world();
    f.added = {"<|begin_of_text|>", "<|end_of_text|>"};
    f.sections += R"(, "post_processor": {"type": "Sequence", "processors": [
        {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
        {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
         "pair": [], "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [)" +
                   std::to_string(f.id("<|begin_of_text|>")) + R"(], "tokens": ["<|begin_of_text|>"]}}}]})";
    const auto tok = read(f.json());
    const auto tokens = tok->encode("hello<|end_of_text|>");
    REQUIRE(ids(*tok, "hello<|end_of_text|>") == Ids{f.id("<|begin_of_text|>"), f.id("hello"), f.id("<|end_of_text|>")});
    CHECK(tokens[0].begin == -1);
    CHECK(tokens[0].end == -1);
    CHECK(tokens[0].display == "<|begin_of_text|>");
    CHECK(tokens[2].begin == 5);  // written in the text: its span
    CHECK(tokens[2].end == 20);
    CHECK(ids(*tok, "") == Ids{f.id("<|begin_of_text|>")});
    CHECK(tok->decode(ids(*tok, "hello world")) == "<|begin_of_text|>hello world");
}

TEST_CASE("tokenizer.json: an added token with normalized: true is found after the normalizer, in the normalized text") {
    ByteLevelFile f = hello_world();
    f.more = {"<x>"};
    f.sections = R"("normalizer": {"type": "Lowercase"}, "pre_tokenizer": {"type": "ByteLevel", "use_regex": true})";
    std::string json = f.json();
    const std::string id = std::to_string(f.id("<x>"));
    json.replace(json.find("\"added_tokens\": []"), 18, "\"added_tokens\": [{\"id\": " + id + ", \"content\": \"<x>\", \"special\": false, \"normalized\": true}]");
    const auto tok = read(json);
    const auto tokens = tok->encode("hello<X>");
    REQUIRE(ids(*tok, "hello<X>") == Ids{f.id("hello"), f.id("<x>")});
    CHECK(tokens[1].begin == 5);
    CHECK(tokens[1].end == 8);
    // the token's own content is normalized too: "<X>" in added_tokens matches "<x>" and "<X>"
    std::string upper = json;
    upper.replace(upper.find("\"content\": \"<x>\""), 16, "\"content\": \"<X>\"");
    upper.replace(upper.find("\"<x>\": "), 5, "\"<X>\"");
    CHECK(ids(*read(upper), "hello<x>") == Ids{f.id("hello"), f.id("<x>")});
}

TEST_CASE("tokenizer.json: settings the engine cannot run are refused by name, with the file") {
    const auto fails = [](const std::string& json, const std::string& needle) {
        INFO(needle);
        CHECK(code_of([&] { read(json); }) == attn::Error::Code::bad_checkpoint);
        CHECK_THAT(message_of([&] { read(json); }), Catch::Matchers::Contains(needle));
    };
    const ByteLevelFile base = hello_world();
    const auto with = [&](const std::string& sections, const std::string& model_extra = "") {
        ByteLevelFile f = hello_world();
        if (!sections.empty()) f.sections = base.sections + ", " + sections;
        f.model_extra = model_extra;
        return f.json();
    };
    fails(with(R"("normalizer": {"type": "NFKC"})"), "tokenizer.json: the normalizer \"NFKC\" is not one this engine runs");
    fails(with("", R"(, "dropout": 0.1)"), "tokenizer.json: model.dropout is set");
    fails(with("", R"(, "continuing_subword_prefix": "##")"), "model.continuing_subword_prefix is set");
    fails(with("", R"(, "end_of_word_suffix": "</w>")"), "model.end_of_word_suffix is set");
    fails(with("", R"(, "byte_fallback": "yes")"), "model: byte_fallback is not true or false");
    fails(with("", R"(, "unk_token": "<nope>")"), "model.unk_token \"<nope>\" is not in the vocabulary");
    fails(with(R"("post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0]})"),
          "the post_processor \"RobertaProcessing\" is not one this engine runs");
    fails(with(R"("post_processor": {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A"}}, {"Sequence": {"id": "B"}}]})"),
          "the post_processor's template \"single\" is not the text ($A) once");
    fails(with(R"("post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>"}}, {"Sequence": {"id": "A"}}], "special_tokens": {}})"),
          "the post_processor's special token \"<s>\" has no ids");
    fails(with(R"("post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>"}}, {"Sequence": {"id": "A"}}],
                  "special_tokens": {"<s>": {"ids": [99999]}}})"),
          "the post_processor's special token id 99999 is not in the vocabulary");
    fails(with(R"("decoder": {"type": "WordPiece", "prefix": "##"})"), "the decoder \"WordPiece\" does not fit a byte-level BPE");
    fails(with(R"("padding": {"strategy": {"Fixed": 16}, "pad_id": 0})"), "padding has a Fixed length");
    ByteLevelFile digits = hello_world();
    digits.sections = R"("pre_tokenizer": {"type": "Digits", "individual_digits": true})";
    fails(digits.json(), "the pre_tokenizer does not end with ByteLevel");
    std::string lstrip = base.json();
    lstrip.replace(lstrip.find("\"added_tokens\": []"), 18, R"("added_tokens": [{"id": 0, "content": "\u0100", "lstrip": true}])");
    fails(lstrip, "added_tokens[0] \"\xC4\x80\": lstrip is true, which this engine does not run");
}

TEST_CASE("tokenizer kinds: names, which a request takes, and the files each is read from") {
    using K = attn::TokenizerKind;
    CHECK(std::string(attn::tokenizer_kind_name(K::split_bpe)) == "split_bpe");
    CHECK(std::string(attn::tokenizer_kind_name(K::sentencepiece_bpe)) == "sentencepiece_bpe");
    CHECK(std::string(attn::tokenizer_kind_name(K::any_bpe)) == "any_bpe");
    for (K made : {K::byte_level_bpe, K::split_bpe, K::sentencepiece_bpe}) {
        CHECK(attn::tokenizer_kind_accepts(K::any_bpe, made));
        CHECK(attn::tokenizer_kind_accepts(K::any, made));
        CHECK_FALSE(attn::tokenizer_kind_accepts(K::wordpiece, made));
    }
    CHECK_FALSE(attn::tokenizer_kind_accepts(K::any_bpe, K::wordpiece));
    CHECK_FALSE(attn::tokenizer_kind_accepts(K::byte_level_bpe, K::split_bpe));
    using Choices = std::vector<std::vector<std::string>>;
    CHECK(attn::tokenizer_file_choices(K::byte_level_bpe) == Choices{{"tokenizer.json"}, {"vocab.json", "merges.txt"}});
    // SmolLM2 ships vocab.json and merges.txt beside a tokenizer.json that splits digits first:
    // the modern kinds are read from tokenizer.json only
    for (K k : {K::split_bpe, K::sentencepiece_bpe, K::any_bpe}) CHECK(attn::tokenizer_file_choices(k) == Choices{{"tokenizer.json"}});
    CHECK(attn::tokenizer_file_choices(K::any) == Choices{{"tokenizer.json"}, {"vocab.json", "merges.txt"}, {"vocab.txt"}});
    attn::TokenizerRequest llama{K::any_bpe, "llama", "Llama"};
    CHECK_THAT(message_of([&] { attn::read_tokenizer(llama, "", "{}", "x y", "", ""); }),
               Catch::Matchers::Contains("no tokenizer files for llama: give tokenizer.json"));
    CHECK_THAT(message_of([&] { attn::read_tokenizer(llama, "{\"model\": {\"type\": \"WordPiece\"}}", "", "", "", ""); }),
               Catch::Matchers::Contains("model.type \"WordPiece\" is not BPE (Llama)"));
    // a family of each BPE kind is found by the kind a file makes
    CHECK(attn::family_by_tokenizer(K::byte_level_bpe) == attn::family_named("gpt2"));
}
