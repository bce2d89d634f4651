#pragma once
// The layer kinds of the model (model.hpp), each a forward/backward pair on
// the N×C rows of a batch (N = B·T, row b·T + t): embedding, LayerNorm,
// attention, MLP, the output head and cross-entropy. Model::forward and
// Model::backward are loops over them. Each kind's independent double
// reference is its pair in layer_reference.hpp (tested kind by kind in
// tests/core/test_layer_kinds.cpp); model_reference.cpp composes them into
// the whole model's reference.
//
// Parameters are read by structure: ParamSlots says where each tensor of the
// config sits in the flat buffer (built once per layout from the one name
// table, parameter_layout's), bind() turns it into pointers into a buffer
// (the weights, or the gradients of the same layout).

#include "model/model.hpp"
#include "base/types.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attn {

/// Where one tensor sits in the flat buffer (-1: the config has none).
struct Slot {
    std::ptrdiff_t offset = -1;
};

/// One block's tensors (T = Slot, float* or const float*).
template <class T>
struct LayerParams {
    T ln1_gain{}, ln1_bias{};
    T w_query{}, b_query{}, w_key{}, b_key{}, w_value{}, b_value{}, w_output{}, b_output{};
    T ln2_gain{}, ln2_bias{};
    T w_in{}, b_in{}, w_out{}, b_out{};
    /// The product matrices whose width fits_panels() are stored as panels (Parameters::use_panels).
    bool panels = false;
};

/// Every tensor of a config.
template <class T>
struct ModelParams {
    T embed{}, pos{}, token_type{}, embed_ln_gain{}, embed_ln_bias{};
    std::vector<LayerParams<T>> layers;
    T final_ln_gain{}, final_ln_bias{};
    T head_w{}, head_b{}, head_ln_gain{}, head_ln_bias{};
    T unembed{}, unembed_bias{};
};

using ParamSlots = ModelParams<Slot>;

/// f(a.x, b.x) for every field x of two LayerParams / ModelParams (the one list of the fields).
template <class A, class B, class Fn>
void zip_layer_fields(A& a, B& b, Fn f) {
    f(a.ln1_gain, b.ln1_gain), f(a.ln1_bias, b.ln1_bias), f(a.w_query, b.w_query), f(a.b_query, b.b_query);
    f(a.w_key, b.w_key), f(a.b_key, b.b_key), f(a.w_value, b.w_value), f(a.b_value, b.b_value);
    f(a.w_output, b.w_output), f(a.b_output, b.b_output), f(a.ln2_gain, b.ln2_gain), f(a.ln2_bias, b.ln2_bias);
    f(a.w_in, b.w_in), f(a.b_in, b.b_in), f(a.w_out, b.w_out), f(a.b_out, b.b_out);
}
template <class A, class B, class Fn>
void zip_model_fields(A& a, B& b, Fn f) {
    f(a.embed, b.embed), f(a.pos, b.pos), f(a.token_type, b.token_type);
    f(a.embed_ln_gain, b.embed_ln_gain), f(a.embed_ln_bias, b.embed_ln_bias);
    f(a.final_ln_gain, b.final_ln_gain), f(a.final_ln_bias, b.final_ln_bias);
    f(a.head_w, b.head_w), f(a.head_b, b.head_b), f(a.head_ln_gain, b.head_ln_gain), f(a.head_ln_bias, b.head_ln_bias);
    f(a.unembed, b.unembed), f(a.unembed_bias, b.unembed_bias);
}

/// The slots of parameter_layout(config) (model.cpp: the name table).
ParamSlots resolve_slots(const ModelConfig& config);

/// Pointers into `base` (a buffer of the slots' layout); absent tensors are null.
template <class F>
ModelParams<F*> bind(const ParamSlots& slots, F* base) {
    ModelParams<F*> out;
    auto at = [base](F*& p, const Slot& s) { p = s.offset < 0 ? nullptr : base + s.offset; };
    zip_model_fields(out, slots, at);
    out.layers.resize(slots.layers.size());
    for (std::size_t l = 0; l < slots.layers.size(); ++l) {
        zip_layer_fields(out.layers[l], slots.layers[l], at);
        out.layers[l].panels = slots.layers[l].panels;
    }
    return out;
}

/// Marks the slots' layers as `params` stores them (Parameters::use_panels).
inline void mark_panels(ParamSlots& slots, const Parameters& params) {
    for (LayerParams<Slot>& l : slots.layers) l.panels = params.panels();
}

/// The slots of a config's layout in `params`, the layers marked as params stores them.
ParamSlots resolve_slots(const ModelConfig& config, const Parameters& params);

using ParamPtrs = ModelParams<const float*>;  ///< read-only weights
using GradPtrs = ModelParams<float*>;          ///< gradients (accumulated into)

/// A rows×cols row-major view of a tensor of the flat buffer.
inline Eigen::Map<const Matrix> as_matrix(const float* p, int rows, int cols) { return {p, rows, cols}; }

// ---- activations ---------------------------------------------------------------------

