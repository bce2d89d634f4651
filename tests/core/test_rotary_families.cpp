// The families built on Llama's block (src/families/rotary_decoder.cpp: llama, qwen2,
// qwen3): config.json → ModelConfig with transformers' defaults, both spellings of RoPE's
// settings (rope_theta / rope_scaling, and transformers 5's rope_parameters), and every
// setting the engine cannot run refused by name. The forward on these configs is checked
// against the float64 reference in test_hub.cpp (golden.json); the layer kinds in
// test_layer_kinds.cpp.

#include "checkpoints/pretrained.hpp"
#include "families/family.hpp"
#include "matchers.hpp"

#include <catch2/catch.hpp>

#include <string>

using Catch::Matchers::Contains;
using attn::ModelConfig;

namespace {

// HuggingFaceTB/SmolLM2-135M's config.json on the Hub (transformers 4.42), abridged to
// the fields the reader looks at and a few it ignores
const char* kSmolLM2 = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "silu", "hidden_size": 576,
  "initializer_range": 0.041666666666666664, "intermediate_size": 1536, "is_llama_config": true,
  "max_position_embeddings": 8192, "mlp_bias": false, "model_type": "llama", "num_attention_heads": 9,
  "num_hidden_layers": 30, "num_key_value_heads": 3, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
  "rope_interleaved": false, "rope_scaling": null, "rope_theta": 100000, "tie_word_embeddings": true,
  "torch_dtype": "bfloat16", "transformers_version": "4.42.3", "use_cache": true, "vocab_size": 49152})";

std::string llama_with(const std::string& extra) {
    return R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
               "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2,
               "intermediate_size": 96, "vocab_size": 100)" + extra + "}";
}

std::string refusal(const std::string& config) {
    return testing::message_of([&] { attn::read_hub_config(config); });
}

}  // namespace

TEST_CASE("rotary families: a Llama config becomes a pre-RMSNorm, RoPE, GQA, SwiGLU, causal model", "[families][rotary]") {
    const ModelConfig c = attn::read_hub_config(kSmolLM2);
    CHECK(c.family == "llama");
    CHECK(c.layers == 30);
    CHECK(c.d_model == 576);
    CHECK(c.heads == 9);
    CHECK(attn::kv_heads_of(c) == 3);
    CHECK(attn::head_dim_of(c) == 64);
    CHECK(c.mlp == 1536);
    CHECK(c.vocab == 49152);
    CHECK(c.ln_eps == 1e-5f);
    CHECK(c.rope_base == 100000);
    CHECK(c.rope_scaling == attn::RopeScaling::none);
    CHECK(c.tied);
    CHECK(c.causal);
    CHECK(c.norm == attn::Norm::pre);
    CHECK(c.layernorm);
    CHECK(c.rmsnorm);
    CHECK(c.gated_mlp);
    CHECK_FALSE(c.mlp_bias);
    CHECK(c.activation == attn::Activation::silu);
    CHECK(c.positional == attn::Positional::rope);
    CHECK_FALSE(c.attn_bias);
    CHECK_FALSE(c.qkv_bias);
    CHECK_FALSE(c.qk_norm);
    CHECK(c.context == std::min(8192, attn::kMaxInferenceContext));
}

TEST_CASE("rotary families: transformers' defaults where a Llama config is silent", "[families][rotary]") {
    const ModelConfig c = attn::read_hub_config(llama_with(""));
    CHECK(c.rope_base == 10000);
    CHECK(c.ln_eps == 1e-6f);
    CHECK_FALSE(c.tied);
    CHECK(attn::head_dim_of(c) == 8);
    CHECK(attn::kv_heads_of(c) == 2);
    // no num_key_value_heads: one K/V head per query head
    const ModelConfig mha = attn::read_hub_config(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1,
        "num_attention_heads": 8, "intermediate_size": 96, "vocab_size": 100})");
    CHECK(attn::kv_heads_of(mha) == 8);
    // attention_bias: biases on q, k, v and o (Llama's o_proj has one too)
    const ModelConfig biased = attn::read_hub_config(llama_with(R"(, "attention_bias": true, "mlp_bias": true)"));
    CHECK(biased.attn_bias);
    CHECK_FALSE(biased.qkv_bias);
    CHECK(biased.mlp_bias);
}

