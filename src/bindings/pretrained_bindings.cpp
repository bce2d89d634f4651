// Embind glue for pretrained checkpoints (core/pretrained.hpp), guarded like
// bindings.cpp. Two kinds of handle live in this file's registries, each held
// by one JS object of web/pretrained.js, which frees it (dispose):
//
//   a HubLoader while a checkpoint streams in: created from config.json's text
//   and the safetensors header, it says which byte ranges it needs; the page
//   copies each chunk into the loader's staging buffer (a fixed block of wasm
//   memory, so the file never has a second full copy here) and calls feed;
//   finish() turns it into
//   a pretrained model: its tokenizer and parameters; it tokenizes and traces
//   one sentence (every intermediate of the layer the page shows, the
//   attention weights of every layer, the five likeliest tokens per position).
//
// Everything returned is a copy.

#include "convert.hpp"
#include "guarded.hpp"
#include "core/pretrained.hpp"
#include "core/tasks.hpp"

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

using emscripten::val;
using namespace attn;
using attn::js::guarded;

/// Bytes of the staging buffer a chunk is copied into (the page's chunk size).
constexpr std::size_t kStagingBytes = std::size_t{4} << 20;
/// Tokens per position in the top-k list the page shows.
constexpr int kTopTokens = 5;

struct LoaderRecord {
    ModelConfig config;
    std::unique_ptr<HubLoader> loader;
    std::vector<std::uint8_t> staging;
};

struct ModelRecord {
    std::unique_ptr<Model> model;
    std::unique_ptr<PretrainedTokenizer> tokenizer;
};

template <typename Record>
struct Registry {
    std::map<int, Record> items;
    int next = 1;
    Record& at(int handle, const char* what) {
        const auto it = items.find(handle);
        if (it == items.end())
            throw Error(Error::Code::bad_state, std::string("this ") + what + " has been disposed (or never existed)", Error::Kind::type);
        return it->second;
    }
};

Registry<LoaderRecord>& loaders() {
    static Registry<LoaderRecord> r;
    return r;
}
Registry<ModelRecord>& models() {
    static Registry<ModelRecord> r;
    return r;
}

std::string bytes_from_js(const val& bytes, const char* what) {
    if (bytes.isUndefined() || bytes.isNull() || !bytes["length"].isNumber())
        throw Error(std::string(what) + " must be a Uint8Array", Error::Kind::type);
    const std::vector<std::uint8_t> v = emscripten::convertJSArrayToNumberVector<std::uint8_t>(bytes);
    return std::string(v.begin(), v.end());
}

std::string text_field(const val& o, const char* key) {
    const val v = o[key];
    if (v.isUndefined() || v.isNull()) return "";
    if (!v.isString()) throw Error(std::string("tokenizer file ") + key + " must be text", Error::Kind::type);
    return v.as<std::string>();
}

/// The model schema's rows (js::model_config_to_js, as Trainer.config), and postNorm (norm "post").
val config_to_js(const ModelConfig& m) {
    val o = js::model_config_to_js(m);
    o.set("postNorm", m.norm == Norm::post);
    return o;
}

// ---- the loader ---------------------------------------------------------------------

/// 8 + N from the file's first 8 bytes.
double header_size_js(const val& first8) {
    return static_cast<double>(HubLoader::header_size(bytes_from_js(first8, "the first 8 bytes")));
}

/// config.json → the model's config, checked before any weights are fetched.
val read_config_js(const std::string& config_json) {
    return guarded([&] { return config_to_js(read_hub_config(config_json)); });
}

val loader_create_js(const std::string& config_json, const val& header) {
    return guarded([&] {
        LoaderRecord r;
        r.config = read_hub_config(config_json);
        r.loader = std::make_unique<HubLoader>(r.config, bytes_from_js(header, "the safetensors header"));
        r.staging.resize(kStagingBytes);
        val needed = val::array();
        for (const ByteRange& b : r.loader->needed()) {
            val o = val::object();
            o.set("begin", static_cast<double>(b.begin));
            o.set("end", static_cast<double>(b.end));
            needed.call<void>("push", o);
        }
        val o = val::object();
        o.set("config", config_to_js(r.config));
        o.set("needed", needed);
        o.set("neededBytes", static_cast<double>(r.loader->needed_bytes()));
        o.set("staging", static_cast<double>(reinterpret_cast<std::uintptr_t>(r.staging.data())));
        o.set("stagingBytes", static_cast<double>(r.staging.size()));
        const int handle = loaders().next++;
        loaders().items.emplace(handle, std::move(r));
        o.set("handle", handle);
        return o;
    });
}

/// The staging buffer's first `size` bytes are the file's bytes at `offset`.
val loader_feed_js(int handle, double offset, double size) {
    return guarded([&] {
        LoaderRecord& r = loaders().at(handle, "loader");
        if (!(offset >= 0 && offset == std::floor(offset) && offset <= 9007199254740991.0))
            throw Error("the chunk's offset must be a whole number of bytes from 0");
        if (!(size >= 0 && size == std::floor(size) && size <= static_cast<double>(r.staging.size())))
            throw Error("a chunk holds at most " + std::to_string(r.staging.size()) + " bytes");
        r.loader->feed(static_cast<std::uint64_t>(offset), r.staging.data(), static_cast<std::size_t>(size));
        return val(static_cast<double>(r.loader->fed_bytes()));
    });
}

