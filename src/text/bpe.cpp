#include "text/bpe.hpp"

#include "text/sentencepiece.hpp"
#include "text/tokenizer.hpp"
#include "text/unicode.hpp"

#include <algorithm>
#include <queue>

namespace attn {
namespace {

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

std::string display_bytes(const std::string& bytes, bool every_space) {
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
        if ((i == 0 || every_space) && b == ' ') out += "\xE2\x90\xA3";  // ␣
        else out.append(bytes, i, len);
        i += len;
    }
    return out;
}

// ---- the merge loop ---------------------------------------------------------------------

BpeMerges::BpeMerges(const PieceVocabulary& vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                     const std::string& file) {
    merges_.reserve(merges.size());
    for (std::size_t r = 0; r < merges.size(); ++r) {
        const auto& [a, b] = merges[r];
        const std::string where = "merge " + std::to_string(r + 1) + " \"" + a + " " + b + "\"";
        const std::int32_t ia = vocab.find(a), ib = vocab.find(b), ij = vocab.find(a + b);
        if (ia < 0) bad_tokenizer_file(file, where + ": \"" + a + "\" is not in the vocabulary");
        if (ib < 0) bad_tokenizer_file(file, where + ": \"" + b + "\" is not in the vocabulary");
        if (ij < 0) bad_tokenizer_file(file, where + ": their join \"" + a + b + "\" is not in the vocabulary");
        // a pair listed twice takes its last rank (as a Python dict or the Rust tokenizers' map)
        merges_[pair_key(ia, ib)] = Merge{static_cast<std::int32_t>(r), ij};
    }
}

void BpeMerges::merge(std::vector<std::int32_t>& id, std::vector<std::int32_t>& starts, std::uint64_t& pushes) const {
    // symbols as a linked list over the positions; a merge keeps the left symbol and drops the right one
    const std::size_t n = id.size();
    std::vector<std::int32_t> next(n), prev(n);
    for (std::size_t i = 0; i < n; ++i) {
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
        if (it == merges_.end()) return;
        queue.push({it->second.rank, left, right, it->second.id});
        ++pushes;
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
    starts.clear();
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; i = static_cast<std::size_t>(next[i])) {
        starts.push_back(static_cast<std::int32_t>(i));
        id[kept++] = id[i];
    }
    id.resize(kept);
}

// ---- byte-level BPE ---------------------------------------------------------------------

namespace {

TokenizerPipeline files_pipeline(const PieceVocabulary& vocab, const std::vector<std::string>& specials) {
    TokenizerPipeline p;
    for (const std::string& s : specials) p.added.push_back(AddedToken{s, vocab.find(s), true, false});
    p.pre_tokenizer = PreTokenizer::byte_level_default();
    p.index_added_tokens();
    return p;
}

}  // namespace

BpeTokenizer::BpeTokenizer(PieceVocabulary vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                           std::vector<std::string> specials, const std::string& vocab_file,
                           const std::string& merges_file)
    : PipelineTokenizer(files_pipeline(vocab, specials)), vocab_(std::move(vocab)) {
    check_bytes(vocab_file);
    merges_ = BpeMerges(vocab_, merges, merges_file);
}

BpeTokenizer::BpeTokenizer(BpeModelFile model, TokenizerPipeline pipeline, const std::string& file)
    : PipelineTokenizer(std::move(pipeline)), vocab_(std::move(model.vocab)), ignore_merges_(model.ignore_merges) {
    kind_ = pipeline_.pre_tokenizer.splits() ? TokenizerKind::split_bpe : TokenizerKind::byte_level_bpe;
    check_bytes(file);
    merges_ = BpeMerges(vocab_, model.merges, file);
}

void BpeTokenizer::check_bytes(const std::string& file) {
    for (unsigned b = 0; b < 256; ++b) {
        std::string piece;
        const char32_t u = byte_to_unicode(static_cast<std::uint8_t>(b));
        unicode::append_utf8(piece, u);
        byte_ids_[b] = vocab_.find(piece);
        if (byte_ids_[b] < 0)
            bad_tokenizer_file(file, "the vocabulary has no piece \"" + piece + "\" for the byte " + std::to_string(b) +
                                         " (a byte-level BPE needs all 256)");
        unicode_to_byte_[u] = static_cast<std::uint8_t>(b);
    }
}

std::vector<std::int32_t> BpeTokenizer::merge(const std::string& bytes) const {
    std::vector<std::int32_t> ids(bytes.size()), starts;
    for (std::size_t i = 0; i < bytes.size(); ++i) ids[i] = byte_ids_[static_cast<unsigned char>(bytes[i])];
    std::uint64_t pushes = 0;
    merges_.merge(ids, starts, pushes);
    return ids;
}

std::string BpeTokenizer::piece_bytes(std::int32_t token) const {
    if (pipeline_.is_added(token)) return vocab_.piece(token);
    std::string bytes;
    for (const unicode::CodePoint& cp : unicode::code_points(vocab_.piece(token))) {
        const auto it = unicode_to_byte_.find(cp.value);
        // a piece outside the byte alphabet: its own UTF-8
        if (it == unicode_to_byte_.end()) unicode::append_utf8(bytes, cp.value);
        else bytes += static_cast<char>(it->second);
    }
    return bytes;
}

void BpeTokenizer::encode_text(const NormText& text, std::vector<PretrainedToken>& out) const {
    std::vector<std::int32_t> ids, starts;
    std::uint64_t pushes = 0;
    std::vector<std::size_t> char_at;  // byte of the piece → its character
    for (const NormText& piece : pipeline_.pre_tokenizer.apply(text)) {
        const std::string bytes = norm_utf8(piece);
        char_at.clear();
        for (std::size_t i = 0; i < piece.size(); ++i) char_at.insert(char_at.end(), unicode::utf8_length(piece[i].value), i);
        ids.assign(bytes.size(), 0);
        for (std::size_t i = 0; i < bytes.size(); ++i) ids[i] = byte_ids_[static_cast<unsigned char>(bytes[i])];
        std::int32_t whole = -1;
        if (ignore_merges_) {
            // the piece in the byte alphabet, when the vocabulary has it whole
            std::string alphabet;
            for (const unsigned char b : bytes) unicode::append_utf8(alphabet, byte_to_unicode(b));
            whole = vocab_.find(alphabet);
        }
        if (whole >= 0) {
            ids.assign(1, whole);
            starts.assign(1, 0);
        } else {
            merges_.merge(ids, starts, pushes);
        }
        for (std::size_t k = 0; k < ids.size(); ++k) {
            const auto begin = static_cast<std::size_t>(starts[k]);
            const std::size_t end = k + 1 < ids.size() ? static_cast<std::size_t>(starts[k + 1]) : bytes.size();
            PretrainedToken t;
            t.id = ids[k];
            t.text = vocab_.piece(t.id);
            t.display = display_bytes(bytes.substr(begin, end - begin));
            std::tie(t.begin, t.end) = span(piece, char_at[begin], char_at[end - 1] + 1);
            out.push_back(std::move(t));
        }
    }
    count_steps(pushes);
}

std::string BpeTokenizer::decode(const std::vector<std::int32_t>& ids) const {
    std::string bytes;
    for (std::int32_t id : ids) bytes += piece_bytes(id);
    return unicode::utf8_replacing_invalid(bytes);
}

// ---- reading ----------------------------------------------------------------------------

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
    std::vector<std::string> specials;
    if (vocab.find(kEndOfText) >= 0) specials.push_back(kEndOfText);
    return std::make_unique<BpeTokenizer>(std::move(vocab), merges, std::move(specials), "vocab.json", "merges.txt");
}

