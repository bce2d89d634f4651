// Tests of the family registry (src/families/): every family's lookups by name,
// architecture and model type; a refused config names the registry's supported list;
// each family's Hub plan fills every tensor of its config's parameter_layout exactly once,
// with the shapes the loader's layouts map onto ours, over random small configs and both
// answers of the file (every optional tensor there, none there). The loop runs over the
// registry: a new family is tested here without editing this file (its fixture folder,
// tests/pretrained/make_checkpoints.py, is named after it).

#include "checkpoints/pretrained.hpp"
#include "families/family.hpp"
#include "matchers.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using Catch::Matchers::Contains;
using attn::Family;
using attn::HubLayout;
using attn::ModelConfig;

namespace {

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f.good());
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

/// The family's fixture config.json (tests/pretrained/make_checkpoints.py: a folder named after it).
std::string fixture_config(const Family& f) {
    return read_file(std::string(ATTN_PRETRAINED_DIR) + "/" + f.name + "/config.json");
}

/// A file that has every tensor, or none: the two answers read_file can get.
class FakeFile : public attn::HubTensors {
public:
    explicit FakeFile(bool every) : every_(every) {}
    bool has(const std::string&) const override { return every_; }
    void sizes(const std::string& note) override { note_ = note; }

    struct Need {
        std::vector<std::int64_t> shape;
        HubLayout layout;
    };
    std::map<std::string, Need> needs;  ///< our tensor → what fills it
    std::set<std::string> names;        ///< the Hub names asked for
    std::string note_;
    std::vector<std::string> twice;     ///< our tensors filled more than once, Hub names asked twice

protected:
    void add(const std::string& name, const std::vector<std::int64_t>& shape, const std::vector<std::string>& ours,
             HubLayout layout, const std::string& why, bool top_level) override {
        CHECK_FALSE(why.empty());
        CHECK_FALSE(note_.empty());  // the sizes come first: the shape messages quote them
        if (!names.insert((top_level ? "/" : "") + name).second) twice.push_back(name);
        CHECK(ours.size() == (layout == HubLayout::split3 ? 3u : 1u));
        for (const std::string& t : ours)
            if (!needs.emplace(t, Need{shape, layout}).second) twice.push_back(t);
    }

private:
    bool every_;
};

/// The Hub shape that fills our tensor `info` by `layout` (the loader's mapping rule, hub_loader.cpp).
std::vector<std::int64_t> hub_shape(const attn::ParamInfo& info, HubLayout layout) {
    const std::int64_t rows = info.rows, cols = info.cols;
    if (info.vector) return {layout == HubLayout::split3 ? 3 * cols : cols};
    switch (layout) {
        case HubLayout::same: return {rows, cols};
        case HubLayout::transposed: return {cols, rows};
        case HubLayout::split3: return {rows, 3 * cols};
    }
    return {};
}

}  // namespace

TEST_CASE("families: each is found by its name, its architectures and its model types, and by no other's", "[families]") {
    const std::vector<const Family*>& all = attn::families();
    REQUIRE(all.size() >= 2);
    std::set<std::string> names, architectures, types;
    std::vector<std::string> expected_names = {""};
    for (const Family* f : all) {
        INFO(f->name);
        CHECK_FALSE(f->name.empty());
        CHECK_FALSE(f->title.empty());
        CHECK(names.insert(f->name).second);
        expected_names.push_back(f->name);
        CHECK(attn::family_named(f->name) == f);
        ModelConfig c;
        c.family = f->name;
        CHECK(attn::family_of(c) == f);
        CHECK(attn::family_title(f->name, "this model") == f->title);
        REQUIRE_FALSE(f->architectures.empty());
        REQUIRE_FALSE(f->model_types.empty());
        for (const std::string& a : f->architectures) {
            CHECK(architectures.insert(a).second);
            CHECK(attn::family_by_architecture(a) == f);
            const attn::JsonValue json = attn::parse_json("{\"architectures\": [\"" + a + "\"]}");
            CHECK(&attn::hub_family(attn::HubConfigFields(json)) == f);
        }
        for (const std::string& t : f->model_types) {
            CHECK(types.insert(t).second);
            CHECK(attn::family_by_model_type(t) == f);
            const attn::JsonValue alone = attn::parse_json("{\"model_type\": \"" + t + "\"}");
            CHECK(&attn::hub_family(attn::HubConfigFields(alone)) == f);
            const attn::JsonValue both =
                attn::parse_json("{\"model_type\": \"" + t + "\", \"architectures\": [\"" + f->architectures[0] + "\"]}");
            CHECK(&attn::hub_family(attn::HubConfigFields(both)) == f);
        }
        CHECK(attn::family_by_tokenizer(f->tokenizer) != nullptr);
        // its fixture's config.json is read as this family, whose config says whether it generates
        const ModelConfig fixture = attn::read_hub_config(fixture_config(*f));
        CHECK(fixture.family == f->name);
        CHECK(fixture.causal == f->generates);
    }
    CHECK(attn::family_named("") == nullptr);
    CHECK(attn::family_of(ModelConfig{}) == nullptr);
    CHECK(attn::family_named("mistral") == nullptr);
    CHECK(attn::family_by_architecture("MistralForCausalLM") == nullptr);
    CHECK(attn::family_by_model_type("mistral") == nullptr);
    CHECK(attn::family_title("", "this model") == "this model");
    // the model layer's view of the registry: our own models first, then every family
    CHECK(attn::family_names() == expected_names);
}

