#pragma once
// The trainable model's settings, one row each: the one definition of their
// names (the ModelConfig member, which is also the key in a checkpoint's
// config JSON; the JS key of createTrainer's settings and of Trainer.config;
// attn train's flag), their type and range, and how a row reads and writes
// its member. Everything that converts a ModelConfig is written from this
// table: model_config_json / model_config_from_json (checkpoints),
// check_model_config, the bindings' settings ↔ JS, attn train's flags, and
// buildInfo().trainSettings, which web/trainer.js checks the JS settings with and
// the training lab (web/app/train/state.js) takes its fields' kinds, ranges and choices from.
//
// The size rows take their largest value from a limit set (model.hpp's
// kTrainingLimits for a model that is trained, kInferenceLimits for one that
// is only run). A new ModelConfig option is one more row (and its forward and
// backward in a layer kind or the block, its tensors in parameters.cpp's name table).
// Values cross the table as doubles: a whole number as itself, a boolean as 0 / 1, a
// choice as its index in `choices`.

#include "model/model.hpp"
#include "base/settings.hpp"

#include <string>
#include <vector>

namespace attn {

enum class SettingType { whole, real, boolean, choice };

/// "whole" | "real" | "boolean" | "choice" (buildInfo's type names).
const char* setting_type_name(SettingType type);

struct ModelSetting {
    /// name: the ModelConfig member and checkpoint key ("d_model"); js: its JS
    /// key ("dModel"); flag: attn train's flag ("--d-model", "" = none; a boolean
    /// flag also has its --no- form unless `values` names its two values);
    /// lo, hi: the accepted range (booleans 0…1, choices 0…n−1).
    SettingRange range;
    SettingType type = SettingType::whole;
    double (*get)(const ModelConfig&) = nullptr;
    void (*set)(ModelConfig&, double) = nullptr;
    /// choice: the names in enum order; boolean given as a value
    /// (attn train --mask none|causal): the false and the true name.
    std::vector<std::string> values;
    /// A training setting of 0 means "the task's" (TrainConfig.model.context).
    bool zero_is_task = false;
    /// createTrainer's settings and attn train's flags set it; false: always
    /// the task's (vocab), shown in Trainer.config only.
    bool settable = true;
    /// The bound of the limit sets (model.hpp's ModelLimits) that is this row's
    /// largest value; range.hi is the training set's. nullptr: range.hi always.
    int ModelLimits::*limit = nullptr;
    /// An architecture option of pretrained models (model.hpp), or a modern decoder's
    /// option: written to the config JSON only when it differs from our models' default,
    /// so that the checkpoints we write stay as they were and old ones read as before.
    /// (Most are not settable; rope_base is both.)
    bool architecture = false;
    const char* name() const { return range.name; }
};

/// Every row, in ModelConfig's order (vocab, context, layers, d_model, heads,
/// mlp, layernorm, positional, causal, scale, tied, then the architecture
/// options attn_bias, activation, ln_eps, norm, token_types, embed_layernorm,
/// output_transform, output_bias, the modern decoders' rope_base, rope_scaling,
/// rope_factor, rope_low_freq_factor, rope_high_freq_factor, rope_original_context,
/// rmsnorm, gated_mlp, mlp_bias, kv_heads, head_dim, qkv_bias, qk_norm, then family).
const std::vector<ModelSetting>& model_settings();
/// The row of a member name; throws attn::Error for an unknown one.
const ModelSetting& model_setting(const std::string& name);

/// The range a training setting of this row takes: the row's, from 0 when 0
/// means the task's value.
SettingRange training_range(const ModelSetting& s);
/// The row's range for a model of these limits (hi from the set when the row has a limit).
SettingRange range_within(const ModelSetting& s, const ModelLimits& limits);

/// The value's text for messages and JSON: a number, true / false, a choice's name.
std::string model_setting_text(const ModelSetting& s, double value);
/// A choice's name → its index; throws attn::Error (code) naming the choices.
double model_setting_choice(const ModelSetting& s, const std::string& name, const std::string& where = "",
                            Error::Code code = Error::Code::bad_input);

/// The one check of a model config: every row's range within `limits`
/// (check_setting) and the rules between rows (heads at most d_model and
/// dividing it unless head_dim is given; kv_heads at most heads and dividing
/// them; post-LN, the embedding LayerNorm and rmsnorm need layernorm; rmsnorm
/// not with the embedding's or the MLM head's LayerNorm; attn_bias and qkv_bias
/// not both; gated_mlp needs an MLP; rope an even head width; rope_scaling needs
/// rope; a known family). Throws attn::Error naming the field and its range.
/// validate_model_config / validate_inference_config (model.hpp) are this
/// with kTrainingLimits / kInferenceLimits.
void check_model_config(const ModelConfig& config, const ModelLimits& limits = kTrainingLimits,
                        const std::string& where = "", Error::Code code = Error::Code::bad_input);

/// JSON of a model config, with the checkpoint's key names, every row in order
/// {vocab, context, layers, d_model, heads, mlp, layernorm, positional, causal, scale, tied}.
std::string model_config_json(const ModelConfig& config);

/// Parses model_config_json's output (missing keys keep their defaults); throws attn::Error for bad values.
ModelConfig model_config_from_json(const std::string& json);

}  // namespace attn