std::unique_ptr<PretrainedTokenizer> read_bpe_tokenizer_json(const JsonValue& root) {
    const std::string file = "tokenizer.json";
    BpeModelFile model;
    TokenizerPipeline pipeline;
    read_bpe_json(root, file, model, pipeline);
    if (pipeline.pre_tokenizer.byte_level()) {
        check_bpe_decoder(root, true, file);
        return std::make_unique<BpeTokenizer>(std::move(model), std::move(pipeline), file);
    }
    if (pipeline.pre_tokenizer.empty()) {
        // no pre-tokenizer: SentencePiece-style when the file says so (bytes as <0x..> pieces, a
        // normalizer writing ▁); else GPT-2's splitting, as this engine has always read a BPE
        // tokenizer.json that says nothing of it
        const bool sentencepiece = model.byte_fallback || pipeline.normalizer.writes("\xE2\x96\x81");
        check_bpe_decoder(root, !sentencepiece, file);
        if (sentencepiece) return std::make_unique<SentencePieceBpeTokenizer>(std::move(model), std::move(pipeline), file);
        pipeline.pre_tokenizer = PreTokenizer::byte_level_default();
        return std::make_unique<BpeTokenizer>(std::move(model), std::move(pipeline), file);
    }
    bad_tokenizer_file(file, "the pre_tokenizer does not end with ByteLevel: a BPE this engine runs is byte-level (its "
                             "pre_tokenizer ends with ByteLevel) or SentencePiece-style (no pre_tokenizer)");
}

}  // namespace attn
