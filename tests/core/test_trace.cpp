// Tests of src/attention/trace.hpp: the whole pipeline from a sentence, its
// properties over random configurations, and every validation error.

#include "attention/embedding.hpp"
#include "attention/mask.hpp"
#include "attention/positional.hpp"
#include "text/tokenizer.hpp"
#include "attention/trace.hpp"
#include "base/types.hpp"
#include "attention/weights.hpp"
#include "matchers.hpp"
#include "reference.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

using Catch::Matchers::Contains;

namespace {

attn::Config make_config(int d_model, int heads, std::uint32_t seed = 42) {
    attn::Config c;
    c.d_model = d_model;
    c.heads = heads;
    c.seed = seed;
    return c;
}

std::string run_error(const std::string& sentence, const attn::Config& config) {
    try {
        attn::run(sentence, config);
    } catch (const attn::Error& e) {
        return e.what();
    }
    return "<no error>";
}

std::string config_error(const attn::Config& config) {
    try {
        attn::validate_config(config);
    } catch (const attn::Error& e) {
        return e.what();
    }
    return "<no error>";
}

std::string words(int n) {
    std::string s;
    for (int i = 0; i < n; ++i) {
        if (i) s.push_back(' ');
        s += "w";
    }
    return s;
}

/// Checks every intermediate of a trace against the double reference fed
/// with the trace's own input, weights and mask.
void check_against_reference(const attn::Trace& tr) {
    const ref::Result r =
        ref::multi_head(tr.input, tr.weights, tr.config.heads, tr.mask, tr.config.scale);
    REQUIRE(tr.heads.size() == static_cast<std::size_t>(tr.config.heads));
    const char* names[] = {"query", "key", "value", "scores", "scaled", "weights", "output"};
    for (int h = 0; h < tr.config.heads; ++h) {
        const auto& g = tr.heads[h];
        const auto& e = r.heads[h];
        const attn::Matrix* got[] = {&g.query, &g.key, &g.value, &g.scores, &g.scaled, &g.weights, &g.output};
        const ref::Mat* expected[] = {&e.query, &e.key, &e.value, &e.scores, &e.scaled, &e.weights, &e.output};
        for (int k = 0; k < 7; ++k) {
            const ref::Diff d = ref::compare(*got[k], *expected[k], 1e-5);
            INFO("head " << h << " " << d.describe(names[k]));
            CHECK(d.ok());
        }
    }
    const ref::Diff dc = ref::compare(tr.concat, r.concat, 1e-5);
    const ref::Diff dout = ref::compare(tr.output, r.output, 1e-5);
    INFO(dc.describe("concat"));
    INFO(dout.describe("output"));
    CHECK(dc.ok());
    CHECK(dout.ok());
}

}  // namespace

// ---- the pipeline -----------------------------------------------------------------

TEST_CASE("run: the trace records tokens, config, shapes and the pipeline stages", "[trace]") {
    attn::Config c = make_config(8, 2, 7);
    const std::string s = "The cat sat.";
    const attn::Trace tr = attn::run(s, c);
    REQUIRE(tr.tokens.size() == 4);
    CHECK(tr.tokens[0].text == "The");
    CHECK(tr.tokens[3].text == ".");
    CHECK(tr.real_tokens == 4);
    CHECK(tr.d_head == 4);
    CHECK(tr.config.d_model == 8);
    CHECK(tr.config.heads == 2);
    CHECK(tr.config.seed == 7u);
    // X = the embeddings of the tokens, P = the encoding, X' = X + P exactly.
    CHECK(tr.embeddings == attn::embed_tokens(tr.tokens, 8, 7));
    CHECK(tr.positional == attn::positional_encoding(attn::Positional::sinusoidal, 4, 8, 7));
    const attn::Matrix sum = tr.embeddings + tr.positional;
    CHECK(tr.input == sum);
    // Seeded weights unless given.
    const attn::Weights w = attn::glorot_weights(8, 2, 7, false);
    CHECK(tr.weights.w_query == w.w_query);
    CHECK(tr.weights.w_key == w.w_key);
    CHECK(tr.weights.w_value == w.w_value);
    CHECK(tr.weights.w_output == w.w_output);
    CHECK(tr.mask == attn::build_mask(attn::MaskKind::none, 4, 4));
    REQUIRE(tr.heads.size() == 2);
    CHECK(tr.concat.rows() == 4);
    CHECK(tr.concat.cols() == 8);
    CHECK(tr.output.rows() == 4);
    CHECK(tr.output.cols() == 8);
    check_against_reference(tr);
}

