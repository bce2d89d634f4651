// Llama (transformers' LlamaConfig, LlamaForCausalLM): the rotary decoder as it is
// (rotary_decoder.hpp). Its checkpoints' tokenizers differ: Llama 3's is a byte-level BPE
// after a Split pattern, SmolLM2's GPT-2's, TinyLlama's (Llama 2's) a SentencePiece BPE.

#include "families/rotary_decoder.hpp"

namespace attn {
namespace llama {  // (named: the unity build compiles the families into one file)
namespace {

void read_config(const HubConfigFields& json, ModelConfig& c) {
    RotaryDecoder shape;
    shape.mlp_bias_field = true;
    read_rotary_config(json, c, shape);
}

}  // namespace
}  // namespace llama

const Family& llama_family() {
    static const Family family = [] {
        Family f = rotary_family();
        f.name = "llama";
        f.title = "Llama";
        f.architectures = {"LlamaForCausalLM"};
        f.model_types = {"llama"};
        f.read_config = llama::read_config;
        f.tokenizer = TokenizerKind::any_bpe;
        return f;
    }();
    return family;
}

}  // namespace attn
