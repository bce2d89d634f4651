#include "model/model_schema.hpp"

#include "base/json_value.hpp"
#include "attention/positional.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace attn {

namespace {

template <int ModelConfig::*M>
ModelSetting whole_row(SettingRange range, int ModelLimits::*limit = nullptr, bool zero_is_task = false) {
    ModelSetting s;
    s.range = range;
    s.limit = limit;
    if (limit) s.range.hi = kTrainingLimits.*limit;
    s.type = SettingType::whole;
    s.get = [](const ModelConfig& c) { return static_cast<double>(c.*M); };
    s.set = [](ModelConfig& c, double v) { c.*M = static_cast<int>(v); };
    s.zero_is_task = zero_is_task;
    return s;
}

template <double ModelConfig::*M>
ModelSetting real_row(SettingRange range) {
    ModelSetting s;
    s.range = range;
    s.type = SettingType::real;
    s.get = [](const ModelConfig& c) { return c.*M; };
    s.set = [](ModelConfig& c, double v) { c.*M = v; };
    return s;
}

template <bool ModelConfig::*M>
ModelSetting boolean_row(SettingRange range, std::vector<std::string> values = {}) {
    ModelSetting s;
    s.range = range;
    s.range.lo = 0;
    s.range.hi = 1;
    s.range.whole = true;
    s.type = SettingType::boolean;
    s.get = [](const ModelConfig& c) { return c.*M ? 1.0 : 0.0; };
    s.set = [](ModelConfig& c, double v) { c.*M = v != 0; };
    s.values = std::move(values);
    return s;
}

std::vector<ModelSetting> make_rows() {
    std::vector<ModelSetting> rows;
    // the size rows: hi is the limit set's (kTrainingLimits here, range_within for another set)
    //                      member / key  label                                           lo  hi  whole  JS key      flag      limit
    rows.push_back(whole_row<&ModelConfig::vocab>({"vocab", "the vocabulary's size", 2, 0, true, "vocab", ""}, &ModelLimits::vocab));
    rows.back().settable = false;  // the task's
    rows.push_back(whole_row<&ModelConfig::context>(
        {"context", "the longest sequence, 0 = the task's", 1, 0, true, "context", "--context"}, &ModelLimits::context, true));
    rows.push_back(whole_row<&ModelConfig::layers>({"layers", "the layers", 1, 0, true, "layers", "--layers"}, &ModelLimits::layers));
    rows.push_back(whole_row<&ModelConfig::d_model>({"d_model", "the model width C", 1, 0, true, "dModel", "--d-model"}, &ModelLimits::d_model));
    rows.push_back(whole_row<&ModelConfig::heads>({"heads", "the heads, dividing d_model", 1, 0, true, "heads", "--heads"}, &ModelLimits::d_model));
    rows.push_back(whole_row<&ModelConfig::mlp>({"mlp", "the MLP width, 0 = attention only", 0, 0, true, "mlp", "--mlp"}, &ModelLimits::mlp));
    rows.push_back(boolean_row<&ModelConfig::layernorm>({"layernorm", "LayerNorm before each block and at the end", 0, 1, true, "layernorm", "--layernorm"}));
    {
        ModelSetting s;
        s.range = {"positional", "the positional encoding", 0, 0, true, "positional", "--positional"};
        s.type = SettingType::choice;
        for (Positional p : kPositionals) s.values.push_back(positional_name(p));
        s.range.hi = static_cast<double>(s.values.size() - 1);
        s.get = [](const ModelConfig& c) { return static_cast<double>(c.positional); };
        s.set = [](ModelConfig& c, double v) { c.positional = kPositionals[static_cast<int>(v)]; };
        rows.push_back(std::move(s));
    }
    rows.push_back(boolean_row<&ModelConfig::causal>({"causal", "the causal mask in every layer", 0, 1, true, "causal", "--mask"}, {"none", "causal"}));
    rows.push_back(boolean_row<&ModelConfig::scale>({"scale", "scores times 1/sqrt(D)", 0, 1, true, "scale", "--scale"}));
    rows.push_back(boolean_row<&ModelConfig::tied>({"tied", "the unembedding tied to the embedding", 0, 1, true, "tied", "--tied"}));

    // the architecture options of pretrained checkpoints (pretrained.hpp): read
    // from a Hub config, never set by training, written only when not default
    const auto architecture = [&rows](ModelSetting s) {
        s.settable = false;
        s.architecture = true;
        rows.push_back(std::move(s));
    };
    architecture(boolean_row<&ModelConfig::attn_bias>({"attn_bias", "biases on Q, K, V and O", 0, 1, true, "attnBias", ""}));
    {
        ModelSetting s;
        s.range = {"activation", "the MLP's activation (GELU or SiLU)", 0, 2, true, "activation", ""};
        s.type = SettingType::choice;
        for (const Activation a : kActivations) s.values.push_back(activation_name(a));
        s.get = [](const ModelConfig& c) { return static_cast<double>(c.activation); };
        s.set = [](ModelConfig& c, double v) { c.activation = kActivations[static_cast<int>(v)]; };
        architecture(std::move(s));
    }
    {
        ModelSetting s;
        s.range = {"ln_eps", "the LayerNorm epsilon", 1e-12, 0.1, false, "lnEps", ""};
        s.type = SettingType::real;
        s.get = [](const ModelConfig& c) { return static_cast<double>(c.ln_eps); };
        s.set = [](ModelConfig& c, double v) { c.ln_eps = static_cast<float>(v); };
        architecture(std::move(s));
    }
    {
        ModelSetting s;
        s.range = {"norm", "LayerNorm before (pre) or after (post) each block", 0, 1, true, "norm", ""};
        s.type = SettingType::choice;
        s.values = {norm_name(Norm::pre), norm_name(Norm::post)};
        s.get = [](const ModelConfig& c) { return static_cast<double>(c.norm); };
        s.set = [](ModelConfig& c, double v) { c.norm = v != 0 ? Norm::post : Norm::pre; };
        architecture(std::move(s));
    }
    architecture(whole_row<&ModelConfig::token_types>({"token_types", "the token-type embeddings", 0, 16, true, "tokenTypes", ""}));
    architecture(boolean_row<&ModelConfig::embed_layernorm>(
        {"embed_layernorm", "LayerNorm after the embeddings", 0, 1, true, "embedLayernorm", ""}));
    architecture(boolean_row<&ModelConfig::output_transform>(
        {"output_transform", "the masked-LM transform before the unembedding", 0, 1, true, "outputTransform", ""}));
    architecture(boolean_row<&ModelConfig::output_bias>({"output_bias", "a bias on the logits", 0, 1, true, "outputBias", ""}));

    // the modern decoders' options (Llama, Qwen): written only when not default, like the
    // architecture options; RoPE's base is also a training setting (attn train --rope-base)
    {
        ModelSetting s = real_row<&ModelConfig::rope_base>(
            {"rope_base", "RoPE's theta base (positional rope)", 1, 1e9, false, "ropeBase", "--rope-base"});
        s.architecture = true;
        rows.push_back(std::move(s));
    }
    {
        ModelSetting s;
        s.range = {"rope_scaling", "RoPE's frequency scaling (none or llama3)", 0, 1, true, "ropeScaling", ""};
        s.type = SettingType::choice;
        s.values = {rope_scaling_name(RopeScaling::none), rope_scaling_name(RopeScaling::llama3)};
        s.get = [](const ModelConfig& c) { return static_cast<double>(c.rope_scaling); };
        s.set = [](ModelConfig& c, double v) { c.rope_scaling = v != 0 ? RopeScaling::llama3 : RopeScaling::none; };
        architecture(std::move(s));
    }
    architecture(real_row<&ModelConfig::rope_factor>({"rope_factor", "llama3 RoPE scaling: factor", 1, 1e6, false, "ropeFactor", ""}));
    architecture(real_row<&ModelConfig::rope_low_freq_factor>(
        {"rope_low_freq_factor", "llama3 RoPE scaling: low_freq_factor", 1e-6, 1e6, false, "ropeLowFreqFactor", ""}));
    architecture(real_row<&ModelConfig::rope_high_freq_factor>(
        {"rope_high_freq_factor", "llama3 RoPE scaling: high_freq_factor", 1e-6, 1e6, false, "ropeHighFreqFactor", ""}));
    architecture(whole_row<&ModelConfig::rope_original_context>(
        {"rope_original_context", "llama3 RoPE scaling: original_max_position_embeddings", 1, 1 << 24, true,
         "ropeOriginalContext", ""}));
    architecture(boolean_row<&ModelConfig::rmsnorm>(
        {"rmsnorm", "RMSNorm (gain only) instead of LayerNorm in the blocks and at the end", 0, 1, true, "rmsnorm", ""}));
    architecture(boolean_row<&ModelConfig::gated_mlp>(
        {"gated_mlp", "the gated MLP: (act(m W_gate) * m W_in) W_out (SwiGLU with silu)", 0, 1, true, "gatedMlp", ""}));
    architecture(boolean_row<&ModelConfig::mlp_bias>({"mlp_bias", "biases in the MLP", 0, 1, true, "mlpBias", ""}));
    architecture(whole_row<&ModelConfig::kv_heads>(
        {"kv_heads", "the key/value heads (grouped-query attention), dividing heads, 0 = heads", 0, 0, true, "kvHeads", ""},
        &ModelLimits::d_model));
    architecture(whole_row<&ModelConfig::head_dim>(
        {"head_dim", "the head width D, 0 = d_model / heads", 0, 0, true, "headDim", ""}, &ModelLimits::d_model));
    architecture(boolean_row<&ModelConfig::qkv_bias>({"qkv_bias", "biases on Q, K and V only", 0, 1, true, "qkvBias", ""}));
    architecture(boolean_row<&ModelConfig::qk_norm>(
        {"qk_norm", "RMSNorm of each head's query and key before RoPE", 0, 1, true, "qkNorm", ""}));
    {
        ModelSetting s;
        s.range = {"family", "the checkpoint's family", 0, 0, true, "family", ""};
        s.type = SettingType::choice;
        s.values = family_names();  // "" (ours), then the registry's (families/)
        s.range.hi = static_cast<double>(s.values.size() - 1);
        s.get = [](const ModelConfig& c) {
            const std::vector<std::string>& names = family_names();
            const auto at = std::find(names.begin(), names.end(), c.family);
            return at == names.end() ? 0.0 : static_cast<double>(at - names.begin());
        };
        s.set = [](ModelConfig& c, double v) { c.family = family_names().at(static_cast<std::size_t>(v)); };
        architecture(std::move(s));
    }
    return rows;
}

}  // namespace