TEST_CASE("run: positional encoding follows the formula in the trace", "[trace]") {
    attn::Config c = make_config(5, 1, 3);
    const attn::Trace tr = attn::run("a b c d e f", c);
    const ref::Mat p = ref::sinusoidal(6, 5);
    for (int t = 0; t < 6; ++t)
        for (int k = 0; k < 5; ++k) CHECK(tr.positional(t, k) == Approx(p[t][k]).margin(1e-5));
    c.positional = attn::Positional::none;
    const attn::Trace none = attn::run("a b c d e f", c);
    CHECK((none.positional.array() == 0.0f).all());
    CHECK(none.input == none.embeddings);
    c.positional = attn::Positional::learned;
    const attn::Trace learned = attn::run("a b c d e f", c);
    CHECK(learned.positional == attn::positional_encoding(attn::Positional::learned, 6, 5, 3));
}

TEST_CASE("run: pad_to appends PAD tokens with zero embeddings", "[trace]") {
    attn::Config c = make_config(6, 3);
    c.pad_to = 6;
    c.mask = attn::MaskKind::padding;
    const std::string s = "the cat sat";
    const attn::Trace tr = attn::run(s, c);
    REQUIRE(tr.tokens.size() == 6);
    CHECK(tr.real_tokens == 3);
    for (int t = 3; t < 6; ++t) {
        INFO("position " << t);
        CHECK(tr.tokens[t].text == "[PAD]");
        CHECK(tr.tokens[t].id == attn::kPadId);
        CHECK(tr.tokens[t].start == s.size());
        CHECK(tr.tokens[t].end == s.size());
        CHECK((tr.embeddings.row(t).array() == 0.0f).all());
    }
    // Pad rows of X' carry only the positional encoding.
    CHECK(tr.input.bottomRows(3) == tr.positional.bottomRows(3));
    // The padding mask hides pad keys from every query.
    CHECK(tr.mask == attn::build_mask(attn::MaskKind::padding, 6, 3));
    for (const auto& h : tr.heads) {
        REQUIRE(h.weights.rows() == 6);
        for (int i = 0; i < 6; ++i) {
            for (int j = 3; j < 6; ++j) CHECK(h.weights(i, j) == 0.0f);
            CHECK(h.weights.row(i).sum() == Approx(1.0f).margin(1e-5));
        }
    }
    check_against_reference(tr);
    // pad_to equal to the sentence length adds nothing.
    c.pad_to = 3;
    CHECK(attn::run(s, c).tokens.size() == 3);
}

TEST_CASE("run: scaled equals scores times 1/sqrt(D), or scores with the scale off", "[trace]") {
    for (bool scale : {true, false}) {
        attn::Config c = make_config(12, 3, 5);
        c.scale = scale;
        const attn::Trace tr = attn::run("one two three four five", c);
        const float f = scale ? 0.5f : 1.0f;  // D = 4
        for (const auto& h : tr.heads) {
            if (!scale) CHECK(h.scaled == h.scores);
            for (int i = 0; i < h.scores.rows(); ++i)
                for (int j = 0; j < h.scores.cols(); ++j)
                    CHECK(std::abs(h.scaled(i, j) - h.scores(i, j) * f) <=
                          1e-6f * std::max(1.0f, std::abs(h.scores(i, j))));
        }
    }
}

TEST_CASE("run: lowercase option makes Hello and hello the same token", "[trace]") {
    attn::Config c = make_config(4, 1);
    c.lowercase = true;
    const attn::Trace tr = attn::run("Hello hello", c);
    CHECK(tr.tokens[0].text == "hello");
    CHECK(tr.tokens[0].id == tr.tokens[1].id);
    CHECK(tr.embeddings.row(0) == tr.embeddings.row(1));
    c.lowercase = false;
    const attn::Trace kept = attn::run("Hello hello", c);
    CHECK(kept.tokens[0].id != kept.tokens[1].id);
}

