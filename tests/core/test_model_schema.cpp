// The model schema (model_schema.hpp): one row per ModelConfig setting, from
// which a checkpoint's config JSON, the range checks, the bindings' JS
// settings and attn train's flags are written. These tests hold the table to
// the config it describes: every row reads and writes its own member, the JSON
// round-trips every config, and the schema's check is the one check of a
// config: its ranges come from the named limit sets (kTrainingLimits,
// kInferenceLimits), validate_model_config / validate_inference_config are it.

#include "model/model_schema.hpp"
#include "train/trainer.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>
#include <string>

using Catch::Matchers::Contains;
using attn::ModelConfig;
using attn::ModelSetting;
using attn::SettingType;

namespace {

/// Whether `check` (validate_model_config, validate_inference_config or the schema's check) takes the config.
bool takes(void (*check)(const ModelConfig&), const ModelConfig& c) {
    try {
        check(c);
        return true;
    } catch (const attn::Error&) {
        return false;
    }
}

bool accepted_by_validate(const ModelConfig& c) { return takes(attn::validate_model_config, c); }
bool accepted_for_inference(const ModelConfig& c) { return takes(attn::validate_inference_config, c); }
bool accepted_by_schema(const ModelConfig& c, const attn::ModelLimits& limits = attn::kTrainingLimits) {
    try {
        attn::check_model_config(c, limits);
        return true;
    } catch (const attn::Error&) {
        return false;
    }
}

/// A config where `row` may take any value of its range without breaking the
/// rule between rows (heads divides d_model): one head, a wide model.
ModelConfig roomy(const attn::ModelLimits& limits = attn::kTrainingLimits) {
    ModelConfig c;
    c.heads = 1;
    c.d_model = limits.d_model;
    return c;
}

}  // namespace

TEST_CASE("model schema: the rows are ModelConfig's settings, each name, JS key and flag once", "[schema]") {
    std::set<std::string> names, js, flags;
    for (const ModelSetting& s : attn::model_settings()) {
        CHECK(names.insert(s.name()).second);
        CHECK(js.insert(s.range.js).second);
        if (*s.range.flag) CHECK(flags.insert(s.range.flag).second);
        CHECK(s.range.lo <= s.range.hi);
        CHECK(s.get != nullptr);
        CHECK(s.set != nullptr);
    }
    // the checkpoint's keys, in the order checkpoints have always been written
    const std::vector<std::string> order = {"vocab", "context", "layers", "d_model", "heads", "mlp",
                                            "layernorm", "positional", "causal", "scale", "tied",
                                            // the architecture options, written only when not default
                                            "attn_bias", "activation", "ln_eps", "norm", "token_types",
                                            "embed_layernorm", "output_transform", "output_bias",
                                            // the modern decoders' options, written only when not default
                                            "rope_base", "rope_scaling", "rope_factor", "rope_low_freq_factor",
                                            "rope_high_freq_factor", "rope_original_context", "rmsnorm", "gated_mlp",
                                            "mlp_bias", "kv_heads", "head_dim", "qkv_bias", "qk_norm", "family"};
    std::vector<std::string> got;
    for (const ModelSetting& s : attn::model_settings()) got.push_back(s.name());
    CHECK(got == order);
    CHECK(attn::model_setting("d_model").range.js == std::string("dModel"));
    CHECK(attn::model_setting("d_model").range.flag == std::string("--d-model"));
    CHECK_THROWS_WITH(attn::model_setting("width"), Contains("width"));
}

TEST_CASE("model schema: each row reads and writes its own member and no other", "[schema]") {
    for (const ModelSetting& s : attn::model_settings()) {
        INFO(s.name());
        ModelConfig c;
        const std::string before = attn::model_config_json(c);
        // a value of the range other than the default
        const double v = s.get(c) == s.range.hi ? s.range.lo : s.range.hi;
        s.set(c, v);
        CHECK(static_cast<float>(s.get(c)) == static_cast<float>(v));  // a real row stores a float
        ModelConfig back;
        s.set(back, s.get(ModelConfig{}));
        CHECK(attn::model_config_json(back) == before);
        // every other row still reads the default
        for (const ModelSetting& o : attn::model_settings())
            if (&o != &s) CHECK(o.get(c) == o.get(ModelConfig{}));
    }
}