float activation(Activation kind, float x);
float activation_grad(Activation kind, float x);

// ---- LayerNorm over the rows of x (N×C): y = (x − μ)/σ·g + b, σ = √(var + ε) ----

struct LayerNormCache {
    std::vector<float> mean, rstd;
};
void layernorm_forward(const Matrix& x, const float* gain, const float* bias, float eps, Matrix& y,
                       LayerNormCache& cache);
/// dx += LN backward of dy; dgain, dbias += their gradients.
void layernorm_backward(const Matrix& x, const float* gain, const LayerNormCache& cache, const Matrix& dy, Matrix& dx,
                        float* dgain, float* dbias);

// ---- embedding: x = E[ids] + P[0:T] (+ TT[0]), then LN_e (embed_layernorm) ----

struct EmbeddingCache {
    Matrix sum;  ///< N×C before LN_e (kept only with embed_layernorm)
    LayerNormCache ln;
    Matrix sinusoid;
};
/// With a trace (a batch of one), also its embeddings, positional, token_type and embed_normed.
void embedding_forward(const ModelConfig& config, const ParamPtrs& p, const std::vector<std::int32_t>& ids, int B,
                       int T, EmbeddingCache& cache, Matrix& x, ModelTrace* trace);
/// dx: ∂loss/∂(the embedding's output); accumulates into embed, pos, token_type, embed_ln.
void embedding_backward(const ModelConfig& config, const ParamPtrs& p, const GradPtrs& g,
                        const std::vector<std::int32_t>& ids, int B, int T, const EmbeddingCache& cache,
                        const Matrix& dx);

// ---- attention: Q, K, V projections, scores, scale, mask, softmax, ×V, output projection ----

struct AttentionCache {
    Matrix q, k, v;              ///< N×C, head h = columns h·D …
    std::vector<float> weights;  ///< B·H blocks of T×T softmax weights
    Matrix concat;               ///< N×C
};

/// What one attention call runs on.
struct AttentionRun {
    int B = 0, T = 0;
    const std::vector<int>* lengths = nullptr;  ///< real tokens per sequence
    bool causal = false;
    float scale = 1.0f;
    int layer = 0;
    const ForwardOptions* options = nullptr;
};

/// Sums for AttentionStats over the real query rows.
struct AttentionStatsSum {
    double variance = 0, entropy = 0;
    long long rows = 0;
};

/// out (N×C) = concat·W_O (+ b_O). With a trace (a batch of one), also every head's intermediates.
void attention_forward(const ModelConfig& config, const LayerParams<const float*>& p, const Matrix& a,
                       const AttentionRun& run, AttentionCache& cache, Matrix& out, AttentionStatsSum* stats,
                       MultiHeadTrace* trace);
/// da = ∂loss/∂a (overwritten) from dout; accumulates the parameter gradients.
/// Adds Σ‖∂loss/∂scaled‖² to score_grad_sq. With a trace, every head's gradient intermediates.
void attention_backward(const ModelConfig& config, const LayerParams<const float*>& p, const LayerParams<float*>& g,
                        const Matrix& a, const AttentionRun& run, const AttentionCache& cache, const Matrix& dout,
                        Matrix& da, double& score_grad_sq, std::vector<HeadGradTrace>* trace);

// ---- MLP: act(m·W_in + b_in)·W_out + b_out ----

struct MlpCache {
    Matrix pre, act;  ///< N×F before and after the activation
};
void mlp_forward(const ModelConfig& config, const LayerParams<const float*>& p, const Matrix& m, MlpCache& cache,
                 Matrix& out);
/// dm = ∂loss/∂m (overwritten); accumulates the parameter gradients.
void mlp_backward(const ModelConfig& config, const LayerParams<const float*>& p, const LayerParams<float*>& g,
                  const Matrix& m, const MlpCache& cache, const Matrix& dout, Matrix& dm);

// ---- output head: (LN_t(act(h·W_t + b_t))), then ·W_U (or Eᵀ) (+ b_U) ----

struct HeadCache {
    Matrix pre, act, transformed;  ///< N×C (output_transform only)
    LayerNormCache ln;
};
void head_forward(const ModelConfig& config, const ParamPtrs& p, const Matrix& h, HeadCache& cache, Matrix& logits);
/// dh = ∂loss/∂h (overwritten) from dlogits; accumulates the parameter gradients.
void head_backward(const ModelConfig& config, const ParamPtrs& p, const GradPtrs& g, const Matrix& h,
                   const HeadCache& cache, const Matrix& dlogits, Matrix& dh);

// ---- cross-entropy over the rows whose target is >= 0 ----

struct CrossEntropy {
    double loss = 0;  ///< mean over the targeted rows
    int targets = 0, correct = 0;
};
/// The loss of logits (N×V); with `grad`, also ∂loss/∂logits = (softmax − onehot) / count
/// (zero on untargeted rows): the backward of the kind, computed in the same pass.
CrossEntropy cross_entropy(const Matrix& logits, const std::vector<std::int32_t>& targets, Matrix* grad);

}  // namespace attn
