#pragma once
// A transformer: token embeddings (+ positions), L blocks of multi-head
// self-attention (and an optional MLP), a final norm and an unembedding to
// logits over the vocabulary. Our own models train; GPT-2 and BERT checkpoints
// (pretrained.hpp) are only run.
//
//   x = E[ids] + P[0:T] (+ TT[0])                E (V×C), P (T_max×C) learned / sinusoidal / none
//                                                (rope, alibi: no P; they act inside attention),
//                                                TT (types×C) token type 0 (token_types > 0)
//       x = LN_e(x)                              (embed_layernorm)
//   pre-LN block (ours, GPT-2, Llama):
//                 x = x + MHA(LN1(x))            W_Q (C×H·D), W_K, W_V (C×H_kv·D), W_O (H·D×C)
//                                                (+ b_Q … b_O with attn_bias; b_Q, b_K, b_V with
//                                                qkv_bias); query head h = columns h·D … (h+1)·D−1
//                                                of Q, reading K/V head h / (H / H_kv)
//                 if F > 0: x = x + MLP(LN2(x))  MLP(m) = act(m·W_in + b_in)·W_out + b_out, or gated:
//                                                (act(m·W_gate + b_gate) ⊙ (m·W_in + b_in))·W_out + b_out
//   post-LN block (BERT):
//                 x = LN1(x + MHA(x));  if F > 0: x = LN2(x + MLP(x))
//   h = LN_f(x) (pre-LN with layernorm; post-LN has no LN_f)
//   h = LN_t(act(h·W_t + b_t))                   (output_transform, BERT's MLM head)
//   logits = h·W_U (+ b_U)                       W_U (C×V), or Eᵀ when tied; b_U with output_bias
//   loss   = mean cross-entropy over positions whose target is >= 0
// LayerNorm: biased variance, eps ln_eps, gain and bias; with rmsnorm every block
// norm and LN_f is RMSNorm instead, w ⊙ x / √(mean(x²) + eps), a gain and no bias.
// act: GELU (the exact erf form or the tanh form) or SiLU. Without layernorm there is
// no LN1, LN2 or LN_f at all. Inside attention: qk_norm (Qwen3) RMSNorms each head's q
// and k over its D values (gains of D shared by the heads); then RoPE turns them by
// their positions (positional.hpp); ALiBi adds −m_h·|i − j| to the scaled scores.
//
// Dimension letters: B sequences, T tokens, C d_model, H heads, H_kv key/value heads,
// D head width (C/H unless head_dim says), F mlp width, V vocabulary, L layers,
// N = B·T rows of the batch stacked.
//
// Parameters live in one flat float buffer (Parameters), each a named row-major
// view; gradients and the optimizer's moments use the same layout. A loaded 16-bit
// checkpoint's large tensors are 16-bit values in chunks of at most kHalfChunkBytes.
//
// The fast path by file: parameters.cpp (the name table, Parameters, init),
// memory.cpp (what training and running allocate), layers.hpp (the layer kinds),
// block.hpp (the one block: training, run, trace and generation run it),
// forward.hpp (the driver), model.cpp (Model, the traces), tap.hpp (the recorder
// callback that keeps a trace), generation.hpp (the KV cache).

#include "base/limits.hpp"
#include "model/batch.hpp"
#include "attention/multi_head.hpp"
#include "attention/positional.hpp"
#include "base/types.hpp"
#include "kernels/half.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

