// Tests of src/attention/weights.hpp: Glorot initialisation, head sharing, validation.

#include "base/types.hpp"
#include "attention/weights.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

using Catch::Matchers::Contains;

namespace {

const attn::Matrix& pick(const attn::Weights& w, int i) {
    switch (i) {
        case 0: return w.w_query;
        case 1: return w.w_key;
        case 2: return w.w_value;
        default: return w.w_output;
    }
}

attn::Matrix& pick(attn::Weights& w, int i) {
    switch (i) {
        case 0: return w.w_query;
        case 1: return w.w_key;
        case 2: return w.w_value;
        default: return w.w_output;
    }
}

std::string error_message(const attn::Weights& w, int d_model) {
    try {
        attn::validate_weights(w, d_model);
    } catch (const attn::Error& e) {
        return e.what();
    }
    return "<no error>";
}

}  // namespace

TEST_CASE("glorot_weights: four C×C matrices within ±sqrt(6/(2C))", "[weights]") {
    for (int c : {1, 2, 3, 8, 16, 64}) {
        const attn::Weights w = attn::glorot_weights(c, 1, 42);
        const double limit = std::sqrt(6.0 / (2.0 * c));
        for (int i = 0; i < 4; ++i) {
            const attn::Matrix& m = pick(w, i);
            INFO("C = " << c << " matrix " << i);
            REQUIRE(m.rows() == c);
            REQUIRE(m.cols() == c);
            CHECK(m.allFinite());
            CHECK(static_cast<double>(m.cwiseAbs().maxCoeff()) <= limit * (1.0 + 1e-6));
        }
    }
}

TEST_CASE("glorot_weights: uniform entries have variance limit²/3 = 1/C", "[weights]") {
    const int c = 64;
    const attn::Weights w = attn::glorot_weights(c, 4, 3);
    for (int i = 0; i < 4; ++i) {
        const attn::Matrix& m = pick(w, i);
        const double mean = m.cast<double>().mean();
        const double var = (m.cast<double>().array() - mean).square().mean();
        INFO("matrix " << i << " mean " << mean << " variance " << var);
        CHECK(std::abs(mean) < 0.01);
        CHECK(var == Approx(1.0 / c).epsilon(0.1));
        // Spread over the whole range.
        CHECK(m.maxCoeff() > 0.9 * std::sqrt(3.0 / c));
        CHECK(m.minCoeff() < -0.9 * std::sqrt(3.0 / c));
    }
}

TEST_CASE("glorot_weights: deterministic by seed, different seeds and matrices differ", "[weights]") {
    const attn::Weights a = attn::glorot_weights(8, 2, 42);
    const attn::Weights b = attn::glorot_weights(8, 2, 42);
    const attn::Weights c = attn::glorot_weights(8, 2, 43);
    for (int i = 0; i < 4; ++i) {
        INFO("matrix " << i);
        CHECK(pick(a, i) == pick(b, i));
        CHECK(pick(a, i) != pick(c, i));
    }
    CHECK(a.w_query != a.w_key);
    CHECK(a.w_query != a.w_value);
    CHECK(a.w_key != a.w_value);
    CHECK(a.w_value != a.w_output);
}

TEST_CASE("glorot_weights: share_heads copies head 0's columns of W_Q/W_K/W_V and rows of W_O",
          "[weights]") {
    for (int heads : {2, 3, 4}) {
        const int d = 3;
        const int c = heads * d;
        const attn::Weights w = attn::glorot_weights(c, heads, 9, true);
        for (int h = 1; h < heads; ++h) {
            INFO("heads " << heads << " head " << h);
            CHECK(w.w_query.middleCols(h * d, d) == w.w_query.middleCols(0, d));
            CHECK(w.w_key.middleCols(h * d, d) == w.w_key.middleCols(0, d));
            CHECK(w.w_value.middleCols(h * d, d) == w.w_value.middleCols(0, d));
            CHECK(w.w_output.middleRows(h * d, d) == w.w_output.middleRows(0, d));
        }
        // Still within the Glorot limit and not trivially zero.
        CHECK(static_cast<double>(w.w_query.cwiseAbs().maxCoeff()) <= std::sqrt(6.0 / (2.0 * c)) * (1 + 1e-6));
        CHECK(w.w_query.cwiseAbs().maxCoeff() > 0.0f);
        CHECK(w.w_query.middleCols(0, d) != w.w_key.middleCols(0, d));
    }
}

