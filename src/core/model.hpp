#pragma once
// A small transformer that trains: token embeddings (+ positions), L pre-LN
// blocks of multi-head self-attention (and an optional GELU MLP), a final
// LayerNorm and an unembedding to logits over the vocabulary.
//
//   x = E[ids] + P[0:T]                          E (V×C), P (T_max×C) learned / sinusoidal / none
//   per layer l:  a = LN1(x)                     (a = x without layernorm)
//                 x = x + MHA(a)                 W_Q, W_K, W_V, W_O (C×C), no biases;
//                                                head h = columns h·D … (h+1)·D−1
//                 if F > 0: m = LN2(x);  x = x + GELU(m·W_in + b_in)·W_out + b_out
//   logits = LN_f(x)·W_U                         W_U (C×V), or Eᵀ when tied
//   loss   = mean cross-entropy over positions whose target is >= 0
// LayerNorm: biased variance, eps 1e-5, gain and bias. GELU: the exact erf form.
// Without layernorm there is no LN1, LN2 or LN_f at all.
//
// Dimension letters: B sequences, T tokens, C d_model, H heads, D = C/H, F mlp
// width, V vocabulary, L layers, N = B·T rows of the batch stacked.
//
// Parameters live in one flat float buffer (Parameters), each a named row-major
// view; gradients and the optimizer's moments use the same layout.

#include "batch.hpp"
#include "multi_head.hpp"
#include "positional.hpp"
#include "types.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

/// Limits of a trainable model (documented in README.md).
inline constexpr int kMaxModelLayers = 12;
inline constexpr int kMaxModelDModel = 512;
inline constexpr int kMaxModelMlp = 2048;
inline constexpr int kMaxModelVocab = 50000;
inline constexpr int kMaxModelContext = 512;

struct ModelConfig {
    int vocab = 16;        ///< V
    int context = 32;      ///< T_max: the longest sequence
    int layers = 1;        ///< L
    int d_model = 32;      ///< C
    int heads = 2;         ///< H, C % H == 0
    int mlp = 0;           ///< F, 0 = attention-only
    bool layernorm = true;
    Positional positional = Positional::learned;
    bool causal = false;   ///< causal mask in every layer
    bool scale = true;     ///< scores · 1/√D
    bool tied = false;     ///< unembedding = Eᵀ
};

/// Throws attn::Error naming the field and its range.
void validate_model_config(const ModelConfig& config);

/// One named tensor of the flat buffer.
struct ParamInfo {
    std::string name;   ///< "embed", "layers.0.w_query", ...
    int rows = 0;       ///< vectors: rows = 1
    int cols = 0;
    bool vector = false;  ///< a bias or gain: shape [cols] in checkpoints
    bool decay = false;   ///< weight decay applies (matrices only)
    std::size_t offset = 0;
    std::size_t size() const { return static_cast<std::size_t>(rows) * cols; }
};

/// The parameter layout of a config, in a fixed order: embed, pos (learned
/// only), per layer ln1.gain/bias (layernorm), w_query, w_key, w_value,
/// w_output, ln2.gain/bias (layernorm and mlp), mlp.w_in, mlp.b_in, mlp.w_out,
/// mlp.b_out (mlp), final_ln.gain/bias (layernorm), unembed (not tied).
std::vector<ParamInfo> parameter_layout(const ModelConfig& config);

/// Parameters (or gradients, or moments): a flat buffer with named views.
class Parameters {
public:
    Parameters() = default;
    explicit Parameters(const ModelConfig& config);  ///< zeros
    const std::vector<ParamInfo>& layout() const { return layout_; }
    std::vector<float>& flat() { return data_; }
    const std::vector<float>& flat() const { return data_; }
    std::size_t size() const { return data_.size(); }
    /// The view of a named tensor; throws attn::Error for an unknown name.
    Eigen::Map<Matrix> view(const std::string& name);
    Eigen::Map<const Matrix> view(const std::string& name) const;
    const ParamInfo& info(const std::string& name) const;
    bool has(const std::string& name) const;
    void set_zero();

private:
    std::vector<ParamInfo> layout_;
    std::vector<float> data_;
};