TEST_CASE("rotary families: Qwen2 has q, k, v biases without o's, and Qwen3 has q/k norms and its own head_dim", "[families][rotary]") {
    const ModelConfig q2 = attn::read_hub_config(R"({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
        "hidden_size": 896, "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,
        "intermediate_size": 4864, "vocab_size": 151936, "max_window_layers": 21, "sliding_window": 32768,
        "use_sliding_window": false, "rope_theta": 1000000.0, "rope_scaling": null, "tie_word_embeddings": true,
        "rms_norm_eps": 1e-06, "hidden_act": "silu", "max_position_embeddings": 32768})");
    CHECK(q2.family == "qwen2");
    CHECK(q2.qkv_bias);
    CHECK_FALSE(q2.attn_bias);
    CHECK(attn::qkv_biased(q2));
    CHECK(attn::head_dim_of(q2) == 64);
    CHECK(attn::kv_heads_of(q2) == 2);
    CHECK(q2.rope_base == 1000000);
    const ModelConfig q3 = attn::read_hub_config(R"({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
        "hidden_size": 1024, "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8,
        "head_dim": 128, "attention_bias": false, "intermediate_size": 3072, "vocab_size": 151936,
        "rope_theta": 1000000, "rope_scaling": null, "sliding_window": null, "use_sliding_window": false,
        "tie_word_embeddings": true, "rms_norm_eps": 1e-06, "hidden_act": "silu", "max_position_embeddings": 40960})");
    CHECK(q3.family == "qwen3");
    CHECK(q3.qk_norm);
    CHECK_FALSE(q3.qkv_bias);
    CHECK_FALSE(q3.attn_bias);
    CHECK(attn::head_dim_of(q3) == 128);  // not 1024 / 16
}

TEST_CASE("rotary families: RoPE's settings read the same in both spellings, with Llama 3's scaling", "[families][rotary]") {
    const ModelConfig old = attn::read_hub_config(llama_with(R"(, "rope_theta": 500000.0, "torch_dtype": "bfloat16",
        "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"})"));
    const ModelConfig v5 = attn::read_hub_config(llama_with(R"(, "dtype": "bfloat16",
        "rope_parameters": {"rope_theta": 500000.0, "factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                            "original_max_position_embeddings": 8192, "rope_type": "llama3"})"));
    for (const ModelConfig* c : {&old, &v5}) {
        CHECK(c->rope_base == 500000);
        CHECK(c->rope_scaling == attn::RopeScaling::llama3);
        CHECK(c->rope_factor == 32);
        CHECK(c->rope_low_freq_factor == 1);
        CHECK(c->rope_high_freq_factor == 4);
        CHECK(c->rope_original_context == 8192);
    }
    // the older key "type", and "default" as no scaling, in either place
    CHECK(attn::read_hub_config(llama_with(R"(, "rope_scaling": {"type": "llama3", "factor": 8.0,
        "original_max_position_embeddings": 2048})")).rope_scaling == attn::RopeScaling::llama3);
    CHECK(attn::read_hub_config(llama_with(R"(, "rope_parameters": {"rope_type": "default", "rope_theta": 7.0})")).rope_scaling ==
          attn::RopeScaling::none);
    CHECK(attn::read_hub_config(llama_with(R"(, "rope_parameters": {"rope_type": "default", "rope_theta": 7.0})")).rope_base == 7);
}

TEST_CASE("rotary families: what the engine cannot run is refused by name", "[families][rotary]") {
    CHECK_THAT(refusal(llama_with(R"(, "rope_scaling": {"rope_type": "yarn", "factor": 4.0})")),
               Contains("the RoPE scaling \"yarn\" is not supported") && Contains("\"llama3\""));
    CHECK_THAT(refusal(llama_with(R"(, "rope_parameters": {"rope_type": "dynamic", "rope_theta": 10000.0})")),
               Contains("rope_parameters: the RoPE scaling \"dynamic\" is not supported"));
    CHECK_THAT(refusal(llama_with(R"(, "rope_scaling": {"rope_type": "llama3", "low_freq_factor": 4.0, "high_freq_factor": 1.0})")),
               Contains("\"high_freq_factor\" must be above \"low_freq_factor\""));
    CHECK_THAT(refusal(llama_with(R"(, "rope_theta": -1)")), Contains("\"rope_theta\" must be a number above 0"));
    CHECK_THAT(refusal(llama_with(R"(, "rope_scaling": 3)")), Contains("\"rope_scaling\" must be an object or null"));
    CHECK_THAT(refusal(llama_with(R"(, "rope_interleaved": true)")), Contains("\"rope_interleaved\": true"));
    CHECK_THAT(refusal(llama_with(R"(, "hidden_act": "gelu")")), Contains("\"hidden_act\" is \"gelu\""));
    CHECK_THAT(refusal(R"({"model_type": "qwen2", "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 8,
        "intermediate_size": 96, "vocab_size": 100, "use_sliding_window": true})"),
               Contains("\"use_sliding_window\": true is not supported"));
    CHECK_THAT(refusal(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 8,
        "num_key_value_heads": 3, "intermediate_size": 96, "vocab_size": 100})"),
               Contains("8 attention heads cannot share 3 key/value heads evenly"));
    CHECK_THAT(refusal(llama_with(R"(, "head_dim": 7)")), Contains("\"head_dim\" is 7") && Contains("even"));
    for (const char* name : {"MistralForCausalLM", "GemmaForCausalLM", "Phi3ForCausalLM"})
        CHECK_THAT(refusal(std::string(R"({"architectures": [")") + name + "\"]}"), Contains(std::string(name) + " is not supported"));
}
