// Embind glue for pretrained checkpoints (core/pretrained.hpp), guarded like
// bindings.cpp. Two kinds of handle live in this file's tables (handles.hpp: the
// bindings' one handle scheme), each held by one JS object of web/pretrained.js,
// which frees it (dispose):
//
//   a HubLoader while a checkpoint streams in: created from config.json's text,
//   the safetensors header and the file's size (hubCheckConfig says from
//   config.json alone whether the model fits, before anything is downloaded;
//   the loader refuses a header that does not fit before allocating), it says
//   which byte ranges it needs; the page
//   copies each chunk into the loader's staging buffer (a fixed block of wasm
//   memory, so the file never has a second full copy here) and calls feed;
//   finish() turns it into
//   a pretrained model: its tokenizer and parameters; it tokenizes and traces
//   one sentence (every intermediate of the layer the page shows, the
//   attention weights of every layer when asked, the five likeliest tokens per
//   position; the T×V logits only when asked),
//   and generates: the next token of a sequence, through its KV cache
//   (core/generation.hpp), which it keeps from call to call.
//
// Everything returned is a copy.

#include "convert.hpp"
#include "guarded.hpp"
#include "handles.hpp"
#include "train/backward.hpp"
#include "families/family.hpp"
#include "model/generation.hpp"
#include "text/continuation.hpp"
#include "checkpoints/pretrained.hpp"
#include "train/tasks.hpp"

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

using emscripten::val;
using namespace attn;
using js::LayerBackwardWeights;
using js::set_matrices;
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
    std::unique_ptr<KvCache> cache;  ///< generation's keys and values (made at the first generate; freed before the model)
    std::deque<SgdUndo> undo;        ///< the steps by hand (pretrainedSgd), the last last: what each changed, for an exact undo
                                     ///< (at most kMaxUndoSteps: the oldest goes)
};

