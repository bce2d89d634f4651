// Tests of generation.hpp: the KV cache's incremental forward against the full
// forward (trace_model) on the extended sequence, over random causal models of
// every architecture option; choosing the next token (greedy, seeded sampling);
// the refusals (a model that is not causal, the context, bad settings).

#include "model/generation.hpp"
#include "matchers.hpp"
#include "model_test_util.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

using Catch::Matchers::Contains;

namespace {

/// max |a − b| / max(max |b|, floor) of two float rows.
template <class A, class B>
double row_error(const A& a, const B& b, int n, double floor = 1e-3) {
    double diff = 0, scale = floor;
    for (int i = 0; i < n; ++i) {
        diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
        scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
    }
    return diff / scale;
}

attn::ModelConfig random_causal_config(std::mt19937& rng) {
    attn::ModelConfig c = model_test::random_arch_config(rng);
    c.causal = true;
    c.context = std::uniform_int_distribution<int>(2, 12)(rng);
    return c;
}

/// The message of what `f` throws, after checking its code.
std::string refusal(const std::function<void()>& f, attn::Error::Code want) {
    CHECK(testing::code_of(f) == want);
    return testing::message_of(f);
}

/// random_causal_config with the modern decoders' options (RoPE: keys cached after their
/// rotation; ALiBi; grouped-query attention: H_kv cached heads; ...).
attn::ModelConfig random_causal_modern_config(std::mt19937& rng) {
    attn::ModelConfig c = random_causal_config(rng);
    model_test::add_modern_options(rng, c);
    return c;
}

/// `trials` random causal models of `make`: each append's logits and every head's new
/// weights row against trace_model's on the extended sequence; returns the worst difference.
double check_appends_against_full_forward(std::uint32_t seed, attn::ModelConfig (*make)(std::mt19937&), int trials) {
    std::mt19937 rng(seed);
    double worst = 0;
    for (int trial = 0; trial < trials; ++trial) {
        const attn::ModelConfig c = make(rng);
        INFO("trial " << trial << " config " << model_test::describe(c));
        attn::Model model(c, model_test::random_params(rng, c));
        attn::KvCache cache(model);
        const int n = std::uniform_int_distribution<int>(1, c.context)(rng);
        std::vector<std::int32_t> ids;
        for (int t = 0; t < n; ++t) {
            ids.push_back(std::uniform_int_distribution<int>(0, c.vocab - 1)(rng));
            cache.append(ids.back());
            REQUIRE(cache.length() == t + 1);
            const attn::ModelTrace full = attn::trace_model(c, model.params(), ids);
            const double e = row_error(cache.logits().data(), full.logits.row(t), c.vocab);
            worst = std::max(worst, e);
            REQUIRE(e < 1e-5);
            for (int l = 0; l < c.layers; ++l)
                for (int h = 0; h < c.heads; ++h) {
                    const std::vector<float>& w = cache.weights(l, h);
                    REQUIRE(static_cast<int>(w.size()) == t + 1);
                    const attn::Matrix& fw = full.layers[static_cast<std::size_t>(l)].attention.heads[static_cast<std::size_t>(h)].weights;
                    const double ew = row_error(w.data(), fw.row(t), t + 1);
                    worst = std::max(worst, ew);
                    REQUIRE(ew < 1e-5);
                }
        }
    }
    return worst;
}

}  // namespace

TEST_CASE("generation: each append's logits and every head's new weights row equal the full forward's on the extended sequence",
          "[generation]") {
    WARN("largest relative difference from the full forward: "
         << check_appends_against_full_forward(20261202, random_causal_config, 200));
}

TEST_CASE("generation: the same with RoPE, ALiBi, grouped-query attention and the other modern options",
          "[generation][modern]") {
    WARN("modern options, largest relative difference from the full forward: "
         << check_appends_against_full_forward(20261203, random_causal_modern_config, 200));
}

namespace {

/// The default model, causal, with this context and vocabulary.
attn::ModelConfig small_causal_config(int context, int vocab) {
    attn::ModelConfig c;
    c.causal = true;
    c.context = context;
    c.vocab = vocab;
    return c;
}

/// A prompt appended at once (after `before` tokens appended one at a time) against the same
/// tokens appended one at a time: the last logits and every head's last weights row, and then one
/// more token appended to each: returns the worst relative difference.
double check_prompt_against_single_appends(const attn::ModelConfig& c, std::mt19937& rng, int before, int n) {
    attn::Model model(c, model_test::random_params(rng, c));
    attn::KvCache batch(model), single(model);
    std::vector<std::int32_t> ids;
    for (int t = 0; t < before + n; ++t) ids.push_back(std::uniform_int_distribution<int>(0, c.vocab - 1)(rng));
    for (int t = 0; t < before; ++t) batch.append(ids[static_cast<std::size_t>(t)]);
    batch.append(std::vector<std::int32_t>(ids.begin() + before, ids.end()));
    for (const std::int32_t id : ids) single.append(id);
    REQUIRE(batch.ids() == single.ids());
    double worst = 0;
    for (int round = 0; round < 2; ++round) {
        const double e = row_error(batch.logits().data(), single.logits().data(), c.vocab);
        worst = std::max(worst, e);
        REQUIRE(e < 1e-5);
        for (int l = 0; l < c.layers; ++l)
            for (int h = 0; h < c.heads; ++h) {
                const std::vector<float>& a = batch.weights(l, h);
                const std::vector<float>& b = single.weights(l, h);
                REQUIRE(a.size() == b.size());
                REQUIRE(static_cast<int>(a.size()) == batch.length());
                const double ew = row_error(a.data(), b.data(), static_cast<int>(a.size()));
                worst = std::max(worst, ew);
                REQUIRE(ew < 1e-5);
            }
        if (batch.length() == c.context) break;
        // the next token reads the cache the prompt filled: the same keys and values
        const std::int32_t next = std::uniform_int_distribution<int>(0, c.vocab - 1)(rng);
        batch.append(next);
        single.append(next);
    }
    return worst;
}

}  // namespace

