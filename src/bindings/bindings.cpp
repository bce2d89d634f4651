// Embind glue only: every exported function calls the core inside guarded(),
// which catches every C++ exception and returns {__attnError: {errorType,
// errorMessage, errorCode}} instead. web/engine.js turns that record into a real JS error
// (RangeError / TypeError with the C++ message). The error is raised in JS, not
// thrown through the wasm frames, because a JS exception unwinding wasm frames
// skips their destructors: every argument string would leak.

#include "convert.hpp"
#include "guarded.hpp"
#include "handles.hpp"
#include "attention/analysis.hpp"
#include "train/backward.hpp"
#include "kernels/bounds.hpp"
#include "families/family.hpp"
#include "attention/fast_attention.hpp"
#include "kernels/gemm.hpp"
#include "model/generation.hpp"
#include "attention/positional.hpp"
#include "model/model_schema.hpp"
#include "train/task_registry.hpp"
#include "train/trainer.hpp"

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <malloc.h>

#include <cstdint>
#include <exception>
#include <iterator>
#include <new>
#include <string>
#include <vector>

namespace {

using emscripten::val;
using namespace attn;
using attn::js::guarded;

/// A trace for JS with each head's pattern scores (patterns[h], the
/// core's head_patterns over the sentence's real tokens; same-token and
/// induction look only back under a causal mask): the page names heads by them.
val with_patterns(const Trace& tr) {
    val out = js::trace_to_js(tr);
    std::vector<std::int32_t> ids;
    for (const Token& t : tr.tokens) ids.push_back(t.id);
    std::vector<const Matrix*> weights;
    for (const HeadTrace& h : tr.heads) weights.push_back(&h.weights);
    const bool causal = tr.config.mask == MaskKind::causal || tr.config.mask == MaskKind::causal_padding;
    js::set_head_patterns(out, head_patterns(weights, ids, tr.real_tokens, causal));
    return out;
}

val tokenize_js(const std::string& sentence, bool lowercase) {
    return guarded([&] {
        val out = val::array();
        for (const Token& t : tokenize(sentence, TokenizeOptions{lowercase})) out.call<void>("push", js::token_to_js(t));
        return out;
    });
}

val row_entropy_js(const val& m) {
    return guarded([&] { return js::vector_to_js(row_entropy(js::matrix_from_js(m, "weights"))); });
}

val jacobian_norm_js(const val& m) {
    return guarded([&] { return js::vector_to_js(softmax_jacobian_norm(js::matrix_from_js(m, "weights"))); });
}

val score_stats_js(const val& m, const val& mask) {
    return guarded([&] {
        const Matrix s = js::matrix_from_js(m, "scores");
        const ScoreStats st = (mask.isNull() || mask.isUndefined()) ? score_stats(s)
                                                                     : score_stats(s, js::mask_from_js(mask, "mask"));
        val o = val::object();
        o.set("mean", st.mean);
        o.set("variance", st.variance);
        o.set("min", st.min);
        o.set("max", st.max);
        o.set("count", static_cast<double>(st.count));
        return o;
    });
}

val scale_experiment_js(int d_k, int tokens, int samples, double seed, bool scale) {
    return guarded([&] {
        const ScaleExperiment r = scale_experiment(d_k, tokens, samples, static_cast<std::uint32_t>(seed), scale);
        val o = val::object();
        o.set("scoreVariance", r.score_variance);
        o.set("meanEntropy", r.mean_entropy);
        o.set("meanJacobianNorm", r.mean_jacobian_norm);
        o.set("maxEntropy", r.max_entropy);
        return o;
    });
}

val forward_output_js(const val& x, const val& weights, int heads, const val& mask, bool scale) {
    return guarded([&] {
        const Matrix input = js::matrix_from_js(x, "x");
        const Weights w = js::weights_from_js(weights);
        const MaskMatrix m = (mask.isNull() || mask.isUndefined())
                                 ? MaskMatrix::Constant(input.rows(), input.rows(), true)
                                 : js::mask_from_js(mask, "mask");
        return js::matrix_to_js(multi_head_output(input, w, heads, m, scale));
    });
}

// ---- one engine's state: EngineState -----------------------------------------------
// Each JS Engine owns one EngineState, under a handle of this file's table
// (handles.hpp; engine.js makes it with engineCreate and frees it with
// engineDispose): its seeded-weights cache and the fast path's kept buffers.
// Nothing is shared between engines.
//
// The fast path: fastInputs + forwardFast. engine.js copies the inputs
// straight into buffers kept from call to call (one HEAPF32.set each) and
// reads y back with one slice: the calls carry only numbers. Converting
// matrices through Embind vals costs about 1.5 µs per property access, more
// than the whole (16, 64, 4) forward pass. The workspace is kept too, so
// repeated calls of one size allocate nothing.

/// The inputs forwardFast reads, in the order of their offsets in the table
/// fastInputs returns (and of its rows, cols arguments): engine.info.fastInputs.
constexpr const char* kFastInputs[] = {"x", "wQuery", "wKey", "wValue", "wOutput"};
constexpr int kFastInputCount = 5;

class EngineState {
public:
    val run_trace(const std::string& sentence, const val& settings) {
        return guarded([&] { return with_patterns(run(sentence, js::config_from_js(settings), &weights_cache_)); });
    }

