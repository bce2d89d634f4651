#include "base/random.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

// SplitMix64 written out again from its published constants (Steele, Lea, Flood 2014).
std::uint64_t splitmix_reference(std::uint64_t x) {
    std::uint64_t z = x + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

}  // namespace

TEST_CASE("splitmix64: matches the published algorithm, first output of seed 0", "[random]") {
    // The first SplitMix64 output for state 0 is 0xE220A8397B1DCDAF.
    CHECK(attn::splitmix64(0) == 0xE220A8397B1DCDAFULL);
    for (std::uint64_t x : {1ULL, 42ULL, 0xFFFFFFFFFFFFFFFFULL, 123456789ULL}) CHECK(attn::splitmix64(x) == splitmix_reference(x));
}

TEST_CASE("counter_uniform_row: gives exactly counter_uniform's numbers", "[random]") {
    for (std::uint64_t seed : {0ULL, 7ULL, 4294967295ULL}) {
        for (std::uint64_t row : {0ULL, 1ULL, 999ULL}) {
            std::vector<float> got(37);
            attn::counter_uniform_row(seed, attn::Stream::w_key, row, 0.5f, [&](int j, float v) { got[j] = v; }, 37);
            for (int j = 0; j < 37; ++j)
                CHECK(got[j] == attn::counter_uniform(seed, attn::Stream::w_key, row, static_cast<std::uint64_t>(j), 0.5f));
        }
    }
}

TEST_CASE("counter_uniform: stays within -limit .. limit with mean near 0 and the uniform variance", "[random]") {
    double sum = 0, sum_sq = 0;
    const int n = 20000;
    for (int i = 0; i < n; ++i) {
        const float v = attn::counter_uniform(3, attn::Stream::embedding, static_cast<std::uint64_t>(i / 100),
                                              static_cast<std::uint64_t>(i % 100), 2.0f);
        REQUIRE(v >= -2.0f);
        REQUIRE(v < 2.0f);
        sum += v;
        sum_sq += static_cast<double>(v) * v;
    }
    const double mean = sum / n;
    CHECK(std::abs(mean) < 0.05);
    // uniform on [-2, 2): variance 4²/12 = 1.333…
    CHECK(std::abs(sum_sq / n - mean * mean - 4.0 / 3.0) < 0.05);
}

TEST_CASE("counter_uniform: streams and seeds give different numbers", "[random]") {
    CHECK(attn::counter_uniform(1, attn::Stream::w_query, 0, 0, 1.0f) != attn::counter_uniform(1, attn::Stream::w_key, 0, 0, 1.0f));
    CHECK(attn::counter_uniform(1, attn::Stream::w_query, 0, 0, 1.0f) != attn::counter_uniform(2, attn::Stream::w_query, 0, 0, 1.0f));
}
