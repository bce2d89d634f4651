#pragma once
// The independent double-precision reference of every layer kind of
// layers.hpp, each a forward/backward pair on ONE sequence (T rows): the
// embedding, LayerNorm, RMSNorm, attention (grouped-query K/V heads, the q/k
// norms, RoPE, ALiBi), the MLP (plain or gated), the output head and
// cross-entropy. Plain loops in double, nothing shared with the fast path (no
// gemm, no Eigen products, its own LayerNorm, RMSNorm, softmax, GELU, SiLU,
// sinusoid, RoPE angles and rotation, ALiBi slopes). Slow and obvious
// on purpose: tests/core/test_layer_kinds.cpp checks each fast kind against
// its reference and each reference against finite differences of its own
// forward; reference_loss_and_grads (model_reference.cpp) is the blocks'
// composition of these kinds (pre/post-LN and the residuals are the block's).
//
// Parameters are read by name (the checkpoint names of parameter_layout), not
// through the fast path's ParamSlots, so that a slot bug shows in the
// whole-model comparison.

#include "model/model.hpp"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace attn::reference {

/// RoPE's θᵢ (D/2) in double, computed here from the rule again (base, llama3 scaling).
std::vector<double> rope_theta(int head_dim, const RopeSettings& rope);
/// ALiBi's slope of each head, computed here from the rule again.
std::vector<double> alibi_slope(int heads);

/// A row-major double matrix as a flat vector.
struct Mat {
    int rows = 0, cols = 0;
    std::vector<double> v;
    Mat() = default;
    Mat(int r, int c) : rows(r), cols(c), v(static_cast<std::size_t>(r) * c, 0.0) {}
    double& operator()(int i, int j) { return v[static_cast<std::size_t>(i) * cols + j]; }
    double operator()(int i, int j) const { return v[static_cast<std::size_t>(i) * cols + j]; }
};

/// One tensor of the flat buffer: its values and where its gradient is
/// accumulated (g null: no gradient wanted; w null: the config has none).
struct Param {
    const double* w = nullptr;
    double* g = nullptr;
    int cols = 0;
    explicit operator bool() const { return w != nullptr; }
    /// Entry (r, c) (vectors: r = 0).
    double operator()(int r, int c) const { return w[static_cast<std::size_t>(r) * cols + c]; }
    void add(int r, int c, double value) const {
        if (g) g[static_cast<std::size_t>(r) * cols + c] += value;
    }
};

struct EmbeddingParams {
    Param embed, pos, token_type, ln_gain, ln_bias;
};
struct AttentionParams {
    Param w_query, b_query, w_key, b_key, w_value, b_value, w_output, b_output;  ///< b_*: attn_bias / qkv_bias only
    Param q_norm, k_norm;  ///< qk_norm only: gains of D
};
struct MlpParams {
    Param w_gate, b_gate;  ///< gated_mlp only
    Param w_in, b_in, w_out, b_out;  ///< b_*: mlp_bias only
};
struct HeadParams {
    Param embed, unembed, unembed_bias;     ///< embed: the tied unembedding
    Param w_transform, b_transform, ln_gain, ln_bias;  ///< output_transform only
};

/// The tensors of a flat double buffer (parameter_layout order) by name, and
/// each kind's set of them; gradients go into `grads` (same layout) when given.
class Tensors {
public:
    Tensors(const ModelConfig& config, const std::vector<double>& params, std::vector<double>* grads);
    /// The tensor `name`, empty when the config has none.
    Param operator[](const std::string& name) const;
    EmbeddingParams embedding() const;
    AttentionParams attention(int layer) const;
    MlpParams mlp(int layer) const;
    HeadParams head() const;

private:
    const std::vector<double>& params_;
    std::vector<double>* grads_;
    std::unordered_map<std::string, ParamInfo> index_;
};

// ---- activations ----

double activation(Activation kind, double x);
double activation_grad(Activation kind, double x);

// ---- LayerNorm over the rows: y = (x − μ)·(var + ε)^(−1/2)·g + b ----

struct LayerNormActs {
    Mat y;
    std::vector<double> mean, inv_sigma;
};
LayerNormActs layernorm_forward(const Mat& x, const Param& gain, const Param& bias, double eps);
/// Returns dx for dy; accumulates the gain and bias gradients.
Mat layernorm_backward(const Mat& x, const LayerNormActs& acts, const Mat& dy, const Param& gain, const Param& bias);

// ---- RMSNorm over the rows: y = x·(mean(x²) + ε)^(−1/2)·g (inv_sigma: the row's 1/rms, mean: zeros) ----

LayerNormActs rmsnorm_forward(const Mat& x, const Param& gain, double eps);
/// Returns dx for dy; accumulates the gain's gradient.
Mat rmsnorm_backward(const Mat& x, const LayerNormActs& acts, const Mat& dy, const Param& gain);