TEST_CASE("glorot_weights: without share_heads the heads differ", "[weights]") {
    const attn::Weights w = attn::glorot_weights(8, 4, 9, false);
    for (int h = 1; h < 4; ++h) {
        CHECK(w.w_query.middleCols(h * 2, 2) != w.w_query.middleCols(0, 2));
        CHECK(w.w_output.middleRows(h * 2, 2) != w.w_output.middleRows(0, 2));
    }
}

TEST_CASE("validate_weights: accepts C×C finite matrices", "[weights]") {
    CHECK_NOTHROW(attn::validate_weights(attn::glorot_weights(6, 3, 1), 6));
    attn::Weights identity{attn::Matrix::Identity(2, 2), attn::Matrix::Identity(2, 2),
                           attn::Matrix::Identity(2, 2), attn::Matrix::Identity(2, 2)};
    CHECK_NOTHROW(attn::validate_weights(identity, 2));
}

TEST_CASE("validate_weights: a matrix of the wrong shape throws naming its shape", "[weights]") {
    for (int i = 0; i < 4; ++i) {
        attn::Weights w = attn::glorot_weights(4, 2, 1);
        pick(w, i) = attn::Matrix::Ones(4, 3);
        const std::string message = error_message(w, 4);
        INFO("matrix " << i << " message: " << message);
        CHECK_THROWS_AS(attn::validate_weights(w, 4), attn::Error);
        CHECK_THAT(message, Contains("4"));
        CHECK_THAT(message, Contains("3"));
    }
    // All matrices 5×5 where C = 4.
    const attn::Weights w5 = attn::glorot_weights(5, 1, 1);
    const std::string message = error_message(w5, 4);
    INFO("message: " << message);
    CHECK_THAT(message, Contains("5"));
    CHECK_THAT(message, Contains("4"));
}

TEST_CASE("validate_weights: NaN or infinite entries throw attn::Error", "[weights]") {
    for (int i = 0; i < 4; ++i)
        for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()}) {
            attn::Weights w = attn::glorot_weights(4, 2, 1);
            pick(w, i)(2, 1) = bad;
            INFO("matrix " << i << " value " << bad);
            CHECK_THROWS_AS(attn::validate_weights(w, 4), attn::Error);
        }
}

TEST_CASE("validate_weights: finite entries beyond 1e6 throw naming the matrix the entry and the bound", "[weights]") {
    // 1e19 … 3e38 are finite floats, but their products overflow Q·Kᵀ to inf and softmax to NaN.
    for (int i = 0; i < 4; ++i)
        for (const float big : {1.5e6f, 1e19f, -1e19f, 3e38f}) {
            attn::Weights w = attn::glorot_weights(4, 2, 1);
            pick(w, i)(3, 1) = big;
            const std::string message = error_message(w, 4);
            INFO("matrix " << i << " value " << big << ": " << message);
            CHECK_THROWS_AS(attn::validate_weights(w, 4), attn::Error);
            CHECK_THAT(message, Contains("[3][1]"));
            CHECK_THAT(message, Contains("1e+06"));
        }
    attn::Weights edge = attn::glorot_weights(4, 2, 1);
    edge.w_key(0, 0) = 1e6f;
    edge.w_value(1, 1) = -1e6f;
    CHECK_NOTHROW(attn::validate_weights(edge, 4));
}
