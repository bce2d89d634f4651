// Qwen3 (transformers' Qwen3Config, Qwen3ForCausalLM): the rotary decoder
// (rotary_decoder.hpp) with each head's q and k RMSNormed before RoPE (q_norm, k_norm),
// and a head_dim that need not be hidden_size / heads; Qwen2's tokenizer.

#include "families/rotary_decoder.hpp"

namespace attn {
namespace qwen3 {  // (named: the unity build compiles the families into one file)
namespace {

void read_config(const HubConfigFields& json, ModelConfig& c) {
    RotaryDecoder shape;
    shape.qk_norm = true;
    read_rotary_config(json, c, shape);
}

}  // namespace
}  // namespace qwen3

const Family& qwen3_family() {
    static const Family family = [] {
        Family f = rotary_family();
        f.name = "qwen3";
        f.title = "Qwen3";
        f.architectures = {"Qwen3ForCausalLM"};
        f.model_types = {"qwen3"};
        f.read_config = qwen3::read_config;
        f.tokenizer = TokenizerKind::split_bpe;
        return f;
    }();
    return family;
}

}  // namespace attn
