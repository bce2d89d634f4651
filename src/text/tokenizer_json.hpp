#pragma once
// What a BPE's tokenizer.json says around its model, and the encoding loop it makes
// (the Hugging Face tokenizers library's order):
//   1. the added tokens written as they are (normalized: false) are found in the text
//      (TokenMatcher) and become their ids;
//   2. each piece of text between them is normalized (Normalizer), then the added tokens
//      with normalized: true are found in it;
//   3. what is left is split (PreTokenizer) and merged by the model (a byte-level BPE,
//      bpe.hpp, or a SentencePiece-style BPE, sentencepiece.hpp: encode_text);
//   4. the post_processor's template puts its tokens before and after (BOS: <s>,
//      <|begin_of_text|>), marked as added: begin = end = -1, as BERT's [CLS] and [SEP].
// Every token spans the bytes of the user's text it came from (a token inside a character
// spans the character; a character the normalizer added, the one it was put before).
// Every setting of the file is honoured or refused by name (bad_checkpoint), never skipped;
// truncation is not applied (the engine refuses a text longer than the model reads).
// tokenizer_config.json is not read for these (its add_bos_token is what the template says).

#include "text/added_tokens.hpp"
#include "text/normalizer.hpp"
#include "text/pre_tokenizer.hpp"
#include "text/pretrained_tokenizer.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace attn {

struct TokenizerPipeline {
    std::vector<AddedToken> added;
    TokenMatcher as_written, after_normalizing;       ///< the added tokens of each kind
    std::vector<std::int32_t> as_written_ids, after_normalizing_ids;  ///< their ids, by matcher index
    Normalizer normalizer;
    PreTokenizer pre_tokenizer;
    std::vector<std::int32_t> before, after;  ///< the template's tokens around the text

    /// Makes the matchers from `added` and `normalizer` (call after filling them): the
    /// contents of the tokens with normalized: true are normalized first.
    void index_added_tokens();
    /// Whether `id` is one of the added tokens.
    bool is_added(std::int32_t id) const { return std::binary_search(added_ids.begin(), added_ids.end(), id); }

private:
    std::vector<std::int32_t> added_ids;  ///< sorted
};

/// The BPE model section of a tokenizer.json, read and checked.
struct BpeModelFile {
    PieceVocabulary vocab;  ///< model.vocab and the added tokens, finished
    std::vector<std::pair<std::string, std::string>> merges;
    std::string unk;  ///< unk_token, "" when none
    bool byte_fallback = false, fuse_unk = false, ignore_merges = false;
};

/// Reads a tokenizer.json whose model.type is "BPE": the model (refusing dropout and word
/// prefixes/suffixes), the added tokens, normalizer, pre_tokenizer and post_processor (each
/// refused by name when this engine cannot run it).
void read_bpe_json(const JsonValue& root, const std::string& file, BpeModelFile& model, TokenizerPipeline& pipeline);
/// Refuses a decoder that does not fit the BPE's kind (this engine decodes each kind its own
/// way): ByteLevel for a byte-level one; Replace, ByteFallback, Fuse, Strip, Metaspace for a
/// SentencePiece-style one; null for either.
void check_bpe_decoder(const JsonValue& root, bool byte_level, const std::string& file);

/// A tokenizer made of a TokenizerPipeline and a model that encodes normalized text.
class PipelineTokenizer : public PretrainedTokenizer {
public:
    std::vector<PretrainedToken> encode(const std::string& text) const override;

protected:
    explicit PipelineTokenizer(TokenizerPipeline pipeline) : pipeline_(std::move(pipeline)) {}
    /// The model's tokens of one normalized piece of text (pre-tokenize, merge), appended.
    virtual void encode_text(const NormText& text, std::vector<PretrainedToken>& out) const = 0;
    /// The token of an added token: found in the text at [begin, end), or put there by the
    /// template (-1, -1). Its display is its content.
    PretrainedToken added_token(std::int32_t id, std::int32_t begin, std::int32_t end) const;
    /// The span [begin, end) of the user's text that chars[from, to) came from.
    static std::pair<std::int32_t, std::int32_t> span(const NormText& chars, std::size_t from, std::size_t to);

    TokenizerPipeline pipeline_;
};

}  // namespace attn