TEST_CASE("run: custom weights replace the seeded ones", "[trace]") {
    attn::Config c = make_config(2, 1);
    const attn::Matrix i2 = attn::Matrix::Identity(2, 2);
    attn::Matrix wo(2, 2);
    wo << 0, 1, 1, 0;
    c.weights = attn::Weights{i2, i2, i2, wo};
    c.positional = attn::Positional::none;
    const attn::Trace tr = attn::run("a b", c);
    CHECK(tr.weights.w_query == i2);
    CHECK(tr.weights.w_output == wo);
    // Q = K = V = X' = X: the heads see the embeddings themselves.
    CHECK(tr.heads[0].query == tr.embeddings);
    CHECK(tr.heads[0].value == tr.embeddings);
    check_against_reference(tr);
}

TEST_CASE("run: custom mask is used as given", "[trace]") {
    attn::Config c = make_config(4, 2);
    attn::MaskMatrix m(3, 3);
    m << false, true, false,  //
        true, false, true,    //
        false, false, false;
    c.mask = attn::MaskKind::custom;
    c.custom_mask = m;
    const attn::Trace tr = attn::run("x y z", c);
    CHECK(tr.mask == m);
    for (const auto& h : tr.heads) {
        CHECK(h.weights(0, 1) == 1.0f);
        CHECK(h.weights(0, 0) == 0.0f);
        CHECK(h.weights(1, 1) == 0.0f);
        CHECK((h.weights.row(2).array() == 0.0f).all());
        CHECK((h.output.row(2).array() == 0.0f).all());
        // Query 0 sees only key 1: its output is V's row 1.
        CHECK((h.output.row(0) - h.value.row(1)).cwiseAbs().maxCoeff() <= 1e-6f);
    }
    CHECK((tr.output.row(2).array() == 0.0f).all());
    CHECK(tr.output.allFinite());
    check_against_reference(tr);
}

TEST_CASE("run: share_heads gives identical heads", "[trace]") {
    attn::Config c = make_config(12, 4, 3);
    c.share_heads = true;
    const attn::Trace tr = attn::run("heads that all agree", c);
    // Each head projects with its own columns: identical weights, bit-identical heads.
    for (int h = 1; h < 4; ++h) {
        CHECK(tr.heads[h].weights == tr.heads[0].weights);
        CHECK(tr.heads[h].output == tr.heads[0].output);
    }
    c.share_heads = false;
    const attn::Trace diff = attn::run("heads that all agree", c);
    CHECK((diff.heads[1].weights - diff.heads[0].weights).cwiseAbs().maxCoeff() > 1e-3f);
}

TEST_CASE("run: the same sentence and config give the same trace", "[trace]") {
    attn::Config c = make_config(16, 4, 11);
    c.mask = attn::MaskKind::causal;
    const attn::Trace a = attn::run("determinism is a feature", c);
    const attn::Trace b = attn::run("determinism is a feature", c);
    CHECK(a.output == b.output);
    CHECK(a.input == b.input);
    c.seed = 12;
    const attn::Trace d = attn::run("determinism is a feature", c);
    CHECK(a.output != d.output);
}

// ---- run_batch ----------------------------------------------------------------------

TEST_CASE("run_batch: pads every sentence to the longest one", "[trace]") {
    attn::Config c = make_config(8, 2);
    c.mask = attn::MaskKind::causal_padding;
    const std::vector<std::string> sentences = {"a b c d", "hello", "one two"};
    const std::vector<attn::Trace> batch = attn::run_batch(sentences, c);
    REQUIRE(batch.size() == 3);
    const int expected_real[] = {4, 1, 2};
    for (std::size_t k = 0; k < 3; ++k) {
        INFO("sentence " << k);
        REQUIRE(batch[k].tokens.size() == 4);
        CHECK(batch[k].real_tokens == expected_real[k]);
        CHECK(batch[k].output.rows() == 4);
        CHECK(batch[k].mask == attn::build_mask(attn::MaskKind::causal_padding, 4, expected_real[k]));
        for (int t = expected_real[k]; t < 4; ++t) {
            CHECK(batch[k].tokens[t].id == attn::kPadId);
            CHECK(batch[k].tokens[t].start == sentences[k].size());
        }
        // The same as running the sentence alone padded to 4.
        attn::Config single = c;
        single.pad_to = 4;
        const attn::Trace alone = attn::run(sentences[k], single);
        CHECK(alone.output == batch[k].output);
        CHECK(alone.input == batch[k].input);
    }
}