const char* setting_type_name(SettingType type) {
    switch (type) {
        case SettingType::whole: return "whole";
        case SettingType::real: return "real";
        case SettingType::boolean: return "boolean";
        case SettingType::choice: return "choice";
    }
    return "?";
}

const std::vector<ModelSetting>& model_settings() {
    static const std::vector<ModelSetting> rows = make_rows();
    return rows;
}

const ModelSetting& model_setting(const std::string& name) {
    for (const ModelSetting& s : model_settings())
        if (name == s.name()) return s;
    throw Error("unknown model setting \"" + name + "\"");
}

SettingRange training_range(const ModelSetting& s) {
    SettingRange r = s.range;
    if (s.zero_is_task) r.lo = 0;
    return r;
}

SettingRange range_within(const ModelSetting& s, const ModelLimits& limits) {
    SettingRange r = s.range;
    if (s.limit) r.hi = limits.*(s.limit);
    return r;
}

std::string model_setting_text(const ModelSetting& s, double value) {
    switch (s.type) {
        case SettingType::boolean: return value != 0 ? "true" : "false";
        case SettingType::choice: return s.values.at(static_cast<std::size_t>(value));
        default: {
            std::ostringstream o;
            o.precision(9);
            o << value;
            return o.str();
        }
    }
}