/// The MLP's (and the MLM head's) activation: GELU exactly, x·Φ(x) =
/// 0.5·x·(1 + erf(x/√2)), GPT-2's "gelu_new", 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))),
/// or SiLU, x·σ(x) (Llama's gate: SwiGLU is the gated MLP with SiLU).
enum class Activation { gelu_erf, gelu_tanh, silu };
/// Every activation in enum order (the model schema's choices).
inline constexpr Activation kActivations[] = {Activation::gelu_erf, Activation::gelu_tanh, Activation::silu};
/// Where the LayerNorms sit: before each sublayer (pre-LN) or after its residual sum (post-LN).
enum class Norm { pre, post };
/// "gelu_erf" | "gelu_tanh" | "silu" and "pre" | "post"; the parsers throw attn::Error for anything else.
const char* activation_name(Activation a);
Activation parse_activation(const std::string& name);
const char* norm_name(Norm n);
Norm parse_norm(const std::string& name);

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
    // ---- architecture options of pretrained checkpoints (pretrained.hpp); the defaults are our models' ----
    bool attn_bias = false;                     ///< biases on Q, K, V and O
    Activation activation = Activation::gelu_erf;
    float ln_eps = 1e-5f;                       ///< LayerNorm epsilon (BERT 1e-12)
    Norm norm = Norm::pre;                      ///< post-LN needs layernorm
    int token_types = 0;                        ///< BERT: 2 (every token has type 0)
    bool embed_layernorm = false;               ///< LN after word + position + type embeddings
    bool output_transform = false;              ///< BERT MLM: LN(act(x·W_t + b_t)) before the unembedding
    bool output_bias = false;                   ///< logits + unembed_bias
    // ---- the modern decoders' options (Llama, Qwen); the defaults are today's models ----
    double rope_base = 10000;                   ///< positional rope: θᵢ = rope_base^(−2i/D)
    RopeScaling rope_scaling = RopeScaling::none;  ///< llama3: the low frequencies rescaled (positional.hpp)
    double rope_factor = 8;                     ///< llama3 scaling's factor
    double rope_low_freq_factor = 1;            ///< llama3 scaling's low_freq_factor
    double rope_high_freq_factor = 4;           ///< llama3 scaling's high_freq_factor
    int rope_original_context = 8192;           ///< llama3 scaling's original_max_position_embeddings
    bool rmsnorm = false;                       ///< the block norms and LN_f are RMSNorm (gain only)
    bool gated_mlp = false;                     ///< MLP = (act(m·W_gate + b_gate) ⊙ (m·W_in + b_in))·W_out + b_out
    bool mlp_bias = true;                       ///< the MLP's biases b_gate, b_in, b_out
    int kv_heads = 0;                           ///< H_kv key/value heads (grouped-query attention), 0 = heads
    int head_dim = 0;                           ///< D, 0 = d_model / heads
    bool qkv_bias = false;                      ///< biases on Q, K and V, none on O (Qwen2); attn_bias has all four
    bool qk_norm = false;                       ///< RMSNorm of each head's q and k before RoPE (Qwen3)
    std::string family;                         ///< a checkpoint family's name (families/family.hpp); "" ours
};

/// D: the head width (head_dim, or d_model / heads).
inline int head_dim_of(const ModelConfig& c) { return c.head_dim > 0 ? c.head_dim : c.d_model / c.heads; }
/// H_kv: the key/value heads (kv_heads, or heads).
inline int kv_heads_of(const ModelConfig& c) { return c.kv_heads > 0 ? c.kv_heads : c.heads; }
/// Whether Q, K and V have biases (attn_bias or qkv_bias), and O (attn_bias only).
inline bool qkv_biased(const ModelConfig& c) { return c.attn_bias || c.qkv_bias; }
/// RoPE's settings of a config (its rope_* members).
inline RopeSettings rope_settings(const ModelConfig& c) {
    RopeSettings r;
    r.base = c.rope_base;
    r.scaling = c.rope_scaling;
    r.factor = c.rope_factor;
    r.low_freq_factor = c.rope_low_freq_factor;
    r.high_freq_factor = c.rope_high_freq_factor;
    r.original_context = c.rope_original_context;
    return r;
}

/// The checkpoint families' names, "" (our own models) first: the choices of the model
/// schema's family row and of check_model_config. The family registry defines this and
/// family_title (families/families.cpp): the one thing this layer takes from a layer above
/// it, so that it names no family itself.
const std::vector<std::string>& family_names();
/// A family's title for messages ("GPT-2"); `otherwise` for our own models.
std::string family_title(const std::string& family, const std::string& otherwise);

/// A model that is trained: the model schema's check_model_config with
/// kTrainingLimits (model_schema.cpp). Throws attn::Error naming the field and its range.
void validate_model_config(const ModelConfig& config);
/// A model that is only run: check_model_config with the wider kInferenceLimits.
void validate_inference_config(const ModelConfig& config);

