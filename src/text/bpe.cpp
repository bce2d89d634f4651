#include "text/bpe.hpp"

#include "text/tokenizer.hpp"
#include "text/unicode.hpp"

#include <algorithm>
#include <queue>

namespace attn {
namespace {

enum class Class { letter, number, space, other };

Class class_of(char32_t c) {
    if (unicode::is_letter(c)) return Class::letter;
    if (unicode::is_number(c)) return Class::number;
    if (unicode::is_space(c)) return Class::space;
    return Class::other;
}

// The length of a contraction ('s 't 're 've 'm 'll 'd, lower case only) at i, or 0.
std::size_t contraction_at(const std::vector<unicode::CodePoint>& cps, std::size_t i) {
    if (cps[i].value != U'\'' || i + 1 >= cps.size()) return 0;
    const char32_t a = cps[i + 1].value;
    if (a == U's' || a == U't' || a == U'm' || a == U'd') return 2;
    if (i + 2 >= cps.size()) return 0;
    const char32_t b = cps[i + 2].value;
    if ((a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l')) return 3;
    return 0;
}

const char* const kEndOfText = "<|endoftext|>";

}  // namespace

char32_t byte_to_unicode(std::uint8_t byte) {
    if ((byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) || byte >= 174) return byte;
    // the n-th byte (in order) outside those ranges
    char32_t n = 0;
    for (unsigned b = 0; b < byte; ++b)
        if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174)) ++n;
    return 0x100 + n;
}

std::vector<std::pair<std::size_t, std::size_t>> pre_tokenize(const std::string& text) {
    const std::vector<unicode::CodePoint> cps = unicode::code_points(text);
    std::vector<Class> cls(cps.size());
    for (std::size_t i = 0; i < cps.size(); ++i) cls[i] = class_of(cps[i].value);
    const std::size_t n = cps.size();
    std::vector<std::pair<std::size_t, std::size_t>> pieces;
    const auto run_end = [&](std::size_t from, Class c) {
        while (from < n && cls[from] == c) ++from;
        return from;
    };
    for (std::size_t i = 0; i < n;) {
        std::size_t end;
        if (const std::size_t k = contraction_at(cps, i)) {
            end = i + k;  // 's|'t|'re|'ve|'m|'ll|'d
        } else if (cls[i] != Class::space) {
            end = run_end(i, cls[i]);  // \p{L}+ | \p{N}+ | [^\s\p{L}\p{N}]+
        } else if (cps[i].value == U' ' && i + 1 < n && cls[i + 1] != Class::space) {
            end = run_end(i + 1, cls[i + 1]);  // the same with the optional space before it
        } else {
            const std::size_t e = run_end(i, Class::space);
            // \s+(?!\S): the whole run at the end of the text, else all but its last
            // character (which goes with what follows); a lone one: \s+
            end = (e == n || e - i == 1) ? e : e - 1;
        }
        pieces.emplace_back(cps[i].begin, cps[end - 1].end);
        i = end;
    }
    return pieces;
}

std::string display_bytes(const std::string& bytes) {
    static const char* const kHex = "0123456789ABCDEF";
    std::string out;
    for (std::size_t i = 0; i < bytes.size();) {
        const auto b = static_cast<unsigned char>(bytes[i]);
        const std::size_t len = unicode::utf8_sequence_length(bytes, i);
        if (len == 0 || b < 0x20 || b == 0x7F) {  // not a whole character, or a control byte
            if (b == '\n') out += "\\n";
            else if (b == '\t') out += "\\t";
            else if (b == '\r') out += "\\r";
            else out += std::string("\\x") + kHex[b >> 4] + kHex[b & 15];
            ++i;
            continue;
        }
        if (i == 0 && b == ' ') out += "\xE2\x90\xA3";  // ␣
        else out.append(bytes, i, len);
        i += len;
    }
    return out;
}

BpeTokenizer::BpeTokenizer(PieceVocabulary vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                           std::vector<std::string> specials, const std::string& vocab_file,
                           const std::string& merges_file)
    : vocab_(std::move(vocab)), specials_(std::move(specials)) {
    for (unsigned b = 0; b < 256; ++b) {
        std::string piece;
        const char32_t u = byte_to_unicode(static_cast<std::uint8_t>(b));
        unicode::append_utf8(piece, u);
        byte_ids_[b] = vocab_.find(piece);
        if (byte_ids_[b] < 0)
            bad_tokenizer_file(vocab_file, "the vocabulary has no piece \"" + piece + "\" for the byte " +
                                               std::to_string(b) + " (a byte-level BPE needs all 256)");
        unicode_to_byte_[u] = static_cast<std::uint8_t>(b);
    }
    merges_.reserve(merges.size());
    for (std::size_t r = 0; r < merges.size(); ++r) {
        const auto& [a, b] = merges[r];
        const std::string where = "merge " + std::to_string(r + 1) + " \"" + a + " " + b + "\"";
        const std::int32_t ia = vocab_.find(a), ib = vocab_.find(b), ij = vocab_.find(a + b);
        if (ia < 0) bad_tokenizer_file(merges_file, where + ": \"" + a + "\" is not in the vocabulary");
        if (ib < 0) bad_tokenizer_file(merges_file, where + ": \"" + b + "\" is not in the vocabulary");
        if (ij < 0) bad_tokenizer_file(merges_file, where + ": their join \"" + a + b + "\" is not in the vocabulary");
        // a pair listed twice takes its last rank (as a Python dict or the Rust tokenizers' map)
        merges_[pair_key(ia, ib)] = Merge{static_cast<std::int32_t>(r), ij};
    }
    for (const std::string& s : specials_) special_ids_.push_back(vocab_.find(s));
}

std::vector<std::int32_t> BpeTokenizer::merge(const std::string& bytes) const {
    // symbols as a linked list over the byte positions; a merge keeps the left
    // symbol and drops the right one
    const std::size_t n = bytes.size();
    std::vector<std::int32_t> id(n);
    std::vector<std::int32_t> next(n), prev(n);
    for (std::size_t i = 0; i < n; ++i) {
        id[i] = byte_ids_[static_cast<unsigned char>(bytes[i])];
        next[i] = static_cast<std::int32_t>(i + 1);
        prev[i] = static_cast<std::int32_t>(i) - 1;
    }
    struct Candidate {
        std::int32_t rank, left, right, merged;  // left/right: symbol positions
        bool operator<(const Candidate& o) const {  // the priority queue pops the lowest rank, then the leftmost
            return rank != o.rank ? rank > o.rank : left > o.left;
        }
    };
    std::priority_queue<Candidate> queue;
    const auto consider = [&](std::int32_t left) {
        const std::int32_t right = next[static_cast<std::size_t>(left)];
        if (left < 0 || right >= static_cast<std::int32_t>(n)) return;
        const auto it = merges_.find(pair_key(id[static_cast<std::size_t>(left)], id[static_cast<std::size_t>(right)]));
        if (it != merges_.end()) queue.push({it->second.rank, left, right, it->second.id});
    };
    for (std::size_t i = 0; i + 1 < n; ++i) consider(static_cast<std::int32_t>(i));
    std::vector<bool> gone(n, false);
    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        const auto l = static_cast<std::size_t>(c.left), r = static_cast<std::size_t>(c.right);
        // stale: one side was merged away or changed since this pair was queued
        if (gone[l] || gone[r] || next[l] != c.right) continue;
        const auto it = merges_.find(pair_key(id[l], id[r]));
        if (it == merges_.end() || it->second.id != c.merged) continue;
        id[l] = c.merged;
        gone[r] = true;
        next[l] = next[r];
        if (next[l] < static_cast<std::int32_t>(n)) prev[static_cast<std::size_t>(next[l])] = c.left;
        if (prev[l] >= 0) consider(prev[l]);
        consider(c.left);
    }
    std::vector<std::int32_t> out;
    for (std::size_t i = 0; i < n; i = static_cast<std::size_t>(next[i])) out.push_back(id[i]);
    return out;
}

