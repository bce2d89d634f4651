// Tests of the structure issue #10 asks for: one definition per concept, state
// owned by its caller, bounded workspaces, machine-readable error codes, the
// softmax row statistics of the trace, the one trace field table.

#include "attention/attention.hpp"
#include "attention/fast_attention.hpp"
#include "kernels/gemm.hpp"
#include "attention/json.hpp"
#include "base/json_value.hpp"
#include "attention/mask.hpp"
#include "attention/multi_head.hpp"
#include "attention/trace.hpp"
#include "attention/trace_fields.hpp"
#include "checkpoints/safetensors.hpp"
#include "train/trainer.hpp"
#include "base/types.hpp"
#include "attention/weights.hpp"
#include "matchers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <string>

namespace {

attn::Matrix random_matrix(int rows, int cols, unsigned seed, float scale = 1.0f) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> u(-scale, scale);
    attn::Matrix m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = u(gen);
    return m;
}

using testing::code_of;

bool same(const attn::Weights& a, const attn::Weights& b) {
    return a.w_query == b.w_query && a.w_key == b.w_key && a.w_value == b.w_value && a.w_output == b.w_output;
}

}  // namespace

// ---- error codes ------------------------------------------------------------------------

TEST_CASE("Error codes: every code has a distinct snake_case name, and the default is bad_input", "[structure]") {
    std::set<std::string> names;
    for (attn::Error::Code c : attn::kErrorCodes) {
        const std::string n = attn::error_code_name(c);
        CHECK(!n.empty());
        for (char ch : n) CHECK(((ch >= 'a' && ch <= 'z') || ch == '_'));
        names.insert(n);
    }
    CHECK(names.size() == std::size(attn::kErrorCodes));
    CHECK(attn::Error("x").code() == attn::Error::Code::bad_input);
    CHECK(attn::Error(attn::Error::Code::too_large, "y").code() == attn::Error::Code::too_large);
}

TEST_CASE("Error codes: the core's errors say why", "[structure]") {
    using C = attn::Error::Code;
    attn::Config config;
    std::string words;
    for (int i = 0; i < 3000; ++i) words += "w ";
    CHECK(code_of([&] { attn::run(words, config); }) == C::too_many_tokens);
    CHECK(code_of([&] { attn::run("", config); }) == C::empty_text);
    CHECK(code_of([&] { attn::run("a\xff", config); }) == C::bad_text);
    attn::Config wide;
    wide.d_model = 4096;
    CHECK(code_of([&] { attn::run("a b", wide); }) == C::too_large);
    attn::Config big;
    big.heads = 16;
    std::string thousand;
    for (int i = 0; i < 1000; ++i) thousand += "w ";
    CHECK(code_of([&] { attn::run(thousand, big); }) == C::too_large);
    CHECK(code_of([] { attn::parse_mask("bogus"); }) == C::bad_mask);
    attn::Config custom;
    custom.mask = attn::MaskKind::custom;
    custom.custom_mask = attn::MaskMatrix::Constant(2, 2, true);
    CHECK(code_of([&] { attn::run("a b c", custom); }) == C::bad_mask);
    const attn::Weights w = attn::glorot_weights(4, 2, 1);
    attn::Matrix x = random_matrix(3, 4, 1);
    x(1, 2) = std::numeric_limits<float>::quiet_NaN();
    CHECK(code_of([&] { attn::multi_head_output(x, w, 2, attn::MaskMatrix::Constant(3, 3, true), true); }) ==
          C::not_finite);
    CHECK(code_of([&] { attn::multi_head_output(random_matrix(3, 6, 2), w, 2, attn::MaskMatrix::Constant(3, 3, true), true); }) ==
          C::bad_shape);
    std::vector<std::string> many(65, "a");
    CHECK(code_of([&] { attn::run_batch(many, config); }) == C::too_many_tokens);
    // a batch keeps the code of the sentence that failed
    CHECK(code_of([&] { attn::run_batch({"a b", ""}, config); }) == C::empty_text);
}

