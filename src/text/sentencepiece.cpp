#include "text/sentencepiece.hpp"

#include "text/unicode.hpp"

#include <algorithm>

namespace attn {

namespace {

const char* const kSpacePiece = "\xE2\x96\x81";  // ▁

std::string byte_piece(unsigned b) {
    static const char* const kHex = "0123456789ABCDEF";
    return std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
}

}  // namespace

SentencePieceBpeTokenizer::SentencePieceBpeTokenizer(BpeModelFile model, TokenizerPipeline pipeline, const std::string& file)
    : PipelineTokenizer(std::move(pipeline)),
      vocab_(std::move(model.vocab)),
      byte_fallback_(model.byte_fallback),
      fuse_unk_(model.fuse_unk),
      ignore_merges_(model.ignore_merges),
      prepends_(pipeline_.normalizer.prepends(kSpacePiece)) {
    if (!model.unk.empty()) unk_id_ = vocab_.find(model.unk);
    byte_of_.assign(static_cast<std::size_t>(vocab_.size()), -1);
    for (unsigned b = 0; b < 256; ++b) {
        byte_ids_[b] = vocab_.find(byte_piece(b));
        if (byte_ids_[b] >= 0) byte_of_[static_cast<std::size_t>(byte_ids_[b])] = static_cast<std::int16_t>(b);
    }
    merges_ = BpeMerges(vocab_, model.merges, file);
}

void SentencePieceBpeTokenizer::encode_text(const NormText& text, std::vector<PretrainedToken>& out) const {
    // 1. the symbols: a piece per character, its bytes' pieces, or the unknown piece; each with
    //    the characters [from, to) it stands for
    std::vector<std::int32_t> ids, from, to;
    std::string ch;
    for (std::size_t i = 0; i < text.size(); ++i) {
        ch.clear();
        unicode::append_utf8(ch, text[i].value);
        const std::int32_t id = vocab_.find(ch);
        if (id >= 0) {
            ids.push_back(id), from.push_back(static_cast<std::int32_t>(i)), to.push_back(static_cast<std::int32_t>(i + 1));
            continue;
        }
        const bool bytes_known = byte_fallback_ && std::all_of(ch.begin(), ch.end(), [&](char b) {
                                     return byte_ids_[static_cast<unsigned char>(b)] >= 0;
                                 });
        if (bytes_known) {
            for (const char b : ch) {
                ids.push_back(byte_ids_[static_cast<unsigned char>(b)]);
                from.push_back(static_cast<std::int32_t>(i)), to.push_back(static_cast<std::int32_t>(i + 1));
            }
            continue;
        }
        if (unk_id_ < 0) {
            char code[16];
            std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(text[i].value));
            throw Error(Error::Code::bad_text, std::string("the character ") + code +
                                                   " is not in this tokenizer's vocabulary, which has no unknown piece");
        }
        if (fuse_unk_ && !ids.empty() && ids.back() == unk_id_ && to.back() == static_cast<std::int32_t>(i)) {
            to.back() = static_cast<std::int32_t>(i + 1);
            continue;
        }
        ids.push_back(unk_id_), from.push_back(static_cast<std::int32_t>(i)), to.push_back(static_cast<std::int32_t>(i + 1));
    }
    // 2. the merges over the whole text (or the whole text's piece, with ignore_merges)
    std::vector<std::int32_t> starts;
    const std::int32_t whole = ignore_merges_ ? vocab_.find(norm_utf8(text)) : -1;
    if (whole >= 0) {
        ids.assign(1, whole);
        starts.assign(1, 0);
    } else {
        std::uint64_t pushes = 0;
        merges_.merge(ids, starts, pushes);
        count_steps(pushes);
    }
    for (std::size_t k = 0; k < ids.size(); ++k) {
        const auto first = static_cast<std::size_t>(starts[k]);
        const std::size_t last = (k + 1 < ids.size() ? static_cast<std::size_t>(starts[k + 1]) : from.size()) - 1;
        PretrainedToken t;
        t.id = ids[k];
        t.text = vocab_.piece(t.id);
        t.display = display(piece_bytes(t.id));
        std::tie(t.begin, t.end) = span(text, static_cast<std::size_t>(from[first]), static_cast<std::size_t>(to[last]));
        out.push_back(std::move(t));
    }
}

std::string SentencePieceBpeTokenizer::piece_bytes(std::int32_t id) const {
    const std::string& p = vocab_.piece(id);
    if (byte_of_[static_cast<std::size_t>(id)] >= 0) return std::string(1, static_cast<char>(byte_of_[static_cast<std::size_t>(id)]));
    std::string out;
    for (std::size_t at = 0; at < p.size();) {
        if (p.compare(at, 3, kSpacePiece) == 0) {
            out += ' ';
            at += 3;
        } else {
            out += p[at++];
        }
    }
    return out;
}

std::string SentencePieceBpeTokenizer::decode(const std::vector<std::int32_t>& ids) const {
    const auto is_template = [&](std::int32_t id) {
        return std::find(pipeline_.before.begin(), pipeline_.before.end(), id) != pipeline_.before.end() ||
               std::find(pipeline_.after.begin(), pipeline_.after.end(), id) != pipeline_.after.end();
    };
    std::string out;
    bool after_added = false;  // the previous token was an added one: the text after it began with Prepend's ▁
    for (const std::int32_t id : ids) {
        const std::string& p = vocab_.piece(id);  // throws for an id outside the vocabulary
        // (the unknown piece is also the one encode gives for an unknown character, without byte_fallback)
        if ((pipeline_.is_added(id) && (id != unk_id_ || byte_fallback_)) || is_template(id)) {
            out += p;
            after_added = true;
            continue;
        }
        std::string bytes = piece_bytes(id);
        if (after_added && prepends_ && !bytes.empty() && bytes[0] == ' ') bytes.erase(0, 1);
        after_added = false;
        out += bytes;
    }
    return unicode::utf8_replacing_invalid(out);
}

}  // namespace attn
