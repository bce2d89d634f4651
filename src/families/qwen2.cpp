// Qwen2 and Qwen2.5 (transformers' Qwen2Config, Qwen2ForCausalLM): the rotary decoder
// (rotary_decoder.hpp) with biases on q, k and v, none on o; a byte-level BPE after
// Qwen2's Split pattern.

#include "families/rotary_decoder.hpp"

namespace attn {
namespace qwen2 {  // (named: the unity build compiles the families into one file)
namespace {

void read_config(const HubConfigFields& json, ModelConfig& c) {
    RotaryDecoder shape;
    shape.qkv_bias = true;
    read_rotary_config(json, c, shape);
}

}  // namespace
}  // namespace qwen2

const Family& qwen2_family() {
    static const Family family = [] {
        Family f = rotary_family();
        f.name = "qwen2";
        f.title = "Qwen2";
        f.architectures = {"Qwen2ForCausalLM"};
        f.model_types = {"qwen2"};
        f.read_config = qwen2::read_config;
        f.tokenizer = TokenizerKind::split_bpe;
        return f;
    }();
    return family;
}

}  // namespace attn
