#include "text/wordpiece.hpp"

#include "text/normalizer.hpp"
#include "text/tokenizer.hpp"
#include "text/unicode.hpp"

#include <algorithm>
#include <utility>

namespace attn {
namespace {

bool is_bert_whitespace(char32_t c) {
    // BERT's _is_whitespace: space, tab, newline, return or category Zs; after
    // cleaning, str.split() also splits at U+2028 and U+2029 (White_Space)
    return unicode::is_space(c);
}

// BERT's _is_control: category C*, except tab, newline and return (whitespace).
bool is_bert_control(char32_t c) { return c != U'\t' && c != U'\n' && c != U'\r' && unicode::is_control(c); }

// Cleaned text split at whitespace and around CJK ideographs: words of characters.
std::vector<std::vector<NormChar>> basic_words(const std::string& text, std::size_t begin, std::size_t end,
                                               const WordPieceOptions& o) {
    std::vector<std::vector<NormChar>> words;
    std::vector<NormChar> word;
    const auto flush = [&] {
        if (!word.empty()) words.push_back(std::move(word));
        word.clear();
    };
    std::u32string buffer, lowered;
    for (const unicode::CodePoint& cp : unicode::code_points(std::string_view(text).substr(begin, end - begin))) {
        const char32_t c = cp.value;
        const auto b = static_cast<std::uint32_t>(begin + cp.begin), e = static_cast<std::uint32_t>(begin + cp.end);
        if (c == 0 || c == 0xFFFD || is_bert_control(c)) continue;
        if (is_bert_whitespace(c)) {
            flush();
            continue;
        }
        if (o.split_cjk && is_cjk_ideograph(c)) {
            flush();
            word.push_back({c, b, e});
            flush();
            continue;
        }
        buffer.clear();
        if (o.lowercase) unicode::append_lower(buffer, c);
        else buffer += c;
        if (o.strip_accents) {
            lowered.swap(buffer);
            buffer.clear();
            for (char32_t l : lowered) unicode::append_nfd(buffer, l);
        }
        for (char32_t n : buffer) {
            if (o.strip_accents && unicode::is_mark(n)) continue;
            if (is_bert_punctuation(n)) {
                flush();
                word.push_back({n, b, e});
                flush();
            } else {
                word.push_back({n, b, e});
            }
        }
    }
    flush();
    return words;
}

std::string utf8_of(const std::vector<NormChar>& chars, std::size_t from, std::size_t to) {
    std::string s;
    for (std::size_t i = from; i < to; ++i) unicode::append_utf8(s, chars[i].value);
    return s;
}

}  // namespace

bool is_cjk_ideograph(char32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool is_bert_punctuation(char32_t c) {
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return true;
    return unicode::is_punctuation(c);
}

WordPieceTokenizer::WordPieceTokenizer(PieceVocabulary vocab, WordPieceOptions options, std::vector<std::string> specials,
                                       const std::string& file)
    : vocab_(std::move(vocab)), options_(std::move(options)), specials_(std::move(specials)) {
    const auto need = [&](const std::string& piece) {
        const std::int32_t id = vocab_.find(piece);
        if (id < 0) bad_tokenizer_file(file, "the vocabulary has no " + piece);
        return id;
    };
    unk_id_ = need(options_.unk);
    cls_id_ = need(options_.cls);
    sep_id_ = need(options_.sep);
    mask_id_ = vocab_.find(options_.mask);
    for (const std::string& s : {options_.unk, options_.cls, options_.sep, options_.mask, options_.pad})
        if (vocab_.find(s) >= 0 && std::find(specials_.begin(), specials_.end(), s) == specials_.end())
            specials_.push_back(s);
    special_matcher_ = TokenMatcher(specials_);
    options_.max_word_chars = std::min(options_.max_word_chars, kMaxWordPieceChars);
    for (std::int32_t id = 0; id < vocab_.size(); ++id) longest_piece_ = std::max(longest_piece_, vocab_.piece(id).size());
}

std::vector<PretrainedToken> WordPieceTokenizer::encode(const std::string& text) const {
    check_tokenizer_text(text);
    std::vector<PretrainedToken> tokens;
    const auto add = [&](std::int32_t id, std::int32_t begin, std::int32_t end) {
        PretrainedToken t;
        t.id = id;
        t.text = vocab_.piece(id);
        t.display = t.text;
        t.begin = begin;
        t.end = end;
        tokens.push_back(std::move(t));
    };
    add(cls_id_, -1, -1);
    std::uint64_t steps = 0;
    for (const TextSegment& seg : special_matcher_.split(text, steps)) {
        if (seg.special >= 0) {
            add(vocab_.find(specials_[static_cast<std::size_t>(seg.special)]), static_cast<std::int32_t>(seg.begin),
                static_cast<std::int32_t>(seg.end));
            continue;
        }
        for (const std::vector<NormChar>& word : basic_words(text, seg.begin, seg.end, options_)) {
            const auto word_begin = static_cast<std::int32_t>(word.front().begin);
            const auto word_end = static_cast<std::int32_t>(word.back().end);
            if (word.size() > options_.max_word_chars) {
                add(unk_id_, word_begin, word_end);
                continue;
            }
            // greedy longest match: the longest piece from `start`, "##" after the first
            // (candidates longer than the longest piece are not looked up)
            std::vector<PretrainedToken> pieces;
            bool spelled = true;
            for (std::size_t start = 0; start < word.size() && spelled;) {
                std::int32_t found = -1;
                const std::string head = start > 0 ? options_.prefix : "";
                std::string candidate = head + utf8_of(word, start, word.size());
                std::size_t stop = word.size();
                for (; stop > start; --stop) {
                    if (stop < word.size()) candidate.resize(candidate.size() - unicode::utf8_length(word[stop].value));
                    if (candidate.size() > longest_piece_) continue;
                    ++steps;
                    found = vocab_.find(candidate);
                    if (found >= 0) break;
                }
                if (found < 0) {
                    spelled = false;
                    break;
                }
                PretrainedToken t;
                t.id = found;
                t.text = vocab_.piece(found);
                t.display = t.text;
                t.begin = static_cast<std::int32_t>(word[start].begin);
                t.end = static_cast<std::int32_t>(word[stop - 1].end);
                pieces.push_back(std::move(t));
                start = stop;
            }
            if (!spelled) add(unk_id_, word_begin, word_end);
            else for (PretrainedToken& t : pieces) tokens.push_back(std::move(t));
        }
    }
    add(sep_id_, -1, -1);
    count_steps(steps);
    return tokens;
}

std::string WordPieceTokenizer::decode(const std::vector<std::int32_t>& ids) const {
    std::string out;
    for (std::int32_t id : ids) {
        const std::string& p = vocab_.piece(id);
        if (!out.empty() && p.rfind(options_.prefix, 0) == 0 && p.size() > options_.prefix.size()) {
            out += p.substr(options_.prefix.size());
            continue;
        }
        if (!out.empty()) out += ' ';
        out += p;
    }
    return out;
}

namespace {

// A boolean setting of tokenizer_config.json or a normalizer: true/false, or null = absent.
bool read_flag(const JsonValue* object, const char* key, bool fallback, const std::string& file) {
    const JsonValue* v = object ? object->get(key) : nullptr;
    if (!v || v->is(JsonValue::Type::null)) return fallback;
    if (!v->is(JsonValue::Type::boolean)) bad_tokenizer_file(file, std::string(key) + " is not true, false or null");
    return v->boolean;
}

// The options from tokenizer_config.json (when given) over `o`.
void apply_tokenizer_config(const std::string& config_json, WordPieceOptions& o) {
    if (config_json.empty()) return;
    const std::string file = "tokenizer_config.json";
    const JsonValue config = parse_tokenizer_json(config_json, file);
    if (!config.is(JsonValue::Type::object)) bad_tokenizer_file(file, "the file is not a JSON object");
    // strip_accents null or absent: as do_lower_case (transformers' BasicTokenizer)
    if (const JsonValue* given = config.get("do_lower_case"); given && !given->is(JsonValue::Type::null)) {
        o.lowercase = read_flag(&config, "do_lower_case", o.lowercase, file);
        o.strip_accents = o.lowercase;
    }
    o.strip_accents = read_flag(&config, "strip_accents", o.strip_accents, file);
    o.split_cjk = read_flag(&config, "tokenize_chinese_chars", o.split_cjk, file);
    for (auto [key, field] : {std::pair<const char*, std::string*>{"unk_token", &o.unk}, {"cls_token", &o.cls},
                              {"sep_token", &o.sep}, {"mask_token", &o.mask}, {"pad_token", &o.pad}}) {
        const JsonValue* v = config.get(key);
        if (v && v->is(JsonValue::Type::string)) *field = v->string;
        // newer files write {"content": "[UNK]", …}
        const JsonValue* content = v ? v->get("content") : nullptr;
        if (content && content->is(JsonValue::Type::string)) *field = content->string;
    }
}

}  // namespace

std::unique_ptr<PretrainedTokenizer> read_wordpiece_vocab_txt(const std::string& vocab_txt,
                                                              const std::string& tokenizer_config_json) {
    const std::string file = "vocab.txt";
    if (vocab_txt.empty()) bad_tokenizer_file(file, "the file is empty or missing");
    if (vocab_txt.size() > kMaxTokenizerFileBytes)
        bad_tokenizer_file(file, "the file is " + std::to_string(vocab_txt.size()) + " bytes, above the limit of " +
                                     std::to_string(kMaxTokenizerFileBytes));
    try {
        decode_utf8(vocab_txt);
    } catch (const Error& e) {
        bad_tokenizer_file(file, e.what());
    }
    PieceVocabulary vocab;
    std::int64_t id = 0;
    for (std::size_t at = 0; at < vocab_txt.size(); ++id) {
        std::size_t eol = vocab_txt.find('\n', at);
        if (eol == std::string::npos) eol = vocab_txt.size();
        std::string line = vocab_txt.substr(at, eol - at);
        at = eol + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        // transformers strips each line (load_vocab: token.rstrip("\n")) and keeps the rest as is
        if (line.empty()) bad_tokenizer_file(file, "line " + std::to_string(id + 1) + " is empty (every line is a piece)");
        vocab.add(line, id, file);
    }
    vocab.finish(file);
    WordPieceOptions o;
    apply_tokenizer_config(tokenizer_config_json, o);
    return std::make_unique<WordPieceTokenizer>(std::move(vocab), o, std::vector<std::string>{}, file);
}

std::unique_ptr<PretrainedTokenizer> read_wordpiece_tokenizer_json(const JsonValue& root,
                                                                   const std::string& tokenizer_config_json) {
    const std::string file = "tokenizer.json";
    const JsonValue* model = root.get("model");
    const JsonValue* vocab_json = model ? model->get("vocab") : nullptr;
    if (!vocab_json || !vocab_json->is(JsonValue::Type::object))
        bad_tokenizer_file(file, "model.vocab is not an object of pieces");
    PieceVocabulary vocab;
    vocab.add_json_object(*vocab_json, file);
    std::vector<std::string> specials = read_added_tokens(root, vocab, file);
    vocab.finish(file);
    WordPieceOptions o;
    if (const JsonValue* unk = model->get("unk_token"); unk && unk->is(JsonValue::Type::string)) o.unk = unk->string;
    if (const JsonValue* p = model->get("continuing_subword_prefix"); p && p->is(JsonValue::Type::string))
        o.prefix = p->string;
    if (const JsonValue* m = model->get("max_input_chars_per_word"); m && m->is_integer && m->integer > 0)
        o.max_word_chars = static_cast<std::size_t>(std::min<std::int64_t>(m->integer, kMaxWordPieceChars));
    const JsonValue* normalizer = root.get("normalizer");
    const JsonValue* normalizer_type = normalizer ? normalizer->get("type") : nullptr;
    if (normalizer && !normalizer->is(JsonValue::Type::null) &&
        !(normalizer_type && normalizer_type->is(JsonValue::Type::string) && normalizer_type->string == "BertNormalizer"))
        bad_tokenizer_file(file, "the normalizer \"" + (normalizer_type && normalizer_type->is(JsonValue::Type::string) ? normalizer_type->string : std::string()) +
                                     "\" is not one this engine runs for a WordPiece (it runs BertNormalizer)");
    const JsonValue* pre = root.get("pre_tokenizer");
    const JsonValue* pre_type = pre ? pre->get("type") : nullptr;
    if (pre && !pre->is(JsonValue::Type::null) &&
        !(pre_type && pre_type->is(JsonValue::Type::string) && pre_type->string == "BertPreTokenizer"))
        bad_tokenizer_file(file, "the pre_tokenizer \"" + (pre_type && pre_type->is(JsonValue::Type::string) ? pre_type->string : std::string()) +
                                     "\" is not one this engine runs for a WordPiece (it runs BertPreTokenizer)");
    if (normalizer && normalizer->is(JsonValue::Type::object)) {
        o.lowercase = read_flag(normalizer, "lowercase", o.lowercase, file);
        o.strip_accents = read_flag(normalizer, "strip_accents", o.lowercase, file);
        o.split_cjk = read_flag(normalizer, "handle_chinese_chars", o.split_cjk, file);
    }
    apply_tokenizer_config(tokenizer_config_json, o);
    return std::make_unique<WordPieceTokenizer>(std::move(vocab), o, std::move(specials), file);
}

}  // namespace attn