TEST_CASE("Error codes: the three attention paths share one validator and its messages", "[structure]") {
    const attn::Weights w = attn::glorot_weights(4, 2, 1);
    const attn::Matrix x = random_matrix(2, 4, 3);
    const attn::MaskMatrix wrong = attn::MaskMatrix::Constant(1, 1, true);
    std::set<std::string> messages;
    for (const auto& call : std::vector<std::function<void()>>{
             [&] { attn::multi_head_attention(x, w, 2, wrong, true); },
             [&] { attn::multi_head_attention_reference(x, w, 2, wrong, true); },
             [&] { attn::multi_head_output(x, w, 2, wrong, true); },
             [&] { attn::fast_multi_head_output(x, w, 2, attn::MaskSpec::custom(wrong), true); }}) {
        try {
            call();
            FAIL("no error");
        } catch (const attn::Error& e) {
            messages.insert(e.what());
            CHECK(e.code() == attn::Error::Code::bad_mask);
        }
    }
    CHECK(messages == std::set<std::string>{"mask is 1x1, expected 2x2 (tokens x tokens)"});
}

// ---- the softmax row statistics ------------------------------------------------------------

TEST_CASE("masked_softmax: row_max and row_sum are the allowed maximum and the denominator, 0 and 0 for a blocked row",
          "[structure]") {
    const int t = 7;
    const attn::Matrix scaled = random_matrix(t, t, 11, 30.0f);
    attn::MaskMatrix mask = attn::build_mask(attn::MaskKind::causal, t, t);
    mask.row(4).setConstant(false);  // a fully blocked row
    mask(2, 0) = false;
    attn::Matrix weights;
    attn::Vector row_max, row_sum;
    attn::masked_softmax(scaled, mask, weights, &row_max, &row_sum);
    REQUIRE(row_max.size() == t);
    REQUIRE(row_sum.size() == t);
    for (int i = 0; i < t; ++i) {
        // independent: in double, straight from the definition
        double m = -std::numeric_limits<double>::infinity();
        for (int j = 0; j < t; ++j)
            if (mask(i, j)) m = std::max(m, static_cast<double>(scaled(i, j)));
        if (i == 4) {
            CHECK(row_max(i) == 0.0f);
            CHECK(row_sum(i) == 0.0f);
            continue;
        }
        double sum = 0;
        for (int j = 0; j < t; ++j)
            if (mask(i, j)) sum += std::exp(static_cast<double>(scaled(i, j)) - m);
        CHECK(row_max(i) == static_cast<float>(m));
        CHECK(std::abs(row_sum(i) - sum) <= 1e-6 * sum);
        CHECK(row_sum(i) >= 1.0f);
        for (int j = 0; j < t; ++j) {
            const double expected = mask(i, j) ? std::exp(static_cast<double>(scaled(i, j)) - m) / sum : 0.0;
            CHECK(std::abs(weights(i, j) - expected) <= 1e-6);
        }
    }
    // the statistics do not change the weights
    attn::Matrix plain;
    attn::masked_softmax(scaled, mask, plain);
    CHECK(plain == weights);
}

TEST_CASE("multi_head_attention: every head carries its row_max and row_sum, the same on the kernel and Eigen paths",
          "[structure]") {
    const attn::Weights w = attn::glorot_weights(8, 2, 5);
    const attn::Matrix x = random_matrix(5, 8, 6);
    const attn::MaskMatrix mask = attn::build_mask(attn::MaskKind::causal, 5, 5);
    const attn::MultiHeadTrace fast = attn::multi_head_attention(x, w, 2, mask, true);
    const attn::MultiHeadTrace ref = attn::multi_head_attention_reference(x, w, 2, mask, true);
    for (std::size_t h = 0; h < 2; ++h) {
        attn::Matrix weights;
        attn::Vector m, s;
        attn::masked_softmax(fast.heads[h].scaled, mask, weights, &m, &s);
        CHECK(fast.heads[h].row_max == m);
        CHECK(fast.heads[h].row_sum == s);
        CHECK((fast.heads[h].row_max - ref.heads[h].row_max).cwiseAbs().maxCoeff() <= 1e-5f);
        CHECK((fast.heads[h].row_sum - ref.heads[h].row_sum).cwiseAbs().maxCoeff() <= 1e-5f * s.maxCoeff());
    }
}