/// Seeded initialisation (counter-based, the same natively and in wasm), each
/// tensor from its own stream (a hash of its name):
///   embed, pos: uniform with unit variance (±√3), as PyTorch's nn.Embedding's N(0, 1) in variance;
///   w_query, w_key, w_value, w_output, mlp.w_in, mlp.w_out, unembed:
///     uniform ±1/√(fan_in), fan_in = rows (PyTorch's nn.Linear default);
///   biases 0, LayerNorm gains 1.
void init_parameters(const ModelConfig& config, std::uint32_t seed, Parameters& params);

/// The most memory a trainer may use: the weights, gradients and AdamW state
/// plus everything one step's forward and backward allocate. The wasm module
/// can grow to 1 GiB (-sMAXIMUM_MEMORY, CMakeLists.txt), and the tab also
/// needs the module's code, stack, the task's data (a text corpus of up to
/// 8 M characters) and room for the allocator; 768 MiB leaves a quarter for
/// those. Natively the same rule applies, so that a setting that trains with
/// the CLI also trains in the browser.
inline constexpr std::int64_t kMaxTrainingBytes = std::int64_t{768} << 20;

/// What training `config` on batches of `batch` sequences of `length` tokens
/// needs, in bytes (4 a float or id), by part. Computed in 64 bits from the
/// validated config: it cannot wrap. An upper bound of what Model::forward,
/// Model::backward and the AdamW step allocate (tested against the process's
/// peak memory).
struct TrainingMemory {
    std::int64_t parameters = 0;   ///< the weights: P floats
    std::int64_t gradients = 0;    ///< P floats
    std::int64_t optimizer = 0;    ///< AdamW's moments m, v (2P) and the copy of weights and moments an update keeps (3P)
    std::int64_t activations = 0;  ///< what forward keeps for backward, without the attention weights
    std::int64_t attention = 0;    ///< the softmax weights forward keeps: L·B·H·T² floats
    std::int64_t scratch = 0;      ///< backward's gradients of the activations, and the products' packed operands
    std::int64_t total() const {
        return parameters + gradients + optimizer + activations + attention + scratch;
    }
    bool fits() const { return total() <= kMaxTrainingBytes; }
    /// Empty when it fits; else the too_large message: the largest part with
    /// the settings that make it, the limit and which settings to lower.
    std::string refusal;
};
TrainingMemory training_memory(const ModelConfig& config, int batch, int length);

/// Throws attn::Error (too_large) naming the size, the limit and the settings
/// to lower when training_memory(config, batch, length) is above
/// kMaxTrainingBytes. Everything that allocates for training calls it first.
void check_training_memory(const ModelConfig& config, int batch, int length);

/// "17.2 GB", "42 MB", "512 kB": bytes in decimal units, for messages.
std::string format_bytes(std::int64_t bytes);

/// Which heads contribute (ablation) and how attention is computed at
/// evaluation; training uses the defaults.
struct ForwardOptions {
    /// L×H flags, empty = all on; an ablated head's output is zeroed.
    std::vector<std::vector<bool>> head_enabled;
    /// Whether head `head` of layer `layer` runs (layers and heads head_enabled does not list do).
    bool head_on(int layer, int head) const {
        if (layer < 0 || static_cast<std::size_t>(layer) >= head_enabled.size()) return true;
        const std::vector<bool>& heads = head_enabled[static_cast<std::size_t>(layer)];
        return head < 0 || static_cast<std::size_t>(head) >= heads.size() || heads[static_cast<std::size_t>(head)];
    }
    /// Replace every head's softmax by the uniform average over its allowed keys
    /// (1/n on each of the n; in Model::forward and trace_model alike, whose
    /// row_max is then 0 and row_sum n).
    bool uniform_attention = false;
    /// -1: the model's own mask; 0: force no causal mask; 1: force causal.
    int causal_override = -1;
};

/// Per-step numbers for the lab's charts (averaged over layers, heads and rows).
struct AttentionStats {
    double score_variance = 0;   ///< variance of the scaled scores over allowed entries
    double row_entropy = 0;      ///< mean entropy of the softmax rows (nats)
    double score_grad_norm = 0;  ///< ‖∂loss/∂scaled scores‖_F over the batch (after backward)
};

