// read_hub_config (pretrained.hpp): a Hugging Face config.json of the GPT-2 or
// BERT family → our ModelConfig. The fields and their defaults are those of
// transformers' GPT2Config and BertConfig; anything this engine cannot run
// (another architecture, relative positions, unscaled attention) is refused by
// name rather than run wrongly.

#include "base/json_value.hpp"
#include "checkpoints/pretrained.hpp"

#include <string>

namespace attn {
namespace {

[[noreturn]] void fail(const std::string& message) {
    throw Error(Error::Code::bad_checkpoint, "config.json: " + message);
}

const char* kSupported = "this page runs GPT-2 and BERT models (GPT2LMHeadModel, GPT2Model, BertForMaskedLM, "
                         "BertForPreTraining, BertModel)";

/// The integer field `key` in [lo, hi]; `fallback` when absent (or null) unless it is < lo (required).
int integer(const JsonValue& root, const std::string& key, long long lo, long long hi, long long fallback = -1) {
    const JsonValue* v = root.get(key);
    if (!v || v->is(JsonValue::Type::null)) {
        if (fallback < lo) fail("the field \"" + key + "\" is missing");
        return static_cast<int>(fallback);
    }
    if (!v->is(JsonValue::Type::number) || !v->is_integer)
        fail("\"" + key + "\" must be a whole number");
    if (v->integer < lo || v->integer > hi)
        fail("\"" + key + "\" is " + std::to_string(v->integer) + "; this engine runs " + std::to_string(lo) + " to " +
             std::to_string(hi));
    return static_cast<int>(v->integer);
}

float epsilon(const JsonValue& root, const std::string& key, double fallback) {
    const JsonValue* v = root.get(key);
    if (!v || v->is(JsonValue::Type::null)) return static_cast<float>(fallback);
    if (!v->is(JsonValue::Type::number) || !(v->number > 0) || v->number > 1)
        fail("\"" + key + "\" must be a number above 0 and at most 1");
    return static_cast<float>(v->number);
}

std::string text(const JsonValue& root, const std::string& key, const std::string& fallback) {
    const JsonValue* v = root.get(key);
    if (!v || v->is(JsonValue::Type::null)) return fallback;
    if (!v->is(JsonValue::Type::string)) fail("\"" + key + "\" must be a string");
    return v->string;
}

bool flag(const JsonValue& root, const std::string& key, bool fallback) {
    const JsonValue* v = root.get(key);
    if (!v || v->is(JsonValue::Type::null)) return fallback;
    if (!v->is(JsonValue::Type::boolean)) fail("\"" + key + "\" must be true or false");
    return v->boolean;
}

Activation activation(const std::string& key, const std::string& name) {
    // transformers' ACT2FN: "gelu" is the exact erf form; gelu_new, gelu_pytorch_tanh and
    // gelu_fast are the tanh approximation (gelu_fast: the same formula, factored)
    if (name == "gelu") return Activation::gelu_erf;
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::gelu_tanh;
    fail("\"" + key + "\" is \"" + name + "\"; this engine runs gelu (erf) and gelu_new (tanh)");
}

/// The family from model_type, else from the first architecture; refuses others by name.
std::string family_of(const JsonValue& root) {
    std::string arch;
    if (const JsonValue* a = root.get("architectures")) {
        if (!a->is(JsonValue::Type::null)) {
            if (!a->is(JsonValue::Type::array)) fail("\"architectures\" must be a list of names");
            for (const JsonValue& n : a->array) {
                if (!n.is(JsonValue::Type::string)) fail("\"architectures\" must be a list of names");
                const std::string& s = n.string;
                const bool known = s == "GPT2LMHeadModel" || s == "GPT2Model" || s == "BertForMaskedLM" ||
                                   s == "BertForPreTraining" || s == "BertModel";
                if (!known) fail(s + " is not supported: " + kSupported);
                if (arch.empty()) arch = s;
            }
        }
    }
    const std::string type = text(root, "model_type", "");
    const std::string from_arch = arch.empty() ? "" : arch.rfind("GPT2", 0) == 0 ? "gpt2" : "bert";
    if (type.empty()) {
        if (from_arch.empty()) fail("has neither \"model_type\" nor \"architectures\": " + std::string(kSupported));
        return from_arch;
    }
    if (type != "gpt2" && type != "bert") fail("model_type \"" + type + "\" is not supported: " + kSupported);
    if (!from_arch.empty() && from_arch != type)
        fail("model_type \"" + type + "\" does not match the architecture " + arch);
    return type;
}

}  // namespace

ModelConfig read_hub_config(const std::string& config_json) {
    JsonOptions o;
    o.prefix = "config.json: ";
    o.code = Error::Code::bad_checkpoint;
    const JsonValue root = parse_json(config_json, o);
    if (!root.is(JsonValue::Type::object)) fail("is not a JSON object");

    ModelConfig c;
    c.family = family_of(root);
    c.layernorm = true;
    c.positional = Positional::learned;
    c.scale = true;
    c.attn_bias = true;
    if (c.family == "gpt2") {
        c.layers = integer(root, "n_layer", 1, kMaxInferenceLayers);
        c.heads = integer(root, "n_head", 1, kMaxInferenceDModel);
        c.d_model = integer(root, "n_embd", 1, kMaxInferenceDModel);
        const JsonValue* positions = root.get("n_positions");
        const bool old = (!positions || positions->is(JsonValue::Type::null)) && root.get("n_ctx");  // configs before n_positions
        c.context = integer(root, old ? "n_ctx" : "n_positions", 1, kMaxInferenceContext);
        c.vocab = integer(root, "vocab_size", 2, kMaxInferenceVocab);
        c.ln_eps = epsilon(root, "layer_norm_epsilon", 1e-5);
        c.activation = activation("activation_function", text(root, "activation_function", "gelu_new"));
        c.mlp = integer(root, "n_inner", 1, kMaxInferenceMlp, 4LL * c.d_model);
        if (c.mlp > kMaxInferenceMlp)
            fail("4 × n_embd = " + std::to_string(c.mlp) + " (n_inner null) is above the limit of " +
                 std::to_string(kMaxInferenceMlp));
        if (!flag(root, "scale_attn_weights", true)) fail("\"scale_attn_weights\": false is not supported");
        if (flag(root, "scale_attn_by_inverse_layer_idx", false))
            fail("\"scale_attn_by_inverse_layer_idx\": true is not supported");
        if (flag(root, "add_cross_attention", false)) fail("\"add_cross_attention\": true is not supported");
        c.norm = Norm::pre;
        c.causal = true;
        c.tied = true;  // the loader unties it when the file has lm_head.weight
    } else {
        c.layers = integer(root, "num_hidden_layers", 1, kMaxInferenceLayers);
        c.heads = integer(root, "num_attention_heads", 1, kMaxInferenceDModel);
        c.d_model = integer(root, "hidden_size", 1, kMaxInferenceDModel);
        c.mlp = integer(root, "intermediate_size", 1, kMaxInferenceMlp);
        c.context = integer(root, "max_position_embeddings", 1, kMaxInferenceContext);
        c.vocab = integer(root, "vocab_size", 2, kMaxInferenceVocab);
        c.token_types = integer(root, "type_vocab_size", 1, 1024, 2);
        c.ln_eps = epsilon(root, "layer_norm_eps", 1e-12);
        c.activation = activation("hidden_act", text(root, "hidden_act", "gelu"));
        const std::string positions = text(root, "position_embedding_type", "absolute");
        if (positions != "absolute")
            fail("\"position_embedding_type\" is \"" + positions + "\"; this engine runs \"absolute\" positions only");
        if (flag(root, "is_decoder", false)) fail("\"is_decoder\": true is not supported");
        c.norm = Norm::post;
        c.causal = false;
        c.embed_layernorm = true;
        c.tied = true;
        // the MLM head (output_transform, output_bias) is the loader's to find in the file
    }
    if (c.d_model % c.heads != 0)
        fail("the width " + std::to_string(c.d_model) + " is not divisible by " + std::to_string(c.heads) + " heads");
    validate_inference_config(c);
    return c;
}

}  // namespace attn
