#pragma once
// The layer kinds of the model (model.hpp), each a forward/backward pair on
// the N×C rows of a batch (N = B·T, row b·T + t): embedding, LayerNorm and
// RMSNorm, attention (attention_kind.cpp: with grouped-query K/V heads, the
// per-head q/k RMSNorm, RoPE and ALiBi), the MLP (plain or gated), the output
// head and cross-entropy. The block (block.hpp) composes the norms, attention
// and MLP; the forward driver
// (forward.hpp) and generation (generation.hpp) run the embedding, the blocks
// and the head. Each kind hands its named intermediates to a Tap (tap.hpp).
// Each kind's independent double reference is its pair in layer_reference.hpp
// (tested kind by kind in tests/core/test_layer_kinds.cpp); model_reference.cpp
// composes them into the whole model's reference.
//
// Parameters are read by structure: ParamSlots says where each tensor of the
// config sits in the flat buffer (built once per layout from the one name
// table, parameter_layout's), bind() turns it into pointers into a buffer
// (the weights, or the gradients of the same layout).

#include "model/model.hpp"
#include "model/tap.hpp"
#include "base/types.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attn {

/// Where one tensor sits in the flat buffer (-1: the config has none).
struct Slot {
    std::ptrdiff_t offset = -1;
};

/// How a layer's product matrices (W_Q, W_K, W_V, W_O, the MLP's) are stored: row-major
/// float32, or as the kernels' panels (Parameters::use_panels, those that fits_panels())
/// of float32 or of 16-bit values (Parameters(config, format)). With 16-bit panels their
/// pointers point at the 16-bit values: read them through half_values().
enum class Storage : std::uint8_t { row_major, panels, panels_bf16, panels_f16 };
inline WeightFormat format_of(Storage s) {
    return s == Storage::panels_bf16 ? WeightFormat::bf16 : s == Storage::panels_f16 ? WeightFormat::f16 : WeightFormat::f32;
}
/// The 16-bit values a weight pointer of a 16-bit tensor points at (bind(slots, params)).
inline const std::uint16_t* half_values(const float* p) { return reinterpret_cast<const std::uint16_t*>(p); }

/// One block's tensors (T = Slot, float* or const float*).
template <class T>
struct LayerParams {
    T ln1_gain{}, ln1_bias{};
    T w_query{}, b_query{}, w_key{}, b_key{}, w_value{}, b_value{}, w_output{}, b_output{};
    T q_norm_gain{}, k_norm_gain{};
    T ln2_gain{}, ln2_bias{};
    T w_gate{}, b_gate{}, w_in{}, b_in{}, w_out{}, b_out{};
    /// How the product matrices whose width fits_panels() are stored (the others: row-major float32).
    Storage panels = Storage::row_major;
};

/// Every tensor of a config.
template <class T>
struct ModelParams {
    T embed{}, pos{}, token_type{}, embed_ln_gain{}, embed_ln_bias{};
    std::vector<LayerParams<T>> layers;
    T final_ln_gain{}, final_ln_bias{};
    T head_w{}, head_b{}, head_ln_gain{}, head_ln_bias{};
    T unembed{}, unembed_bias{};
    /// embed and unembed are row-major 16-bit values of this format (their pointers point at
    /// them: half_values()), or float32.
    WeightFormat embed_format = WeightFormat::f32;
};

using ParamSlots = ModelParams<Slot>;

/// f(a.x, b.x) for every field x of two LayerParams / ModelParams (the one list of the fields).
template <class A, class B, class Fn>
void zip_layer_fields(A& a, B& b, Fn f) {
    f(a.ln1_gain, b.ln1_gain), f(a.ln1_bias, b.ln1_bias), f(a.w_query, b.w_query), f(a.b_query, b.b_query);
    f(a.w_key, b.w_key), f(a.b_key, b.b_key), f(a.w_value, b.w_value), f(a.b_value, b.b_value);
    f(a.w_output, b.w_output), f(a.b_output, b.b_output), f(a.q_norm_gain, b.q_norm_gain), f(a.k_norm_gain, b.k_norm_gain);
    f(a.ln2_gain, b.ln2_gain), f(a.ln2_bias, b.ln2_bias), f(a.w_gate, b.w_gate), f(a.b_gate, b.b_gate);
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

/// The slots of parameter_layout(config) (parameters.cpp: the name table).
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
    for (LayerParams<Slot>& l : slots.layers) l.panels = params.panels() ? Storage::panels : Storage::row_major;
}