struct LossResult {
    double loss = 0;         ///< mean cross-entropy over targeted positions
    int targets = 0;         ///< positions with a target
    int correct = 0;         ///< argmax(logits) == target
    AttentionStats stats;
};

/// The model: parameters plus the reusable activations of the last forward.
/// The fast path: every product on the SIMD kernels (gemm.hpp); causal keys
/// are skipped; buffers are kept from call to call.
class Model {
public:
    explicit Model(const ModelConfig& config);
    const ModelConfig& config() const { return config_; }
    Parameters& params() { return params_; }
    const Parameters& params() const { return params_; }

    /// Forward over a batch; keeps what backward needs. Throws attn::Error for
    /// ids outside [0, V), T above the context, bad lengths or targets.
    LossResult forward(const Batch& batch, const ForwardOptions& options = {});
    /// Gradients of the last forward's loss into `grads` (same layout; overwritten).
    /// Fills the score-gradient norm of the returned stats.
    void backward(Parameters& grads, AttentionStats* stats = nullptr);
    /// Logits of the last forward: N×V (row b·T + t).
    const Matrix& logits() const { return logits_; }
    /// The attention weights of the last forward for sequence b, layer l, head h (T×T).
    Eigen::Map<const Matrix> attention(int b, int layer, int head) const;

private:
    struct LayerCache;
    ModelConfig config_;
    Parameters params_;
    // activations of the last forward
    int batch_ = 0, length_ = 0;
    std::vector<int> lengths_;
    std::vector<std::int32_t> ids_, targets_;
    ForwardOptions options_;
    bool causal_ = false;
    std::vector<LayerCache*> layers_;
    Matrix x_final_, normed_final_, logits_, logits_grad_;
    std::vector<float> final_mean_, final_rstd_;
    int target_count_ = 0;
public:
    ~Model();
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;
};

/// Per-layer trace of one sequence, for the page's twelve steps.
struct LayerTrace {
    Matrix input;            ///< residual stream in (T×C)
    Matrix normed;           ///< LN1 output (= input without layernorm) (T×C)
    MultiHeadTrace attention;  ///< heads (Q, K, V, scores, scaled, weights, output), concat, output = concat·W_O
    Matrix residual;         ///< input + attention output (T×C)
    Matrix mlp_normed;       ///< LN2 output (empty without an MLP)
    Matrix mlp_hidden;       ///< GELU(m·W_in + b_in) (T×F, empty without an MLP)
    Matrix mlp_output;       ///< hidden·W_out + b_out (T×C, empty without an MLP)
    Matrix output;           ///< residual stream out (T×C)
};

struct ModelTrace {
    std::vector<std::int32_t> ids;
    int length = 0;              ///< real tokens; the rest is padding (hidden keys)
    Matrix embeddings;           ///< E[ids] (T×C)
    Matrix positional;           ///< P[0:T] (T×C)
    MaskMatrix mask;             ///< T×T, the model's mask (true = may attend)
    std::vector<LayerTrace> layers;
    Matrix final_normed;         ///< LN_f output (T×C)
    Matrix logits;               ///< T×V
    Matrix probabilities;        ///< softmax of each logits row (T×V)
};

/// Every intermediate of one sequence (ids.size() = T ≤ context; keys at or
/// past `length` are hidden, -1 = all real). The attention of each layer is
/// multi_head_attention() of the playground: one attention implementation.
ModelTrace trace_model(const ModelConfig& config, const Parameters& params, const std::vector<std::int32_t>& ids,
                       int length = -1, const ForwardOptions& options = {});

/// The independent reference (model_reference.cpp): plain loops in double
/// precision, no Eigen products, no SIMD kernels and no code shared with the
/// fast path. `params` is the flat buffer in parameter_layout(config) order;
/// returns the loss and, when grads is given, writes the gradients (same
/// layout). The finite-difference checks run on it in double precision.
double reference_loss_and_grads(const ModelConfig& config, const std::vector<double>& params, const Batch& batch,
                                std::vector<double>* grads);

}  // namespace attn
