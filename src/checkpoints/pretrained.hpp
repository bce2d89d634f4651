#pragma once
// CONTRACT (lead, stop 27): the shape that the model core (#20), the Hub loader
// (#22, C++) and the page's loader (#22, web) build to. Declarations only; each
// part is implemented by its owner. Change it only by agreement (say so in the
// commit message) so the three branches still fit together.
//
// A pretrained checkpoint (GPT-2 or BERT family, Hugging Face files) becomes
// our Model: the Hub's tensors are converted, while they stream in, into the
// flat Parameters of parameter_layout(config), under OUR canonical names
// (row-major, "x · W" layout: a matrix is [in, out]):
//
//   embed [V, C]            wte / word_embeddings
//   pos [T_max, C]          wpe / position_embeddings       (Positional::learned)
//   token_type [types, C]   token_type_embeddings            (config.token_types > 0)
//   embed_ln.gain/bias [C]  embeddings.LayerNorm             (config.embed_layernorm)
//   layers.{l}.ln1.gain/bias            GPT-2 ln_1 (before attention, pre-LN)
//                                       BERT attention.output.LayerNorm (after the residual, post-LN)
//   layers.{l}.w_query w_key w_value w_output [C, C]
//   layers.{l}.b_query b_key b_value b_output [C]           (config.attn_bias)
//   layers.{l}.ln2.gain/bias            GPT-2 ln_2 / BERT output.LayerNorm
//   layers.{l}.mlp.w_in [C, F], mlp.b_in [F], mlp.w_out [F, C], mlp.b_out [C]
//   final_ln.gain/bias [C]  GPT-2 ln_f                       (pre-LN with layernorm)
//   head.w_transform [C, C], head.b_transform [C], head.ln.gain/bias [C]
//                           BERT cls.predictions.transform   (config.output_transform)
//   unembed [C, V]          lm_head (absent = tied to embed)
//   unembed_bias [V]        BERT cls.predictions.bias        (config.output_bias)
//
// ModelConfig (model.hpp) gains these options (defaults = today's models):
//   bool attn_bias = false;            biases on Q, K, V and O
//   Activation activation = gelu_erf;  or gelu_tanh (GPT-2's "gelu_new")
//   float ln_eps = 1e-5f;              LayerNorm epsilon (BERT 1e-12)
//   Norm norm = Norm::pre;             pre-LN (ours, GPT-2) or post-LN (BERT)
//   int token_types = 0;               BERT: 2 (the input always uses type 0)
//   bool embed_layernorm = false;      BERT: LN after word + position + type
//   bool output_transform = false;     BERT MLM: LN(act(x·W_t + b_t)) before unembed
//   bool output_bias = false;          BERT MLM: logits + unembed_bias
//   std::string family;                "" (ours), "gpt2", "bert"
// Post-LN block: x = LN1(x + MHA(x)); x = LN2(x + MLP(x)); no final_ln.
// Pre-LN block (today): x = x + MHA(LN1(x)); x = x + MLP(LN2(x)); final_ln.

#include "model/model.hpp"
#include "checkpoints/safetensors.hpp"
#include "text/pretrained_tokenizer.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attn {

/// config.json of a registered family (families/family.hpp) → our ModelConfig
/// (family set; the family reads its own fields). Refuses an unsupported
/// architecture by name ("LlamaForCausalLM is not supported: …", the registry's
/// list), a missing or out-of-range field by name. Code bad_checkpoint.
ModelConfig read_hub_config(const std::string& config_json);