val loader_dispose_js(int handle) {
    return guarded([&] {
        loaders().items.erase(handle);
        return val::undefined();
    });
}

/// The loader's model with its tokenizer (files: {tokenizerJson, vocabJson, mergesTxt,
/// vocabTxt, tokenizerConfigJson}, absent = ""); the loader is freed either way.
val loader_finish_js(int handle, const val& files) {
    return guarded([&] {
        LoaderRecord& lr = loaders().at(handle, "loader");
        // the loader's memory goes whatever happens next
        std::unique_ptr<HubLoader> loader = std::move(lr.loader);
        const ModelConfig config = lr.config;
        loaders().items.erase(handle);
        ModelRecord r;
        r.tokenizer = read_tokenizer(config.family, text_field(files, "tokenizerJson"), text_field(files, "vocabJson"),
                                     text_field(files, "mergesTxt"), text_field(files, "vocabTxt"),
                                     text_field(files, "tokenizerConfigJson"));
        if (r.tokenizer->vocab_size() > config.vocab)
            throw Error(Error::Code::bad_checkpoint, "the tokenizer has " + std::to_string(r.tokenizer->vocab_size()) +
                                                         " tokens but the model's vocabulary is " + std::to_string(config.vocab));
        r.model = loader->finish();
        val o = val::object();
        o.set("config", config_to_js(r.model->config()));
        o.set("parameterCount", static_cast<double>(r.model->params().size()));
        o.set("maskId", r.tokenizer->mask_id());
        const int h = models().next++;
        models().items.emplace(h, std::move(r));
        o.set("handle", h);
        return o;
    });
}

// ---- the model ------------------------------------------------------------------------

val model_tokenize_js(int handle, const std::string& text) {
    return guarded([&] {
        ModelRecord& r = models().at(handle, "model");
        return js::pretrained_tokens_to_js(r.tokenizer->encode(text));
    });
}

void set_vector(val& o, const char* key, const Parameters& p, const std::string& name) {
    if (p.has(name)) o.set(key, js::matrix_to_js(p.view(name)));
}

/// The k likeliest tokens of each row of `probabilities`: {ids: Int32Array(T·k), p: Float32Array(T·k), texts}.
val top_tokens_js(const Matrix& probabilities, const PretrainedTokenizer& tokenizer) {
    const int T = static_cast<int>(probabilities.rows()), V = static_cast<int>(probabilities.cols());
    const int k = std::min(kTopTokens, V);
    std::vector<std::int32_t> ids;
    std::vector<float> p;
    val texts = val::array();
    std::vector<int> order(static_cast<std::size_t>(V));
    for (int i = 0; i < T; ++i) {
        for (int j = 0; j < V; ++j) order[static_cast<std::size_t>(j)] = j;
        // the largest first; equal probabilities by id
        std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) {
            const float pa = probabilities(i, a), pb = probabilities(i, b);
            return pa > pb || (pa == pb && a < b);
        });
        for (int j = 0; j < k; ++j) {
            const int id = order[static_cast<std::size_t>(j)];
            ids.push_back(id);
            p.push_back(probabilities(i, id));
            texts.call<void>("push", tokenizer.decode({id}));
        }
    }
    val o = val::object();
    o.set("k", k);
    o.set("ids", val::global("Int32Array").new_(emscripten::typed_memory_view(ids.size(), ids.data())));
    o.set("p", val::global("Float32Array").new_(emscripten::typed_memory_view(p.size(), p.data())));
    o.set("texts", texts);
    return o;
}