std::string BpeTokenizer::piece_bytes(std::int32_t token) const {
    std::string bytes;
    for (const unicode::CodePoint& cp : unicode::code_points(vocab_.piece(token))) {
        const auto it = unicode_to_byte_.find(cp.value);
        // a piece outside the byte alphabet (an added token): its own UTF-8
        if (it == unicode_to_byte_.end()) unicode::append_utf8(bytes, cp.value);
        else bytes += static_cast<char>(it->second);
    }
    return bytes;
}

std::vector<PretrainedToken> BpeTokenizer::encode(const std::string& text) const {
    check_tokenizer_text(text);
    const auto char_begin = [&](std::size_t at) {
        while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
        return at;
    };
    const auto char_end = [&](std::size_t at) {
        while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
        return at;
    };
    std::vector<PretrainedToken> tokens;
    for (const TextSegment& seg : split_on_specials(text, specials_)) {
        if (seg.special >= 0) {
            PretrainedToken t;
            t.id = special_ids_[static_cast<std::size_t>(seg.special)];
            t.text = specials_[static_cast<std::size_t>(seg.special)];
            t.display = t.text;
            t.begin = static_cast<std::int32_t>(seg.begin);
            t.end = static_cast<std::int32_t>(seg.end);
            tokens.push_back(std::move(t));
            continue;
        }
        const std::string part = text.substr(seg.begin, seg.end - seg.begin);
        for (const auto& [pb, pe] : pre_tokenize(part)) {
            std::size_t at = seg.begin + pb;  // the byte where the next token starts
            for (std::int32_t id : merge(part.substr(pb, pe - pb))) {
                PretrainedToken t;
                t.id = id;
                t.text = vocab_.piece(id);
                const std::string bytes = piece_bytes(id);
                t.display = display_bytes(bytes);
                t.begin = static_cast<std::int32_t>(char_begin(at));
                t.end = static_cast<std::int32_t>(char_end(at + bytes.size()));
                at += bytes.size();
                tokens.push_back(std::move(t));
            }
        }
    }
    return tokens;
}