TEST_CASE("run_batch: pad_to larger than the longest sentence wins", "[trace]") {
    attn::Config c = make_config(4, 1);
    c.pad_to = 6;
    c.mask = attn::MaskKind::padding;
    const auto batch = attn::run_batch({"a b", "c d e"}, c);
    REQUIRE(batch.size() == 2);
    CHECK(batch[0].tokens.size() == 6);
    CHECK(batch[1].tokens.size() == 6);
    CHECK(batch[0].real_tokens == 2);
    CHECK(batch[1].real_tokens == 3);
}

TEST_CASE("run_batch: an invalid sentence throws attn::Error", "[trace]") {
    attn::Config c = make_config(4, 1);
    CHECK_THROWS_AS(attn::run_batch({"fine", ""}, c), attn::Error);
    CHECK_THROWS_AS(attn::run_batch({"fine", "bad \xC3"}, c), attn::Error);
}

// ---- properties over random configurations ----------------------------------------------

TEST_CASE("run: 200 random configurations match the double reference, rows sum to 1, masked "
          "entries are 0",
          "[trace]") {
    std::mt19937 rng(555);
    const attn::MaskKind kinds[] = {attn::MaskKind::none, attn::MaskKind::causal, attn::MaskKind::padding,
                                    attn::MaskKind::causal_padding};
    const attn::Positional positionals[] = {attn::Positional::none, attn::Positional::sinusoidal,
                                            attn::Positional::learned};
    for (int iter = 0; iter < 200; ++iter) {
        const int t = std::uniform_int_distribution<int>(1, 20)(rng);
        const int heads = std::uniform_int_distribution<int>(1, 4)(rng);
        const int d = std::uniform_int_distribution<int>(1, 8)(rng);
        attn::Config c = make_config(heads * d, heads, static_cast<std::uint32_t>(rng()));
        c.mask = kinds[std::uniform_int_distribution<int>(0, 3)(rng)];
        c.positional = positionals[std::uniform_int_distribution<int>(0, 2)(rng)];
        c.scale = std::bernoulli_distribution(0.8)(rng);
        c.share_heads = std::bernoulli_distribution(0.2)(rng);
        const int real = std::uniform_int_distribution<int>(1, t)(rng);
        c.pad_to = t;
        std::vector<std::string> w;
        for (int k = 0; k < real; ++k) w.push_back(ref::random_word(rng));
        const std::string sentence = ref::join(w);
        INFO("case " << iter << ": \"" << sentence << "\" T=" << t << " H=" << heads << " D=" << d
                     << " seed=" << c.seed << " mask=" << attn::mask_name(c.mask)
                     << " positional=" << attn::positional_name(c.positional));
        const attn::Trace tr = attn::run(sentence, c);
        REQUIRE(tr.tokens.size() == static_cast<std::size_t>(t));
        REQUIRE(tr.real_tokens == real);
        CHECK(tr.input == attn::Matrix(tr.embeddings + tr.positional));
        if (c.positional == attn::Positional::sinusoidal) {
            const ref::Mat p = ref::sinusoidal(t, c.d_model);
            CHECK(ref::compare(tr.positional, p, 2e-5).ok());
        }
        CHECK(tr.mask == attn::build_mask(c.mask, t, real));
        check_against_reference(tr);
        for (const auto& h : tr.heads)
            for (int i = 0; i < t; ++i) {
                double sum = 0;
                for (int j = 0; j < t; ++j) {
                    if (!tr.mask(i, j)) CHECK(h.weights(i, j) == 0.0f);
                    sum += h.weights(i, j);
                }
                // Every row of these masks keeps at least key 0.
                CHECK(std::abs(sum - 1.0) <= 1e-5);
            }
    }
}

