// read_tokenizer (pretrained_tokenizer.hpp) and what the subword tokenizers share.

#include "text/pretrained_tokenizer.hpp"

#include "text/added_tokens.hpp"
#include "text/bpe.hpp"
#include "text/tokenizer.hpp"
#include "text/wordpiece.hpp"

#include <algorithm>

namespace attn {

void bad_tokenizer_file(const std::string& file, const std::string& what) {
    throw Error(Error::Code::bad_checkpoint, file + ": " + what, Error::Kind::type);
}

void PieceVocabulary::add(const std::string& piece, std::int64_t id, const std::string& file) {
    if (id < 0 || id >= kMaxInferenceVocab)
        bad_tokenizer_file(file, "the id " + std::to_string(id) + " of \"" + piece + "\" is outside 0 … " +
                                     std::to_string(kMaxInferenceVocab - 1) + " (the largest vocabulary we run)");
    if (piece.empty()) bad_tokenizer_file(file, "the id " + std::to_string(id) + " has an empty piece");
    const auto i = static_cast<std::size_t>(id);
    const auto found = ids_.find(piece);
    if (found != ids_.end()) {
        if (found->second == id) return;
        bad_tokenizer_file(file, "\"" + piece + "\" has two ids, " + std::to_string(found->second) + " and " +
                                     std::to_string(id));
    }
    if (i >= pieces_.size()) {
        pieces_.resize(i + 1);
        filled_.resize(i + 1, false);
    }
    if (filled_[i])
        bad_tokenizer_file(file, "the id " + std::to_string(id) + " is given to both \"" + pieces_[i] + "\" and \"" +
                                     piece + "\"");
    pieces_[i] = piece;
    filled_[i] = true;
    ids_.emplace(piece, static_cast<std::int32_t>(id));
}

void PieceVocabulary::add_json_object(const JsonValue& object, const std::string& file) {
    if (!object.is(JsonValue::Type::object)) bad_tokenizer_file(file, "the vocabulary is not a JSON object of pieces");
    ids_.reserve(ids_.size() + object.object.size());
    for (const auto& [piece, id] : object.object) {
        if (!id.is(JsonValue::Type::number) || !id.is_integer)
            bad_tokenizer_file(file, "the id of \"" + piece + "\" is not a whole number");
        add(piece, id.integer, file);
    }
}

void PieceVocabulary::finish(const std::string& file) const {
    if (pieces_.empty()) bad_tokenizer_file(file, "the vocabulary is empty");
    const auto gap = std::find(filled_.begin(), filled_.end(), false);
    if (gap != filled_.end())
        bad_tokenizer_file(file, "no piece has the id " + std::to_string(gap - filled_.begin()) + " (ids must be 0 … " +
                                     std::to_string(pieces_.size() - 1) + " without gaps)");
}

std::int32_t PieceVocabulary::find(const std::string& piece) const {
    const auto it = ids_.find(piece);
    return it == ids_.end() ? -1 : it->second;
}

const std::string& PieceVocabulary::piece(std::int32_t id) const {
    if (id < 0 || id >= size())
        throw Error("token id " + std::to_string(id) + " is outside the vocabulary of " + std::to_string(size()) +
                    " pieces");
    return pieces_[static_cast<std::size_t>(id)];
}

JsonValue parse_tokenizer_json(const std::string& text, const std::string& file) {
    if (text.empty()) bad_tokenizer_file(file, "the file is empty or missing");
    if (text.size() > kMaxTokenizerFileBytes)
        bad_tokenizer_file(file, "the file is " + std::to_string(text.size()) + " bytes, above the limit of " +
                                     std::to_string(kMaxTokenizerFileBytes));
    JsonOptions options;
    options.prefix = file + ": ";
    options.code = Error::Code::bad_checkpoint;
    return parse_json(text, options);
}

std::vector<std::string> read_added_tokens(const JsonValue& root, PieceVocabulary& vocab, const std::string& file) {
    std::vector<std::string> contents;
    for (AddedToken& t : read_added_token_list(root, vocab, file)) contents.push_back(std::move(t.content));
    return contents;
}

bool json_flag(const JsonValue& object, const char* key, bool fallback, const std::string& what, const std::string& file) {
    const JsonValue* v = object.get(key);
    if (!v || v->is(JsonValue::Type::null)) return fallback;
    if (!v->is(JsonValue::Type::boolean)) bad_tokenizer_file(file, what + ": " + key + " is not true or false");
    return v->boolean;
}

void check_tokenizer_text(const std::string& text) {
    if (text.size() > kMaxSentenceBytes)
        throw Error(Error::Code::too_many_tokens, "the text is " + std::to_string(text.size()) +
                                                      " bytes of UTF-8, above the limit of " +
                                                      std::to_string(kMaxSentenceBytes) + " bytes");
    decode_utf8(text);  // throws bad_text naming the byte
}

namespace {

// The kinds vocab.json + merges.txt can make (GPT-2's): not asked by a family whose
// checkpoints may split otherwise (any_bpe: SmolLM2 ships them beside a tokenizer.json
// that splits digits first).
bool reads_bpe_files(TokenizerKind kind) { return kind == TokenizerKind::any || kind == TokenizerKind::byte_level_bpe; }

bool asks_bpe(TokenizerKind kind) { return kind != TokenizerKind::wordpiece; }

}  // namespace

std::unique_ptr<PretrainedTokenizer> read_tokenizer(const TokenizerRequest& request, const std::string& tokenizer_json,
                                                    const std::string& vocab_json, const std::string& merges_txt,
                                                    const std::string& vocab_txt,
                                                    const std::string& tokenizer_config_json) {
    const bool bpe = asks_bpe(request.kind), wordpiece = tokenizer_kind_accepts(request.kind, TokenizerKind::wordpiece);
    if (!tokenizer_json.empty()) {
        const std::string file = "tokenizer.json";
        const JsonValue root = parse_tokenizer_json(tokenizer_json, file);
        const JsonValue* model = root.get("model");
        const JsonValue* type = model ? model->get("type") : nullptr;
        if (!type || !type->is(JsonValue::Type::string)) bad_tokenizer_file(file, "model.type is missing (BPE or WordPiece)");
        if (type->string == "BPE" && bpe) {
            std::unique_ptr<PretrainedTokenizer> tok = read_bpe_tokenizer_json(root);
            if (!tokenizer_kind_accepts(request.kind, tok->kind()))
                bad_tokenizer_file(file, "it is " + tokenizer_kind_title(tok->kind()) + ", not " +
                                             tokenizer_kind_title(request.kind) + " (" + request.title + ")");
            return tok;
        }
        if (type->string == "WordPiece" && wordpiece) return read_wordpiece_tokenizer_json(root, tokenizer_config_json);
        const std::string expected = bpe && wordpiece ? "BPE or WordPiece" : (bpe ? "BPE (" : "WordPiece (") + request.title + ")";
        bad_tokenizer_file(file, "model.type \"" + type->string + "\" is not " + expected);
    }
    if (reads_bpe_files(request.kind) && (!vocab_json.empty() || !merges_txt.empty())) return read_bpe_files(vocab_json, merges_txt);
    if (wordpiece && !vocab_txt.empty()) return read_wordpiece_vocab_txt(vocab_txt, tokenizer_config_json);
    throw Error(Error::Code::bad_checkpoint,
                std::string("no tokenizer files") + (request.name.empty() ? "" : " for " + request.name) +
                    ": give tokenizer.json" + (reads_bpe_files(request.kind) ? ", or vocab.json and merges.txt" : "") +
                    (wordpiece ? ", or vocab.txt" : ""));
}

const char* tokenizer_kind_name(TokenizerKind kind) {
    switch (kind) {
        case TokenizerKind::any: return "any";
        case TokenizerKind::byte_level_bpe: return "byte_level_bpe";
        case TokenizerKind::wordpiece: return "wordpiece";
        case TokenizerKind::split_bpe: return "split_bpe";
        case TokenizerKind::sentencepiece_bpe: return "sentencepiece_bpe";
        case TokenizerKind::any_bpe: return "any_bpe";
    }
    return "?";
}

std::string tokenizer_kind_title(TokenizerKind kind) {
    switch (kind) {
        case TokenizerKind::any: return "any tokenizer";
        case TokenizerKind::byte_level_bpe: return "a byte-level BPE split by GPT-2's pattern";
        case TokenizerKind::wordpiece: return "a WordPiece";
        case TokenizerKind::split_bpe: return "a byte-level BPE after a Split pattern (Llama 3, Qwen2)";
        case TokenizerKind::sentencepiece_bpe: return "a SentencePiece-style BPE (Llama 2)";
        case TokenizerKind::any_bpe: return "a BPE";
    }
    return "?";
}

bool tokenizer_kind_accepts(TokenizerKind asked, TokenizerKind made) {
    if (asked == TokenizerKind::any || asked == made) return true;
    return asked == TokenizerKind::any_bpe && made != TokenizerKind::wordpiece && made != TokenizerKind::any;
}

std::vector<std::vector<std::string>> tokenizer_file_choices(TokenizerKind kind) {
    // read_tokenizer's order: tokenizer.json, then the older files of each kind
    std::vector<std::vector<std::string>> choices = {{"tokenizer.json"}};
    if (reads_bpe_files(kind)) choices.push_back({"vocab.json", "merges.txt"});
    if (tokenizer_kind_accepts(kind, TokenizerKind::wordpiece)) choices.push_back({"vocab.txt"});
    return choices;
}

}  // namespace attn