    val run_batch(const val& sentences, const val& settings) {
        return guarded([&] {
            const std::vector<std::string> list = emscripten::vecFromJSArray<std::string>(sentences);
            val out = val::array();
            for (const Trace& tr : attn::run_batch(list, js::config_from_js(settings), &weights_cache_))
                out.call<void>("push", with_patterns(tr));
            return out;
        });
    }

    /// forwardFast, step 1: sizes the kept buffers as the caller's inputs (rows×cols
    /// each, in kFastInputs order: a wrong shape is reported by step 2 with the
    /// core's message), and returns the byte offset of the table of their byte
    /// offsets (kFastInputs order), or 0 for impossible sizes or when out of memory.
    int fast_inputs(int x_rows, int x_cols, int q_rows, int q_cols, int k_rows, int k_cols, int v_rows, int v_cols,
                    int o_rows, int o_cols) {
        const int dims[2 * kFastInputCount] = {x_rows, x_cols, q_rows, q_cols, k_rows, k_cols,
                                               v_rows, v_cols, o_rows, o_cols};
        for (int n : dims)
            if (n < 0 || n > (1 << 16)) return 0;
        Matrix* buffers[kFastInputCount] = {&x_, &weights_.w_query, &weights_.w_key, &weights_.w_value,
                                            &weights_.w_output};
        try {
            for (int i = 0; i < kFastInputCount; ++i) {
                buffers[i]->resize(dims[2 * i], dims[2 * i + 1]);
                offsets_[i] = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(buffers[i]->data()));
            }
        } catch (const std::bad_alloc&) {
            return 0;
        }
        return static_cast<int>(reinterpret_cast<std::uintptr_t>(offsets_));
    }

    /// forwardFast, step 2: the fast path on the buffers step 1 sized and the caller
    /// filled. mask_kind: the index of the kind in kMaskKinds (engine.info.masks);
    /// custom: custom_mask {rows, cols, data}. Returns the byte offset of y (T×C,
    /// valid until the next call), or the error record.
    val forward_fast(int heads, int mask_kind, int real_tokens, bool scale, const val& custom_mask) {
        return with_mask(mask_kind, real_tokens, custom_mask,
                         [&](const MaskSpec& spec) { attention_.forward(x_, weights_, heads, spec, scale, y_); });
    }

    /// keepWeights: the weights step 1 sized and the caller filled are checked and
    /// moved into the fast path, packed once (a model's weights, kept between calls).
    /// Returns their C, or the error record.
    val keep_weights() {
        return guarded([&] {
            Weights w = std::move(weights_);
            weights_ = Weights{};
            attention_.keep_weights(std::move(w));
            return val(attention_.kept_c());
        });
    }

    /// forwardKept: forwardFast on the kept weights (step 1 sized x alone: the weights
    /// are neither copied, checked nor compared again).
    val forward_kept(int heads, int mask_kind, int real_tokens, bool scale, const val& custom_mask) {
        return with_mask(mask_kind, real_tokens, custom_mask,
                         [&](const MaskSpec& spec) { attention_.forward_kept(x_, heads, spec, scale, y_); });
    }