/// The live loaders and models (handles.hpp).
js::Handles<LoaderRecord>& loaders() {
    static js::Handles<LoaderRecord> table("loader");
    return table;
}
js::Handles<ModelRecord>& models() {
    static js::Handles<ModelRecord> table("model");
    return table;
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

/// config.json → its size verdict (check_hub_size), before anything else is downloaded:
/// {config, parameterBytes (the smallest model it allows, its large tensors held as config.json's
/// dtype / torch_dtype says: storage), largestBytes (with every part a
/// weights file can add), limitBytes (this build's), fits, message (the too_large refusal, or null)}.
/// A config that cannot be read throws as hubReadConfig does; a model too large does not.
val check_config_js(const std::string& config_json) {
    return guarded([&] {
        const ModelConfig config = read_hub_config(config_json);
        const HubSizeCheck c = check_hub_size(config, declared_weight_format(config_json));
        val o = val::object();
        o.set("config", config_to_js(config));
        o.set("parameterBytes", static_cast<double>(c.parameter_bytes));
        o.set("largestBytes", static_cast<double>(c.largest_bytes));
        o.set("limitBytes", static_cast<double>(c.limit_bytes));
        o.set("storage", std::string(weight_format_name(c.format)));
        o.set("fits", c.fits);
        o.set("message", c.fits ? val::null() : val(c.refusal));
        return o;
    });
}

/// keep_16bit: an F16/BF16 file's large tensors stay 16-bit in memory (HubLoader); false: all float32.
/// chunk_bytes: the 16-bit chunks' size (tests spread a small model over many); 0 for kHalfChunkBytes.
val loader_create_js(const std::string& config_json, const val& header, double file_size, bool keep_16bit, double chunk_bytes) {
    return guarded([&] {
        if (!(file_size >= 0 && file_size == std::floor(file_size) && file_size <= 9007199254740991.0))
            throw Error("the file's size must be a whole number of bytes", Error::Kind::type);
        if (!(chunk_bytes == 0 || (chunk_bytes >= 16 && chunk_bytes == std::floor(chunk_bytes) &&
                                   chunk_bytes <= static_cast<double>(kHalfChunkBytes))))
            throw Error("the chunk size must be a whole number of bytes from 16 to " + std::to_string(kHalfChunkBytes) + ", got " +
                        std::to_string(chunk_bytes));
        LoaderRecord r;
        r.config = read_hub_config(config_json);
        r.loader = std::make_unique<HubLoader>(r.config, bytes_from_js(header, "the safetensors header"),
                                               static_cast<std::uint64_t>(file_size), keep_16bit,
                                               chunk_bytes == 0 ? kHalfChunkBytes : static_cast<std::size_t>(chunk_bytes));
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
        o.set("storage", std::string(weight_format_name(r.loader->storage())));
        o.set("parameterBytes", static_cast<double>(r.loader->parameter_bytes()));
        o.set("halfChunks", static_cast<double>(r.loader->half_chunks()));
        o.set("staging", static_cast<double>(reinterpret_cast<std::uintptr_t>(r.staging.data())));
        o.set("stagingBytes", static_cast<double>(r.staging.size()));
        o.set("handle", loaders().add(std::make_unique<LoaderRecord>(std::move(r))));
        return o;
    });
}

/// HubLoader::check: the header (read alone) against config.json and the file's size, before a
/// download; the bytes of the parameters the model would take.
val loader_check_js(const std::string& config_json, const val& header, double file_size) {
    return guarded([&] {
        if (!(file_size >= 0 && file_size == std::floor(file_size) && file_size <= 9007199254740991.0))
            throw Error("the file's size must be a whole number of bytes", Error::Kind::type);
        const ModelConfig config = read_hub_config(config_json);
        HubLoader::check(config, bytes_from_js(header, "the safetensors header"), static_cast<std::uint64_t>(file_size));
        val o = val::object();
        o.set("ok", true);
        return o;
    });
}

/// The staging buffer's first `size` bytes are the file's bytes at `offset`.
val loader_feed_js(int handle, double offset, double size) {
    return guarded([&] {
        LoaderRecord& r = loaders().at(handle);
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
        loaders().erase(handle);
        return val::undefined();
    });
}

/// The loader's model with its tokenizer (files: {tokenizerJson, vocabJson, mergesTxt,
/// vocabTxt, tokenizerConfigJson}, absent = ""); the loader is freed either way.
val loader_finish_js(int handle, const val& files) {
    return guarded([&] {
        LoaderRecord& lr = loaders().at(handle);
        // the loader's memory goes whatever happens next
        std::unique_ptr<HubLoader> loader = std::move(lr.loader);
        const ModelConfig config = lr.config;
        loaders().erase(handle);
        ModelRecord r;
        r.tokenizer = read_family_tokenizer(config.family, text_field(files, "tokenizerJson"), text_field(files, "vocabJson"),
                                            text_field(files, "mergesTxt"), text_field(files, "vocabTxt"),
                                            text_field(files, "tokenizerConfigJson"));
        if (r.tokenizer->vocab_size() > config.vocab)
            throw Error(Error::Code::bad_checkpoint, "the tokenizer has " + std::to_string(r.tokenizer->vocab_size()) +
                                                         " tokens but the model's vocabulary is " + std::to_string(config.vocab));
        r.model = loader->finish();
        val o = val::object();
        o.set("config", config_to_js(r.model->config()));
        o.set("parameterCount", static_cast<double>(r.model->params().size()));
        o.set("storage", std::string(weight_format_name(r.model->params().half_format())));
        o.set("parameterBytes", static_cast<double>(r.model->params().bytes()));
        o.set("maskId", r.tokenizer->mask_id());
        o.set("handle", models().add(std::make_unique<ModelRecord>(std::move(r))));
        return o;
    });
}

// ---- the model ------------------------------------------------------------------------

val model_tokenize_js(int handle, const std::string& text) {
    return guarded([&] {
        ModelRecord& r = models().at(handle);
        return js::pretrained_tokens_to_js(r.tokenizer->encode(text));
    });
}

std::vector<std::int32_t> ids_from_js(const val& given, int vocab, const char* what) {
    if (!given.isArray()) throw Error(std::string(what) + " must be an array of token ids", Error::Kind::type);
    std::vector<std::int32_t> ids = emscripten::convertJSArrayToNumberVector<std::int32_t>(given);
    for (const std::int32_t id : ids)
        if (id < 0 || id >= vocab)
            throw Error("token id " + std::to_string(id) + " is outside the vocabulary 0 … " + std::to_string(vocab - 1));
    return ids;
}

/// The ids that wrote a text's end (generate's, given back): ids of the vocabulary that have
/// text (a padding id, past the tokenizer's pieces, is never generated).
std::vector<std::int32_t> generated_from_js(const val& given, const ModelRecord& r) {
    std::vector<std::int32_t> ids = ids_from_js(given, r.model->config().vocab, "generated");
    for (const std::int32_t id : ids)
        if (is_padding_id(*r.tokenizer, id))
            throw Error("generated token id " + std::to_string(id) + " is a padding id (the tokenizer has " +
                        std::to_string(r.tokenizer->vocab_size()) + " pieces): it has no text and is never generated");
    return ids;
}

/// Throws empty_text / too_long_for_model for a sequence the model cannot read.
void check_sequence(std::size_t tokens, const ModelConfig& m) {
    if (tokens == 0) throw Error(Error::Code::empty_text, "the sentence has no tokens");
    if (static_cast<int>(tokens) > m.context)
        throw Error(Error::Code::too_long_for_model, "the sentence has " + std::to_string(tokens) +
                                                         " tokens; this model reads at most " + std::to_string(m.context));
}

/// One sentence (or, when `ids` is an array, those token ids) through the model: the layer
/// `layer` in full (its input, LayerNorm, weights, biases, every head's Q/K/V/scores/scaled/
/// weights/output, concat, output and the rest of the block), the attention weights of every
/// layer when `allWeights`, the top tokens, and the logits (T×V) when `withLogits`. With
/// `generated` (an array of ids), a text whose end those ids wrote (text/continuation.hpp); the
/// trace's `generated` says how many of them it used, and `undoSentence` is the text without the
/// last of them (what an undo of it leaves: the ids before it decoded together). The fields are a trained model's
/// (js::model_trace_to_js): also tokenType, embedNormed, finalNormed, transformed,
/// probabilities (with the logits) and the final LayerNorm's gain and bias when the model has them.
val model_trace_js(int handle, const std::string& text, const val& given_ids, const val& generated, int layer,
                   bool all_weights, bool with_logits) {
    return guarded([&] {
        ModelRecord& r = models().at(handle);
        const ModelConfig& m = r.model->config();
        if (layer < 0 || layer >= m.layers)
            throw Error("layer " + std::to_string(layer) + " is outside 0 … " + std::to_string(m.layers - 1));
        std::vector<PretrainedToken> tokens;
        int used = 0;
        std::string undo = text;
        if (given_ids.isArray()) {
            for (const std::int32_t id : ids_from_js(given_ids, m.vocab, "ids")) {
                const bool padding = is_padding_id(*r.tokenizer, id);
                tokens.push_back(PretrainedToken{id, token_piece(*r.tokenizer, id),
                                                 padding ? token_piece(*r.tokenizer, id) : r.tokenizer->decode({id}), -1, -1});
            }
        } else {
            Continuation c = continue_text(*r.tokenizer, text,
                                           generated.isArray() ? generated_from_js(generated, r) : std::vector<std::int32_t>{});
            tokens = std::move(c.tokens);
            used = c.used;
            undo = std::move(c.before_last);
        }
        check_sequence(tokens.size(), m);
        std::vector<std::int32_t> ids;
        for (const auto& t : tokens) ids.push_back(t.id);
        // what the page shows: with allWeights every layer's heads, else only the layer on screen's
        // (a long input); that layer's vectors; the top tokens per position, and the T×V logits
        // only when asked (the unembedding then runs in row blocks: no T×V matrix is whole)
        TraceKeep keep;
        keep.layer = all_weights ? -1 : layer;
        keep.vectors = layer;
        keep.logits = with_logits;
        keep.top_k = kTopTokens;
        const ModelTrace tr = r.model->trace(ids, -1, {}, keep);
        // the other layers are summaries: their heads' weights (model_trace_fields.hpp)
        val o = js::model_trace_to_js(m, tr, r.model->params());
        o.set("config", config_to_js(m));  // with postNorm, as the loader gives it
        o.set("tokens", js::pretrained_tokens_to_js(tokens));
        o.set("generated", used);
        o.set("undoSentence", undo);
        // the top tokens' texts beside their ids: {k, ids: Int32Array(T·k), p: Float32Array(T·k), texts,
        // padding}; a padding id (no text) has "<pad ID>" as its text and true in padding
        val texts = val::array(), padding = val::array();
        for (const std::int32_t id : tr.top_ids) {
            const bool pad = is_padding_id(*r.tokenizer, id);
            texts.call<void>("push", pad ? token_piece(*r.tokenizer, id) : r.tokenizer->decode({id}));
            padding.call<void>("push", pad);
        }
        o["top"].set("texts", texts);
        o["top"].set("padding", padding);
        return o;
    });
}

/// The next token after a text (generated: the ids that wrote its end, as for model_trace_js;
/// options: {sample, temperature, topK, seed, logits}), appended through the model's KV cache.
/// The cache keeps the longest prefix it shares with the text's ids and computes the rest
/// (after an undo or an edit), then the chosen token's row: {id, piece, text (decoded),
/// display, position, reused (the earlier rows of K and V the new token read from the cache),
/// recomputed (rows of the text this call computed first: 0 when it continues the last call),
/// probability (of the chosen token,
/// softmax of the logits), sentence (the text with the token appended), generated (the ids
/// that wrote its end, the new one last), weights: [layer][head] Float32Array(position + 1)
/// (the new row), logits: the new position's (Float32Array V) when options.logits}.
val model_generate_js(int handle, const std::string& text, const val& generated, const val& options) {
    return guarded([&] {
        ModelRecord& r = models().at(handle);
        const ModelConfig& m = r.model->config();
        if (!r.cache) r.cache = std::make_unique<KvCache>(*r.model);
        const std::vector<std::int32_t> before_ids = generated_from_js(generated, r);
        const Continuation c = continue_text(*r.tokenizer, text, before_ids);
        check_sequence(c.tokens.size(), m);
        std::vector<std::int32_t> ids;
        for (const auto& t : c.tokens) ids.push_back(t.id);
        GenerationOptions o;
        o.sample = options["sample"].as<bool>();
        o.temperature = options["temperature"].as<double>();
        o.top_k = options["topK"].as<int>();
        o.seed = options["seed"].as<std::uint32_t>();
        validate_generation_options(o, m.vocab);
        KvCache& cache = *r.cache;
        // keep the shared prefix; the last append's logits choose the next token, so unless the
        // cache is exactly ids (the last call's sequence), ids' last token is appended again
        std::size_t shared = 0;
        while (shared < ids.size() && shared < cache.ids().size() && cache.ids()[shared] == ids[shared]) ++shared;
        if (!(shared == ids.size() && cache.ids().size() == ids.size() && cache.logits().size() > 0)) {
            shared = std::min(shared, ids.size() - 1);
            cache.truncate(static_cast<int>(shared));
            cache.append(std::vector<std::int32_t>(ids.begin() + static_cast<std::ptrdiff_t>(shared), ids.end()));
        }
        const int position = static_cast<int>(ids.size());
        const Matrix& before = cache.logits();
        double top = before.maxCoeff(), z = 0;
        for (Eigen::Index j = 0; j < before.cols(); ++j) z += std::exp(before(0, j) - top);
        // chosen among the ids with text: a padding id (past the tokenizer's pieces) is a logit
        // with nothing to write (its probability stays in the softmax's sum)
        const int with_text = std::min(m.vocab, r.tokenizer->vocab_size());
        GenerationOptions among = o;
        among.top_k = std::min(o.top_k, with_text);
        const std::int32_t id = choose_token(before.data(), with_text, among, position);
        const double probability = std::exp(before(0, id) - top) / z;
        cache.append(id);
        val weights = val::array();
        for (int l = 0; l < m.layers; ++l) {
            val heads = val::array();
            for (int h = 0; h < m.heads; ++h) {
                const std::vector<float>& w = cache.weights(l, h);
                heads.call<void>("push", val::global("Float32Array").new_(emscripten::typed_memory_view(w.size(), w.data())));
            }
            weights.call<void>("push", heads);
        }
        val out = val::object();
        out.set("id", id);
        out.set("piece", r.tokenizer->piece(id));
        const std::string bytes = r.tokenizer->decode({id});
        out.set("text", bytes);
        out.set("display", r.tokenizer->display(bytes));
        std::vector<std::int32_t> after(before_ids.begin(), before_ids.begin() + c.used);
        after.push_back(id);
        out.set("sentence", c.prompt + r.tokenizer->decode(after));
        val list = val::array();
        for (const std::int32_t g : after) list.call<void>("push", g);
        out.set("generated", list);
        out.set("position", position);
        out.set("reused", position);
        out.set("recomputed", static_cast<int>(ids.size() - shared));
        out.set("probability", probability);
        out.set("weights", weights);
        if (options["logits"].as<bool>()) out.set("logits", js::matrix_to_js(cache.logits()));
        return out;
    });
}

/// The logits (T×V) of token ids through the whole model: Model::run, no trace kept (the
/// forward a benchmark times, and what a caller that only wants the next token needs).
val model_forward_js(int handle, const val& given_ids) {
    return guarded([&] {
        ModelRecord& r = models().at(handle);
        const ModelConfig& m = r.model->config();
        if (!given_ids.isArray()) throw Error("ids must be an array of token ids");
        Batch b;
        b.batch = 1;
        b.ids = emscripten::convertJSArrayToNumberVector<std::int32_t>(given_ids);
        if (b.ids.empty()) throw Error(Error::Code::empty_text, "there are no token ids");
        if (static_cast<int>(b.ids.size()) > m.context)
            throw Error(Error::Code::too_long_for_model, std::to_string(b.ids.size()) +
                                                             " tokens; this model reads at most " + std::to_string(m.context));
        b.length = static_cast<int>(b.ids.size());
        b.targets.assign(b.ids.size(), kNoTarget);
        r.model->run(b);  // checks every id against the vocabulary
        val o = val::object();
        o.set("logits", js::matrix_to_js(r.model->logits()));
        return o;
    });
}

/// A backward's sequence and targets from JS: options.text, options.targets (one per token,
/// -1 none; default backward.hpp's pretrained_default_targets), options.layer.
struct LearnInput {
    std::vector<std::int32_t> ids, defaults, targets;
    int layer = 0;
};
LearnInput learn_input(ModelRecord& r, const val& options) {
    const ModelConfig& m = r.model->config();
    LearnInput in;
    const val text = options["text"];
    if (!text.isString()) throw Error("options.text must be the sentence", Error::Kind::type);
    for (const PretrainedToken& t : r.tokenizer->encode(text.as<std::string>())) in.ids.push_back(t.id);
    check_sequence(in.ids.size(), m);
    in.layer = options["layer"].isNumber() ? options["layer"].as<int>() : 0;
    if (in.layer < 0 || in.layer >= m.layers)
        throw Error("layer " + std::to_string(in.layer) + " is outside 0 … " + std::to_string(m.layers - 1));
    const val given = options["targets"];
    if (!given.isUndefined() && !given.isNull()) {
        in.targets = emscripten::convertJSArrayToNumberVector<std::int32_t>(given);
        if (in.targets.size() != in.ids.size())
            throw Error(Error::Code::bad_shape, "targets has " + std::to_string(in.targets.size()) + " entries; the sentence has " +
                                                    std::to_string(in.ids.size()) + " tokens");
        for (std::int32_t y : in.targets)
            if (y != kNoTarget && (y < 0 || y >= m.vocab))
                throw Error("target " + std::to_string(y) + " is outside the vocabulary 0 … " + std::to_string(m.vocab - 1));
        try {
            in.defaults = pretrained_default_targets(*r.model, in.ids, r.tokenizer->mask_id());
        } catch (const Error& e) {
            if (e.code() != Error::Code::bad_input) throw;
            in.defaults.assign(in.ids.size(), kNoTarget);
        }
    } else {
        in.defaults = pretrained_default_targets(*r.model, in.ids, r.tokenizer->mask_id());
        in.targets = in.defaults;
    }
    return in;
}

/// Trainer.backwardTrace's shape for a loaded model (options: text, targets, scale, layer):
/// {loss, scale, targets, defaults (the model's own: next tokens, or the top fill at each
/// [MASK]), layer, memoryBytes (learn_memory), dLogits, probabilities, layers: L entries, the
/// asked layer's as the trainer's ({normed, dStreamIn, dStreamOut, dAttention, wOutput,
/// dWQuery…, heads}) and null for the others, gradNorms (the asked layer's tensors)}.
val model_backward_js(int handle, const val& options) {
    return guarded([&] {
        ModelRecord& r = models().at(handle);
        const LearnInput in = learn_input(r, options);
        const val sc = options["scale"];
        const int scale = sc.isUndefined() || sc.isNull() ? -1 : sc.as<bool>();
        const PretrainedBackward b = pretrained_backward(*r.model, in.ids, in.targets, in.layer, scale);
        val o = val::object();
        o.set("loss", b.loss);
        o.set("scale", b.config.scale);
        o.set("layer", in.layer);
        o.set("memoryBytes", static_cast<double>(learn_memory(r.model->config(), static_cast<int>(in.ids.size()))));
        o.set("targets", val::array(in.targets.begin(), in.targets.end()));
        o.set("defaults", val::array(in.defaults.begin(), in.defaults.end()));
        set_matrices(o, {{"dLogits", b.recorder.gradients.d_logits}, {"probabilities", b.recorder.trace.probabilities}});
        val layers = val::array();
        const Parameters& params = r.model->params();
        for (int l = 0; l < r.model->config().layers; ++l) {
            if (l != in.layer) {
                layers.call<void>("push", val::null());
                continue;
            }
            const LayerGradTrace& lg = b.recorder.gradients.layers[static_cast<std::size_t>(l)];
            const LayerTrace& lt = b.recorder.trace.layers[static_cast<std::size_t>(l)];
            const std::string prefix = "layers." + std::to_string(l) + ".";
            const Matrix w_output = params.matrix(prefix + "w_output");  // row-major, however it is stored
            const LayerBackwardWeights w{w_output, b.grads.view(prefix + "w_query"),
                                         b.grads.view(prefix + "w_key"), b.grads.view(prefix + "w_value"),
                                         b.grads.view(prefix + "w_output")};
            const val lo = js::layer_backward_to_js(lt, lg, w);
            layers.call<void>("push", lo);
        }
        o.set("layers", layers);
        val norms = val::object();
        for (const ParamInfo& info : b.grads.layout) norms.set(info.name, b.grads.view(info.name).cast<double>().norm());
        o.set("gradNorms", norms);
        return o;
    });
}

/// One plain SGD step by hand on the sentence's loss (the model's own scale) on layer
/// options.layer's attention: options.head ≥ 0 that head's share, -1 (default) the whole
/// layer's W_Q, W_K, W_V, W_O and biases. Keeps the old values (pretrainedUndo puts them
/// back bit for bit; the last kMaxUndoSteps only: an older one is dropped, and can no longer be
/// undone). {loss (before the step), size: ‖Δθ‖, steps: how many can be undone}.
val model_sgd_js(int handle, const val& options) {
    return guarded([&] {
        ModelRecord& r = models().at(handle);
        const LearnInput in = learn_input(r, options);
        const double lr = options["lr"].isNumber() ? options["lr"].as<double>() : std::nan("");
        const int head = options["head"].isNumber() ? options["head"].as<int>() : -1;
        const PretrainedBackward b = pretrained_backward(*r.model, in.ids, in.targets, in.layer);
        SgdUndo undo;
        const double size = sgd_step_layer(r.model->config(), r.model->params(), b.grads, lr, head, &undo);
        r.undo.push_back(std::move(undo));
        if (r.undo.size() > static_cast<std::size_t>(kMaxUndoSteps)) r.undo.pop_front();
        r.cache.reset();  // the KV cache holds keys and values of the old weights
        val o = val::object();
        o.set("loss", b.loss);
        o.set("size", size);
        o.set("steps", static_cast<int>(r.undo.size()));
        return o;
    });
}

/// How many steps by hand can be undone (at most kMaxUndoSteps).
val model_undo_steps_js(int handle) {
    return guarded([&] { return val(static_cast<int>(models().at(handle).undo.size())); });
}

/// Undoes the last step by hand (exactly: the old values put back); returns how many are left.
val model_undo_js(int handle) {
    return guarded([&] {
        ModelRecord& r = models().at(handle);
        if (r.undo.empty()) throw Error(Error::Code::bad_state, "there is no step by hand to undo");
        undo_sgd(r.model->params(), r.undo.back());
        r.undo.pop_back();
        r.cache.reset();
        return val(static_cast<int>(r.undo.size()));
    });
}

val model_dispose_js(int handle) {
    return guarded([&] {
        models().erase(handle);
        return val::undefined();
    });
}

val header_size_guarded(const val& first8) {
    return guarded([&] { return val(header_size_js(first8)); });
}

}  // namespace