double model_setting_choice(const ModelSetting& s, const std::string& name, const std::string& where, Error::Code code) {
    std::string names;
    for (std::size_t i = 0; i < s.values.size(); ++i) {
        if (s.values[i] == name) return static_cast<double>(i);
        names += (i ? ", " : "") + s.values[i];
    }
    throw Error(code, where + s.name() + " \"" + name + "\" is not one of " + names);
}

void check_model_config(const ModelConfig& c, const ModelLimits& limits, const std::string& where, Error::Code code) {
    // a family string that is none of the row's choices (the row reads it as "")
    const std::vector<std::string>& families = family_names();
    if (std::find(families.begin(), families.end(), c.family) == families.end()) {
        std::string names;
        for (std::size_t i = 0; i < families.size(); ++i)
            names += std::string(i == 0 ? "" : i + 1 == families.size() ? " or " : ", ") + "\"" + families[i] + "\"";
        throw Error(code, where + "family must be " + names + ", got \"" + c.family.substr(0, 32) + "\"");
    }
    for (const ModelSetting& s : model_settings()) check_setting(range_within(s, limits), s.get(c), where, code);
    const auto say = [&](const std::string& what) { throw Error(code, where + what); };
    const auto n = [](long long v) { return std::to_string(v); };
    if (c.heads > c.d_model) say("heads " + n(c.heads) + " is more than d_model " + n(c.d_model));
    if (c.head_dim == 0 && c.d_model % c.heads != 0)
        say("d_model " + n(c.d_model) + " is not divisible by " + n(c.heads) + " heads");
    if (static_cast<long long>(c.heads) * head_dim_of(c) > range_within(model_setting("d_model"), limits).hi)
        say("heads × head_dim " + n(c.heads) + " × " + n(head_dim_of(c)) + " is more than " +
            n(static_cast<long long>(range_within(model_setting("d_model"), limits).hi)));
    if (c.kv_heads > c.heads) say("kv_heads " + n(c.kv_heads) + " is more than heads " + n(c.heads));
    if (c.heads % kv_heads_of(c) != 0) say("heads " + n(c.heads) + " is not divisible by " + n(c.kv_heads) + " kv_heads");
    if (c.norm == Norm::post && !c.layernorm) say("norm \"post\" needs layernorm");
    if (c.embed_layernorm && !c.layernorm) say("embed_layernorm needs layernorm");
    if (c.rmsnorm && !c.layernorm) say("rmsnorm needs layernorm (the norms it replaces)");
    if (c.rmsnorm && (c.embed_layernorm || c.output_transform))
        say("rmsnorm covers the blocks' norms and the final one, not embed_layernorm or output_transform's LayerNorm");
    if (c.attn_bias && c.qkv_bias) say("attn_bias already has the biases of qkv_bias (Q, K, V): set one of them");
    if (c.gated_mlp && c.mlp == 0) say("gated_mlp needs an MLP (mlp > 0)");
    if (c.positional == Positional::rope && head_dim_of(c) % 2 != 0)
        say("positional rope needs an even head width (it turns pairs of values), got D = " + n(head_dim_of(c)));
    if (c.rope_scaling != RopeScaling::none && c.positional != Positional::rope)
        say(std::string("rope_scaling \"") + rope_scaling_name(c.rope_scaling) + "\" needs positional rope");
    if (c.rope_scaling == RopeScaling::llama3 && !(c.rope_low_freq_factor < c.rope_high_freq_factor))
        say("rope_low_freq_factor must be below rope_high_freq_factor");
}

