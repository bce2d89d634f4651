// Tests of the model trace's field table (model/model_trace_fields.hpp): the CLI's
// JSON (model_trace_json, `attn run`) writes exactly the table's names that are not
// js_only, in the table's order, at every level (the document, each layer, each
// head); a field the trace did not keep is left out, and a layer whose vectors it
// did not keep is a summary (its heads' weights), in the JSON as in the table.

#include "base/json_value.hpp"
#include "model/model.hpp"
#include "model/model_json.hpp"
#include "model/model_trace_fields.hpp"
#include "model_test_util.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

using attn::trace_fields::Where;

/// The names a walk of the table writes at one level: every name, and those the
/// CLI's JSON writes (not js_only); each list's items and each object, a level each.
struct Names {
    std::vector<std::string> all, json;
    std::map<std::string, std::vector<Names>> lists;
    std::map<std::string, Names> objects;
};

/// A writer of the table (the interface of trace_fields.hpp) that keeps only the names.
class NamesWriter {
public:
    explicit NamesWriter(Names& root) : n_(&root) {}
    template <typename V>
    void field(const char* name, const V&, Where where) {
        add(name, where);
    }
    template <typename Body>
    void object(const char* name, Where where, Body body) {
        add(name, where);
        into(n_->objects[name], body);
    }
    template <typename T, typename Each>
    void list(const char* name, const std::vector<T>& items, Each each) {
        add(name, Where::everywhere);
        std::vector<Names>& out = n_->lists[name];
        for (const T& item : items) {
            out.emplace_back();
            into(out.back(), [&] { each(item); });
        }
    }

private:
    void add(const char* name, Where where) {
        n_->all.push_back(name);
        if (where != Where::js_only) n_->json.push_back(name);
    }
    template <typename Body>
    void into(Names& child, Body body) {
        Names* outer = n_;
        n_ = &child;
        body();
        n_ = outer;
    }
    Names* n_;
};

std::vector<std::string> keys_of(const attn::JsonValue& v) {
    REQUIRE(v.is(attn::JsonValue::Type::object));
    std::vector<std::string> keys;
    for (const auto& member : v.object) keys.push_back(member.first);
    return keys;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
    for (const std::string& n : names)
        if (n == name) return true;
    return false;
}

struct Traced {
    attn::ModelConfig config;
    attn::Parameters params;
    attn::ModelTrace trace;
    Names names;          // the table's walk, with the parameters
    attn::JsonValue json;  // model_trace_json's document
};

Traced traced(const attn::ModelConfig& c, int T, const attn::TraceKeep& keep = {}) {
    Traced t;
    t.config = c;
    t.params = attn::Parameters(c);
    attn::init_parameters(c, 7, t.params);
    std::vector<std::int32_t> ids;
    std::vector<attn::Token> tokens;
    for (int i = 0; i < T; ++i) {
        ids.push_back((3 * i + 1) % c.vocab);
        tokens.push_back(attn::Token{"t" + std::to_string(i), ids.back(), static_cast<std::size_t>(3 * i),
                                     static_cast<std::size_t>(3 * i + 2)});
    }
    t.trace = attn::trace_model(c, t.params, ids, -1, {}, keep);
    NamesWriter w(t.names);
    attn::trace_fields::model_trace(w, t.trace, &t.params);
    t.json = attn::parse_json(attn::model_trace_json(c, tokens, t.trace));
    return t;
}

/// The JSON's keys at every level are the table's non-js_only names, in order.
void check_keys(const Traced& t) {
    std::vector<std::string> top = {"config", "tokens"};
    top.insert(top.end(), t.names.json.begin(), t.names.json.end());
    CHECK(keys_of(t.json) == top);
    const attn::JsonValue* layers = t.json.get("layers");
    REQUIRE(layers);
    const std::vector<Names>& table_layers = t.names.lists.at("layers");
    REQUIRE(layers->array.size() == table_layers.size());
    for (std::size_t l = 0; l < table_layers.size(); ++l) {
        INFO("layer " << l);
        CHECK(keys_of(layers->array[l]) == table_layers[l].json);
        const attn::JsonValue* heads = layers->array[l].get("heads");
        REQUIRE(heads);
        const std::vector<Names>& table_heads = table_layers[l].lists.at("heads");
        REQUIRE(heads->array.size() == table_heads.size());
        for (std::size_t h = 0; h < table_heads.size(); ++h) CHECK(keys_of(heads->array[h]) == table_heads[h].json);
    }
}

}  // namespace