void attn::js::count_pretrained(HandleCounts& counts) {
    counts.loaders = loaders().size();
    counts.models = models().size();
}

EMSCRIPTEN_BINDINGS(attention_pretrained) {
    emscripten::function("hubHeaderSize", &header_size_guarded);
    emscripten::function("hubReadConfig", &read_config_js);
    emscripten::function("hubCheckConfig", &check_config_js);
    emscripten::function("hubLoaderCreate", &loader_create_js);
    emscripten::function("hubLoaderCheck", &loader_check_js);
    emscripten::function("hubLoaderFeed", &loader_feed_js);
    emscripten::function("hubLoaderFinish", &loader_finish_js);
    emscripten::function("hubLoaderDispose", &loader_dispose_js);
    emscripten::function("pretrainedTokenize", &model_tokenize_js);
    emscripten::function("pretrainedTrace", &model_trace_js);
    emscripten::function("pretrainedGenerate", &model_generate_js);
    emscripten::function("pretrainedForward", &model_forward_js);
    emscripten::function("pretrainedDispose", &model_dispose_js);
    emscripten::function("pretrainedBackward", &model_backward_js);
    emscripten::function("pretrainedSgd", &model_sgd_js);
    emscripten::function("pretrainedUndo", &model_undo_js);
    emscripten::function("pretrainedUndoSteps", &model_undo_steps_js);
}
