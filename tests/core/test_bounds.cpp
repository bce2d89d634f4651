// Tests of src/kernels/bounds.hpp: the accepted range of input values.

#include "kernels/bounds.hpp"
#include "base/types.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using Catch::Matchers::Contains;

namespace {

std::string bounded_error(const attn::Matrix& m) {
    try {
        attn::check_bounded(m, "m");
    } catch (const attn::Error& e) {
        return e.what();
    }
    return "<no error>";
}

}  // namespace

TEST_CASE("all_within_bound: agrees with |v| <= 1e6 && isfinite on every kind of float", "[bounds]") {
    const float inf = std::numeric_limits<float>::infinity();
    const float specials[] = {0.0f, -0.0f, 1e6f, -1e6f, std::nextafter(1e6f, inf), -std::nextafter(1e6f, inf), inf, -inf,
                              std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(), 1.0f};
    for (const float v : specials) {
        INFO("value " << v);
        CHECK(attn::all_within_bound(&v, 1) == (std::isfinite(v) && std::abs(v) <= 1e6f));
    }
    std::mt19937 rng(1);
    for (int iter = 0; iter < 20000; ++iter) {  // random bit patterns: every exponent, NaN payloads included
        const std::uint32_t bits = static_cast<std::uint32_t>(rng());
        float v;
        std::memcpy(&v, &bits, sizeof v);
        INFO("bits " << bits);
        REQUIRE(attn::all_within_bound(&v, 1) == (std::isfinite(v) && std::abs(v) <= 1e6f));
    }
}

TEST_CASE("all_within_bound: one bad value anywhere in arrays of 1 to 100 floats is found (vector and tail paths)",
          "[bounds]") {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> ok(-1e6f, 1e6f);
    for (int iter = 0; iter < 5000; ++iter) {
        std::vector<float> v(1 + rng() % 100);
        for (float& x : v) x = ok(rng);
        if (iter % 5 == 0) {  // sometimes all fine, including the exact bounds
            v[rng() % v.size()] = (rng() & 1) ? 1e6f : -1e6f;
            REQUIRE(attn::all_within_bound(v.data(), v.size()));
            continue;
        }
        const std::uint32_t bits = static_cast<std::uint32_t>(rng());
        float bad;
        std::memcpy(&bad, &bits, sizeof bad);
        v[rng() % v.size()] = bad;
        INFO("n = " << v.size() << ", value " << bad);
        REQUIRE(attn::all_within_bound(v.data(), v.size()) == (std::isfinite(bad) && std::abs(bad) <= 1e6f));
    }
}

TEST_CASE("check_bounded: names the first entry outside the bound (row-major) with its value", "[bounds]") {
    std::mt19937 rng(2);
    for (int iter = 0; iter < 300; ++iter) {
        const int rows = 1 + static_cast<int>(rng() % 9), cols = 1 + static_cast<int>(rng() % 9);
        attn::Matrix m = attn::Matrix::Random(rows, cols) * 1e6f;
        const int i = static_cast<int>(rng() % static_cast<unsigned>(rows)), j = static_cast<int>(rng() % static_cast<unsigned>(cols));
        const float bads[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 1e19f, -3e38f};
        const float bad = bads[rng() % 4];
        m(i, j) = bad;
        const std::string message = bounded_error(m);
        INFO(message);
        CHECK_THAT(message, Contains("m[" + std::to_string(i) + "][" + std::to_string(j) + "]"));
        if (std::isnan(bad)) CHECK_THAT(message, Contains("NaN"));
        if (std::isinf(bad)) CHECK_THAT(message, Contains("Infinity"));
        if (std::isfinite(bad)) CHECK_THAT(message, Contains("-1e+06 to 1e+06"));
    }
    CHECK(bounded_error(attn::Matrix::Constant(3, 3, -1e6f)) == "<no error>");
    CHECK(bounded_error(attn::Matrix(0, 5)) == "<no error>");
}