/// One named tensor of the flat buffer.
struct ParamInfo {
    std::string name;   ///< "embed", "layers.0.w_query", ...
    int rows = 0;       ///< vectors: rows = 1
    int cols = 0;
    bool vector = false;  ///< a bias or gain: shape [cols] in checkpoints
    bool decay = false;   ///< weight decay applies (matrices only)
    std::size_t offset = 0;
    /// Stored as the product kernels' panels (Parameters::use_panels): element (r, c) at
    /// (c / 8)·rows·8 + r·8 + c % 8 from `offset`, not r·cols + c. Same size.
    bool panels = false;
    /// How the values are stored (Parameters(config, format)): float32 at flat()[stored], or
    /// 16-bit values of this format at index `stored` of 16-bit chunk `chunk`
    /// (Parameters::half_data). `offset` stays the tensor's place in the float32 layout (the
    /// gradients' and the checkpoints'): with no 16-bit tensor, stored == offset.
    WeightFormat format = WeightFormat::f32;
    std::size_t stored = 0;
    std::uint32_t chunk = 0;
    std::size_t size() const { return static_cast<std::size_t>(rows) * cols; }
};

/// The parameter layout of a config, in a fixed order: embed, pos (learned
/// only), token_type (token_types > 0), embed_ln.gain/bias (embed_layernorm),
/// per layer ln1.gain/bias (layernorm; no bias with rmsnorm), w_query, b_query,
/// w_key, b_key, w_value, b_value, w_output, b_output (the b_* with attn_bias;
/// b_query, b_key, b_value with qkv_bias), q_norm.gain, k_norm.gain (qk_norm),
/// ln2.gain/bias (layernorm and mlp), mlp.w_gate, mlp.b_gate (gated_mlp),
/// mlp.w_in, mlp.b_in, mlp.w_out, mlp.b_out (mlp; the b_* with mlp_bias),
/// final_ln.gain/bias (layernorm, pre-LN),
/// head.w_transform, head.b_transform, head.ln.gain/bias (output_transform),
/// unembed (not tied), unembed_bias (output_bias). The names are the
/// checkpoints'; the layer kinds read them through ParamSlots (layers.hpp).
std::vector<ParamInfo> parameter_layout(const ModelConfig& config);

/// The most bytes one 16-bit chunk of a Parameters packs tensors into (Parameters(config, format)):
/// 256 MiB. Each chunk is one allocation, sized exactly to its tensors, so the size wastes
/// nothing; it only has to stay well under kMaxAllocationBytes. 256 MiB holds several layers of
/// the modern decoders (Llama-3.2-1B's largest block matrix is 32 MiB in BF16), makes a 2.5 GB
/// model about ten allocations, and frees its memory in pieces of that size when promote()
/// empties one. A tensor above it (a large vocabulary's embedding: Llama-3.2-1B's is 501 MiB)
/// gets a chunk of its own.
inline constexpr std::size_t kHalfChunkBytes = std::size_t{256} << 20;

/// The most bytes one allocation of parameter values may take in this build: a 16-bit chunk, or
/// the float32 values (one std::vector). In wasm one allocation gets at most 2³¹ − 4148 bytes
/// (measured under Node with the engine's link flags, emscripten 3.1.6: bench/wasm_alloc.sh),
/// so 64 MiB below 2 GiB, for an allocator that keeps a little more for itself. Natively no
/// ceiling (the loader's own limit, kMaxParameterBytes, is lower).
#ifdef __EMSCRIPTEN__
inline constexpr std::uint64_t kMaxAllocationBytes = (std::uint64_t{2} << 30) - (std::uint64_t{64} << 20);
#else
inline constexpr std::uint64_t kMaxAllocationBytes = ~std::uint64_t{0};
#endif
static_assert(kHalfChunkBytes <= kMaxAllocationBytes, "a chunk of several tensors is one allocation");