    /// What this engine keeps between calls: {cachedWeightsBytes, weightsCacheHits,
    /// weightsCacheMisses, fastWorkspaceBytes, fastBufferBytes}, and the thread's
    /// bounded gemm workspace (gemmWorkspaceBytes, shared by the module's engines).
    val stats() const {
        val o = val::object();
        o.set("cachedWeightsBytes", static_cast<double>(weights_cache_.bytes()));
        o.set("weightsCacheHits", static_cast<double>(weights_cache_.hits()));
        o.set("weightsCacheMisses", static_cast<double>(weights_cache_.misses()));
        o.set("fastWorkspaceBytes", static_cast<double>(attention_.workspace_bytes()));
        const std::size_t floats = static_cast<std::size_t>(x_.size() + y_.size() + weights_.w_query.size() +
                                                            weights_.w_key.size() + weights_.w_value.size() +
                                                            weights_.w_output.size());
        o.set("fastBufferBytes", static_cast<double>(floats * sizeof(float)));
        o.set("gemmWorkspaceBytes", static_cast<double>(gemm_workspace_bytes()));
        // module-wide, shared by every Engine: the handle tables (handles.hpp)
        const js::HandleCounts live = js::handle_counts();
        o.set("liveTrainers", static_cast<double>(live.trainers));
        o.set("trainerParameterBytes", static_cast<double>(live.trainer_parameter_bytes));
        o.set("liveEngines", static_cast<double>(live.engines));
        o.set("liveTokenizers", static_cast<double>(live.tokenizers));
        o.set("liveLoaders", static_cast<double>(live.loaders));
        o.set("liveModels", static_cast<double>(live.models));
        return o;
    }

private:
    /// run(spec) with the mask forwardFast's arguments describe (mask_kind: the index of
    /// the kind in kMaskKinds; custom: {rows, cols, data}); the byte offset of y_.
    template <typename Run>
    val with_mask(int mask_kind, int real_tokens, const val& custom_mask, Run run) {
        return guarded([&] {
            constexpr int kinds = static_cast<int>(std::size(kMaskKinds));
            if (mask_kind < 0 || mask_kind >= kinds)
                throw Error(Error::Code::bad_mask,
                            "mask kind " + std::to_string(mask_kind) + " is not 0 to " + std::to_string(kinds - 1));
            const MaskKind kind = kMaskKinds[mask_kind];
            MaskMatrix custom;
            MaskSpec spec;
            if (kind == MaskKind::custom) {
                custom = js::mask_from_js(custom_mask, "mask");
                spec = MaskSpec::custom(custom);
            } else {
                spec = MaskSpec::from_kind(kind, real_tokens);
            }
            run(spec);
            return val(static_cast<double>(reinterpret_cast<std::uintptr_t>(y_.data())));
        });
    }

    WeightsCache weights_cache_;
    FastAttention attention_;
    Matrix x_, y_;
    Weights weights_;
    std::uint32_t offsets_[kFastInputCount] = {0, 0, 0, 0, 0};  // byte offsets of kFastInputs' buffers
};

/// The live engines (handles.hpp).
js::Handles<EngineState>& engines() {
    static js::Handles<EngineState> table("engine", ": create a new one");
    return table;
}

// The Engine's calls, each on its state's handle (engine.js holds it). The fast path's
// two steps return numbers, not records, on success: the offset table (0 when the sizes
// cannot be allocated) and y's offset; a stale handle is the error record as everywhere.
int engine_create_js() { return engines().add(std::make_unique<EngineState>()); }
void engine_dispose_js(int handle) { engines().erase(handle); }
val engine_run_trace_js(int handle, const std::string& sentence, const val& settings) {
    return guarded([&] { return engines().at(handle).run_trace(sentence, settings); });
}
val engine_run_batch_js(int handle, const val& sentences, const val& settings) {
    return guarded([&] { return engines().at(handle).run_batch(sentences, settings); });
}
val engine_fast_inputs_js(int handle, int x_rows, int x_cols, int q_rows, int q_cols, int k_rows, int k_cols, int v_rows,
                          int v_cols, int o_rows, int o_cols) {
    return guarded([&] {
        return val(engines().at(handle).fast_inputs(x_rows, x_cols, q_rows, q_cols, k_rows, k_cols, v_rows, v_cols,
                                                    o_rows, o_cols));
    });
}
val engine_forward_fast_js(int handle, int heads, int mask_kind, int real_tokens, bool scale, const val& custom_mask) {
    return guarded([&] { return engines().at(handle).forward_fast(heads, mask_kind, real_tokens, scale, custom_mask); });
}
val engine_keep_weights_js(int handle) {
    return guarded([&] { return engines().at(handle).keep_weights(); });
}
val engine_forward_kept_js(int handle, int heads, int mask_kind, int real_tokens, bool scale, const val& custom_mask) {
    return guarded([&] { return engines().at(handle).forward_kept(heads, mask_kind, real_tokens, scale, custom_mask); });
}
val engine_stats_js(int handle) {
    return guarded([&] { return engines().at(handle).stats(); });
}

