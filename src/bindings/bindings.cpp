// Embind glue only: every exported function calls the core inside guarded(),
// which catches every C++ exception and returns {__attnError: {errorType,
// errorMessage}} instead. web/engine.js turns that record into a real JS error
// (RangeError / TypeError with the C++ message). The error is raised in JS, not
// thrown through the wasm frames, because a JS exception unwinding wasm frames
// skips their destructors: every argument string would leak.

#include "convert.hpp"
#include "guarded.hpp"
#include "core/analysis.hpp"
#include "core/fast_attention.hpp"

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <malloc.h>

#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <vector>

namespace {

using emscripten::val;
using namespace attn;
using attn::js::guarded;

val run_trace(const std::string& sentence, const val& settings) {
    return guarded([&] { return js::trace_to_js(run(sentence, js::config_from_js(settings))); });
}

val run_batch_js(const val& sentences, const val& settings) {
    return guarded([&] {
        const std::vector<std::string> list = emscripten::vecFromJSArray<std::string>(sentences);
        val out = val::array();
        for (const Trace& tr : run_batch(list, js::config_from_js(settings))) out.call<void>("push", js::trace_to_js(tr));
        return out;
    });
}

val tokenize_js(const std::string& sentence, bool lowercase) {
    return guarded([&] {
        val out = val::array();
        for (const Token& t : tokenize(sentence, TokenizeOptions{lowercase})) {
            val o = val::object();
            o.set("text", t.text);
            o.set("id", t.id);
            o.set("start", static_cast<double>(t.start));
            o.set("end", static_cast<double>(t.end));
            out.call<void>("push", o);
        }
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

// ---- the fast path: fastInputs + forwardFast -------------------------------------
// engine.js copies the inputs straight into buffers kept from call to call
// (one HEAPF32.set each) and reads y back with one slice: the calls carry only
// numbers. Converting matrices through Embind vals costs about 1.5 µs per
// property access, more than the whole (16, 64, 4) forward pass. The
// workspace is kept too, so repeated calls of one size allocate nothing.
struct FastState {
    FastAttention attention;
    Matrix x, y;
    Weights weights;
    std::uint32_t offsets[5] = {0, 0, 0, 0, 0};  // byte offsets of x, W_Q, W_K, W_V, W_O
};

FastState& fast_state() {
    static FastState state;
    return state;
}

/// forwardFast, step 1: sizes the kept buffers as the caller's x (rows×cols)
/// and weights (each its own rows×cols: a wrong shape is reported by step 2 with
/// the core's message), and returns the byte offset of the table of their five
/// byte offsets, or 0 for impossible sizes or when out of memory.
int fast_inputs_js(int x_rows, int x_cols, int q_rows, int q_cols, int k_rows, int k_cols, int v_rows, int v_cols,
                   int o_rows, int o_cols) {
    const int dims[] = {x_rows, x_cols, q_rows, q_cols, k_rows, k_cols, v_rows, v_cols, o_rows, o_cols};
    for (int n : dims)
        if (n < 0 || n > (1 << 16)) return 0;
    FastState& st = fast_state();
    Matrix* buffers[5] = {&st.x, &st.weights.w_query, &st.weights.w_key, &st.weights.w_value, &st.weights.w_output};
    try {
        for (int i = 0; i < 5; ++i) {
            buffers[i]->resize(dims[2 * i], dims[2 * i + 1]);
            st.offsets[i] = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(buffers[i]->data()));
        }
    } catch (const std::bad_alloc&) {
        return 0;
    }
    return static_cast<int>(reinterpret_cast<std::uintptr_t>(st.offsets));
}

/// forwardFast, step 2: the fast path on the buffers step 1 sized and the caller
/// filled. mask_kind: MaskKind (0 none, 1 causal, 2 padding, 3 causal+padding,
/// 4 custom with custom_mask {rows, cols, data}). Returns the byte offset of y
/// (T×C, valid until the next call), or the error record.
val forward_fast_js(int heads, int mask_kind, int real_tokens, bool scale, const val& custom_mask) {
    return guarded([&] {
        if (mask_kind < 0 || mask_kind > static_cast<int>(MaskKind::custom))
            throw Error("mask kind " + std::to_string(mask_kind) + " is not 0 to 4");
        FastState& st = fast_state();
        MaskMatrix custom;
        MaskSpec spec;
        if (static_cast<MaskKind>(mask_kind) == MaskKind::custom) {
            custom = js::mask_from_js(custom_mask, "mask");
            spec = MaskSpec::custom(custom);
        } else {
            spec = MaskSpec::from_kind(static_cast<MaskKind>(mask_kind), real_tokens);
        }
        st.attention.forward(st.x, st.weights, heads, spec, scale, st.y);
        return val(static_cast<double>(reinterpret_cast<std::uintptr_t>(st.y.data())));
    });
}

val build_info() {
    val o = val::object();
#ifdef __wasm_simd128__
    o.set("simd", true);
#else
    o.set("simd", false);
#endif
    o.set("maxTokens", kMaxTokens);
    o.set("maxDModel", kMaxDModel);
    o.set("vocabSize", kVocabSize);
    o.set("maxSentenceBytes", static_cast<double>(kMaxSentenceBytes));
    return o;
}

val heap_stats() {
    const struct mallinfo mi = mallinfo();
    val o = val::object();
    o.set("allocatedBytes", static_cast<double>(mi.uordblks));
    return o;
}

}  // namespace

EMSCRIPTEN_BINDINGS(attention_core) {
    emscripten::function("runTrace", &run_trace);
    emscripten::function("runBatch", &run_batch_js);
    emscripten::function("tokenize", &tokenize_js);
    emscripten::function("rowEntropy", &row_entropy_js);
    emscripten::function("softmaxJacobianNorm", &jacobian_norm_js);
    emscripten::function("scoreStats", &score_stats_js);
    emscripten::function("scaleExperiment", &scale_experiment_js);
    emscripten::function("forwardOutput", &forward_output_js);
    emscripten::function("fastInputs", &fast_inputs_js);
    emscripten::function("forwardFast", &forward_fast_js);
    emscripten::function("buildInfo", &build_info);
    emscripten::function("heapStats", &heap_stats);
}