TEST_CASE("run: with a causal mask the output at a position ignores later tokens (200 configs)",
          "[trace]") {
    std::mt19937 rng(777);
    for (int iter = 0; iter < 200; ++iter) {
        const int t = std::uniform_int_distribution<int>(1, 20)(rng);
        const int heads = std::uniform_int_distribution<int>(1, 4)(rng);
        const int d = std::uniform_int_distribution<int>(1, 8)(rng);
        attn::Config c = make_config(heads * d, heads, static_cast<std::uint32_t>(rng()));
        c.mask = attn::MaskKind::causal;
        c.positional = std::bernoulli_distribution(0.5)(rng) ? attn::Positional::sinusoidal
                                                               : attn::Positional::learned;
        const int prefix = std::uniform_int_distribution<int>(1, t)(rng);
        std::vector<std::string> a, b;
        for (int k = 0; k < t; ++k) {
            const std::string word = ref::random_word(rng);
            a.push_back(word);
            // Same prefix, then different words: "Q" + a lower-case word never equals a
            // word of `a` (all lower case).
            b.push_back(k < prefix ? word : "Q" + ref::random_word(rng));
        }
        const attn::Trace ta = attn::run(ref::join(a), c);
        const attn::Trace tb = attn::run(ref::join(b), c);
        REQUIRE(ta.output.rows() == t);
        REQUIRE(tb.output.rows() == t);
        double worst = 0;
        for (int i = 0; i < prefix; ++i)
            for (int j = 0; j < c.d_model; ++j)
                worst = std::max(worst, std::abs(static_cast<double>(ta.output(i, j)) - tb.output(i, j)) /
                                            std::max(1.0, std::abs(static_cast<double>(ta.output(i, j)))));
        INFO("case " << iter << ": T=" << t << " H=" << heads << " D=" << d << " prefix " << prefix
                     << " max relative |diff| in the prefix rows = " << worst);
        CHECK(worst <= 1e-6);
        // The inputs of the prefix rows are identical (position-only encodings).
        CHECK(ta.input.topRows(prefix) == tb.input.topRows(prefix));
        // And the suffix really differs when there is one.
        if (prefix < t) CHECK(ta.input.bottomRows(t - prefix) != tb.input.bottomRows(t - prefix));
    }
}

TEST_CASE("run: with a causal mask a longer continuation does not change earlier outputs",
          "[trace]") {
    attn::Config c = make_config(16, 4, 9);
    c.mask = attn::MaskKind::causal;
    const attn::Trace shorter = attn::run("the quick brown", c);
    const attn::Trace longer = attn::run("the quick brown fox jumps over the lazy dog", c);
    REQUIRE(shorter.output.rows() == 3);
    // Different T can change the summation order inside Eigen's products, hence 1e-5.
    const double diff = (shorter.output - longer.output.topRows(3)).cwiseAbs().maxCoeff();
    INFO("max |diff| = " << diff);
    CHECK(diff <= 1e-5 * std::max(1.0f, shorter.output.cwiseAbs().maxCoeff()));
}

TEST_CASE("run: with positional none permuting the tokens permutes the outputs (200 configs)",
          "[trace]") {
    std::mt19937 rng(888);
    for (int iter = 0; iter < 200; ++iter) {
        const int t = std::uniform_int_distribution<int>(1, 20)(rng);
        const int heads = std::uniform_int_distribution<int>(1, 4)(rng);
        const int d = std::uniform_int_distribution<int>(1, 8)(rng);
        attn::Config c = make_config(heads * d, heads, static_cast<std::uint32_t>(rng()));
        c.positional = attn::Positional::none;
        c.mask = attn::MaskKind::none;
        c.scale = std::bernoulli_distribution(0.8)(rng);
        std::vector<std::string> w;
        for (int k = 0; k < t; ++k) w.push_back(ref::random_word(rng));
        std::vector<int> perm(t);
        for (int k = 0; k < t; ++k) perm[k] = k;
        std::shuffle(perm.begin(), perm.end(), rng);
        std::vector<std::string> wp(t);
        for (int k = 0; k < t; ++k) wp[k] = w[perm[k]];
        const attn::Trace a = attn::run(ref::join(w), c);
        const attn::Trace b = attn::run(ref::join(wp), c);
        double worst = 0;
        for (int k = 0; k < t; ++k) {
            CHECK(b.input.row(k) == a.input.row(perm[k]));
            worst = std::max(worst, static_cast<double>((b.output.row(k) - a.output.row(perm[k])).cwiseAbs().maxCoeff()));
        }
        INFO("case " << iter << ": T=" << t << " H=" << heads << " D=" << d << " max |diff| = " << worst);
        CHECK(worst <= 1e-5);
    }
}