TEST_CASE("model_trace_json: its keys are the model trace table's names that are not js_only, at every level",
          "[model_json]") {
    using model_test::sized_config;
    attn::ModelConfig ours = sized_config(9, 8, 8, 2, 2, 0);
    attn::ModelConfig no_ln = sized_config(9, 8, 8, 2, 2, 6);
    no_ln.layernorm = false;
    no_ln.positional = attn::Positional::sinusoidal;
    const attn::ModelConfig gpt2 = model_test::gpt2_options(sized_config(11, 8, 8, 2, 2, 12));
    const attn::ModelConfig bert = model_test::bert_options(sized_config(11, 8, 8, 2, 2, 12));
    for (const attn::ModelConfig& c : {ours, no_ln, gpt2, bert}) {
        INFO("family '" << c.family << "', mlp " << c.mlp << ", layernorm " << c.layernorm);
        const Traced t = traced(c, 5);
        check_keys(t);
        // the weights and gains are the JS objects' only
        const Names& layer = t.names.lists.at("layers")[0];
        for (const char* name : {"w_query", "w_key", "w_value", "w_output"}) {
            CHECK(has(layer.all, name));
            CHECK_FALSE(has(layer.json, name));
        }
        CHECK(has(layer.all, "b_query") == c.attn_bias);
        CHECK(has(layer.all, "ln1_gain") == c.layernorm);
        CHECK(has(t.names.all, "final_ln_gain") == (c.layernorm && c.norm == attn::Norm::pre));
        CHECK(has(t.names.all, "length"));
        CHECK_FALSE(has(t.names.json, "length"));
        // the JSON's documented keys (model_json.hpp): what the config has, in this order
        std::vector<std::string> top = {"config", "tokens", "embeddings", "positional"};
        if (c.token_types > 0) top.push_back("token_type");
        if (c.embed_layernorm) top.push_back("embed_normed");
        top.insert(top.end(), {"mask", "layers", "final_normed"});
        if (c.output_transform) top.push_back("transformed");
        top.insert(top.end(), {"logits", "probabilities"});
        CHECK(keys_of(t.json) == top);
        std::vector<std::string> block = {"input", "normed", "heads", "concat", "attention_output", "residual"};
        if (c.mlp > 0 || c.norm == attn::Norm::post) block.push_back("mlp_normed");
        if (c.mlp > 0) block.insert(block.end(), {"mlp_hidden", "mlp_output"});
        block.push_back("output");
        for (const attn::JsonValue& l : t.json.get("layers")->array) CHECK(keys_of(l) == block);
        CHECK(layer.lists.at("heads")[0].json ==
              std::vector<std::string>{"query", "key", "value", "scores", "scaled", "row_max", "row_sum", "weights", "output"});
    }
}

TEST_CASE("model trace table: a field the trace did not keep is left out, a layer without its vectors is a summary",
          "[model_json]") {
    const attn::ModelConfig c = model_test::gpt2_options(model_test::sized_config(11, 8, 8, 2, 3, 12));
    SECTION("one layer's heads and vectors, no logits, the top 3: the other layers have no heads") {
        attn::TraceKeep keep;
        keep.layer = 1;
        keep.vectors = 1;
        keep.logits = false;
        keep.top_k = 3;
        const Traced t = traced(c, 4, keep);
        check_keys(t);
        CHECK_FALSE(has(t.names.all, "logits"));
        CHECK_FALSE(has(t.names.all, "probabilities"));
        CHECK(has(t.names.all, "final_normed"));
        // the top tokens are the JS objects' only
        CHECK(has(t.names.all, "top"));
        CHECK_FALSE(has(t.names.json, "top"));
        CHECK(t.names.objects.at("top").all == std::vector<std::string>{"k", "ids", "p"});
        const std::vector<Names>& layers = t.names.lists.at("layers");
        for (int l : {0, 2}) {
            CHECK(layers[static_cast<std::size_t>(l)].all == std::vector<std::string>{"heads"});
            CHECK(layers[static_cast<std::size_t>(l)].lists.at("heads").empty());
        }
        CHECK(layers[1].lists.at("heads").size() == 2);
        CHECK(has(layers[1].all, "w_query"));
    }
    SECTION("every layer's heads, one layer's vectors: the others carry their heads' weights only") {
        attn::TraceKeep keep;
        keep.vectors = 0;
        const Traced t = traced(c, 4, keep);
        check_keys(t);
        CHECK(has(t.names.json, "logits"));
        CHECK_FALSE(has(t.names.all, "top"));
        const std::vector<Names>& layers = t.names.lists.at("layers");
        CHECK(has(layers[0].json, "input"));
        for (std::size_t l : {1u, 2u}) {
            CHECK(layers[l].all == std::vector<std::string>{"heads"});
            REQUIRE(layers[l].lists.at("heads").size() == 2);
            for (const Names& h : layers[l].lists.at("heads")) CHECK(h.all == std::vector<std::string>{"weights"});
        }
    }
}

TEST_CASE("model trace table: camelCased, its names are the JS keys the pages read", "[model_json]") {
    using attn::trace_fields::camel_case;
    attn::TraceKeep keep;
    keep.top_k = 2;
    const Traced t = traced(model_test::gpt2_options(model_test::sized_config(11, 8, 8, 2, 1, 12)), 3, keep);
    const auto js = [](const std::vector<std::string>& names) {
        std::vector<std::string> out;
        for (const std::string& n : names) out.push_back(camel_case(n.c_str()));
        return out;
    };
    CHECK(js(t.names.all) == std::vector<std::string>{"length", "embeddings", "positional", "mask", "layers", "finalNormed",
                                                      "logits", "probabilities", "finalLnGain", "finalLnBias", "top"});
    CHECK(js(t.names.lists.at("layers")[0].all) ==
          std::vector<std::string>{"input", "normed", "wQuery", "wKey", "wValue", "wOutput", "bQuery", "bKey",
                                   "bValue", "bOutput", "ln1Gain", "ln1Bias", "heads", "concat", "attentionOutput",
                                   "residual", "mlpNormed", "mlpHidden", "mlpOutput", "output"});
    CHECK(js(t.names.lists.at("layers")[0].lists.at("heads")[0].all) ==
          std::vector<std::string>{"query", "key", "value", "scores", "scaled", "rowMax", "rowSum", "weights", "output"});
}