void validate_model_config(const ModelConfig& c) { check_model_config(c, kTrainingLimits); }
void validate_inference_config(const ModelConfig& c) { check_model_config(c, kInferenceLimits); }

std::string model_config_json(const ModelConfig& c) {
    std::string o = "{";
    const ModelConfig defaults;
    for (const ModelSetting& s : model_settings()) {
        if (s.architecture && s.get(c) == s.get(defaults)) continue;
        if (o.size() > 1) o += ",";
        const std::string text = model_setting_text(s, s.get(c));
        o += std::string("\"") + s.name() + "\":" + (s.type == SettingType::choice ? "\"" + text + "\"" : text);
    }
    return o + "}";
}

ModelConfig model_config_from_json(const std::string& json) {
    const JsonValue v = parse_json(json);
    if (!v.is(JsonValue::Type::object)) throw Error("model config must be a JSON object");
    ModelConfig c;
    for (const ModelSetting& s : model_settings()) {
        const JsonValue* x = v.get(s.name());
        if (!x) continue;
        const std::string key = std::string("model config: \"") + s.name() + "\"";
        switch (s.type) {
            case SettingType::whole:
                if (!x->is(JsonValue::Type::number) || x->number != std::floor(x->number) || std::fabs(x->number) > 1e9)
                    throw Error(key + " must be a whole number");
                s.set(c, x->number);
                break;
            case SettingType::real:
                if (!x->is(JsonValue::Type::number) || !std::isfinite(x->number)) throw Error(key + " must be a number");
                s.set(c, x->number);
                break;
            case SettingType::boolean:
                if (!x->is(JsonValue::Type::boolean)) throw Error(key + " must be true or false");
                s.set(c, x->boolean ? 1 : 0);
                break;
            case SettingType::choice:
                if (!x->is(JsonValue::Type::string)) throw Error(key + " must be a string");
                s.set(c, model_setting_choice(s, x->string, "model config: "));
                break;
        }
    }
    validate_model_config(c);
    return c;
}

}  // namespace attn