// ---- the trace field table ------------------------------------------------------------------

TEST_CASE("trace fields: camel_case is the one naming rule from the CLI's snake_case to JS", "[structure]") {
    using attn::trace_fields::camel_case;
    CHECK(camel_case("d_model") == "dModel");
    CHECK(camel_case("w_query") == "wQuery");
    CHECK(camel_case("row_max") == "rowMax");
    CHECK(camel_case("share_heads") == "shareHeads");
    CHECK(camel_case("heads") == "heads");
}

TEST_CASE("trace_to_json: every head has row_max and row_sum, T numbers each, equal to the trace's", "[structure]") {
    attn::Config c;
    c.mask = attn::MaskKind::causal;
    const attn::Trace tr = attn::run("The cat sat on the mat.", c);
    const attn::JsonValue j = attn::parse_json(attn::trace_to_json(tr));
    const attn::JsonValue* heads = j.get("heads");
    REQUIRE(heads);
    REQUIRE(heads->array.size() == tr.heads.size());
    for (std::size_t h = 0; h < tr.heads.size(); ++h) {
        const attn::JsonValue* rm = heads->array[h].get("row_max");
        const attn::JsonValue* rs = heads->array[h].get("row_sum");
        REQUIRE(rm);
        REQUIRE(rs);
        REQUIRE(rm->array.size() == tr.tokens.size());
        REQUIRE(rs->array.size() == tr.tokens.size());
        for (std::size_t i = 0; i < tr.tokens.size(); ++i) {
            CHECK(static_cast<float>(rm->array[i].number) == tr.heads[h].row_max(static_cast<Eigen::Index>(i)));
            CHECK(static_cast<float>(rs->array[i].number) == tr.heads[h].row_sum(static_cast<Eigen::Index>(i)));
        }
    }
    // the JS-only fields stay out of the CLI's JSON
    CHECK(!j.get("config")->get("pad_to"));
    CHECK(!j.get("real_tokens"));
}

// ---- state owned by its caller ----------------------------------------------------------------

TEST_CASE("WeightsCache: two caches with different seeds never see each other's weights", "[structure]") {
    attn::WeightsCache a, b;
    const attn::Weights wa = a.get(8, 2, 1, false);
    const attn::Weights wb = b.get(8, 2, 2, false);
    CHECK(same(wa, attn::glorot_weights(8, 2, 1)));
    CHECK(same(wb, attn::glorot_weights(8, 2, 2)));
    CHECK(!same(wa, wb));
    // a's set survives b's work: a hit, with a's own values
    CHECK(same(a.get(8, 2, 1, false), attn::glorot_weights(8, 2, 1)));
    CHECK(a.hits() == 1);
    CHECK(a.misses() == 1);
    CHECK(b.hits() == 0);
    // any other key is a miss with the right values
    CHECK(same(a.get(8, 2, 1, true), attn::glorot_weights(8, 2, 1, true)));
    CHECK(same(a.get(8, 4, 1, false), attn::glorot_weights(8, 4, 1)));
    CHECK(a.misses() == 3);
    CHECK(a.bytes() == 4 * 8 * 8 * sizeof(float));
    a.clear();
    CHECK(a.bytes() == 0);
}

TEST_CASE("run with a WeightsCache gives the trace run without one gives, and reuses the set", "[structure]") {
    attn::WeightsCache cache;
    attn::Config c;
    c.seed = 9;
    const attn::Trace plain = attn::run("one two three", c);
    const attn::Trace first = attn::run("one two three", c, &cache);
    const attn::Trace second = attn::run("one two three four", c, &cache);
    CHECK(first.output == plain.output);
    CHECK(same(second.weights, plain.weights));
    CHECK(cache.hits() == 1);
    CHECK(cache.misses() == 1);
}