/// One sentence (or, when `ids` is an array, those token ids) through the model: the layer
/// `layer` in full (its input, LayerNorm, weights, biases, every head's Q/K/V/scores/scaled/
/// weights/output, concat, output and the rest of the block), the attention weights of every
/// layer when `allWeights`, the top tokens, and the logits (T×V) when `withLogits`.
val model_trace_js(int handle, const std::string& text, const val& given_ids, int layer, bool all_weights, bool with_logits) {
    return guarded([&] {
        ModelRecord& r = models().at(handle, "model");
        const ModelConfig& m = r.model->config();
        if (layer < 0 || layer >= m.layers)
            throw Error("layer " + std::to_string(layer) + " is outside 0 … " + std::to_string(m.layers - 1));
        std::vector<PretrainedToken> tokens;
        if (given_ids.isArray()) {
            for (const std::int32_t id : emscripten::convertJSArrayToNumberVector<std::int32_t>(given_ids)) {
                if (id < 0 || id >= m.vocab)
                    throw Error("token id " + std::to_string(id) + " is outside the vocabulary 0 … " + std::to_string(m.vocab - 1));
                tokens.push_back(PretrainedToken{id, r.tokenizer->piece(id), r.tokenizer->decode({id}), -1, -1});
            }
        } else {
            tokens = r.tokenizer->encode(text);
        }
        if (tokens.empty()) throw Error(Error::Code::empty_text, "the sentence has no tokens");
        if (static_cast<int>(tokens.size()) > m.context)
            throw Error(Error::Code::too_long_for_model, "the sentence has " + std::to_string(tokens.size()) +
                                                             " tokens; this model reads at most " + std::to_string(m.context));
        std::vector<std::int32_t> ids;
        for (const auto& t : tokens) ids.push_back(t.id);
        const Parameters& params = r.model->params();
        // with allWeights every layer keeps its heads; else only the layer on screen (a long input)
        const ModelTrace tr = r.model->trace(ids, -1, {}, all_weights ? -1 : layer);
        val o = val::object();
        o.set("config", config_to_js(m));
        o.set("tokens", js::pretrained_tokens_to_js(tokens));
        o.set("length", tr.length);
        o.set("embeddings", js::matrix_to_js(tr.embeddings));
        o.set("positional", js::matrix_to_js(tr.positional));
        o.set("mask", js::mask_to_js(tr.mask));
        val layers = val::array();
        for (int l = 0; l < m.layers; ++l) {
            const LayerTrace& lt = tr.layers[static_cast<std::size_t>(l)];
            val lo = val::object();
            val heads = val::array();
            if (l == layer) {
                const std::string prefix = "layers." + std::to_string(l) + ".";
                lo.set("input", js::matrix_to_js(lt.input));
                lo.set("normed", js::matrix_to_js(lt.normed));
                lo.set("wQuery", js::matrix_to_js(params.view(prefix + "w_query")));
                lo.set("wKey", js::matrix_to_js(params.view(prefix + "w_key")));
                lo.set("wValue", js::matrix_to_js(params.view(prefix + "w_value")));
                lo.set("wOutput", js::matrix_to_js(params.view(prefix + "w_output")));
                set_vector(lo, "bQuery", params, prefix + "b_query");
                set_vector(lo, "bKey", params, prefix + "b_key");
                set_vector(lo, "bValue", params, prefix + "b_value");
                set_vector(lo, "bOutput", params, prefix + "b_output");
                set_vector(lo, "ln1Gain", params, prefix + "ln1.gain");
                set_vector(lo, "ln1Bias", params, prefix + "ln1.bias");
                for (const HeadTrace& ht : lt.attention.heads) heads.call<void>("push", js::head_trace_to_js(ht));
                lo.set("concat", js::matrix_to_js(lt.attention.concat));
                lo.set("attentionOutput", js::matrix_to_js(lt.attention.output));
                lo.set("residual", js::matrix_to_js(lt.residual));
                if (m.mlp > 0) {
                    lo.set("mlpNormed", js::matrix_to_js(lt.mlp_normed));
                    lo.set("mlpHidden", js::matrix_to_js(lt.mlp_hidden));
                    lo.set("mlpOutput", js::matrix_to_js(lt.mlp_output));
                }
                lo.set("output", js::matrix_to_js(lt.output));
            } else if (all_weights) {
                for (const HeadTrace& ht : lt.attention.heads) {
                    val h = val::object();
                    h.set("weights", js::matrix_to_js(ht.weights));
                    heads.call<void>("push", h);
                }
            }
            lo.set("heads", heads);
            // the heads' pattern scores on this sentence (the page names heads by them), for every
            // layer whose weights were kept (none for a layer the trace skipped)
            std::vector<const Matrix*> weights;
            if (l == layer || all_weights)
                for (const HeadTrace& ht : lt.attention.heads) weights.push_back(&ht.weights);
            js::set_head_patterns(lo, head_patterns(weights, ids, tr.length, m.causal));
            layers.call<void>("push", lo);
        }
        o.set("layers", layers);
        o.set("top", top_tokens_js(tr.probabilities, *r.tokenizer));
        if (with_logits) o.set("logits", js::matrix_to_js(tr.logits));
        return o;
    });
}

val model_dispose_js(int handle) {
    return guarded([&] {
        models().items.erase(handle);
        return val::undefined();
    });
}

val header_size_guarded(const val& first8) {
    return guarded([&] { return val(header_size_js(first8)); });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attention_pretrained) {
    emscripten::function("hubHeaderSize", &header_size_guarded);
    emscripten::function("hubReadConfig", &read_config_js);
    emscripten::function("hubLoaderCreate", &loader_create_js);
    emscripten::function("hubLoaderFeed", &loader_feed_js);
    emscripten::function("hubLoaderFinish", &loader_finish_js);
    emscripten::function("hubLoaderDispose", &loader_dispose_js);
    emscripten::function("pretrainedTokenize", &model_tokenize_js);
    emscripten::function("pretrainedTrace", &model_trace_js);
    emscripten::function("pretrainedDispose", &model_dispose_js);
}