std::string BpeTokenizer::decode(const std::vector<std::int32_t>& ids) const {
    std::string bytes;
    for (std::int32_t id : ids) bytes += piece_bytes(id);
    return unicode::utf8_replacing_invalid(bytes);
}

namespace {

std::vector<std::string> specials_in(const PieceVocabulary& vocab) {
    if (vocab.find(kEndOfText) >= 0) return {kEndOfText};
    return {};
}

}  // namespace

std::unique_ptr<PretrainedTokenizer> read_bpe_files(const std::string& vocab_json, const std::string& merges_txt) {
    PieceVocabulary vocab;
    vocab.add_json_object(parse_tokenizer_json(vocab_json, "vocab.json"), "vocab.json");
    vocab.finish("vocab.json");
    if (merges_txt.empty()) bad_tokenizer_file("merges.txt", "the file is empty or missing");
    std::vector<std::pair<std::string, std::string>> merges;
    std::size_t line_no = 0;
    for (std::size_t at = 0; at < merges_txt.size();) {
        std::size_t eol = merges_txt.find('\n', at);
        if (eol == std::string::npos) eol = merges_txt.size();
        std::string line = merges_txt.substr(at, eol - at);
        at = eol + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || (line_no == 1 && line.rfind("#version", 0) == 0)) continue;
        const std::size_t space = line.find(' ');
        if (space == std::string::npos || space == 0 || space + 1 == line.size() ||
            line.find(' ', space + 1) != std::string::npos)
            bad_tokenizer_file("merges.txt", "line " + std::to_string(line_no) + " is not two pieces separated by one space");
        merges.emplace_back(line.substr(0, space), line.substr(space + 1));
    }
    std::vector<std::string> specials = specials_in(vocab);
    return std::make_unique<BpeTokenizer>(std::move(vocab), merges, std::move(specials), "vocab.json", "merges.txt");
}

std::unique_ptr<PretrainedTokenizer> read_bpe_tokenizer_json(const JsonValue& root) {
    const std::string file = "tokenizer.json";
    const JsonValue* model = root.get("model");
    const JsonValue* vocab_json = model ? model->get("vocab") : nullptr;
    const JsonValue* merges_json = model ? model->get("merges") : nullptr;
    if (!vocab_json || !vocab_json->is(JsonValue::Type::object))
        bad_tokenizer_file(file, "model.vocab is not an object of pieces");
    if (!merges_json || !merges_json->is(JsonValue::Type::array))
        bad_tokenizer_file(file, "model.merges is not a list");
    PieceVocabulary vocab;
    vocab.add_json_object(*vocab_json, file);
    std::vector<std::string> specials = read_added_tokens(root, vocab, file);
    vocab.finish(file);
    std::vector<std::pair<std::string, std::string>> merges;
    merges.reserve(merges_json->array.size());
    for (std::size_t r = 0; r < merges_json->array.size(); ++r) {
        const JsonValue& m = merges_json->array[r];
        const std::string where = "model.merges[" + std::to_string(r) + "]";
        if (m.is(JsonValue::Type::string)) {
            const std::size_t space = m.string.find(' ');
            if (space == std::string::npos || space == 0 || space + 1 == m.string.size() ||
                m.string.find(' ', space + 1) != std::string::npos)
                bad_tokenizer_file(file, where + " is not two pieces separated by one space");
            merges.emplace_back(m.string.substr(0, space), m.string.substr(space + 1));
        } else if (m.is(JsonValue::Type::array) && m.array.size() == 2 && m.array[0].is(JsonValue::Type::string) &&
                   m.array[1].is(JsonValue::Type::string)) {
            merges.emplace_back(m.array[0].string, m.array[1].string);
        } else {
            bad_tokenizer_file(file, where + " is neither \"a b\" nor [\"a\", \"b\"]");
        }
    }
    return std::make_unique<BpeTokenizer>(std::move(vocab), merges, std::move(specials), file, file);
}

}  // namespace attn