/// The weights' pointers: each slot's tensor where `params` stores it (float32 or 16-bit,
/// ParamInfo::stored), each layer's storage and the embedding's format as stored now.
/// Throws attn::Error (bad_state) for 16-bit product matrices not yet stored as panels.
ModelParams<const float*> bind(const ParamSlots& slots, const Parameters& params);

/// The slots of a config's layout in `params`, the layers marked as params stores them.
ParamSlots resolve_slots(const ModelConfig& config, const Parameters& params);

using ParamPtrs = ModelParams<const float*>;  ///< read-only weights
using GradPtrs = ModelParams<float*>;          ///< gradients (accumulated into)

/// A rows×cols row-major view of a tensor of the flat buffer.
inline Eigen::Map<const Matrix> as_matrix(const float* p, int rows, int cols) { return {p, rows, cols}; }

// ---- the products every kind uses (layers.cpp) ----------------------------------------

/// y = x·W (+ b): W (rows × cols) at w, as panels when `panels` and it fits_panels(cols)
/// (Parameters::use_panels), b (cols) at b or null.
void affine(const Eigen::Ref<const Matrix>& x, const float* w, const float* b, int rows, int cols, Matrix& y,
            Storage panels = Storage::row_major);
/// For y = x·W (+ b): dW += xᵀ·dy, db += Σ_rows dy (a null dw or db: that gradient is not asked for).
void affine_grads(const Eigen::Ref<const Matrix>& x, const Matrix& dy, float* dw, float* db, int rows, int cols,
                  Matrix& tmp);
/// W (rows × cols) at w row-major: w itself, or (stored as panels) unpacked into tmp.
Eigen::Map<const Matrix> row_major(const float* w, int rows, int cols, Storage panels, Matrix& tmp);

// ---- activations ---------------------------------------------------------------------

float activation(Activation kind, float x);
float activation_grad(Activation kind, float x);

// ---- LayerNorm over the rows of x (N×C): y = (x − μ)/σ·g + b, σ = √(var + ε) ----

struct LayerNormCache {
    std::vector<float> mean, rstd;  ///< RMSNorm: rstd = 1/rms, no mean
};
void layernorm_forward(const Matrix& x, const float* gain, const float* bias, float eps, Matrix& y,
                       LayerNormCache& cache);
/// dx += LN backward of dy; dgain, dbias += their gradients.
void layernorm_backward(const Matrix& x, const float* gain, const LayerNormCache& cache, const Matrix& dy, Matrix& dx,
                        float* dgain, float* dbias);

// ---- RMSNorm over the rows of x (N×C): y = g ⊙ x / rms, rms = √(mean(x²) + ε) ----

void rmsnorm_forward(const Matrix& x, const float* gain, float eps, Matrix& y, LayerNormCache& cache);
/// dx += RMSNorm backward of dy; dgain += its gradient. With x̂ = x/rms and u = g ⊙ dy:
///   dx = (u − x̂·mean(u ⊙ x̂)) / rms   (LayerNorm's without the mean term)
void rmsnorm_backward(const Matrix& x, const float* gain, const LayerNormCache& cache, const Matrix& dy, Matrix& dx,
                      float* dgain);
/// One vector of n values (a row, or one head's D values of it): y = g ⊙ x / rms; returns 1/rms.
float rmsnorm_row(const float* x, int n, const float* gain, float eps, float* y);
/// Its backward: dx (written, not added) from dy and the forward's 1/rms; dgain += (null: not asked for).
void rmsnorm_row_backward(const float* x, int n, const float* gain, float rstd, const float* dy, float* dx,
                          float* dgain);

/// The block's norms: LayerNorm, or RMSNorm when config.rmsnorm (bias unused).
void norm_forward(const ModelConfig& config, const Matrix& x, const float* gain, const float* bias, Matrix& y,
                  LayerNormCache& cache);
/// dx += the norm's backward of dy; the gain's (and LayerNorm's bias's) gradients accumulated.
void norm_backward(const ModelConfig& config, const Matrix& x, const float* gain, const LayerNormCache& cache,
                   const Matrix& dy, Matrix& dx, float* dgain, float* dbias);

// ---- embedding: x = E[ids] + P[0:T] (+ TT[0]), then LN_e (embed_layernorm) ----

struct EmbeddingCache {
    Matrix sum;  ///< N×C before LN_e (kept only with embed_layernorm)
    LayerNormCache ln;
    Matrix sinusoid;
};
/// The rows of B sequences of T tokens at positions first … first+T−1 (first > 0: the new
/// rows of generation, B = 1). Hands token_embed, pos_embed, type_embed and embed_norm to rec.
void embedding_forward(const ModelConfig& config, const ParamPtrs& p, const std::vector<std::int32_t>& ids, int B,
                       int T, EmbeddingCache& cache, Matrix& x, const Tap& rec, int first = 0);
