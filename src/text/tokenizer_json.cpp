#include "text/tokenizer_json.hpp"

#include <algorithm>

namespace attn {

namespace {

std::string type_of(const JsonValue& json) {
    const JsonValue* type = json.get("type");
    return type && type->is(JsonValue::Type::string) ? type->string : "";
}

// TemplateProcessing's "single": the special tokens before and after $A, by their ids.
void read_template(const JsonValue& json, const std::string& file, TokenizerPipeline& p) {
    const JsonValue* single = json.get("single");
    const JsonValue* specials = json.get("special_tokens");
    if (!single || !single->is(JsonValue::Type::array))
        bad_tokenizer_file(file, "the post_processor TemplateProcessing has no list \"single\"");
    bool seen_text = false;
    for (const JsonValue& item : single->array) {
        const JsonValue* sequence = item.get("Sequence");
        const JsonValue* special = item.get("SpecialToken");
        if (sequence) {
            const JsonValue* id = sequence->get("id");
            if (seen_text || !id || !id->is(JsonValue::Type::string) || id->string != "A")
                bad_tokenizer_file(file, "the post_processor's template \"single\" is not the text ($A) once with "
                                         "special tokens around it");
            seen_text = true;
            continue;
        }
        const JsonValue* name = special ? special->get("id") : nullptr;
        if (!name || !name->is(JsonValue::Type::string))
            bad_tokenizer_file(file, "the post_processor's template \"single\" holds an item that is neither "
                                     "{\"Sequence\": …} nor {\"SpecialToken\": …}");
        const JsonValue* entry = specials ? specials->get(name->string) : nullptr;
        const JsonValue* ids = entry ? entry->get("ids") : nullptr;
        if (!ids || !ids->is(JsonValue::Type::array))
            bad_tokenizer_file(file, "the post_processor's special token \"" + name->string + "\" has no ids");
        for (const JsonValue& id : ids->array) {
            if (!id.is(JsonValue::Type::number) || !id.is_integer || id.integer < 0 || id.integer >= kMaxInferenceVocab)
                bad_tokenizer_file(file, "the post_processor's special token \"" + name->string + "\" has an id that is not a token id");
            (seen_text ? p.after : p.before).push_back(static_cast<std::int32_t>(id.integer));
        }
    }
    if (!seen_text) bad_tokenizer_file(file, "the post_processor's template \"single\" has no $A (the text)");
}

void read_post_processor(const JsonValue& json, const std::string& file, TokenizerPipeline& p, int depth) {
    const std::string t = type_of(json);
    if (t == "ByteLevel") return;  // it only trims the library's offsets
    if (t == "TemplateProcessing") {
        if (!p.before.empty() || !p.after.empty())
            bad_tokenizer_file(file, "the post_processor has two TemplateProcessing steps");
        read_template(json, file, p);
        return;
    }
    if (t == "Sequence" && depth < kMaxTokenizerSequenceDepth) {
        const JsonValue* list = json.get("processors");
        if (!list || !list->is(JsonValue::Type::array))
            bad_tokenizer_file(file, "the post_processor Sequence has no list \"processors\"");
        for (const JsonValue& item : list->array) read_post_processor(item, file, p, depth + 1);
        return;
    }
    bad_tokenizer_file(file, "the post_processor \"" + t + "\" is not one this engine runs for a BPE "
                             "(it runs TemplateProcessing, ByteLevel and a Sequence of them)");
}

void check_decoder(const JsonValue* json, bool byte_level, const std::string& file, int depth) {
    if (!json || json->is(JsonValue::Type::null)) return;
    const std::string t = type_of(*json);
    if (t == "Sequence" && depth < kMaxTokenizerSequenceDepth) {
        const JsonValue* list = json->get("decoders");
        if (!list || !list->is(JsonValue::Type::array)) bad_tokenizer_file(file, "the decoder Sequence has no list \"decoders\"");
        for (const JsonValue& item : list->array) check_decoder(&item, byte_level, file, depth + 1);
        return;
    }
    if (byte_level ? t == "ByteLevel" : (t == "Replace" || t == "ByteFallback" || t == "Fuse" || t == "Strip" || t == "Metaspace"))
        return;
    bad_tokenizer_file(file, "the decoder \"" + t + "\" does not fit " +
                                 (byte_level ? "a byte-level BPE (its decoder is ByteLevel)"
                                             : "a SentencePiece-style BPE (its decoders are Replace, ByteFallback, Fuse, "
                                               "Strip or Metaspace)"));
}

}  // namespace

void check_bpe_decoder(const JsonValue& root, bool byte_level, const std::string& file) {
    check_decoder(root.get("decoder"), byte_level, file, 0);
}

void TokenizerPipeline::index_added_tokens() {
    std::vector<std::string> raw, normalized;
    as_written_ids.clear();
    after_normalizing_ids.clear();
    for (const AddedToken& a : added) {
        if (!a.normalized) {
            raw.push_back(a.content);
            as_written_ids.push_back(a.id);
            continue;
        }
        // found in the normalized text as the normalizer writes it (the tokenizers library
        // normalizes these tokens' contents too)
        NormText content = norm_text(a.content, 0, a.content.size());
        normalizer.apply(content);
        if (content.empty()) continue;
        normalized.push_back(norm_utf8(content));
        after_normalizing_ids.push_back(a.id);
    }
    added_ids.clear();
    for (const AddedToken& a : added) added_ids.push_back(a.id);
    std::sort(added_ids.begin(), added_ids.end());
    as_written = TokenMatcher(raw);
    after_normalizing = TokenMatcher(normalized);
}

void read_bpe_json(const JsonValue& root, const std::string& file, BpeModelFile& model, TokenizerPipeline& pipeline) {
    const JsonValue* m = root.get("model");
    const JsonValue* vocab_json = m ? m->get("vocab") : nullptr;
    const JsonValue* merges_json = m ? m->get("merges") : nullptr;
    if (!vocab_json || !vocab_json->is(JsonValue::Type::object)) bad_tokenizer_file(file, "model.vocab is not an object of pieces");
    if (!merges_json || !merges_json->is(JsonValue::Type::array)) bad_tokenizer_file(file, "model.merges is not a list");
    // the model's settings: honoured, or refused by name
    if (const JsonValue* d = m->get("dropout"); d && !d->is(JsonValue::Type::null) && !(d->is(JsonValue::Type::number) && d->number == 0))
        bad_tokenizer_file(file, "model.dropout is set: this engine does not drop merges at random");
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
        if (const JsonValue* v = m->get(key); v && !v->is(JsonValue::Type::null) && !(v->is(JsonValue::Type::string) && v->string.empty()))
            bad_tokenizer_file(file, std::string("model.") + key + " is set, which this engine's BPE does not use");
    if (const JsonValue* unk = m->get("unk_token"); unk && !unk->is(JsonValue::Type::null)) {
        if (!unk->is(JsonValue::Type::string)) bad_tokenizer_file(file, "model.unk_token is not a piece");
        model.unk = unk->string;
    }
    model.byte_fallback = json_flag(*m, "byte_fallback", false, "model", file);
    model.fuse_unk = json_flag(*m, "fuse_unk", false, "model", file);
    model.ignore_merges = json_flag(*m, "ignore_merges", false, "model", file);
    if (const JsonValue* padding = root.get("padding"); padding && padding->get("strategy") && padding->get("strategy")->get("Fixed"))
        bad_tokenizer_file(file, "padding has a Fixed length, which this engine does not add to a text");

    model.vocab.add_json_object(*vocab_json, file);
    pipeline.added = read_added_token_list(root, model.vocab, file);
    model.vocab.finish(file);
    if (!model.unk.empty() && model.vocab.find(model.unk) < 0)
        bad_tokenizer_file(file, "model.unk_token \"" + model.unk + "\" is not in the vocabulary");
    model.merges.reserve(merges_json->array.size());
    for (std::size_t r = 0; r < merges_json->array.size(); ++r) {
        const JsonValue& item = merges_json->array[r];
        const std::string where = "model.merges[" + std::to_string(r) + "]";
        if (item.is(JsonValue::Type::string)) {
            const std::size_t space = item.string.find(' ');
            if (space == std::string::npos || space == 0 || space + 1 == item.string.size() ||
                item.string.find(' ', space + 1) != std::string::npos)
                bad_tokenizer_file(file, where + " is not two pieces separated by one space");
            model.merges.emplace_back(item.string.substr(0, space), item.string.substr(space + 1));
        } else if (item.is(JsonValue::Type::array) && item.array.size() == 2 && item.array[0].is(JsonValue::Type::string) &&
                   item.array[1].is(JsonValue::Type::string)) {
            model.merges.emplace_back(item.array[0].string, item.array[1].string);
        } else {
            bad_tokenizer_file(file, where + " is neither \"a b\" nor [\"a\", \"b\"]");
        }
    }

    pipeline.normalizer = Normalizer::read(root.get("normalizer"), file);
    pipeline.pre_tokenizer = PreTokenizer::read(root.get("pre_tokenizer"), file);
    if (const JsonValue* post = root.get("post_processor"); post && !post->is(JsonValue::Type::null))
        read_post_processor(*post, file, pipeline, 0);
    for (const std::vector<std::int32_t>* ids : {&pipeline.before, &pipeline.after})
        for (const std::int32_t id : *ids)
            if (id >= model.vocab.size())
                bad_tokenizer_file(file, "the post_processor's special token id " + std::to_string(id) + " is not in the vocabulary");
    pipeline.index_added_tokens();
}

PretrainedToken PipelineTokenizer::added_token(std::int32_t id, std::int32_t begin, std::int32_t end) const {
    PretrainedToken t;
    t.id = id;
    t.text = piece(id);
    t.display = t.text;
    t.begin = begin;
    t.end = end;
    return t;
}

std::pair<std::int32_t, std::int32_t> PipelineTokenizer::span(const NormText& chars, std::size_t from, std::size_t to) {
    std::uint32_t begin = chars[from].begin, end = chars[from].end;
    for (std::size_t i = from; i < to; ++i) begin = std::min(begin, chars[i].begin), end = std::max(end, chars[i].end);
    return {static_cast<std::int32_t>(begin), static_cast<std::int32_t>(end)};
}

std::vector<PretrainedToken> PipelineTokenizer::encode(const std::string& text) const {
    check_tokenizer_text(text);
    std::vector<PretrainedToken> tokens;
    for (const std::int32_t id : pipeline_.before) tokens.push_back(added_token(id, -1, -1));
    std::uint64_t steps = 0;
    for (const TextSegment& seg : pipeline_.as_written.split(text, steps)) {
        if (seg.special >= 0) {
            tokens.push_back(added_token(pipeline_.as_written_ids[static_cast<std::size_t>(seg.special)],
                                         static_cast<std::int32_t>(seg.begin), static_cast<std::int32_t>(seg.end)));
            continue;
        }
        NormText chars = norm_text(text, seg.begin, seg.end);
        pipeline_.normalizer.apply(chars);
        if (chars.empty()) continue;
        if (pipeline_.after_normalizing.empty()) {
            encode_text(chars, tokens);
            continue;
        }
        // the added tokens matched after normalizing: found in the normalized text's UTF-8
        const std::string normalized = norm_utf8(chars);
        std::vector<std::size_t> char_at(normalized.size() + 1, chars.size());  // byte → its character
        for (std::size_t i = 0, at = 0; i < chars.size(); ++i) {
            const std::size_t next = at + norm_utf8(chars, i, i + 1).size();
            for (; at < next; ++at) char_at[at] = i;
        }
        for (const TextSegment& part : pipeline_.after_normalizing.split(normalized, steps)) {
            const std::size_t from = char_at[part.begin], to = char_at[part.end];
            if (part.special >= 0) {
                const auto [b, e] = span(chars, from, to);
                tokens.push_back(added_token(pipeline_.after_normalizing_ids[static_cast<std::size_t>(part.special)], b, e));
            } else {
                encode_text(NormText(chars.begin() + static_cast<std::ptrdiff_t>(from), chars.begin() + static_cast<std::ptrdiff_t>(to)), tokens);
            }
        }
    }
    count_steps(steps);
    for (const std::int32_t id : pipeline_.after) tokens.push_back(added_token(id, -1, -1));
    return tokens;
}

}  // namespace attn