TEST_CASE("gemm workspace: bounded, a large product's workspace is freed, a small one is kept", "[structure]") {
    attn::gemm_release_workspace();
    CHECK(attn::gemm_workspace_bytes() == 0);
    attn::Matrix c;
    attn::gemm(random_matrix(8, 8, 1), random_matrix(8, 8, 2), c);
    const std::size_t small = attn::gemm_workspace_bytes();
    CHECK(small > 0);
    CHECK(small <= attn::kGemmWorkspaceKeepBytes);
    // 1200×1200 · 1200×16: A packs to 5.5 MB, above the bound
    const attn::Matrix a = random_matrix(1200, 1200, 3), b = random_matrix(1200, 16, 4);
    attn::gemm(a, b, c);
    CHECK(attn::gemm_workspace_bytes() <= attn::kGemmWorkspaceKeepBytes);
    // and the product is still right
    const attn::Matrix expected = a * b;
    CHECK((c - expected).cwiseAbs().maxCoeff() <= 1e-3f);
    attn::gemm_release_workspace();
    CHECK(attn::gemm_workspace_bytes() == 0);
}

TEST_CASE("a full trace at 1200 tokens leaves at most the bound of gemm workspace behind", "[structure]") {
    attn::Config c;
    c.heads = 1;
    c.pad_to = 1200;
    c.mask = attn::MaskKind::padding;
    const attn::Trace tr = attn::run("a b c", c);
    CHECK(tr.tokens.size() == 1200);
    CHECK(attn::gemm_workspace_bytes() <= attn::kGemmWorkspaceKeepBytes);
}

TEST_CASE("FastAttention: each object owns its workspace, and release frees it", "[structure]") {
    attn::FastAttention one, two;
    const attn::Weights w = attn::glorot_weights(16, 4, 3);
    attn::Matrix y;
    one.forward(random_matrix(40, 16, 8), w, 4, attn::MaskSpec::causal(), true, y);
    CHECK(one.workspace_bytes() > 0);
    CHECK(two.workspace_bytes() == 0);
    one.release();
    CHECK(one.workspace_bytes() == 0);
}

// ---- one JSON parser -------------------------------------------------------------------------

TEST_CASE("parse_json: integer literals stay exact beyond 2^53, members keep file order, duplicate keys are rejected",
          "[structure]") {
    const attn::JsonValue v = attn::parse_json("{\"b\": 9007199254740993, \"a\": -9223372036854775808, \"c\": 1.5}");
    REQUIRE(v.object.size() == 3);
    CHECK(v.object[0].first == "b");
    CHECK(v.object[1].first == "a");
    CHECK(v.get("b")->is_integer);
    CHECK(v.get("b")->integer == 9007199254740993LL);
    CHECK(v.get("a")->integer == std::numeric_limits<std::int64_t>::min());
    CHECK(!v.get("c")->is_integer);
    CHECK(v.get("c")->number == 1.5);
    CHECK_THROWS_WITH(attn::parse_json("{\"k\": 1, \"k\": 2}"), Catch::Matchers::Contains("duplicate key \"k\""));
    CHECK_THROWS_WITH(attn::parse_json("{\"o\": {\"k\": 1, \"k\": 2}}"), Catch::Matchers::Contains("duplicate key"));
    // a safetensors header goes through the same parser: its duplicates are errors too
    attn::JsonOptions strict;
    strict.exact_integers = true;
    CHECK_THROWS_WITH(attn::parse_json("[9223372036854775808]", strict), Catch::Matchers::Contains("beyond the 64-bit"));
    CHECK(!attn::parse_json("[9223372036854775808]").array[0].is_integer);
}

TEST_CASE("Error codes: a checkpoint whose metadata is broken JSON or a bad config is bad_checkpoint", "[structure]") {
    for (const std::string& config : {std::string("{\"vocab\": 1,"), std::string("{\"vocab\": 1, \"vocab\": 2}"),
                                      std::string("{\"d_model\": 10, \"heads\": 3}")}) {
        attn::SafeTensors file;
        file.metadata["config"] = config;
        INFO(config);
        CHECK(code_of([&] { attn::load_checkpoint(attn::write_safetensors(file)); }) == attn::Error::Code::bad_checkpoint);
    }
    CHECK(code_of([] { attn::read_safetensors("{}"); }) == attn::Error::Code::bad_checkpoint);
}