/// Parameters (or gradients, or moments): a flat buffer with named views.
class Parameters {
public:
    Parameters() = default;
    explicit Parameters(const ModelConfig& config);  ///< zeros
    /// Zeros; with `format` BF16 or F16 (a loaded F16/BF16 checkpoint, only run) the blocks'
    /// product matrices that fits_panels(), the token embedding and the unembedding are
    /// stored as 16-bit values of that format (half_data()), about half the memory; the
    /// small tensors (gains, biases, positions) stay float32 in flat(). Every forward and
    /// backward gives the numbers of the same values stored as float32, bit for bit
    /// (the products convert them inside their packing: gemm.hpp). A 16-bit Parameters is
    /// stored as panels (use_panels()) before it is run.
    ///
    /// The 16-bit values are in chunks, each one allocation: the tensors in layout order, each
    /// whole inside one chunk and 16-byte aligned, a chunk closed when the next tensor would take
    /// it past `chunk_bytes` (a tensor larger than that alone in its own). `chunk_bytes` is
    /// kHalfChunkBytes but in tests, which spread a small model over many chunks. A tensor above
    /// kMaxAllocationBytes cannot be one allocation: refused by name (too_large;
    /// allocation_refusal() says it without allocating).
    Parameters(const ModelConfig& config, WeightFormat format, std::size_t chunk_bytes = kHalfChunkBytes);
    const std::vector<ParamInfo>& layout() const { return layout_; }
    /// The float32 values (every tensor's without 16-bit ones; else the float32 tensors',
    /// each at its ParamInfo::stored).
    std::vector<float>& flat() { return data_; }
    const std::vector<float>& flat() const { return data_; }
    /// The 16-bit values of a tensor of this layout stored as 16-bit values (p.format ≠ f32):
    /// p.size() of them, row-major or as panels (p.panels). Throws attn::Error (internal) for a
    /// float32 tensor or one this Parameters does not hold.
    const std::uint16_t* half_data(const ParamInfo& p) const;
    std::uint16_t* half_data(const ParamInfo& p);
    /// Bytes each 16-bit chunk takes, in order (0 for one promote() emptied and freed; empty
    /// without 16-bit tensors).
    std::vector<std::size_t> half_chunk_bytes() const;
    /// The format of the 16-bit tensors; f32 when there are none.
    WeightFormat half_format() const { return half_format_; }
    /// How many parameters (the float32 layout's size, however they are stored).
    std::size_t size() const { return count_; }
    /// Bytes the values take (flat() and the 16-bit chunks, as allocated).
    std::size_t bytes() const;
    /// The tensor at `offset` in the float32 layout (ParamSlots' offsets); null for none.
    const ParamInfo* at_offset(std::size_t offset) const;
    /// Stores the 16-bit tensors whose names start with `prefix` ("layers.3.") as float32
    /// from now on (appended to flat(), the same values, the same layout): before a step
    /// writes them. Their 16-bit place is left unused; a chunk left with no 16-bit tensor is
    /// freed.
    void promote(const std::string& prefix);
    /// The view of a named tensor; throws attn::Error for an unknown name, and
    /// (bad_state) for a tensor stored as panels, which has no row-major view: matrix().
    Eigen::Map<Matrix> view(const std::string& name);
    Eigen::Map<const Matrix> view(const std::string& name) const;
    /// A row-major copy of a named tensor, however it is stored.
    Matrix matrix(const std::string& name) const;
    const ParamInfo& info(const std::string& name) const;
    bool has(const std::string& name) const;
    void set_zero();
    /// Stores the blocks' product matrices (W_Q, W_K, W_V, W_O, the MLP's W_gate, W_in and
    /// W_out) as the kernels' panels of 8 columns, in place (those whose width is a
    /// multiple of 8; the others stay row-major), so that a forward multiplies by them
    /// without packing them first. For a model that is only run (a loaded checkpoint):
    /// the trainer's AdamW and sgd_step read the flat buffer as row-major and refuse it.
    /// The numbers of every forward and backward stay the same, bit for bit.
    void use_panels();
    /// use_panels() was called.
    bool panels() const { return panels_; }

private:
    std::vector<ParamInfo> layout_;
    std::vector<float> data_;
    std::vector<std::vector<std::uint16_t>> chunks_;  ///< the 16-bit values (ParamInfo::chunk, stored)
    WeightFormat half_format_ = WeightFormat::f32;
    std::size_t count_ = 0;
    bool panels_ = false;
};