TEST_CASE("generation: a prompt appended at once gives the numbers of appending it one token at a time, modern options too",
          "[generation][modern]") {
    std::mt19937 rng(20261205);
    double worst = 0;
    for (int trial = 0; trial < 150; ++trial) {
        const attn::ModelConfig c = trial % 2 ? random_causal_modern_config(rng) : random_causal_config(rng);
        INFO("trial " << trial << " config " << model_test::describe(c));
        const int before = std::uniform_int_distribution<int>(0, c.context - 1)(rng);
        const int n = std::uniform_int_distribution<int>(1, c.context - before)(rng);
        worst = std::max(worst, check_prompt_against_single_appends(c, rng, before, n));
    }
    WARN("prompt at once vs one token at a time, largest relative difference: " << worst);
}

TEST_CASE("generation: a prompt longer than a block (kPrefillRows) is computed in blocks with the same numbers",
          "[generation][modern]") {
    std::mt19937 rng(11);
    for (int trial = 0; trial < 4; ++trial) {
        attn::ModelConfig c = trial % 2 ? random_causal_modern_config(rng) : random_causal_config(rng);
        c.context = 2 * attn::kPrefillRows + 13;
        INFO("trial " << trial << " config " << model_test::describe(c));
        const int before = trial < 2 ? 0 : 5;
        check_prompt_against_single_appends(c, rng, before, c.context - before - 1);
    }
}

TEST_CASE("generation: a prompt with a bad id or past the context is refused whole, the cache as it was", "[generation]") {
    const attn::ModelConfig c = small_causal_config(6, 5);
    attn::Model model(c);
    attn::init_parameters(c, 1, model.params());
    attn::KvCache cache(model);
    cache.append(std::vector<std::int32_t>{1, 2});
    const std::vector<float> logits(cache.logits().data(), cache.logits().data() + c.vocab);
    CHECK_THAT(refusal([&] { cache.append(std::vector<std::int32_t>{3, 9, 1}); }, attn::Error::Code::bad_input),
               Contains("token id 9 is outside the vocabulary 0 … 4"));
    CHECK_THAT(refusal([&] { cache.append(std::vector<std::int32_t>{0, 1, 2, 3, 4}); }, attn::Error::Code::too_long_for_model),
               Contains("the text has 6 tokens, the most this model reads"));
    CHECK(cache.ids() == std::vector<std::int32_t>{1, 2});
    CHECK(std::vector<float>(cache.logits().data(), cache.logits().data() + c.vocab) == logits);
    cache.append(std::vector<std::int32_t>{});  // nothing to add: nothing changes
    CHECK(cache.length() == 2);
}

TEST_CASE("generation: undo (truncate) then append gives the same numbers as never having gone further", "[generation]") {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 40; ++trial) {
        const attn::ModelConfig c = random_causal_config(rng);
        INFO("trial " << trial << " config " << model_test::describe(c));
        attn::Model model(c, model_test::random_params(rng, c));
        attn::KvCache cache(model), fresh(model);
        std::vector<std::int32_t> ids;
        for (int t = 0; t < c.context; ++t) ids.push_back(std::uniform_int_distribution<int>(0, c.vocab - 1)(rng));
        for (const std::int32_t id : ids) cache.append(id);
        const int keep = std::uniform_int_distribution<int>(0, c.context - 1)(rng);
        cache.truncate(keep);
        CHECK(cache.length() == keep);
        CHECK(cache.logits().size() == 0);
        const std::int32_t other = std::uniform_int_distribution<int>(0, c.vocab - 1)(rng);
        cache.append(other);
        for (int t = 0; t < keep; ++t) fresh.append(ids[static_cast<std::size_t>(t)]);
        fresh.append(other);
        REQUIRE(cache.ids() == fresh.ids());
        // the same operations in the same order: equal to the bit
        CHECK(row_error(cache.logits().data(), fresh.logits().data(), c.vocab, 1.0) == 0.0);
    }
}