template <typename T, typename Name>
val names_of(const T& items, Name name) {
    val out = val::array();
    for (const auto& item : items) out.call<void>("push", std::string(name(item)));
    return out;
}

/// The engine's rules, exported once for JS (engine.info; build_wasm.sh also
/// writes them, without `simd` and `fusedMultiplyAdd`, to web/generated/engine_constants.js so that
/// JS can read them before the wasm has loaded): limits, defaults, the mask
/// and positional kinds in enum order, the error codes, the fast path's
/// input layout.
/// One setting's row for JS: {name (the checkpoint key), js, flag, label, type, lo, hi}.
val setting_to_js(const SettingRange& r, const char* type) {
    val o = val::object();
    o.set("name", std::string(r.name));
    o.set("js", std::string(r.js));
    o.set("flag", std::string(r.flag));
    o.set("label", std::string(r.label));
    o.set("type", std::string(type));
    o.set("lo", r.lo);
    o.set("hi", r.hi);
    return o;
}

/// buildInfo().trainSettings: the model's settable rows (model_schema.hpp; the
/// range a training setting takes, 0 = the task's where it means that; values:
/// a choice's names, or a boolean's false and true name on the CLI), then the
/// training settings (settings:: in trainer.hpp). web/trainer.js checks
/// createTrainer's settings with these rows.
val train_settings_js() {
    val out = val::array();
    for (const ModelSetting& row : model_settings()) {
        if (!row.settable) continue;
        val o = setting_to_js(training_range(row), setting_type_name(row.type));
        val values = val::array();
        for (const std::string& v : row.values) values.call<void>("push", v);
        o.set("values", values);
        o.set("model", true);
        out.call<void>("push", o);
    }
    for (const SettingRange* r : settings::kTrainSettings) {
        val o = setting_to_js(*r, r->whole ? "whole" : "real");
        o.set("values", val::array());
        o.set("model", false);
        out.call<void>("push", o);
    }
    return out;
}

/// buildInfo().taskTable: the task registry's rows {name, title, causal, length: {default, lo, hi, rule}}.
val task_table_js() {
    val out = val::array();
    for (const TaskInfo& t : task_registry()) {
        val o = val::object();
        o.set("name", std::string(t.name));
        o.set("title", std::string(t.title));
        o.set("causal", t.causal);
        val length = val::object();
        length.set("default", t.length_default);
        length.set("lo", t.length_lo);
        length.set("hi", t.length_hi);
        length.set("rule", std::string(t.length_rule));
        o.set("length", length);
        out.call<void>("push", o);
    }
    return out;
}

/// buildInfo().families: the family registry (families/family.hpp), what the page asks of a
/// family: {name, title, architectures, modelTypes, tokenizer (its kind), tokenizerFiles (the
/// choices of files that make it, in the order tried), tokenizerNeeds, generates, predictions,
/// learnTarget}. web/families.js reads it.
val families_js() {
    const auto strings = [](const std::vector<std::string>& list) {
        val out = val::array();
        for (const std::string& s : list) out.call<void>("push", s);
        return out;
    };
    val out = val::array();
    for (const Family* f : families()) {
        val o = val::object();
        o.set("name", f->name);
        o.set("title", f->title);
        o.set("architectures", strings(f->architectures));
        o.set("modelTypes", strings(f->model_types));
        o.set("tokenizer", std::string(tokenizer_kind_name(f->tokenizer)));
        val files = val::array();
        for (const std::vector<std::string>& choice : tokenizer_file_choices(f->tokenizer)) files.call<void>("push", strings(choice));
        o.set("tokenizerFiles", files);
        o.set("tokenizerNeeds", f->tokenizer_needs);
        o.set("generates", f->generates);
        o.set("predictions", f->predictions);
        o.set("learnTarget", f->learn_target);
        out.call<void>("push", o);
    }
    return out;
}