TEST_CASE("families: a refused config.json names the registry's supported list", "[families]") {
    const std::string mistral = testing::message_of([] { attn::read_hub_config(R"({"architectures":["MistralForCausalLM"]})"); });
    const std::string supported = attn::supported_families();
    CHECK_THAT(mistral, Contains("MistralForCausalLM is not supported: " + supported));
    for (const Family* f : attn::families()) {
        CHECK_THAT(supported, Contains(f->title));
        for (const std::string& a : f->architectures) CHECK_THAT(supported, Contains(a));
    }
    CHECK_THAT(testing::message_of([] { attn::read_hub_config(R"({"model_type":"mistral"})"); }),
               Contains("model_type \"mistral\" is not supported: " + supported));
    CHECK_THAT(testing::message_of([] { attn::read_hub_config(R"({"vocab_size":5})"); }),
               Contains("neither \"model_type\" nor \"architectures\": " + supported));
    // a model type of one family with an architecture of another
    const Family& a = *attn::families()[0];
    const Family& b = *attn::families()[1];
    const std::string mixed = "{\"model_type\": \"" + a.model_types[0] + "\", \"architectures\": [\"" + b.architectures[0] + "\"]}";
    CHECK_THAT(testing::message_of([&] { attn::read_hub_config(mixed); }),
               Contains("does not match the architecture " + b.architectures[0]));
    // an unknown family's tokenizer names the families
    CHECK_THAT(testing::message_of([] { attn::read_family_tokenizer("mistral", "", "", "", "", ""); }),
               Contains(attn::family_choices()));
}

TEST_CASE("families: each family's tokenizer needs are the files of its tokenizer's choices", "[families]") {
    for (const Family* f : attn::families()) {
        INFO(f->name);
        CHECK(f->tokenizer != attn::TokenizerKind::any);
        for (const std::vector<std::string>& choice : attn::tokenizer_file_choices(f->tokenizer))
            for (const std::string& file : choice) CHECK_THAT(f->tokenizer_needs, Contains(file));
        CHECK_FALSE(f->predictions.empty());
        CHECK_FALSE(f->learn_target.empty());
        // no files: the refusal names the family and what its kind reads
        CHECK_THAT(testing::message_of([&] { attn::read_family_tokenizer(f->name, "", "", "", "", ""); }),
                   Contains("no tokenizer files for " + f->name));
    }
}

TEST_CASE("families: each family's Hub plan fills every tensor of its config's layout once, in the loader's shapes", "[families]") {
    std::mt19937 rng(35);
    const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (const Family* f : attn::families()) {
        const ModelConfig base = attn::read_hub_config(fixture_config(*f));
        for (int trial = 0; trial < 24; ++trial) {
            ModelConfig c = base;  // the family's options, random small sizes
            c.layers = pick(1, 3);
            c.heads = 1 << pick(0, 2);
            c.d_model = c.heads * (c.positional == attn::Positional::rope ? 2 * pick(1, 2) : pick(1, 4));  // RoPE: D even
            c.mlp = pick(1, 12);
            c.context = pick(1, 9);
            c.vocab = pick(2, 40);
            if (c.token_types > 0) c.token_types = pick(1, 3);
            if (c.kv_heads > 0) c.kv_heads = c.heads >> pick(0, c.heads == 4 ? 2 : c.heads == 2 ? 1 : 0);  // divides heads
            if (c.head_dim > 0) c.head_dim = 2 * pick(1, 4);
            for (const bool every : {true, false}) {
                INFO(f->name << " trial " << trial << (every ? ", every optional tensor in the file" : ", none"));
                FakeFile file(every);
                ModelConfig decided = c;
                f->read_file(file, decided);
                CHECK_NOTHROW(attn::validate_inference_config(decided));
                f->plan(decided, file);
                CHECK(file.twice.empty());
                for (const attn::ParamInfo& info : attn::parameter_layout(decided)) {
                    INFO(info.name);
                    const auto it = file.needs.find(info.name);
                    if (it == file.needs.end()) {
                        FAIL_CHECK("nothing fills " + info.name);
                        continue;
                    }
                    CHECK(it->second.shape == hub_shape(info, it->second.layout));
                    file.needs.erase(it);
                }
                for (const auto& [name, need] : file.needs) FAIL_CHECK("the plan fills " + name + ", which the layout has not");
                // the largest config is the file with every tensor's
                if (every) {
                    const ModelConfig largest = attn::largest_file_config(c);
                    CHECK(attn::parameter_layout(largest).size() == attn::parameter_layout(decided).size());
                }
            }
        }
    }
}