/// The most parameter memory (bytes) a loaded model may take in this build, all its
/// allocations together (Parameters: the float32 values, and the 16-bit chunks, each within
/// kMaxAllocationBytes). In wasm 3 GiB: the heap may grow to 4 GiB (-sMAXIMUM_MEMORY), a trace
/// or a run may allocate up to kMaxTrainingBytes (768 MiB) beyond the parameters, and 256 MiB
/// are left for the module, the tokenizer, the loader's staging and the KV cache. Measured with
/// a Llama-3.2-1B-shaped BF16 checkpoint (2,471,763,968 bytes of parameters) in Chromium and
/// Node: the heap is 2,578,120,704 bytes after the load (106 MB beside the parameters, the same
/// with Llama 3's real 9 MB tokenizer.json), and the same after a trace and a generated token
/// at T = 16; a trace at T = 512 grows it by 483 MB (docs/performance.md, "Modern decoders").
/// A float32 model's values are one allocation: parameter_limit(). Natively a policy: 3 GiB,
/// a model a laptop runs beside its traces.
#ifdef __EMSCRIPTEN__
inline constexpr std::uint64_t kMaxParameterBytes =
    (std::uint64_t{4} << 30) - static_cast<std::uint64_t>(kMaxTrainingBytes) - (std::uint64_t{256} << 20);
static_assert(kMaxParameterBytes == std::uint64_t{3} << 30, "3 GiB");
#else
inline constexpr std::uint64_t kMaxParameterBytes = std::uint64_t{3} << 30;
#endif

/// The limit of a model whose large tensors are held as `format`: kMaxParameterBytes, and a
/// float32 model's values are one allocation: at most kMaxAllocationBytes (in wasm 2 GiB − 64
/// MiB; GPT-2 medium's 1.4 GB fits, large's 3.1 GB does not).
constexpr std::uint64_t parameter_limit(WeightFormat format) {
    return format == WeightFormat::f32 && kMaxAllocationBytes < kMaxParameterBytes ? kMaxAllocationBytes : kMaxParameterBytes;
}

/// Float32 bytes of a config's parameters (parameter_layout), counted in 64 bits
/// (the largest configs the inference limits allow pass 2³² floats).
std::uint64_t parameter_bytes(const ModelConfig& config);

/// What config.json alone says of a model's size, before anything else is downloaded.
struct HubSizeCheck {
    /// Bytes of the smallest model the config allows, held as `format` says: without the parts
    /// only the weights file can add (an output layer of its own, BERT's masked-LM head).
    std::uint64_t parameter_bytes = 0;
    /// With every part a weights file can add (the size the safetensors header may show).
    std::uint64_t largest_bytes = 0;
    /// parameter_limit(format).
    std::uint64_t limit_bytes = kMaxParameterBytes;
    /// The format the large tensors were counted in (the rest is float32).
    WeightFormat format = WeightFormat::f32;
    /// parameter_bytes ≤ limit_bytes, and no tensor above one allocation (allocation_refusal).
    /// False: refuse before downloading anything. True: the safetensors header decides
    /// (HubLoader, when largest_bytes is above the limit).
    bool fits = false;
    /// When it does not fit: the too_large message HubLoader would throw.
    std::string refusal;
};

/// The weights' type config.json declares: "dtype" (transformers 5) or "torch_dtype" (before
/// it); "bfloat16" / "float16" → bf16 / f16, anything else or nothing → f32 (the larger count).
/// A 16-bit file stays 16-bit in memory (HubLoader's keep_16bit), so that is what it costs.
WeightFormat declared_weight_format(const std::string& config_json);

/// The size verdict of a config that read_hub_config returned, its large tensors held in
/// `format` (declared_weight_format; the safetensors header then decides what is really held).
HubSizeCheck check_hub_size(const ModelConfig& config, WeightFormat format = WeightFormat::f32);

