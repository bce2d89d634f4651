// read_tokenizer (pretrained.hpp) and what the subword tokenizers share
// (pretrained_tokenizer.hpp).

#include "text/pretrained_tokenizer.hpp"

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
    const JsonValue* added = root.get("added_tokens");
    if (!added || added->is(JsonValue::Type::null)) return contents;
    if (!added->is(JsonValue::Type::array)) bad_tokenizer_file(file, "added_tokens is not a list");
    for (std::size_t i = 0; i < added->array.size(); ++i) {
        const JsonValue& t = added->array[i];
        const JsonValue* content = t.get("content");
        const JsonValue* id = t.get("id");
        if (!content || !content->is(JsonValue::Type::string) || !id || !id->is(JsonValue::Type::number) ||
            !id->is_integer)
            bad_tokenizer_file(file, "added_tokens[" + std::to_string(i) + "] has no string content and whole id");
        vocab.add(content->string, id->integer, file);
        contents.push_back(content->string);
    }
    return contents;
}

void check_tokenizer_text(const std::string& text) {
    if (text.size() > kMaxSentenceBytes)
        throw Error(Error::Code::too_many_tokens, "the text is " + std::to_string(text.size()) +
                                                      " bytes of UTF-8, above the limit of " +
                                                      std::to_string(kMaxSentenceBytes) + " bytes");
    decode_utf8(text);  // throws bad_text naming the byte
}

std::vector<TextSegment> split_on_specials(const std::string& text, const std::vector<std::string>& specials) {
    std::vector<TextSegment> out;
    std::size_t plain = 0;  // where the text since the last special token starts
    for (std::size_t at = 0; at < text.size();) {
        std::int32_t best = -1;
        for (std::size_t s = 0; s < specials.size(); ++s)
            if (!specials[s].empty() && text.compare(at, specials[s].size(), specials[s]) == 0 &&
                (best < 0 || specials[s].size() > specials[static_cast<std::size_t>(best)].size()))
                best = static_cast<std::int32_t>(s);
        if (best < 0) {
            ++at;
            continue;
        }
        if (at > plain) out.push_back({plain, at, -1});
        const std::size_t end = at + specials[static_cast<std::size_t>(best)].size();
        out.push_back({at, end, best});
        at = plain = end;
    }
    if (plain < text.size()) out.push_back({plain, text.size(), -1});
    return out;
}

std::unique_ptr<PretrainedTokenizer> read_tokenizer(const TokenizerRequest& request, const std::string& tokenizer_json,
                                                    const std::string& vocab_json, const std::string& merges_txt,
                                                    const std::string& vocab_txt,
                                                    const std::string& tokenizer_config_json) {
    const bool bpe = request.kind != TokenizerKind::wordpiece, wordpiece = request.kind != TokenizerKind::byte_level_bpe;
    if (!tokenizer_json.empty()) {
        const JsonValue root = parse_tokenizer_json(tokenizer_json, "tokenizer.json");
        const JsonValue* model = root.get("model");
        const JsonValue* type = model ? model->get("type") : nullptr;
        if (!type || !type->is(JsonValue::Type::string))
            bad_tokenizer_file("tokenizer.json", "model.type is missing (BPE or WordPiece)");
        if (type->string == "BPE" && bpe) return read_bpe_tokenizer_json(root);
        if (type->string == "WordPiece" && wordpiece) return read_wordpiece_tokenizer_json(root, tokenizer_config_json);
        const std::string expected = bpe && wordpiece ? "BPE or WordPiece" : (bpe ? "BPE (" : "WordPiece (") + request.title + ")";
        bad_tokenizer_file("tokenizer.json", "model.type \"" + type->string + "\" is not " + expected);
    }
    if (bpe && (!vocab_json.empty() || !merges_txt.empty())) return read_bpe_files(vocab_json, merges_txt);
    if (wordpiece && !vocab_txt.empty()) return read_wordpiece_vocab_txt(vocab_txt, tokenizer_config_json);
    throw Error(Error::Code::bad_checkpoint,
                std::string("no tokenizer files") + (request.name.empty() ? "" : " for " + request.name) +
                    ": give tokenizer.json" + (bpe ? ", or vocab.json and merges.txt" : "") +
                    (wordpiece ? ", or vocab.txt" : ""));
}

const char* tokenizer_kind_name(TokenizerKind kind) {
    switch (kind) {
        case TokenizerKind::any: return "any";
        case TokenizerKind::byte_level_bpe: return "byte_level_bpe";
        case TokenizerKind::wordpiece: return "wordpiece";
    }
    return "?";
}

std::vector<std::vector<std::string>> tokenizer_file_choices(TokenizerKind kind) {
    // read_tokenizer's order: tokenizer.json, then the older files of each kind
    std::vector<std::vector<std::string>> choices = {{"tokenizer.json"}};
    if (kind != TokenizerKind::wordpiece) choices.push_back({"vocab.json", "merges.txt"});
    if (kind != TokenizerKind::byte_level_bpe) choices.push_back({"vocab.txt"});
    return choices;
}

}  // namespace attn
