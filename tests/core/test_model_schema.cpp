// The model schema (model_schema.hpp): one row per ModelConfig setting, from
// which a checkpoint's config JSON, the range checks, the bindings' JS
// settings and attn train's flags are written. These tests hold the table to
// the config it describes: every row reads and writes its own member, the JSON
// round-trips every config, and the schema's ranges are the ones
// validate_model_config enforces.

#include "core/model_schema.hpp"
#include "core/trainer.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <string>

using Catch::Matchers::Contains;
using attn::ModelConfig;
using attn::ModelSetting;
using attn::SettingType;

namespace {

/// Whether `check` (validate_model_config or the schema's check) takes the config.
bool takes(void (*check)(const ModelConfig&), const ModelConfig& c) {
    try {
        check(c);
        return true;
    } catch (const attn::Error&) {
        return false;
    }
}

bool accepted_by_validate(const ModelConfig& c) { return takes(attn::validate_model_config, c); }
bool accepted_by_schema(const ModelConfig& c) {
    return takes([](const ModelConfig& x) { attn::check_model_config(x); }, c);
}

/// A config where `row` may take any value of its range without breaking the
/// rule between rows (heads divides d_model): one head, a wide model.
ModelConfig roomy() {
    ModelConfig c;
    c.heads = 1;
    c.d_model = attn::kMaxModelDModel;
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
                                            "embed_layernorm", "output_transform", "output_bias", "family"};
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

TEST_CASE("model schema: validate_model_config and the schema accept and refuse the same values at every bound", "[schema]") {
    for (const ModelSetting& s : attn::model_settings()) {
        if (s.type != SettingType::whole) continue;
        for (const double v : {s.range.lo - 1, s.range.lo, s.range.hi, s.range.hi + 1}) {
            ModelConfig c = roomy();
            s.set(c, v);
            INFO(s.name() << " = " << v);
            const bool inside = v >= s.range.lo && v <= s.range.hi;
            CHECK(accepted_by_schema(c) == inside);
            CHECK(accepted_by_validate(c) == inside);
        }
    }
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

TEST_CASE("model schema: a training setting's range: context 0 means the task's", "[schema]") {
    const attn::SettingRange context = attn::training_range(attn::model_setting("context"));
    CHECK(context.lo == 0);
    CHECK(context.hi == attn::kMaxModelContext);
    CHECK(attn::training_range(attn::model_setting("layers")).lo == 1);
    CHECK_FALSE(attn::model_setting("vocab").settable);  // always the task's
    CHECK(attn::model_setting("causal").values == std::vector<std::string>{"none", "causal"});
    CHECK(attn::model_setting("positional").values == std::vector<std::string>{"none", "sinusoidal", "learned"});
}