// ---- embedding of one sequence: E[ids] + P[0:T] (learned or sinusoidal) (+ TT[0]), then LN_e ----

struct EmbeddingActs {
    Mat sum;           ///< T×C before LN_e
    LayerNormActs ln;  ///< embed_layernorm only
    Mat out;           ///< T×C
};
EmbeddingActs embedding_forward(const ModelConfig& config, const EmbeddingParams& p, const std::vector<std::int32_t>& ids);
/// Accumulates the gradients of embed, pos, token_type and embed_ln from dout = ∂loss/∂out.
void embedding_backward(const ModelConfig& config, const EmbeddingParams& p, const std::vector<std::int32_t>& ids,
                        const EmbeddingActs& acts, const Mat& dout);

// ---- attention of one sequence: Q, K, V, scores, scale, mask, softmax, ×V, output projection ----

struct AttentionRun {
    int heads = 1;
    int kv_heads = 0;    ///< H_kv, 0 = heads: query head h reads K/V head h / (H / H_kv)
    int head_dim = 0;    ///< D, 0 = the input's width / heads
    int length = 0;      ///< real tokens: keys at or past it are hidden
    bool causal = false;
    double scale = 1.0;  ///< scores · scale
    Positional positional = Positional::none;  ///< rope: q, k rotated; alibi: −m_h·|i − j| on the scaled scores
    RopeSettings rope;   ///< rope's base and scaling
    bool qk_norm = false;  ///< each head's q and k RMSNormed (the params' q_norm, k_norm gains)
    double eps = 1e-5;   ///< qk_norm's epsilon
    bool uniform = false;             ///< ForwardOptions::uniform_attention: 1/n on each allowed key
    std::vector<bool> head_on;        ///< empty = all on; an ablated head's output is zero
    bool on(int h) const { return head_on.empty() || head_on[static_cast<std::size_t>(h)]; }
    bool allowed(int i, int j) const { return j < length && (!causal || j <= i); }
};

struct AttentionActs {
    Mat q, k, v, concat, out;  ///< q (T×H·D), k, v (T×H_kv·D): q and k after the norms and RoPE
    Mat q_proj, k_proj;        ///< qk_norm: before the norms
    std::vector<double> q_inv_rms, k_inv_rms;  ///< qk_norm: per row and head
    Mat q_before_rope, k_before_rope;  ///< rope: before the rotation
    std::vector<Mat> weights;  ///< per head, T×T
};
AttentionActs attention_forward(const AttentionParams& p, const Mat& a, const AttentionRun& run);
/// Returns da = ∂loss/∂a for dout; accumulates the parameter gradients. With
/// `heads` (H entries), each head's gradient intermediates; with score_grad_sq,
/// adds Σ (∂loss/∂scaled)² over the allowed entries.
Mat attention_backward(const AttentionParams& p, const Mat& a, const AttentionRun& run, const AttentionActs& acts,
                       const Mat& dout, std::vector<ReferenceHeadGrads>* heads = nullptr,
                       double* score_grad_sq = nullptr);

// ---- MLP: act(m·W_in + b_in)·W_out + b_out ----

struct MlpActs {
    Mat pre, act, out;  ///< pre: m·W_in + b_in; act: act(pre), gated act(gate) ⊙ pre
    Mat gate;           ///< gated: m·W_gate + b_gate
};
/// Gated when p has W_gate: (act(m·W_gate + b_gate) ⊙ (m·W_in + b_in))·W_out + b_out.
MlpActs mlp_forward(Activation kind, const MlpParams& p, const Mat& m);
/// Returns dm for dout; accumulates the parameter gradients.
Mat mlp_backward(Activation kind, const MlpParams& p, const Mat& m, const MlpActs& acts, const Mat& dout);

// ---- output head: xt = LN_t(act(h·W_t + b_t)) (output_transform) or h; logits = xt·W_U (or Eᵀ) (+ b_U) ----

struct HeadActs {
    Mat pre, act;      ///< output_transform only
    LayerNormActs ln;  ///< output_transform only
    Mat xt;            ///< what the unembedding reads
    Mat logits;        ///< T×V
};
HeadActs head_forward(const ModelConfig& config, const HeadParams& p, const Mat& h);
/// Returns dh for dlogits; accumulates the parameter gradients.
Mat head_backward(const ModelConfig& config, const HeadParams& p, const Mat& h, const HeadActs& acts,
                  const Mat& dlogits);

// ---- cross-entropy of one sequence's rows whose target is >= 0 ----

/// Adds −log softmax(logits_i)[target_i] / count of every targeted row i to
/// `loss` (count: the targeted rows of the whole batch); returns ∂loss/∂logits
/// (zero on untargeted rows).
Mat cross_entropy(const Mat& logits, const std::vector<std::int32_t>& targets, int count, double& loss);

}  // namespace attn::reference
