// Embind glue for the pretrained tokenizers (text/pretrained_tokenizer.hpp): one
// tokenizer per JS PretrainedTokenizer (web/tokenizer.js), in this file's handle
// table (handles.hpp), read from the files' texts, encoding into plain JS
// objects. Errors come back as guarded()'s records, which web/tokenizer.js raises.

#include "convert.hpp"
#include "guarded.hpp"
#include "handles.hpp"
#include "families/family.hpp"

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <memory>
#include <string>
#include <vector>

namespace {

using emscripten::val;
using namespace attn;
using attn::js::guarded;

/// The live tokenizers (handles.hpp).
js::Handles<PretrainedTokenizer>& tokenizers() {
    static js::Handles<PretrainedTokenizer> table("tokenizer", ": create a new one");
    return table;
}

/// Reads a tokenizer (read_family_tokenizer's arguments): {handle, family, vocabSize, maskId}.
val tokenizer_load_js(const std::string& family, const std::string& tokenizer_json, const std::string& vocab_json,
                      const std::string& merges_txt, const std::string& vocab_txt,
                      const std::string& tokenizer_config_json) {
    return guarded([&] {
        std::unique_ptr<PretrainedTokenizer> t =
            read_family_tokenizer(family, tokenizer_json, vocab_json, merges_txt, vocab_txt, tokenizer_config_json);
        // the family asked for, else the first whose tokenizer is of the kind the files made
        const Family* f = family.empty() ? family_by_tokenizer(t->kind()) : family_named(family);
        val o = val::object();
        o.set("family", f ? f->name : std::string());
        o.set("vocabSize", t->vocab_size());
        o.set("maskId", t->mask_id());
        o.set("handle", tokenizers().add(std::move(t)));
        return o;
    });
}

/// [{id, piece, text, start, end}] (convert.hpp's pretrained_tokens_to_js).
val tokenizer_encode_js(int handle, const std::string& text) {
    return guarded([&] { return js::pretrained_tokens_to_js(tokenizers().at(handle).encode(text)); });
}

/// ids: a JS array of whole numbers (checked by web/tokenizer.js).
val tokenizer_decode_js(int handle, const val& ids) {
    return guarded([&] { return val(tokenizers().at(handle).decode(emscripten::vecFromJSArray<std::int32_t>(ids))); });
}

val tokenizer_piece_js(int handle, int id) {
    return guarded([&] { return val(tokenizers().at(handle).piece(id)); });
}

void tokenizer_dispose_js(int handle) { tokenizers().erase(handle); }

}  // namespace

void attn::js::count_tokenizers(HandleCounts& counts) { counts.tokenizers = tokenizers().size(); }

EMSCRIPTEN_BINDINGS(attention_tokenizers) {
    emscripten::function("tokenizerLoad", &tokenizer_load_js);
    emscripten::function("tokenizerEncode", &tokenizer_encode_js);
    emscripten::function("tokenizerDecode", &tokenizer_decode_js);
    emscripten::function("tokenizerPiece", &tokenizer_piece_js);
    emscripten::function("tokenizerDispose", &tokenizer_dispose_js);
}