/// The bytes Parameters(config, format) allocates, counted without allocating (the same for
/// any chunk size: each chunk is sized to its tensors).
std::uint64_t parameter_bytes(const ModelConfig& config, WeightFormat format);

/// Why Parameters(config, format) cannot be allocated in a build whose one allocation takes at
/// most `ceiling` bytes, or "" when it can: the first 16-bit tensor above it, named with its
/// shape and bytes (a tensor is never split across allocations), else the float32 values (one
/// allocation) above it. Counted without allocating.
std::string allocation_refusal(const ModelConfig& config, WeightFormat format, std::uint64_t ceiling = kMaxAllocationBytes);

/// Whether a product matrix `cols` wide is stored as panels by Parameters::use_panels.
inline bool fits_panels(int cols) { return cols > 0 && cols % 8 == 0; }
/// Index of element (r, c) of a rows×cols matrix stored as panels, from its start.
inline std::size_t panel_index(int rows, int r, int c) {
    return static_cast<std::size_t>(c / 8) * static_cast<std::size_t>(rows) * 8 + static_cast<std::size_t>(r) * 8 +
           static_cast<std::size_t>(c % 8);
}

/// Seeded initialisation (counter-based, the same natively and in wasm), each
/// tensor from its own stream (a hash of its name):
///   embed, pos, token_type: uniform with unit variance (±√3), as PyTorch's nn.Embedding's N(0, 1) in variance;
///   w_query, w_key, w_value, w_output, mlp.w_gate, mlp.w_in, mlp.w_out, head.w_transform, unembed:
///     uniform ±1/√(fan_in), fan_in = rows (PyTorch's nn.Linear default);
///   biases 0, LayerNorm gains 1.
void init_parameters(const ModelConfig& config, std::uint32_t seed, Parameters& params);

/// The most memory a trainer may use: the weights, gradients and AdamW state
/// plus everything one step's forward and backward allocate. The wasm module
/// may grow to 4 GB (-sMAXIMUM_MEMORY, CMakeLists.txt: room for a pretrained
/// model's weights), but a tab is not sure to get that much. 768 MiB was set
/// when the maximum was 1 GiB (a quarter left for the module's code, stack, the
/// task's data, a text corpus of up to 8 M characters, and the allocator) and
/// is kept: every setting that trained before still trains.
/// Natively the same rule applies, so that a setting that trains with the CLI
/// also trains in the browser.
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
    /// -1: the model's own 1/√D; 0: no scale (scores as they are); 1: 1/√D (the playground's switch).
    int scale_override = -1;
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

/// Per-layer trace of one sequence, for the page's twelve steps.
/// Pre-LN: normed = LN1(input), residual = input + attention output,
/// mlp_normed = LN2(residual), output = residual + mlp_output.
/// Post-LN: normed = input (the attention reads the stream itself), residual =
/// input + attention output (before LN1), mlp_normed = LN1(residual) (the
/// MLP's input), output = LN2(mlp_normed + mlp_output) (= LN1(residual) without an MLP).
struct LayerTrace {
    Matrix input;            ///< residual stream in (T×C)
    Matrix normed;           ///< the attention's input: LN1 output (pre-LN; = input without layernorm or post-LN) (T×C)
    MultiHeadTrace attention;  ///< heads (Q, K, V, scores, scaled, weights, output), concat, output = concat·W_O (+ b_O)
    Matrix residual;         ///< input + attention output (T×C)
    Matrix mlp_normed;       ///< the MLP's input (empty without an MLP, except post-LN: LN1(residual))
    Matrix mlp_hidden;       ///< act(m·W_in + b_in), gated: act(gate) ⊙ up (T×F, empty without an MLP)
    Matrix mlp_output;       ///< hidden·W_out + b_out (T×C, empty without an MLP)
    Matrix output;           ///< residual stream out (T×C)
    Matrix mlp_gate;         ///< gated MLP: gate = m·W_gate + b_gate, before act (T×F; empty otherwise)
    Matrix mlp_up;           ///< gated MLP: up = m·W_in + b_in (T×F; empty otherwise)
    Vector normed_rms;       ///< rmsnorm: √(mean(x²) + eps) of each row the norm made `normed` from (T; empty otherwise)
    Vector mlp_normed_rms;   ///< rmsnorm: the same of `mlp_normed` (T; empty otherwise)
};

