#pragma once
// The decoder block of Llama and the families built like it (Qwen2, Qwen3, SmolLM2 and
// TinyLlama are Llama's): pre-RMSNorm, rotary positions, grouped-query attention, a
// SwiGLU MLP, causal; nn.Linear weights ([out, in]) under "model.", lm_head.weight
// unless the output layer is tied to the token embedding. What differs between them is
// a RotaryDecoder's few switches; each family's file (llama.cpp, qwen2.cpp, qwen3.cpp)
// sets them and reads its config through read_rotary_config.

#include "families/family.hpp"

namespace attn {

/// What a family built on Llama's block changes in it.
struct RotaryDecoder {
    /// Biases on q, k and v and none on o, always (Qwen2): its config says nothing. Otherwise
    /// "attention_bias" puts a bias on all four (Llama, Qwen3).
    bool qkv_bias = false;
    /// Each head's q and k RMSNormed over its D values before RoPE (Qwen3: q_norm, k_norm).
    bool qk_norm = false;
    /// The config may say "mlp_bias" (Llama).
    bool mlp_bias_field = false;
};

/// config.json's fields of a Llama-shaped model → `c` (hidden_size, heads and key/value heads,
/// head_dim, intermediate_size, rms_norm_eps, tie_word_embeddings, RoPE's base and scaling in
/// either spelling: rope_theta / rope_scaling, or transformers 5's rope_parameters), refusing by
/// name what the engine cannot run (another activation, a sliding window, another RoPE scaling).
void read_rotary_config(const HubConfigFields& json, ModelConfig& c, const RotaryDecoder& shape);

/// A family built on the rotary decoder with what they all share filled in: the file's prefix
/// ("model."), the tensor plan, tokenizer.json, generating, and their words. The family's file
/// sets its names, its read_config (through read_rotary_config) and its tokenizer kind.
Family rotary_family();

}  // namespace attn