TEST_CASE("model schema: the config JSON is the checkpoint format, key by key", "[schema]") {
    // written by hand from the format the checkpoints in models/ carry
    CHECK(attn::model_config_json(ModelConfig{}) ==
          "{\"vocab\":16,\"context\":32,\"layers\":1,\"d_model\":32,\"heads\":2,\"mlp\":0,\"layernorm\":true,"
          "\"positional\":\"learned\",\"causal\":false,\"scale\":true,\"tied\":false}");
    ModelConfig c;
    c.vocab = 4002;
    c.positional = attn::Positional::sinusoidal;
    c.causal = true;
    c.tied = true;
    CHECK_THAT(attn::model_config_json(c), Contains("\"vocab\":4002,") && Contains("\"positional\":\"sinusoidal\"") &&
                                               Contains("\"causal\":true") && Contains("\"tied\":true}"));
}

TEST_CASE("model schema: model_config_from_json reads back every config model_config_json writes", "[schema]") {
    std::mt19937 rng(20261201);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int trial = 0; trial < 300; ++trial) {
        ModelConfig c;
        c.vocab = pick(2, attn::kMaxModelVocab);
        c.context = pick(1, attn::kMaxModelContext);
        c.layers = pick(1, attn::kMaxModelLayers);
        c.heads = pick(1, 16);
        c.d_model = c.heads * pick(1, attn::kMaxModelDModel / c.heads);
        c.mlp = pick(0, attn::kMaxModelMlp);
        c.layernorm = pick(0, 1);
        c.positional = attn::kPositionals[pick(0, 2)];
        c.causal = pick(0, 1);
        c.scale = pick(0, 1);
        c.tied = pick(0, 1);
        const std::string json = attn::model_config_json(c);
        INFO(json);
        CHECK(attn::model_config_json(attn::model_config_from_json(json)) == json);
    }
    CHECK_THROWS_WITH(attn::model_config_from_json("{\"positional\":\"rotary\"}"), Contains("positional") && Contains("rotary"));
    CHECK_THROWS_WITH(attn::model_config_from_json("{\"layers\":1.5}"), Contains("layers") && Contains("whole number"));
    CHECK_THROWS_WITH(attn::model_config_from_json("{\"tied\":1}"), Contains("tied") && Contains("true or false"));
}