// ---- validation errors ------------------------------------------------------------------------

TEST_CASE("validate_config: d_model not divisible by heads names both numbers", "[trace][errors]") {
    attn::Config c = make_config(10, 3);
    REQUIRE_THROWS_MATCHES(attn::validate_config(c), attn::Error, testing::MessageContains("divisible"));
    const std::string msg = config_error(c);
    INFO(msg);
    CHECK_THAT(msg, Contains("10"));
    CHECK_THAT(msg, Contains("3"));
    REQUIRE_THROWS_MATCHES(attn::run("hello", c), attn::Error, testing::MessageContains("divisible"));
}

TEST_CASE("validate_config: heads out of range throw attn::Error with the number", "[trace][errors]") {
    attn::Config c = make_config(8, 0);
    CHECK_THROWS_AS(attn::validate_config(c), attn::Error);
    CHECK_THAT(config_error(c), Contains("0"));
    CHECK_THROWS_AS(attn::run("hello", c), attn::Error);
    c.heads = -2;
    CHECK_THROWS_AS(attn::validate_config(c), attn::Error);
    CHECK_THAT(config_error(c), Contains("-2"));
    c = make_config(4, 5);  // more heads than d_model
    CHECK_THROWS_AS(attn::validate_config(c), attn::Error);
    INFO(config_error(c));
    CHECK_THAT(config_error(c), Contains("5"));
    CHECK_THAT(config_error(c), Contains("4"));
}

TEST_CASE("validate_config: d_model out of range throws attn::Error with the number", "[trace][errors]") {
    attn::Config c = make_config(0, 1);
    CHECK_THROWS_AS(attn::validate_config(c), attn::Error);
    CHECK_THAT(config_error(c), Contains("0"));
    CHECK_THROWS_AS(attn::run("hello", c), attn::Error);
    c = make_config(-16, 1);
    CHECK_THROWS_AS(attn::validate_config(c), attn::Error);
    CHECK_THAT(config_error(c), Contains("-16"));
    c = make_config(attn::kMaxDModel + 1, 1);
    CHECK_THROWS_AS(attn::validate_config(c), attn::Error);
    INFO(config_error(c));
    CHECK_THAT(config_error(c), Contains("1025"));
    CHECK_THAT(config_error(c), Contains("1024"));
    CHECK_THROWS_AS(attn::run("hello", c), attn::Error);
    // The limit itself is allowed.
    CHECK_NOTHROW(attn::validate_config(make_config(attn::kMaxDModel, 8)));
    CHECK_NOTHROW(attn::validate_config(make_config(1, 1)));
}

TEST_CASE("validate_config: pad_to out of range throws attn::Error with the number", "[trace][errors]") {
    attn::Config c = make_config(8, 2);
    c.pad_to = -1;
    CHECK_THROWS_AS(attn::validate_config(c), attn::Error);
    CHECK_THAT(config_error(c), Contains("-1"));
    c.pad_to = attn::kMaxTokens + 1;
    CHECK_THROWS_AS(attn::validate_config(c), attn::Error);
    INFO(config_error(c));
    CHECK_THAT(config_error(c), Contains("2049"));
    CHECK_THAT(config_error(c), Contains("2048"));
    c.pad_to = attn::kMaxTokens;
    CHECK_NOTHROW(attn::validate_config(c));
    c.pad_to = 0;
    CHECK_NOTHROW(attn::validate_config(c));
}

