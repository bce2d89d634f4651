// Embind glue for the pretrained tokenizers (core/pretrained.hpp): a
// TokenizerState per JS PretrainedTokenizer (web/tokenizer.js), loaded from the
// files' texts, encoding into plain JS objects. Errors come back as guarded()'s
// records, which web/tokenizer.js raises.

#include "convert.hpp"
#include "guarded.hpp"
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

class TokenizerState {
public:
    /// Reads the tokenizer (read_family_tokenizer's arguments); returns {family, vocabSize, maskId}.
    val load(const std::string& family, const std::string& tokenizer_json, const std::string& vocab_json,
             const std::string& merges_txt, const std::string& vocab_txt, const std::string& tokenizer_config_json) {
        return guarded([&] {
            tokenizer_ = read_family_tokenizer(family, tokenizer_json, vocab_json, merges_txt, vocab_txt, tokenizer_config_json);
            // the family asked for, else the first whose tokenizer is of the kind the files made
            const Family* f = family.empty() ? family_by_tokenizer(tokenizer_->kind()) : family_named(family);
            val o = val::object();
            o.set("family", f ? f->name : std::string());
            o.set("vocabSize", tokenizer_->vocab_size());
            o.set("maskId", tokenizer_->mask_id());
            return o;
        });
    }

    /// [{id, piece, text, start, end}] (convert.hpp's pretrained_tokens_to_js).
    val encode(const std::string& text) const {
        return guarded([&] { return js::pretrained_tokens_to_js(live().encode(text)); });
    }

    /// ids: a JS array of whole numbers (checked by web/tokenizer.js).
    val decode(const val& ids) const {
        return guarded([&] { return val(live().decode(emscripten::vecFromJSArray<std::int32_t>(ids))); });
    }

    val piece(int id) const {
        return guarded([&] { return val(live().piece(id)); });
    }

private:
    const PretrainedTokenizer& live() const {
        if (!tokenizer_) throw Error(Error::Code::bad_state, "the tokenizer has not been loaded");
        return *tokenizer_;
    }
    std::unique_ptr<PretrainedTokenizer> tokenizer_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(attention_tokenizers) {
    emscripten::class_<TokenizerState>("TokenizerState")
        .constructor<>()
        .function("load", &TokenizerState::load)
        .function("encode", &TokenizerState::encode)
        .function("decode", &TokenizerState::decode)
        .function("piece", &TokenizerState::piece);
}
