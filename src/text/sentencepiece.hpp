#pragma once
// SentencePiece-style BPE in a tokenizer.json (Llama 2, TinyLlama, Mistral): the
// normalizer writes "▁" before the text and for every space (Prepend + Replace), there is
// no pre-tokenizer, and the whole text between two added tokens is one word:
//  1. each character is its vocabulary piece; one the vocabulary lacks is its UTF-8 bytes
//     as <0xHH> pieces (byte_fallback), else the unknown piece (consecutive ones fused into
//     one with fuse_unk);
//  2. the pieces are merged pair by pair, lowest rank first (bpe.hpp's BpeMerges: O(n log n)
//     on a long text without spaces);
//  3. the post_processor's template adds <s> before the text.
// Decoding: ▁ is a space, <0xHH> its byte; the space the normalizer's Prepend put before
// the text that follows an added token (<s>, </s>) is removed, so that the ids of a text
// decode to the template's tokens and the text. Display: every ▁ as "␣", bytes as \xHH.

#include "text/bpe.hpp"
#include "text/tokenizer_json.hpp"

#include <array>
#include <string>
#include <vector>

namespace attn {

class SentencePieceBpeTokenizer : public PipelineTokenizer {
public:
    /// A tokenizer.json's (read_bpe_json) with no pre-tokenizer.
    SentencePieceBpeTokenizer(BpeModelFile model, TokenizerPipeline pipeline, const std::string& file);

    std::string decode(const std::vector<std::int32_t>& ids) const override;
    std::int32_t vocab_size() const override { return vocab_.size(); }
    std::string piece(std::int32_t id) const override { return vocab_.piece(id); }
    TokenizerKind kind() const override { return TokenizerKind::sentencepiece_bpe; }
    std::string display(const std::string& bytes) const override { return display_bytes(bytes, true); }

private:
    void encode_text(const NormText& text, std::vector<PretrainedToken>& out) const override;
    /// The bytes a (non-added) piece stands for: ▁ as a space, <0xHH> as its byte.
    std::string piece_bytes(std::int32_t id) const;

    PieceVocabulary vocab_;
    BpeMerges merges_;
    std::int32_t unk_id_ = -1;
    bool byte_fallback_, fuse_unk_, ignore_merges_;
    bool prepends_;  ///< the normalizer starts with Prepend("▁")
    std::array<std::int32_t, 256> byte_ids_{};  ///< <0xHH> by byte, -1 when absent
    std::vector<std::int16_t> byte_of_;         ///< by id: the byte of a <0xHH> piece, -1 otherwise
};

}  // namespace attn