TEST_CASE("run: an empty or whitespace-only sentence throws attn::Error", "[trace][errors]") {
    const attn::Config c = make_config(8, 2);
    CHECK_THROWS_AS(attn::run("", c), attn::Error);
    CHECK_THROWS_AS(attn::run("   \t\n ", c), attn::Error);
}

TEST_CASE("run: invalid UTF-8 throws attn::Error of kind type with the offset", "[trace][errors]") {
    const attn::Config c = make_config(8, 2);
    const std::string s = std::string("valid words then") + "\xED\xA0\x80";
    REQUIRE_THROWS_MATCHES(attn::run(s, c), attn::Error, testing::MessageContains("UTF-8"));
    CHECK_THAT(run_error(s, c), Contains("16"));
    try {
        attn::run(s, c);
    } catch (const attn::Error& e) {
        CHECK(e.kind() == attn::Error::Kind::type);
    }
}

TEST_CASE("run: more than kMaxTokens tokens throws attn::Error naming the count and the limit",
          "[trace][errors]") {
    // H = 1 keeps the score trace (3·2049² floats) under kMaxTraceScoreFloats, so
    // only the token limit applies.
    const attn::Config c = make_config(2, 1);
    const std::string s = words(attn::kMaxTokens + 1);
    REQUIRE(attn::tokenize(s).size() == 2049);
    CHECK_THROWS_AS(attn::run(s, c), attn::Error);
    const std::string msg = run_error(s, c);
    INFO(msg);
    CHECK_THAT(msg, Contains("2049"));
    CHECK_THAT(msg, Contains("2048"));
}

TEST_CASE("run: exactly kMaxTokens tokens is allowed", "[trace]") {
    const attn::Config c = make_config(2, 1);
    const attn::Trace tr = attn::run(words(attn::kMaxTokens), c);
    CHECK(tr.tokens.size() == static_cast<std::size_t>(attn::kMaxTokens));
    CHECK(tr.output.rows() == attn::kMaxTokens);
    CHECK(tr.output.allFinite());
}

TEST_CASE("run: a trace larger than kMaxTraceScoreFloats throws attn::Error", "[trace][errors]") {
    // 3·H·T² floats: H = 8, T = 1025 gives 25 214 400 > 25 165 824 = kMaxTraceScoreFloats.
    const attn::Config c = make_config(8, 8);
    REQUIRE(3LL * 8 * 1025 * 1025 > attn::kMaxTraceScoreFloats);
    CHECK_THROWS_AS(attn::run(words(1025), c), attn::Error);
}

TEST_CASE("run: pad_to shorter than the sentence throws attn::Error with both lengths",
          "[trace][errors]") {
    attn::Config c = make_config(8, 2);
    c.pad_to = 2;
    CHECK_THROWS_AS(attn::run("one two three", c), attn::Error);
    const std::string msg = run_error("one two three", c);
    INFO(msg);
    CHECK_THAT(msg, Contains("2"));
    CHECK_THAT(msg, Contains("3"));
}

TEST_CASE("run: a custom mask of the wrong shape or a missing one throws attn::Error",
          "[trace][errors]") {
    attn::Config c = make_config(8, 2);
    c.mask = attn::MaskKind::custom;
    CHECK_THROWS_AS(attn::run("a b c", c), attn::Error);  // no custom_mask given
    c.custom_mask = attn::MaskMatrix::Constant(2, 2, true);
    CHECK_THROWS_AS(attn::run("a b c", c), attn::Error);
    const std::string msg = run_error("a b c", c);
    INFO(msg);
    CHECK_THAT(msg, Contains("2"));
    CHECK_THAT(msg, Contains("3"));
    c.custom_mask = attn::MaskMatrix::Constant(3, 4, true);
    CHECK_THROWS_AS(attn::run("a b c", c), attn::Error);
    c.custom_mask = attn::MaskMatrix::Constant(3, 3, true);
    CHECK_NOTHROW(attn::run("a b c", c));
}