val build_info() {
    val o = val::object();
#ifdef __wasm_simd128__
    o.set("simd", true);
#else
    o.set("simd", false);
#endif
    // the relaxed-SIMD flavour (./build_wasm.sh --relaxed): products fused, last bits differ
#ifdef ATTN_FUSED_MADD
    o.set("fusedMultiplyAdd", true);
#else
    o.set("fusedMultiplyAdd", false);
#endif
    o.set("maxTokens", kMaxTokens);
    o.set("maxDModel", kMaxDModel);
    o.set("vocabSize", kVocabSize);
    o.set("maxSentenceBytes", static_cast<double>(kMaxSentenceBytes));
    o.set("maxBatchSentences", kMaxBatchSentences);
    o.set("maxTraceScoreFloats", static_cast<double>(kMaxTraceScoreFloats));
    o.set("maxAbsValue", static_cast<double>(kMaxAbsValue));
    o.set("maxSide", 1 << 16);
    o.set("maxTextVocab", kMaxTextVocab);                            // trainer.js: maxVocab
    o.set("maxTrainingBytes", static_cast<double>(kMaxTrainingBytes));  // trainer.js: estimateTrainingMemory
    o.set("maxSgdRate", kMaxSgdRate);                                 // trainer.js: sgdStep
    o.set("maxUndoSteps", kMaxUndoSteps);                             // pretrained.js: sgdStep / undoStep
    o.set("minTemperature", kMinTemperature);                        // pretrained.js: generate's sampling
    o.set("maxTemperature", kMaxTemperature);
    const Config c;
    val d = val::object();
    d.set("sentence", std::string(kDefaultSentence));
    d.set("dModel", c.d_model);
    d.set("heads", c.heads);
    d.set("seed", c.seed);
    d.set("positional", std::string(positional_name(c.positional)));
    d.set("mask", std::string(mask_name(c.mask)));
    d.set("padTo", c.pad_to);
    d.set("scale", c.scale);
    d.set("lowercase", c.lowercase);
    d.set("shareHeads", c.share_heads);
    o.set("defaults", d);
    o.set("masks", names_of(kMaskKinds, mask_name));
    o.set("positionals", names_of(kPositionals, positional_name));
    o.set("errorCodes", names_of(kErrorCodes, error_code_name));
    o.set("tasks", names_of(all_tasks(), task_name));  // TASKS in trainer.js
    o.set("taskTable", task_table_js());                // the task registry (task_registry.hpp)
    o.set("trainSettings", train_settings_js());        // the settings createTrainer checks (trainer.js)
    o.set("fastInputs", names_of(kFastInputs, [](const char* n) { return n; }));
    o.set("families", families_js());  // the family registry (families/family.hpp; web/families.js)
    return o;
}

val heap_stats() {
    const struct mallinfo mi = mallinfo();
    val o = val::object();
    o.set("allocatedBytes", static_cast<double>(mi.uordblks));
    return o;
}

}  // namespace

void attn::js::count_engines(HandleCounts& counts) { counts.engines = engines().size(); }

EMSCRIPTEN_BINDINGS(attention_core) {
    emscripten::function("engineCreate", &engine_create_js);
    emscripten::function("engineDispose", &engine_dispose_js);
    emscripten::function("engineRunTrace", &engine_run_trace_js);
    emscripten::function("engineRunBatch", &engine_run_batch_js);
    emscripten::function("engineFastInputs", &engine_fast_inputs_js);
    emscripten::function("engineForwardFast", &engine_forward_fast_js);
    emscripten::function("engineKeepWeights", &engine_keep_weights_js);
    emscripten::function("engineForwardKept", &engine_forward_kept_js);
    emscripten::function("engineStats", &engine_stats_js);
    emscripten::function("tokenize", &tokenize_js);
    emscripten::function("rowEntropy", &row_entropy_js);
    emscripten::function("softmaxJacobianNorm", &jacobian_norm_js);
    emscripten::function("scoreStats", &score_stats_js);
    emscripten::function("scaleExperiment", &scale_experiment_js);
    emscripten::function("forwardOutput", &forward_output_js);
    emscripten::function("buildInfo", &build_info);
    emscripten::function("heapStats", &heap_stats);
}
