// Tests of src/attention/positional.hpp against the formula computed in double.

#include "attention/positional.hpp"
#include "base/types.hpp"
#include "reference.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace {

/// How far |P - formula| exceeds the allowance 2e-6 + 3e-7·pos (0 or less when
/// within it). The allowance grows with the position because an angle
/// computed in float has a relative error of a few ulp (6e-8 each), so
/// an absolute error proportional to pos.
double sinusoid_error(const attn::Matrix& p, const ref::Mat& expected) {
    double worst = -1.0;
    if (p.rows() != ref::rows(expected) || p.cols() != ref::cols(expected)) return 1e9;
    for (int pos = 0; pos < p.rows(); ++pos)
        for (int c = 0; c < p.cols(); ++c) {
            const double diff = std::abs(static_cast<double>(p(pos, c)) - expected[pos][c]);
            if (!std::isfinite(diff)) return 1e9;
            worst = std::max(worst, diff - (2e-6 + 3e-7 * pos));
        }
    return worst;
}

}  // namespace

TEST_CASE("positional: none is all zeros", "[positional]") {
    const attn::Matrix p = attn::positional_encoding(attn::Positional::none, 7, 5, 3);
    REQUIRE(p.rows() == 7);
    REQUIRE(p.cols() == 5);
    CHECK((p.array() == 0.0f).all());
}

TEST_CASE("positional: sinusoidal hand values for C = 4", "[positional]") {
    // Row 0: sin 0 = 0, cos 0 = 1 in every pair.
    // Row 1: columns 0,1 use angle 1/10000^0 = 1: sin 1 = 0.8414709848, cos 1 = 0.5403023059;
    //        columns 2,3 use angle 1/10000^(2/4) = 1/100 = 0.01:
    //        sin 0.01 = 0.0099998333, cos 0.01 = 0.9999500004.
    const attn::Matrix p = attn::positional_encoding(attn::Positional::sinusoidal, 2, 4, 0);
    REQUIRE(p.rows() == 2);
    REQUIRE(p.cols() == 4);
    CHECK(p(0, 0) == 0.0f);
    CHECK(p(0, 1) == 1.0f);
    CHECK(p(0, 2) == 0.0f);
    CHECK(p(0, 3) == 1.0f);
    CHECK(p(1, 0) == Approx(0.8414709848).margin(1e-6));
    CHECK(p(1, 1) == Approx(0.5403023059).margin(1e-6));
    CHECK(p(1, 2) == Approx(0.0099998333).margin(1e-7));
    CHECK(p(1, 3) == Approx(0.9999500004).margin(1e-6));
}

TEST_CASE("positional: sinusoidal matches the formula in double, odd C ends with a sin",
          "[positional]") {
    for (int c : {1, 2, 3, 4, 5, 7, 8, 15, 16, 33, 64}) {
        const int t = 64;
        const attn::Matrix p = attn::positional_encoding(attn::Positional::sinusoidal, t, c, 1);
        REQUIRE(p.rows() == t);
        REQUIRE(p.cols() == c);
        const ref::Mat expected = ref::sinusoidal(t, c);
        INFO("C = " << c << ", worst excess over the allowance = " << sinusoid_error(p, expected));
        CHECK(sinusoid_error(p, expected) <= 0.0);
        if (c % 2 == 1) {
            // Last column 2i = C-1: sin(pos / 10000^((C-1)/C)).
            for (int pos = 0; pos < t; ++pos) {
                const double angle = pos / std::pow(10000.0, (c - 1.0) / c);
                CHECK(p(pos, c - 1) == Approx(std::sin(angle)).margin(2e-6 + 3e-7 * pos));
            }
            CHECK(p(0, c - 1) == 0.0f);
        }
    }
}

TEST_CASE("positional: sinusoidal stays on the formula at large positions", "[positional]") {
    // Angles up to 2047 rad: a float angle has an ulp of ~1.2e-4 there.
    const int t = attn::kMaxTokens;
    const int c = 6;
    const attn::Matrix p = attn::positional_encoding(attn::Positional::sinusoidal, t, c, 1);
    const ref::Mat expected = ref::sinusoidal(t, c);
    INFO("max |diff| beyond the allowance = " << sinusoid_error(p, expected));
    CHECK(sinusoid_error(p, expected) <= 0.0);
}

TEST_CASE("positional: a row depends only on its position, not on T", "[positional]") {
    for (auto kind : {attn::Positional::sinusoidal, attn::Positional::learned}) {
        const attn::Matrix a = attn::positional_encoding(kind, 5, 8, 11);
        const attn::Matrix b = attn::positional_encoding(kind, 20, 8, 11);
        CHECK(a == b.topRows(5));
    }
}

TEST_CASE("positional: learned is within -1 .. 1 and depends on the seed", "[positional]") {
    const attn::Matrix a = attn::positional_encoding(attn::Positional::learned, 50, 16, 1);
    const attn::Matrix a2 = attn::positional_encoding(attn::Positional::learned, 50, 16, 1);
    const attn::Matrix b = attn::positional_encoding(attn::Positional::learned, 50, 16, 2);
    REQUIRE(a.rows() == 50);
    REQUIRE(a.cols() == 16);
    CHECK(a.allFinite());
    CHECK(a.cwiseAbs().maxCoeff() <= 1.0f);
    CHECK(a == a2);
    CHECK(a != b);
    // Uniform on [-1, 1): spread over the range, rows differ from each other.
    CHECK(a.maxCoeff() > 0.8f);
    CHECK(a.minCoeff() < -0.8f);
    CHECK(a.row(0) != a.row(1));
    // Not the sinusoidal table.
    CHECK(a != attn::positional_encoding(attn::Positional::sinusoidal, 50, 16, 1));
}

TEST_CASE("positional: sinusoidal and none do not depend on the seed", "[positional]") {
    CHECK(attn::positional_encoding(attn::Positional::sinusoidal, 9, 6, 1) ==
          attn::positional_encoding(attn::Positional::sinusoidal, 9, 6, 12345));
    CHECK(attn::positional_encoding(attn::Positional::none, 9, 6, 1) ==
          attn::positional_encoding(attn::Positional::none, 9, 6, 12345));
}

TEST_CASE("parse_positional: known names round-trip, unknown names throw attn::Error",
          "[positional]") {
    CHECK(attn::parse_positional("none") == attn::Positional::none);
    CHECK(attn::parse_positional("sinusoidal") == attn::Positional::sinusoidal);
    CHECK(attn::parse_positional("learned") == attn::Positional::learned);
    for (auto kind : {attn::Positional::none, attn::Positional::sinusoidal, attn::Positional::learned})
        CHECK(attn::parse_positional(attn::positional_name(kind)) == kind);
    CHECK_THROWS_AS(attn::parse_positional("rotary"), attn::Error);
    CHECK_THROWS_AS(attn::parse_positional(""), attn::Error);
    CHECK_THROWS_AS(attn::parse_positional("Sinusoidal "), attn::Error);
}