TEST_CASE("run: custom weights of the wrong shape or non-finite throw attn::Error", "[trace][errors]") {
    attn::Config c = make_config(4, 2);
    c.weights = attn::glorot_weights(4, 2, 1);
    CHECK_NOTHROW(attn::run("a b", c));

    attn::Weights bad = attn::glorot_weights(4, 2, 1);
    bad.w_key = attn::Matrix::Ones(3, 3);
    c.weights = bad;
    CHECK_THROWS_AS(attn::run("a b", c), attn::Error);
    std::string msg = run_error("a b", c);
    INFO(msg);
    CHECK_THAT(msg, Contains("3"));
    CHECK_THAT(msg, Contains("4"));

    c.weights = attn::glorot_weights(6, 2, 1);  // 6×6 where d_model = 4
    CHECK_THROWS_AS(attn::run("a b", c), attn::Error);

    bad = attn::glorot_weights(4, 2, 1);
    bad.w_value(1, 2) = std::numeric_limits<float>::quiet_NaN();
    c.weights = bad;
    CHECK_THROWS_AS(attn::run("a b", c), attn::Error);

    bad = attn::glorot_weights(4, 2, 1);
    bad.w_output(0, 0) = std::numeric_limits<float>::infinity();
    c.weights = bad;
    CHECK_THROWS_AS(attn::run("a b", c), attn::Error);
}

TEST_CASE("attn::Error: out-of-range values are errors of kind range", "[trace][errors]") {
    for (const attn::Config& c : {make_config(0, 1), make_config(attn::kMaxDModel + 1, 1), make_config(8, 0)}) {
        try {
            attn::validate_config(c);
            FAIL("no error thrown");
        } catch (const attn::Error& e) {
            INFO(e.what());
            CHECK(e.kind() == attn::Error::Kind::range);
        }
    }
}

TEST_CASE("run_batch: a custom mask of the common length applies to every sentence", "[trace]") {
    attn::Config c = make_config(8, 2, 5);
    c.mask = attn::MaskKind::custom;
    // 3 tokens in the longest sentence; the mask hides key 0 from every query.
    attn::MaskMatrix m = attn::MaskMatrix::Constant(3, 3, true);
    m.col(0).setConstant(false);
    c.custom_mask = m;
    const auto traces = attn::run_batch({"one two three", "one"}, c);
    REQUIRE(traces.size() == 2);
    for (const auto& tr : traces) {
        REQUIRE(tr.tokens.size() == 3u);
        for (const auto& h : tr.heads)
            for (int i = 0; i < 3; ++i) CHECK(h.weights(i, 0) == 0.0f);
    }
    c.custom_mask = attn::MaskMatrix::Constant(2, 2, true);
    REQUIRE_THROWS_AS(attn::run_batch({"one two three", "one"}, c), attn::Error);
}

TEST_CASE("run: weights rows sum to 1 within 1e-6 at T = 2048 with repeated tokens", "[trace]") {
    // 2048 copies of one word: only the positions tell the scores apart, so
    // each row's exp() terms are all of similar size and the denominator is a
    // sum of 2048 comparable terms (it missed 1 by up to 7e-6 unscaled).
    std::string sentence;
    for (int i = 0; i < attn::kMaxTokens; ++i) sentence += i ? " the" : "the";
    struct Setting {
        attn::Positional positional;
        bool scale;
        int d_model;
    };
    for (const Setting& s : {Setting{attn::Positional::sinusoidal, false, 64}, Setting{attn::Positional::learned, false, 64},
                             Setting{attn::Positional::sinusoidal, true, 16}, Setting{attn::Positional::sinusoidal, false, 16}}) {
        attn::Config c = make_config(s.d_model, 1);
        c.positional = s.positional;
        c.scale = s.scale;
        const attn::Trace tr = attn::run(sentence, c);
        REQUIRE(tr.tokens.size() == 2048);
        double worst = 0;
        for (Eigen::Index i = 0; i < tr.heads[0].weights.rows(); ++i)
            worst = std::max(worst, std::abs(tr.heads[0].weights.row(i).cast<double>().sum() - 1.0));
        INFO(attn::positional_name(s.positional) << ", scale " << s.scale << ", C = " << s.d_model
                                                << ": worst |row sum - 1| = " << worst);
        CHECK(worst <= 1e-6);
    }
}
