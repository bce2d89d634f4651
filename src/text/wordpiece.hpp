#pragma once
// BERT's WordPiece (transformers' BertTokenizer: BasicTokenizer + WordpieceTokenizer):
//  1. the special tokens ([CLS] [SEP] [MASK] [PAD] [UNK], as written) are split out;
//  2. clean: NUL, U+FFFD and control characters (category C*, except tab,
//     newline, return) are dropped, whitespace becomes a space;
//  3. a space goes around every CJK ideograph;
//  4. the text is split at whitespace; each word is lower-cased, decomposed (NFD)
//     and stripped of combining marks (Mn) when lower-casing (or strip_accents);
//  5. every punctuation character (ASCII 33–47, 58–64, 91–96, 123–126, or P*)
//     becomes a word of its own;
//  6. each word: longest vocabulary piece first, then "##" continuations; a word
//     of more than max_input_chars_per_word characters (100 unless the files say fewer:
//     kMaxWordPieceChars), or one no pieces spell, is [UNK];
//  7. [CLS] first, [SEP] last.
// Offsets: each piece spans the characters of the user's text it came from.

#include "text/added_tokens.hpp"
#include "text/pretrained_tokenizer.hpp"

#include <string>
#include <vector>

namespace attn {

/// The longest word WordPiece spells, in characters, whatever a file says (the tokenizers
/// library's default, 100): a longer word is [UNK]. It bounds the work of a word: at most
/// min(word, longest piece) lookups from each of its characters.
inline constexpr std::size_t kMaxWordPieceChars = 100;

struct WordPieceOptions {
    bool lowercase = true;
    bool strip_accents = true;  ///< by default as lowercase
    bool split_cjk = true;      ///< tokenize_chinese_chars
    std::string prefix = "##";  ///< continuing_subword_prefix
    std::size_t max_word_chars = kMaxWordPieceChars;  ///< max_input_chars_per_word, at most kMaxWordPieceChars
    std::string unk = "[UNK]", cls = "[CLS]", sep = "[SEP]", mask = "[MASK]", pad = "[PAD]";
};

class WordPieceTokenizer : public PretrainedTokenizer {
public:
    /// Needs the unknown, [CLS] and [SEP] pieces in `vocab` (an error naming `file` otherwise).
    WordPieceTokenizer(PieceVocabulary vocab, WordPieceOptions options, std::vector<std::string> specials,
                       const std::string& file);

    std::vector<PretrainedToken> encode(const std::string& text) const override;
    /// The pieces joined by spaces, "##" continuations glued to the piece before.
    std::string decode(const std::vector<std::int32_t>& ids) const override;
    std::int32_t vocab_size() const override { return vocab_.size(); }
    std::string piece(std::int32_t id) const override { return vocab_.piece(id); }
    std::int32_t mask_id() const override { return mask_id_; }
    TokenizerKind kind() const override { return TokenizerKind::wordpiece; }

private:
    PieceVocabulary vocab_;
    WordPieceOptions options_;
    std::vector<std::string> specials_;
    TokenMatcher special_matcher_;
    std::int32_t unk_id_, cls_id_, sep_id_, mask_id_;
    std::size_t longest_piece_ = 0;  ///< bytes: no longer candidate is looked up
};

/// vocab.txt: one piece per line, the id is the line number (from 0).
/// tokenizer_config.json (may be empty): do_lower_case, strip_accents, tokenize_chinese_chars.
std::unique_ptr<PretrainedTokenizer> read_wordpiece_vocab_txt(const std::string& vocab_txt,
                                                              const std::string& tokenizer_config_json);
/// A tokenizer.json whose model.type is "WordPiece"; its normalizer (BertNormalizer, or
/// none) gives the lower-casing, unless tokenizer_config.json does. Another normalizer or a
/// pre_tokenizer other than BertPreTokenizer is refused by name.
std::unique_ptr<PretrainedTokenizer> read_wordpiece_tokenizer_json(const JsonValue& root,
                                                                   const std::string& tokenizer_config_json);

/// True for the CJK ideographs BERT puts spaces around.
bool is_cjk_ideograph(char32_t c);
/// True for BERT's punctuation: ASCII 33–47, 58–64, 91–96, 123–126, or category P*.
bool is_bert_punctuation(char32_t c);

}  // namespace attn