struct ModelTrace {
    std::vector<std::int32_t> ids;
    int length = 0;              ///< real tokens; the rest is padding (hidden keys)
    Matrix embeddings;           ///< E[ids] (T×C)
    Matrix positional;           ///< P[0:T] (T×C)
    Matrix token_type;           ///< TT[0] on every row (T×C; empty without token types)
    Matrix embed_normed;         ///< LN_e(E + P + TT) (T×C; empty without embed_layernorm)
    MaskMatrix mask;             ///< T×T, the model's mask (true = may attend)
    std::vector<LayerTrace> layers;  ///< L entries; with Recorder::layer = k only layer k has its heads
    Matrix final_normed;         ///< LN_f output (T×C; the last layer's output without LN_f)
    Vector final_rms;            ///< rmsnorm: √(mean(x²) + eps) of each row LN_f divided (T; empty otherwise)
    Vector rope_frequencies;     ///< rope: θᵢ after any scaling (D/2; position m's angle is m·θᵢ); empty otherwise
    Vector alibi_slopes;         ///< alibi: each head's slope m_h (H; the bias is −m_h·|i − j|); empty otherwise
    Matrix transformed;          ///< LN_t(act(final_normed·W_t + b_t)) (T×C; empty without output_transform)
    Matrix logits;               ///< T×V (empty when the recorder's `logits` is false)
    Matrix probabilities;        ///< softmax of each logits row (T×V; empty when the recorder's `logits` is false)
    int top_k = 0;               ///< tokens per position in top_ids and top_p (the recorder's top_k, at most V; 0: none)
    std::vector<std::int32_t> top_ids;  ///< T×top_k: row t's likeliest tokens, the likeliest first, equal probabilities by id
    std::vector<float> top_p;    ///< T×top_k: their probabilities (the values of `probabilities`)
};

/// The gradients of one head of one layer, after a backward of a batch of one.
struct HeadGradTrace {
    Matrix d_output;   ///< dO: ∂loss/∂(the head's output) (T×D; zero for an ablated head)
    Matrix d_weights;  ///< dP = dO·Vᵀ (T×T)
    Matrix d_scaled;   ///< dS′: ∂loss/∂(scaled masked scores), before the softmax (T×T; 0 on hidden keys, and under uniform attention)
    Matrix d_scores;   ///< dS = dS′·scale: ∂loss/∂(Q·Kᵀ) (T×T)
    Matrix d_query, d_key, d_value;  ///< dQ = dS·K, dK = dSᵀ·Q, dV = Pᵀ·dO (T×D): of the head's own q, and
                                     ///< of its K/V head's k and v from this head (grouped-query: summed over the group)
    Matrix d_query_before_rope, d_key_before_rope;  ///< rope: R(−m)·dQ, R(−m)·dK, the rotation's backward (T×D)
};

struct LayerGradTrace {
    std::vector<HeadGradTrace> heads;  ///< empty for the layers a Recorder::layer skips
    Matrix d_output;                   ///< ∂loss/∂(the layer's output stream) (T×C)
    Matrix d_input;                    ///< ∂loss/∂(the layer's input stream) (T×C)
    Matrix d_attention;                ///< ∂loss/∂Y, the attention's output before the residual add (T×C); kept layers only
};

struct GradientTrace {
    Matrix d_logits;                     ///< T×V
    std::vector<LayerGradTrace> layers;  ///< L entries
};