/// A model's vocabulary may be larger than its tokenizer's (nanoGPT pads GPT-2's 50257 pieces
/// to 50304 ids; a BERT vocab.txt may be shorter than vocab_size): the ids from the
/// tokenizer's size on are padding, valid logits with no text. Everything that shows a
/// model's token asks these rather than the tokenizer: a padding id is "<pad ID>" and decodes
/// to nothing.
inline bool is_padding_id(const PretrainedTokenizer& tokenizer, std::int32_t id) { return id >= tokenizer.vocab_size(); }
/// The vocabulary's piece of `id`, or "<pad ID>" for a padding id.
inline std::string token_piece(const PretrainedTokenizer& tokenizer, std::int32_t id) {
    return is_padding_id(tokenizer, id) ? "<pad " + std::to_string(id) + ">" : tokenizer.piece(id);
}
/// The text of `id` alone (decode), or "" for a padding id.
inline std::string token_text(const PretrainedTokenizer& tokenizer, std::int32_t id) {
    return is_padding_id(tokenizer, id) ? std::string() : tokenizer.decode({id});
}

/// One contiguous byte range of the safetensors file that the loader needs.
struct ByteRange {
    std::uint64_t begin = 0, end = 0;  ///< absolute file offsets
};

/// Streams a Hub safetensors file into a Model without a second copy of the
/// file: give it the header, then feed the file's bytes in any chunk sizes, in
/// increasing offset order, covering needed() (bytes outside it are skipped:
/// attn.bias buffers, the pooler). Converts F32 / F16 / BF16 and the Hub's
/// layouts (Conv1D [in,out]; nn.Linear [out,in] transposed; c_attn split into
/// q|k|v) into the canonical names above, and fills the model's parameters.
/// Which tensors, and how each lies, is the config's family's plan (Family::plan).
class HubLoader {
public:
    /// `header`: at least the first 8 + N bytes of the file; `file_size`: the whole
    /// file's bytes (a header that describes more data than that is refused). Checks every
    /// tensor the config needs is present with the right shape and a supported
    /// dtype, naming prefixes ("transformer.", "bert.") and legacy names
    /// (LayerNorm.gamma/beta) it accepts, and the parameters' size against
    /// parameter_limit() and each allocation's against kMaxAllocationBytes (allocation_refusal);
    /// only then allocates them. Throws attn::Error (bad_checkpoint,
    /// too_large, out_of_memory) naming the tensor, its shape and the config's.
    ///
    /// An F16 or BF16 file (every matrix in one of them) stays 16-bit in memory when
    /// `keep_16bit`: the product matrices, the token embedding and the unembedding are
    /// stored as its 16-bit values (Parameters(config, format): half the memory, the same
    /// numbers); without it, or for any other file, everything is float32. `chunk_bytes`: the
    /// 16-bit chunks' size (Parameters), kHalfChunkBytes but in tests.
    HubLoader(const ModelConfig& config, const std::string& header, std::uint64_t file_size, bool keep_16bit = true,
              std::size_t chunk_bytes = kHalfChunkBytes);
    ~HubLoader();
    /// The constructor's checks without its allocation: throws what it would throw before
    /// allocating. For a header read alone (a range request) before the file is downloaded.
    static void check(const ModelConfig& config, const std::string& header, std::uint64_t file_size, bool keep_16bit = true);
    /// Bytes of the safetensors header (8 + N), known from the first 8 bytes;
    /// throws bad_checkpoint when fewer than 8 bytes or N is too large.
    static std::uint64_t header_size(const std::string& first8);
    const std::vector<ByteRange>& needed() const;
    std::uint64_t needed_bytes() const;
    /// How the large tensors are stored: f32, or the file's 16-bit format.
    WeightFormat storage() const;
    /// Bytes the model's parameters take (allocated by the constructor).
    std::uint64_t parameter_bytes() const;
    /// How many 16-bit chunks (allocations) hold them (0 when everything is float32).
    std::size_t half_chunks() const;
    /// The next chunk: `size` bytes at file offset `offset`.
    void feed(std::uint64_t offset, const std::uint8_t* data, std::size_t size);
    std::uint64_t fed_bytes() const;
    /// Throws bad_checkpoint if a needed byte was not fed; returns the model
    /// (parameters only; no gradients or optimizer state are allocated).
    std::unique_ptr<Model> finish();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace attn