/// dx: ∂loss/∂(the embedding's output); accumulates into embed, pos, token_type, embed_ln.
void embedding_backward(const ModelConfig& config, const ParamPtrs& p, const GradPtrs& g,
                        const std::vector<std::int32_t>& ids, int B, int T, const EmbeddingCache& cache,
                        const Matrix& dx);

// ---- attention: Q, K, V projections, scores, scale, mask, softmax, ×V, output projection ----

struct AttentionCache {
    Matrix q;                    ///< N×H·D, head h = columns h·D … (the call's rows only), after qk_norm and RoPE
    Matrix k, v;                 ///< N×H_kv·D, K/V head g = columns g·D …, k after qk_norm and RoPE
    Matrix q_proj, k_proj;       ///< qk_norm: q and k before their norm (N×H·D, N×H_kv·D); empty otherwise
    std::vector<float> q_rstd, k_rstd;  ///< qk_norm: 1/rms of each row's heads (N·H, N·H_kv)
    std::vector<float> weights;  ///< B·H blocks of T×S softmax weights (S keys: T, or past + T with a KV cache)
    Matrix concat;               ///< N×H·D
};

/// One layer's keys and values of the positions before a call's rows: generation's
/// KV cache (generation.hpp). Rows 0 … past−1 hold K and V as the attention computes
/// them (K/V head g = columns g·D …: H_kv·D columns); more rows may be allocated.
/// With RoPE the keys are stored rotated, each by its own position, so a cached key is
/// never rotated again.
struct KvRows {
    Matrix keys, values;
};

/// What one attention call runs on.
struct AttentionRun {
    int B = 0, T = 0;
    const std::vector<int>* lengths = nullptr;  ///< real tokens per sequence
    bool causal = false;
    float scale = 1.0f;
    int layer = 0;
    const ForwardOptions* options = nullptr;
    /// Generation (B = 1, causal): the layer's keys and values of positions 0 … past−1.
    /// The call's rows are positions past … past+T−1: their K and V are stored at those
    /// rows, and row i attends to keys 0 … past+i. Null: the rows are the whole sequence.
    KvRows* cache = nullptr;
    int past = 0;
    /// RoPE (positional rope): the cos and sin of positions past … past+T−1 (row t of a
    /// sequence at table row t; the table's `first` is past). Null without rope.
    const RopeTable* rope = nullptr;
    /// ALiBi (positional alibi): each query head's slope (H). Null without alibi.
    const std::vector<float>* alibi = nullptr;
};

/// Sums for AttentionStats over the real query rows.
struct AttentionStatsSum {
    double variance = 0, entropy = 0;
    long long rows = 0;
};

/// out (N×C) = concat·W_O (+ b_O). Hands every head's intermediates (q … head_out, and
/// q_before_rope, k_before_rope with RoPE; a trace is of a batch of one), attn_concat and
/// attn_out to rec. Adds the real query rows' statistics to stats (null: none).
void attention_forward(const ModelConfig& config, const LayerParams<const float*>& p, const Matrix& a,
                       const AttentionRun& run, AttentionCache& cache, Matrix& out, AttentionStatsSum* stats,
                       const Tap& rec);
/// da = ∂loss/∂a (overwritten) from dout; accumulates the parameter gradients.
/// Adds Σ‖∂loss/∂scaled‖² to score_grad_sq. Hands every head's gradient intermediates
/// (d_head_out … d_v, and with RoPE d_q_before_rope, d_k_before_rope) to rec. RoPE's
/// backward is the inverse rotation of dQ and dK; grouped-query attention sums dK and dV
/// over the query heads of a group; ALiBi's bias is a constant (the score gradient
/// passes it unchanged). Not with a KV cache (generation has no backward).
void attention_backward(const ModelConfig& config, const LayerParams<const float*>& p, const LayerParams<float*>& g,
                        const Matrix& a, const AttentionRun& run, const AttentionCache& cache, const Matrix& dout,
                        Matrix& da, double& score_grad_sq, const Tap& rec);

// ---- MLP: act(m·W_in + b_in)·W_out + b_out, or gated (SwiGLU with SiLU):
//      (act(m·W_gate + b_gate) ⊙ (m·W_in + b_in))·W_out + b_out ----

struct MlpCache {
    Matrix pre, act;  ///< N×F: the input projection (gated: up) and the hidden (act(pre), gated: act(gate) ⊙ up)
    Matrix gate;      ///< gated: N×F, m·W_gate + b_gate before the activation; empty otherwise
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