TEST_CASE("model schema: the size rows' bounds are the limit set's, and validate_* are the schema's check with each set", "[schema]") {
    // the sets as docs/training.md, docs/pretrained.md and limits.hpp state them (written out here, not read from the code)
    struct Set {
        const char* what;
        const attn::ModelLimits& limits;
        bool (*validate)(const ModelConfig&);
        std::map<std::string, double> hi;
    };
    const Set sets[] = {
        {"training", attn::kTrainingLimits, accepted_by_validate,
         {{"vocab", 50000}, {"context", 512}, {"layers", 12}, {"d_model", 512}, {"heads", 512}, {"mlp", 2048}, {"token_types", 16},
          {"rope_original_context", 1 << 24}, {"kv_heads", 512}, {"head_dim", 512}}},
        {"inference", attn::kInferenceLimits, accepted_for_inference,
         {{"vocab", 262144}, {"context", 2048}, {"layers", 48}, {"d_model", 2048}, {"heads", 2048}, {"mlp", 8192}, {"token_types", 16},
          {"rope_original_context", 1 << 24}, {"kv_heads", 2048}, {"head_dim", 2048}}},
    };
    for (const Set& set : sets) {
        int rows = 0;
        for (const ModelSetting& s : attn::model_settings()) {
            if (s.type != SettingType::whole) continue;
            ++rows;
            const attn::SettingRange r = attn::range_within(s, set.limits);
            INFO(set.what << " " << s.name());
            REQUIRE(set.hi.count(s.name()) == 1);
            CHECK(r.hi == set.hi.at(s.name()));
            for (const double v : {r.lo - 1, r.lo, r.hi, r.hi + 1}) {
                ModelConfig c = roomy(set.limits);
                // kv_heads divides heads: as many heads as the width allows (each of width 1)
                if (s.name() == std::string("kv_heads")) c.heads = c.d_model;
                s.set(c, v);
                INFO(s.name() << " = " << v);
                const bool inside = v >= r.lo && v <= r.hi;
                CHECK(accepted_by_schema(c, set.limits) == inside);
                CHECK(set.validate(c) == inside);
            }
        }
        CHECK(rows == static_cast<int>(set.hi.size()));
    }
    // the training set's bounds are the rows' own (buildInfo().modelSettings, the CLI's flags)
    for (const ModelSetting& s : attn::model_settings())
        CHECK(attn::range_within(s, attn::kTrainingLimits).hi == s.range.hi);
    // the rule between rows
    ModelConfig c;
    c.d_model = 10;
    c.heads = 3;
    CHECK_THROWS_WITH(attn::check_model_config(c), Contains("not divisible by 3 heads"));
    CHECK_FALSE(accepted_by_validate(c));
    c.heads = 20;
    CHECK_THROWS_WITH(attn::check_model_config(c), Contains("heads 20"));
    CHECK_FALSE(accepted_by_validate(c));
}

TEST_CASE("model schema: the check refuses what no model can be: post-LN or the embedding LayerNorm without layernorm, an unknown family", "[schema]") {
    for (const attn::ModelLimits* limits : {&attn::kTrainingLimits, &attn::kInferenceLimits}) {
        ModelConfig c;
        c.layernorm = false;
        c.norm = attn::Norm::post;
        CHECK_THROWS_WITH(attn::check_model_config(c, *limits), Contains("norm \"post\" needs layernorm"));
        c = ModelConfig{};
        c.layernorm = false;
        c.embed_layernorm = true;
        CHECK_THROWS_WITH(attn::check_model_config(c, *limits), Contains("embed_layernorm needs layernorm"));
        c = ModelConfig{};
        c.family = "mistral";
        CHECK_THROWS_WITH(attn::check_model_config(c, *limits), Contains("family") && Contains("mistral"));
        c.family = "bert";
        CHECK_NOTHROW(attn::check_model_config(c, *limits));
    }
    // the where and the code the caller gives (a checkpoint's)
    ModelConfig c;
    c.layers = 0;
    try {
        attn::check_model_config(c, attn::kTrainingLimits, "checkpoint config: ", attn::Error::Code::bad_checkpoint);
        FAIL("accepted layers 0");
    } catch (const attn::Error& e) {
        CHECK(e.code() == attn::Error::Code::bad_checkpoint);
        CHECK_THAT(std::string(e.what()), Contains("checkpoint config: layers 0 is outside 1") && Contains("12"));
    }
}

TEST_CASE("model schema: a training setting's range: context 0 means the task's", "[schema]") {
    const attn::SettingRange context = attn::training_range(attn::model_setting("context"));
    CHECK(context.lo == 0);
    CHECK(context.hi == attn::kMaxModelContext);
    CHECK(attn::training_range(attn::model_setting("layers")).lo == 1);
    CHECK_FALSE(attn::model_setting("vocab").settable);  // always the task's
    CHECK(attn::model_setting("causal").values == std::vector<std::string>{"none", "causal"});
    CHECK(attn::model_setting("positional").values ==
          std::vector<std::string>{"none", "sinusoidal", "learned", "rope", "alibi"});
}
