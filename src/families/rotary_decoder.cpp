// The Llama-shaped decoder's config and tensors (rotary_decoder.hpp). Sources: transformers'
// modeling_llama.py, modeling_qwen2.py, modeling_qwen3.py and modeling_rope_utils.py
// (the configs' defaults; "llama3" scaling); ../shared/docs/modern.md has the formulas.

#include "families/rotary_decoder.hpp"

#include <cmath>

namespace attn {
namespace rotary {  // (named: the unity build compiles the families into one file)
namespace {

/// A positive finite number `key`, or `fallback` when absent.
double positive(const JsonValue& root, const std::string& key, double fallback, const std::string& where) {
    const JsonValue* v = root.get(key);
    if (!v || v->is(JsonValue::Type::null)) return fallback;
    if (!v->is(JsonValue::Type::number) || !(v->number > 0) || !std::isfinite(v->number))
        HubConfigFields::fail(where + "\"" + key + "\" must be a number above 0");
    return v->number;
}

/// RoPE's base and scaling: rope_theta and rope_scaling, or transformers 5's rope_parameters
/// (one dictionary holding rope_theta, rope_type and the scaling's fields).
void read_rope(const HubConfigFields& json, ModelConfig& c) {
    const JsonValue& root = json.root();
    const JsonValue* params = root.get("rope_parameters");
    const bool v5 = params && !params->is(JsonValue::Type::null);
    if (v5 && !params->is(JsonValue::Type::object)) json.fail("\"rope_parameters\" must be an object");
    c.rope_base = v5 ? positive(*params, "rope_theta", positive(root, "rope_theta", 10000, ""), "rope_parameters: ")
                     : positive(root, "rope_theta", 10000, "");
    const JsonValue* scaling = v5 ? params : root.get("rope_scaling");
    const std::string where = v5 ? "rope_parameters: " : "rope_scaling: ";
    if (!scaling || scaling->is(JsonValue::Type::null)) return;
    if (!scaling->is(JsonValue::Type::object)) json.fail("\"rope_scaling\" must be an object or null");
    // "rope_type" (older configs: "type"); absent or "default": no scaling
    std::string type = "default";
    for (const char* key : {"rope_type", "type"})
        if (const JsonValue* t = scaling->get(key); t && !t->is(JsonValue::Type::null)) {
            if (!t->is(JsonValue::Type::string)) json.fail(where + "\"" + key + "\" must be a string");
            type = t->string;
            break;
        }
    if (type == "default") return;
    if (type != "llama3")
        json.fail(where + "the RoPE scaling \"" + type +
                  "\" is not supported: this engine runs unscaled RoPE and Llama 3's \"llama3\" scaling");
    c.rope_scaling = RopeScaling::llama3;
    c.rope_factor = positive(*scaling, "factor", 8, where);
    c.rope_low_freq_factor = positive(*scaling, "low_freq_factor", 1, where);
    c.rope_high_freq_factor = positive(*scaling, "high_freq_factor", 4, where);
    if (!(c.rope_high_freq_factor > c.rope_low_freq_factor))
        json.fail(where + "\"high_freq_factor\" must be above \"low_freq_factor\"");
    const double original = positive(*scaling, "original_max_position_embeddings", 8192, where);
    if (original != std::floor(original) || original > 1e9)
        json.fail(where + "\"original_max_position_embeddings\" must be a whole number");
    c.rope_original_context = static_cast<int>(original);
}

}  // namespace
}  // namespace rotary

void read_rotary_config(const HubConfigFields& json, ModelConfig& c, const RotaryDecoder& shape) {
    c.layers = json.integer("num_hidden_layers", 1, kMaxInferenceLayers);
    c.d_model = json.integer("hidden_size", 1, kMaxInferenceDModel);
    c.heads = json.integer("num_attention_heads", 1, kMaxInferenceDModel);
    c.kv_heads = json.integer("num_key_value_heads", 1, c.heads, c.heads);
    if (c.heads % c.kv_heads != 0)
        json.fail(std::to_string(c.heads) + " attention heads cannot share " + std::to_string(c.kv_heads) +
                  " key/value heads evenly (num_key_value_heads must divide num_attention_heads)");
    // head_dim: 0 (hidden_size / heads) unless the config says (Qwen3's differs)
    c.head_dim = json.has("head_dim") ? json.integer("head_dim", 1, kMaxInferenceDModel) : 0;
    if (c.head_dim == 0 && c.d_model % c.heads != 0)
        json.fail("the width " + std::to_string(c.d_model) + " is not divisible by " + std::to_string(c.heads) +
                  " heads, and there is no \"head_dim\"");
    if (head_dim_of(c) % 2 != 0)
        json.fail("\"head_dim\" is " + std::to_string(head_dim_of(c)) + "; RoPE turns pairs of values: it must be even");
    c.mlp = json.integer("intermediate_size", 1, kMaxInferenceMlp);
    c.vocab = json.integer("vocab_size", 2, kMaxInferenceVocab);
    // the longest input: max_position_embeddings (RoPE has no table, so a longer limit than
    // the engine's is only that: the engine's limit applies)
    const int positions = json.integer("max_position_embeddings", 1, 1LL << 30, 2048);
    c.context = positions < kMaxInferenceContext ? positions : kMaxInferenceContext;
    c.ln_eps = json.epsilon("rms_norm_eps", 1e-6);
    const std::string act = json.text("hidden_act", "silu");
    if (act != "silu" && act != "swish")
        json.fail("\"hidden_act\" is \"" + act + "\"; this engine runs the SwiGLU MLP with silu");
    c.activation = Activation::silu;
    for (const char* window : {"use_sliding_window", "use_sliding_windows"})
        if (json.flag(window, false))
            json.fail(std::string("\"") + window + "\": true is not supported (every layer attends to the whole text)");
    if (json.flag("rope_interleaved", false))
        json.fail("\"rope_interleaved\": true (pairs 2i, 2i + 1, Meta's layout) is not supported: this engine pairs "
                  "i with i + head_dim / 2, as the Hub's converted checkpoints do");
    c.tied = json.flag("tie_word_embeddings", false);
    rotary::read_rope(json, c);

    c.norm = Norm::pre;
    c.layernorm = true;
    c.rmsnorm = true;
    c.positional = Positional::rope;
    c.causal = true;
    c.scale = true;
    c.gated_mlp = true;
    c.mlp_bias = shape.mlp_bias_field && json.flag("mlp_bias", false);
    c.qkv_bias = shape.qkv_bias;
    c.attn_bias = !shape.qkv_bias && json.flag("attention_bias", false);
    c.qk_norm = shape.qk_norm;
}

namespace rotary {
namespace {

std::string read_file(const HubTensors&, ModelConfig&) { return "model."; }

void plan(const ModelConfig& config, HubTensors& file) {
    const std::int64_t V = config.vocab, C = config.d_model, F = config.mlp;
    const std::int64_t D = head_dim_of(config), Q = config.heads * D, KV = kv_heads_of(config) * D;
    file.sizes("vocab_size " + std::to_string(V) + ", hidden_size " + std::to_string(C) + ", " +
               std::to_string(config.heads) + " heads and " + std::to_string(kv_heads_of(config)) +
               " key/value heads of head_dim " + std::to_string(D) + ", intermediate_size " + std::to_string(F));
    const HubLayout same = HubLayout::same, linear = HubLayout::transposed;  // nn.Linear: [out, in]
    const std::string layers = "num_hidden_layers " + std::to_string(config.layers);
    file.need("embed_tokens.weight", {V, C}, {"embed"}, same, "the token embedding");
    for (int l = 0; l < config.layers; ++l) {
        const std::string h = "layers." + std::to_string(l) + ".", ours = "layers." + std::to_string(l) + ".";
        const std::string why = "layer " + std::to_string(l) + " (" + layers + ")";
        const std::string a = h + "self_attn.";
        file.need(h + "input_layernorm.weight", {C}, {ours + "ln1.gain"}, same, why);
        file.need(a + "q_proj.weight", {Q, C}, {ours + "w_query"}, linear, why);
        file.need(a + "k_proj.weight", {KV, C}, {ours + "w_key"}, linear, why);
        file.need(a + "v_proj.weight", {KV, C}, {ours + "w_value"}, linear, why);
        file.need(a + "o_proj.weight", {C, Q}, {ours + "w_output"}, linear, why);
        if (qkv_biased(config)) {
            file.need(a + "q_proj.bias", {Q}, {ours + "b_query"}, same, why);
            file.need(a + "k_proj.bias", {KV}, {ours + "b_key"}, same, why);
            file.need(a + "v_proj.bias", {KV}, {ours + "b_value"}, same, why);
        }
        if (config.attn_bias) file.need(a + "o_proj.bias", {C}, {ours + "b_output"}, same, why);
        if (config.qk_norm) {
            file.need(a + "q_norm.weight", {D}, {ours + "q_norm.gain"}, same, why);
            file.need(a + "k_norm.weight", {D}, {ours + "k_norm.gain"}, same, why);
        }
        file.need(h + "post_attention_layernorm.weight", {C}, {ours + "ln2.gain"}, same, why);
        file.need(h + "mlp.gate_proj.weight", {F, C}, {ours + "mlp.w_gate"}, linear, why);
        file.need(h + "mlp.up_proj.weight", {F, C}, {ours + "mlp.w_in"}, linear, why);
        file.need(h + "mlp.down_proj.weight", {C, F}, {ours + "mlp.w_out"}, linear, why);
        if (config.mlp_bias) {
            file.need(h + "mlp.gate_proj.bias", {F}, {ours + "mlp.b_gate"}, same, why);
            file.need(h + "mlp.up_proj.bias", {F}, {ours + "mlp.b_in"}, same, why);
            file.need(h + "mlp.down_proj.bias", {C}, {ours + "mlp.b_out"}, same, why);
        }
    }
    file.need("norm.weight", {C}, {"final_ln.gain"}, same, "the final RMSNorm");
    if (!config.tied) file.need("lm_head.weight", {V, C}, {"unembed"}, linear, "the output layer", true);
}

}  // namespace
}  // namespace rotary

Family rotary_family() {
    Family f;
    f.read_file = rotary::read_file;
    f.plan = rotary::plan;
    f.tokenizer_needs = "tokenizer.json";
    f.generates = true;
    f.predictions = "likeliest next tokens";
    f.learn_target = "the next token";
    return f;
}

}  // namespace attn