TEST_CASE("generation: a model that is not causal (BERT) is refused by name", "[generation]") {
    attn::ModelConfig c;
    c.family = "bert";
    c.causal = false;
    attn::Model bert(c);
    CHECK_THAT(refusal([&] { attn::KvCache cache(bert); }, attn::Error::Code::bad_input),
               Contains("BERT is not causal") && Contains("cannot write a text one token at a time"));
    c.family = "";
    attn::Model ours(c);
    CHECK_THAT(refusal([&] { attn::KvCache cache(ours); }, attn::Error::Code::bad_input), Contains("this model is not causal"));
}

TEST_CASE("generation: the context is the limit, with a clear message, and ids outside the vocabulary are refused", "[generation]") {
    const attn::ModelConfig c = small_causal_config(3, 5);
    attn::Model model(c);
    attn::init_parameters(c, 1, model.params());
    attn::KvCache cache(model);
    CHECK_THAT(refusal([&] { cache.append(5); }, attn::Error::Code::bad_input), Contains("token id 5 is outside the vocabulary 0 … 4"));
    for (int i = 0; i < 3; ++i) cache.append(i);
    CHECK_THAT(refusal([&] { cache.append(0); }, attn::Error::Code::too_long_for_model),
               Contains("the text has 3 tokens, the most this model reads"));
    CHECK_THAT(refusal([&] { cache.truncate(4); }, attn::Error::Code::bad_input), Contains("the cache holds 3"));
}

TEST_CASE("generation: greedy is the argmax, the smaller id on a tie", "[generation]") {
    const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f, 1.0f};
    CHECK(attn::choose_token(logits.data(), 5, {}, 0) == 1);
    const std::vector<float> one = {-3.0f, -2.0f, -2.5f};
    CHECK(attn::choose_token(one.data(), 3, {}, 7) == 1);
}

TEST_CASE("generation: sampling follows softmax(logits / temperature) over the top k, and a seed replays", "[generation]") {
    std::mt19937 rng(3);
    for (int trial = 0; trial < 20; ++trial) {
        const int V = std::uniform_int_distribution<int>(2, 8)(rng);
        std::vector<float> logits(static_cast<std::size_t>(V));
        for (float& x : logits) x = std::uniform_real_distribution<float>(-2, 2)(rng);
        attn::GenerationOptions o;
        o.sample = true;
        o.temperature = std::uniform_real_distribution<double>(0.3, 2.0)(rng);
        o.top_k = std::uniform_int_distribution<int>(0, V)(rng);
        INFO("V " << V << " temperature " << o.temperature << " top_k " << o.top_k);
        // the expected distribution, by hand: the k largest logits, exp(l / T) normalised
        std::vector<int> order(static_cast<std::size_t>(V));
        for (int i = 0; i < V; ++i) order[static_cast<std::size_t>(i)] = i;
        std::sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
        const int k = o.top_k == 0 ? V : o.top_k;
        std::vector<double> want(static_cast<std::size_t>(V), 0.0);
        double z = 0;
        for (int i = 0; i < k; ++i) z += std::exp(logits[order[i]] / o.temperature);
        for (int i = 0; i < k; ++i) want[order[i]] = std::exp(logits[order[i]] / o.temperature) / z;
        // many draws: the positions (and seeds) give independent draws
        const int draws = 20000;
        std::vector<double> got(static_cast<std::size_t>(V), 0.0);
        for (int d = 0; d < draws; ++d) {
            o.seed = static_cast<std::uint32_t>(d % 97);
            got[attn::choose_token(logits.data(), V, o, d)] += 1.0 / draws;
        }
        for (int j = 0; j < V; ++j) {
            INFO("token " << j);
            if (want[j] == 0) CHECK(got[j] == 0);
            // 5 standard deviations of a frequency over 20000 draws
            CHECK(std::fabs(got[j] - want[j]) < 5 * std::sqrt(want[j] * (1 - want[j]) / draws) + 1e-9);
        }
        // the same seed and position: the same token; top_k = 1 is the argmax
        o.seed = 12345;
        CHECK(attn::choose_token(logits.data(), V, o, 4) == attn::choose_token(logits.data(), V, o, 4));
        o.top_k = 1;
        CHECK(attn::choose_token(logits.data(), V, o, 4) == order[0]);
    }
}

TEST_CASE("generation: a temperature or top-k outside its range is refused, naming the range", "[generation]") {
    const std::vector<float> logits = {0.f, 1.f, 2.f};
    attn::GenerationOptions o;
    o.sample = true;
    o.temperature = 0;
    CHECK_THAT(refusal([&] { attn::choose_token(logits.data(), 3, o, 0); }, attn::Error::Code::bad_input),
               Contains("the temperature 0 is outside 0.05 … 5"));
    o.temperature = 1;
    o.top_k = 4;
    CHECK_THAT(refusal([&] { attn::choose_token(logits.data(), 3, o, 0); }, attn::Error::Code::bad_input),
               Contains("top-k 4 is outside 0 (every token) … the vocabulary's 3"));
}
