// Tests of src/attention/mask.hpp.

#include "attention/mask.hpp"
#include "base/types.hpp"

#include <catch2/catch.hpp>

TEST_CASE("build_mask: none allows every pair", "[mask]") {
    for (int t : {1, 2, 5, 17}) {
        const attn::MaskMatrix m = attn::build_mask(attn::MaskKind::none, t, t);
        REQUIRE(m.rows() == t);
        REQUIRE(m.cols() == t);
        CHECK(m.all());
    }
    // Even with padding positions: none does not hide them.
    CHECK(attn::build_mask(attn::MaskKind::none, 6, 2).all());
}

TEST_CASE("build_mask: causal is the lower triangle including the diagonal", "[mask]") {
    for (int t : {1, 2, 5, 17}) {
        const attn::MaskMatrix m = attn::build_mask(attn::MaskKind::causal, t, t);
        REQUIRE(m.rows() == t);
        REQUIRE(m.cols() == t);
        for (int i = 0; i < t; ++i)
            for (int j = 0; j < t; ++j) {
                INFO("query " << i << " key " << j);
                CHECK(m(i, j) == (j <= i));
            }
    }
}

TEST_CASE("build_mask: padding hides padding keys from every query", "[mask]") {
    const int t = 7, real = 4;
    const attn::MaskMatrix m = attn::build_mask(attn::MaskKind::padding, t, real);
    REQUIRE(m.rows() == t);
    REQUIRE(m.cols() == t);
    for (int i = 0; i < t; ++i)
        for (int j = 0; j < t; ++j) {
            INFO("query " << i << " key " << j);
            CHECK(m(i, j) == (j < real));
        }
    // Without padding positions it allows everything.
    CHECK(attn::build_mask(attn::MaskKind::padding, 5, 5).all());
}

TEST_CASE("build_mask: causal+padding is causal and padding together", "[mask]") {
    const int t = 8, real = 5;
    const attn::MaskMatrix m = attn::build_mask(attn::MaskKind::causal_padding, t, real);
    REQUIRE(m.rows() == t);
    REQUIRE(m.cols() == t);
    const attn::MaskMatrix c = attn::build_mask(attn::MaskKind::causal, t, real);
    const attn::MaskMatrix p = attn::build_mask(attn::MaskKind::padding, t, real);
    for (int i = 0; i < t; ++i)
        for (int j = 0; j < t; ++j) {
            INFO("query " << i << " key " << j);
            CHECK(m(i, j) == (j <= i && j < real));
            CHECK(m(i, j) == (c(i, j) && p(i, j)));
        }
}

TEST_CASE("parse_mask: known names round-trip, unknown names throw attn::Error", "[mask]") {
    CHECK(attn::parse_mask("none") == attn::MaskKind::none);
    CHECK(attn::parse_mask("causal") == attn::MaskKind::causal);
    CHECK(attn::parse_mask("padding") == attn::MaskKind::padding);
    CHECK(attn::parse_mask("causal+padding") == attn::MaskKind::causal_padding);
    CHECK(attn::parse_mask("custom") == attn::MaskKind::custom);
    for (auto kind : {attn::MaskKind::none, attn::MaskKind::causal, attn::MaskKind::padding,
                      attn::MaskKind::causal_padding, attn::MaskKind::custom})
        CHECK(attn::parse_mask(attn::mask_name(kind)) == kind);
    CHECK_THROWS_AS(attn::parse_mask("future"), attn::Error);
    CHECK_THROWS_AS(attn::parse_mask(""), attn::Error);
    CHECK_THROWS_AS(attn::parse_mask("Causal"), attn::Error);
}
