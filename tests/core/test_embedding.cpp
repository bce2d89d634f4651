// Tests of src/attention/embedding.hpp: a seeded, position-independent table.

#include "attention/embedding.hpp"
#include "base/random.hpp"
#include "text/tokenizer.hpp"
#include "base/types.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

TEST_CASE("embed_token: the PAD token embeds as all zeros", "[embedding]") {
    for (int c : {1, 2, 7, 16, 64}) {
        attn::Vector v = attn::Vector::Constant(c, 123.0f);
        attn::embed_token(attn::kPadId, 42, v);
        INFO("d_model " << c);
        CHECK((v.array() == 0.0f).all());
    }
}

TEST_CASE("embed_tokens: pad rows are zero and rows equal embed_token", "[embedding]") {
    auto tokens = attn::tokenize("the cat sat");
    tokens.push_back(attn::pad_token(11));
    tokens.push_back(attn::pad_token(11));
    const attn::Matrix x = attn::embed_tokens(tokens, 12, 7);
    REQUIRE(x.rows() == 5);
    REQUIRE(x.cols() == 12);
    for (int t = 0; t < 5; ++t) {
        attn::Vector v(12);
        attn::embed_token(tokens[t].id, 7, v);
        INFO("row " << t);
        CHECK(x.row(t).transpose() == v);
    }
    CHECK((x.row(3).array() == 0.0f).all());
    CHECK((x.row(4).array() == 0.0f).all());
    CHECK((x.row(0).array() != 0.0f).any());
}

TEST_CASE("embed_tokens: the same id gets the same vector in every sentence and position",
          "[embedding]") {
    const auto a = attn::tokenize("the cat saw the dog");
    const auto b = attn::tokenize("a dog , the end");
    const attn::Matrix xa = attn::embed_tokens(a, 10, 99);
    const attn::Matrix xb = attn::embed_tokens(b, 10, 99);
    CHECK(xa.row(0) == xa.row(3));  // "the" at 0 and 3
    CHECK(xa.row(0) == xb.row(3));  // "the" in another sentence
    CHECK(xa.row(4) == xb.row(1));  // "dog"
    CHECK(xa.row(1) != xa.row(4));  // "cat" vs "dog"
}

TEST_CASE("embed_token: deterministic for a seed, different seeds differ", "[embedding]") {
    const int c = 16;
    const std::int32_t id = attn::token_id("hello");
    attn::Vector a(c), b(c), d(c);
    attn::embed_token(id, 1, a);
    attn::embed_token(id, 1, b);
    attn::embed_token(id, 2, d);
    CHECK(a == b);
    CHECK(a != d);
    int differing = 0;
    for (int i = 0; i < c; ++i)
        if (a(i) != d(i)) ++differing;
    CHECK(differing >= c / 2);
}

TEST_CASE("embed_token: entries uniform within sqrt(3) with unit variance", "[embedding]") {
    const int c = 16;
    const double limit = std::sqrt(3.0);
    double sum = 0, sum2 = 0;
    std::int64_t n = 0;
    double lo = 1e9, hi = -1e9;
    attn::Vector v(c);
    for (std::int32_t id = 2; id < 2002; ++id) {
        attn::embed_token(id, 5, v);
        for (int i = 0; i < c; ++i) {
            const double x = v(i);
            REQUIRE(std::isfinite(x));
            CHECK(std::abs(x) <= limit + 1e-6);
            lo = std::min(lo, x);
            hi = std::max(hi, x);
            sum += x;
            sum2 += x * x;
            ++n;
        }
    }
    const double mean = sum / n;
    const double var = sum2 / n - mean * mean;
    INFO("mean " << mean << " variance " << var << " min " << lo << " max " << hi);
    CHECK(std::abs(mean) < 0.05);
    CHECK(var > 0.8);
    CHECK(var < 1.2);
    // A uniform table fills the range: some entries near each end.
    CHECK(lo < -1.6);
    CHECK(hi > 1.6);
}

TEST_CASE("embed_tokens: an empty token list gives a 0×C matrix", "[embedding]") {
    const attn::Matrix x = attn::embed_tokens({}, 8, 1);
    CHECK(x.rows() == 0);
    CHECK(x.cols() == 8);
}