/// What one forward (and backward) keeps of a batch of ONE sequence: every
/// intermediate (the trace) and every gradient intermediate, as its tap (TraceTap,
/// tap.hpp) takes them from the forward and backward by name. `layer` = k keeps
/// the T×T maps and per-head matrices of layer k only (a long input of a deep
/// model); -1 keeps every layer's.
struct Recorder {
    int layer = -1;
    /// The per-layer vectors (input, normed, residual, mlp_*, output, the attention's concat
    /// and output: T×C and T×F each): -1 every layer's, k only layer k's (the others empty).
    int vectors = -1;
    /// The T×V logits and probabilities. A forward-only run with a recorder computes them in
    /// blocks of kTraceLogitRows positions; false: none is kept, so no N×V matrix is ever
    /// whole (only top_k).
    bool logits = true;
    /// The k likeliest next tokens after each position (ModelTrace::top_ids, top_p); 0: none.
    int top_k = 0;
    ModelTrace trace;
    GradientTrace gradients;
    bool keeps(int l) const { return layer < 0 || layer == l; }
    bool keeps_vectors(int l) const { return vectors < 0 || vectors == l; }
};

/// Positions whose logits a recorder without `logits` computes at once (then keeps their top-k).
inline constexpr int kTraceLogitRows = 128;

/// What a trace keeps (Recorder's fields of the same names); the defaults keep everything.
struct TraceKeep {
    int layer = -1;      ///< heads (T×T maps, Q, K, V, …): -1 every layer's, k only layer k's
    int vectors = -1;    ///< per-layer vectors: -1 every layer's, k only layer k's
    bool logits = true;  ///< the T×V logits and probabilities
    int top_k = 0;       ///< the k likeliest next tokens per position
};

/// Bytes a forward-only run (Model::run, trace_model) of batch × length tokens allocates
/// beyond the parameters, with a recorder keeping `keep` (nullptr: no recorder): an upper
/// bound (tests compare it with measured peaks). Runs above kMaxTrainingBytes are refused.
std::int64_t run_memory(const ModelConfig& config, int batch, int length, const TraceKeep* keep);

/// One layer's parameter gradients (Model::backward_layer): the tensors
/// "layers.{l}.*" of parameter_layout, in its order, offsets into `flat`.
struct LayerGradients {
    int layer = -1;
    std::vector<ParamInfo> layout;
    std::vector<float> flat;
    Eigen::Map<const Matrix> view(const std::string& name) const;  ///< throws attn::Error for a name it has not
    bool has(const std::string& name) const;
};

/// The most a loaded model's forward and backward of one sentence (learn_forward and
/// backward_layer with a recorder keeping one layer's heads) may allocate beyond its
/// weights: the wasm module's 4 GiB holds GPT-2 small's weights (0.5 GB) and this.
inline constexpr std::int64_t kMaxLearnBytes = std::int64_t{2} << 30;
/// What that forward and backward of `length` tokens allocate beyond the weights, in
/// bytes: training_memory's activations, attention and scratch of a batch of one, plus
/// the recorder's trace and gradients and the layer's gradients (an upper bound).
std::int64_t learn_memory(const ModelConfig& config, int length);

namespace detail {
struct ForwardState;
}

/// The model: parameters plus the reusable activations of the last forward.
/// The fast path: every product on the SIMD kernels (gemm.hpp); causal keys
/// are skipped; buffers are kept from call to call. A Model alone (config +
/// parameters) runs and traces; training (gradients, AdamW) is the Trainer's.
class Model {
public:
    /// Validates `config` as a model that is run (validate_inference_config);
    /// the parameters are zeros (init_parameters or a checkpoint fills them).
    explicit Model(const ModelConfig& config);
    Model(const ModelConfig& config, Parameters params);
    const ModelConfig& config() const { return config_; }
    Parameters& params() { return params_; }
    const Parameters& params() const { return params_; }

    /// Training forward over a batch; keeps what backward needs. Validates
    /// the config as trainable (once) and the step's memory (once per batch
    /// shape, check_training_memory). Throws attn::Error for ids outside
    /// [0, V), T above the context, bad lengths or targets. With a recorder
    /// (a batch of one), also keeps every intermediate in recorder->trace.
    LossResult forward(const Batch& batch, const ForwardOptions& options = {}, Recorder* recorder = nullptr);
    /// Forward only (a model that is run, never trained): one layer's
    /// activations at a time, no gradient buffers; backward() after it throws.
    LossResult run(const Batch& batch, const ForwardOptions& options = {}, Recorder* recorder = nullptr);
    /// Gradients of the last forward's loss into `grads` (same layout; overwritten).
    /// Fills the score-gradient norm of the returned stats. With the recorder
    /// of that forward, also keeps every gradient intermediate in recorder->gradients.
    void backward(Parameters& grads, AttentionStats* stats = nullptr, Recorder* recorder = nullptr);
    /// A loaded (pretrained) model's forward that keeps what backward_layer needs, for a
    /// batch of one: checks the model only as one that is run (validate_inference_config)
    /// and refuses (too_large) when learn_memory() is above kMaxLearnBytes.
    LossResult learn_forward(const Batch& batch, const ForwardOptions& options = {}, Recorder* recorder = nullptr);
    /// The backward of the last forward (learn_forward or forward) with the parameter
    /// gradients of layer `layer` only (no buffer for the others): the activation gradients
    /// flow from the loss through the layers above it, the layers below are not visited
    /// (the recorder's gradients of layers below `layer` stay empty). Equal to backward()'s
    /// gradients of that layer (the same operations in the same order).
    void backward_layer(int layer, LayerGradients& grads, Recorder* recorder = nullptr);
    /// The trace of one sequence (ids.size() = T ≤ context; keys at or past
    /// `length` hidden, -1 = all real): run() on a batch of one with a recorder.
    ModelTrace trace(const std::vector<std::int32_t>& ids, int length = -1, const ForwardOptions& options = {},
                     int layer = -1);
    /// The same, keeping what `keep` says (e.g. one layer and the top-k only, for a long input).
    ModelTrace trace(const std::vector<std::int32_t>& ids, int length, const ForwardOptions& options,
                     const TraceKeep& keep);
    /// Logits of the last forward: N×V (row b·T + t); empty after a run() with a recorder
    /// (its trace has them, when it keeps them).
    const Matrix& logits() const;
    /// The attention weights of the last forward for sequence b, layer l, head h (T×T).
    /// After run(), only the last layer's are kept.
    Eigen::Map<const Matrix> attention(int b, int layer, int head) const;

    ~Model();
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;

private:
    ModelConfig config_;
    Parameters params_;
    bool trainable_checked_ = false;
    int checked_batch_ = 0, checked_length_ = 0;  ///< the last shape check_training_memory accepted
    bool trained_forward_ = false;                ///< the last forward kept what backward needs
    detail::ForwardState* state_ = nullptr;
};

/// Every intermediate of one sequence (ids.size() = T ≤ context; keys at or
/// past `length` are hidden, -1 = all real): the model's forward on a batch of
/// one with a Recorder (Model::trace), on the given parameters (not copied).
/// `layer` as Recorder::layer.
ModelTrace trace_model(const ModelConfig& config, const Parameters& params, const std::vector<std::int32_t>& ids,
                       int length = -1, const ForwardOptions& options = {}, int layer = -1);
/// The same, keeping what `keep` says. Refused (too_large) when run_memory() is above
/// kMaxTrainingBytes, naming what to ask for instead (the top-k, one layer, fewer tokens).
ModelTrace trace_model(const ModelConfig& config, const Parameters& params, const std::vector<std::int32_t>& ids,
                       int length, const ForwardOptions& options, const TraceKeep& keep);

/// The reference's gradient intermediates of sequence 0 (one per layer and head).
struct ReferenceHeadGrads {
    std::vector<double> d_output, d_weights, d_scaled, d_scores, d_query, d_key, d_value;  ///< row-major, T×D or T×T
};

/// The independent reference (model_reference.cpp): plain loops in double
/// precision, no Eigen products, no SIMD kernels and no code shared with the
/// fast path. `params` is the flat buffer in parameter_layout(config) order;
/// returns the loss and, when grads is given, writes the gradients (same
/// layout). The finite-difference checks run on it in double precision.
/// Every architecture option of ModelConfig; with `heads` (and grads), also
/// the gradient intermediates of sequence 0, [layer][head].
/// With `logits`, also every sequence's logits (B·T×V, row-major, row b·T + t).
double reference_loss_and_grads(const ModelConfig& config, const std::vector<double>& params, const Batch& batch,
                                std::vector<double>* grads,
                                std::vector<std::vector<ReferenceHeadGrads>>* heads = nullptr,
                                std::vector<double>* logits = nullptr);

}  // namespace attn
