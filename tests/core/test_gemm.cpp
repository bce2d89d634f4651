// Tests of src/kernels/gemm.hpp: the kernel-based products against Eigen's on
// many shapes, including 1×1 and odd inner dimensions.

#include "kernels/gemm.hpp"
#include "kernels/kernels.hpp"
#include "base/types.hpp"
#include "reference.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

// Worst |c − expected| relative to Σ_k |a_ik·b_kj|, the size of the terms summed
// (an entry of cancelling terms can be near 0 while the terms are not).
double worst_relative(const attn::Matrix& c, const attn::Matrix& expected, const attn::Matrix& a,
                      const attn::Matrix& b_kn) {
    REQUIRE(c.rows() == expected.rows());
    REQUIRE(c.cols() == expected.cols());
    const attn::Matrix scale = a.cwiseAbs() * b_kn.cwiseAbs();
    double worst = 0;
    for (Eigen::Index i = 0; i < c.rows(); ++i)
        for (Eigen::Index j = 0; j < c.cols(); ++j) {
            const double diff = std::abs(static_cast<double>(c(i, j)) - expected(i, j));
            worst = std::max(worst, diff / std::max(1e-30, static_cast<double>(scale(i, j))));
        }
    return worst;
}

std::vector<std::vector<int>> fixed_shapes() {
    // m, k, n
    return {{1, 1, 1}, {3, 17, 5}, {17, 5, 3}, {3, 17, 17}, {17, 5, 17}, {1, 7, 1},  {4, 8, 8},   {5, 9, 9},
            {8, 1, 8}, {13, 3, 29}, {2, 33, 7}, {64, 32, 64}, {31, 63, 33}, {9, 256, 8}, {100, 12, 1}, {1, 40, 100}};
}

}  // namespace

TEST_CASE("gemm: equals Eigen a*b on fixed and random shapes within 1e-5 relative", "[gemm]") {
    std::mt19937 rng(2024);
    std::vector<std::vector<int>> shapes = fixed_shapes();
    for (int i = 0; i < 200; ++i) {
        std::uniform_int_distribution<int> dim(1, 40);
        shapes.push_back({dim(rng), dim(rng), dim(rng)});
    }
    for (const auto& s : shapes) {
        const int m = s[0], k = s[1], n = s[2];
        INFO("m=" << m << " k=" << k << " n=" << n);
        const attn::Matrix a = ref::random_matrix(rng, m, k, -2, 2);
        const attn::Matrix b = ref::random_matrix(rng, k, n, -2, 2);
        attn::Matrix c;
        attn::gemm(a, b, c);
        const attn::Matrix expected = a * b;
        CHECK(worst_relative(c, expected, a, b) <= 1e-5);
    }
}

TEST_CASE("gemm_bt: equals Eigen a*b.transpose() on fixed and random shapes within 1e-5 relative", "[gemm]") {
    std::mt19937 rng(99);
    std::vector<std::vector<int>> shapes = fixed_shapes();
    for (int i = 0; i < 200; ++i) {
        std::uniform_int_distribution<int> dim(1, 40);
        shapes.push_back({dim(rng), dim(rng), dim(rng)});
    }
    for (const auto& s : shapes) {
        const int m = s[0], k = s[1], n = s[2];
        INFO("m=" << m << " k=" << k << " n=" << n);
        const attn::Matrix a = ref::random_matrix(rng, m, k, -2, 2);
        const attn::Matrix b = ref::random_matrix(rng, n, k, -2, 2);
        attn::Matrix c;
        attn::gemm_bt(a, b, c);
        const attn::Matrix expected = a * b.transpose();
        const attn::Matrix bt = b.transpose();
        CHECK(worst_relative(c, expected, a, bt) <= 1e-5);
    }
}

TEST_CASE("gemm: blocks of columns and rows read in place, results independent of position", "[gemm]") {
    std::mt19937 rng(5);
    const attn::Matrix x = ref::random_matrix(rng, 37, 24, -1, 1);
    attn::Matrix w = ref::random_matrix(rng, 24, 24, -1, 1);
    w.middleCols(16, 8) = w.middleCols(0, 8);  // two equal column blocks
    attn::Matrix c0, c2, full;
    attn::gemm(x, w.middleCols(0, 8), c0);
    attn::gemm(x, w.middleCols(16, 8), c2);
    CHECK(c0 == c2);
    attn::gemm(x, w, full);
    CHECK(full.middleCols(0, 8) == c0);
    CHECK(worst_relative(c0, x * w.middleCols(0, 8), x, w.middleCols(0, 8)) <= 1e-5);
    // a block of rows and columns of a as the left operand
    attn::Matrix sub;
    attn::gemm(x.block(3, 5, 11, 13), w.block(5, 2, 13, 9), sub);
    const attn::Matrix xa = x.block(3, 5, 11, 13), wb = w.block(5, 2, 13, 9);
    CHECK(worst_relative(sub, xa * wb, xa, wb) <= 1e-5);
    attn::Matrix bt;
    attn::gemm_bt(x.middleCols(8, 8), x.middleCols(16, 8), bt);
    const attn::Matrix q = x.middleCols(8, 8), k = x.middleCols(16, 8);
    const attn::Matrix kt = k.transpose();
    CHECK(worst_relative(bt, q * kt, q, kt) <= 1e-5);
}

TEST_CASE("gemm: empty shapes and an inner dimension of 0", "[gemm]") {
    attn::Matrix c;
    attn::gemm(attn::Matrix(0, 3), attn::Matrix::Ones(3, 4), c);
    CHECK(c.rows() == 0);
    CHECK(c.cols() == 4);
    attn::gemm(attn::Matrix(2, 0), attn::Matrix(0, 3), c);
    REQUIRE(c.rows() == 2);
    REQUIRE(c.cols() == 3);
    CHECK((c.array() == 0.0f).all());
    attn::gemm_bt(attn::Matrix(2, 0), attn::Matrix(5, 0), c);
    REQUIRE(c.rows() == 2);
    REQUIRE(c.cols() == 5);
    CHECK((c.array() == 0.0f).all());
    CHECK_THROWS_AS(attn::gemm(attn::Matrix::Ones(2, 3), attn::Matrix::Ones(4, 2), c), attn::Error);
    CHECK_THROWS_AS(attn::gemm_bt(attn::Matrix::Ones(2, 3), attn::Matrix::Ones(4, 2), c), attn::Error);
}

TEST_CASE("PackedLhs: several products of one packed operand equal gemm exactly", "[gemm]") {
    std::mt19937 rng(17);
    for (int iter = 0; iter < 50; ++iter) {
        std::uniform_int_distribution<int> dim(1, 30);
        const int m = dim(rng), k = dim(rng);
        const attn::Matrix a = ref::random_matrix(rng, m, k, -2, 2);
        const attn::PackedLhs packed(a);
        for (int j = 0; j < 3; ++j) {
            const int n = dim(rng);
            INFO("m=" << m << " k=" << k << " n=" << n);
            const attn::Matrix b = ref::random_matrix(rng, k, n, -2, 2);
            attn::Matrix c1, c2;
            packed.times(b, c1);
            attn::gemm(a, b, c2);
            CHECK(c1 == c2);
            CHECK(worst_relative(c1, a * b, a, b) <= 1e-5);
        }
    }
    attn::Matrix c;
    CHECK_THROWS_AS(attn::PackedLhs(attn::Matrix::Ones(2, 3)).times(attn::Matrix::Ones(4, 2), c), attn::Error);
    attn::PackedLhs(attn::Matrix(3, 0)).times(attn::Matrix(0, 2), c);
    REQUIRE(c.rows() == 3);
    REQUIRE(c.cols() == 2);
    CHECK((c.array() == 0.0f).all());
}

namespace {

/// c(i, j) by the documented rule, written out: s = 0, then s = s + a(i, k)·b(k, j)
/// for k = 0, 1, … in float, each product rounded before its addition (the
/// build has no FMA contraction). The kernels must give exactly these bits.
attn::Matrix in_order_product(const attn::Matrix& a, const attn::Matrix& b) {
    attn::Matrix c(a.rows(), b.cols());
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        for (Eigen::Index j = 0; j < b.cols(); ++j) {
            float s = 0.0f;
            for (Eigen::Index k = 0; k < a.cols(); ++k) {
                const float p = a(i, k) * b(k, j);
                s = s + p;
            }
            c(i, j) = s;
        }
    return c;
}

}  // namespace

TEST_CASE("gemm: bit-identical to the in-order float sum at C = 768 and 1024 and at every tile edge", "[gemm]") {
    // m around the row tile (4) and past gemm's chunk of row tiles (64 at k = 768,
    // 48 at k = 1024); n around the panel (8); k the model widths and odd ones
    std::mt19937 rng(768);
    struct Shape { int m, k, n; };
    std::vector<Shape> shapes = {{1, 768, 1},   {3, 768, 7},    {4, 768, 8},   {5, 768, 9},    {257, 768, 17},
                                 {259, 1024, 24}, {193, 1024, 15}, {7, 769, 31},  {65, 1023, 40}, {2, 2049, 3}};
    for (int i = 0; i < 12; ++i)
        shapes.push_back({std::uniform_int_distribution<int>(1, 300)(rng), std::uniform_int_distribution<int>(700, 1100)(rng),
                          std::uniform_int_distribution<int>(1, 33)(rng)});
    for (const Shape s : shapes) {
        INFO("m=" << s.m << " k=" << s.k << " n=" << s.n);
        const attn::Matrix a = ref::random_matrix(rng, s.m, s.k, -2, 2);
        const attn::Matrix b = ref::random_matrix(rng, s.k, s.n, -2, 2);
        const attn::Matrix want = in_order_product(a, b);
        attn::Matrix c;
        attn::gemm(a, b, c);
        CHECK(c == want);
        attn::gemm_bt(a, attn::Matrix(b.transpose()), c);
        CHECK(c == want);
        attn::gemm_at(attn::Matrix(a.transpose()), b, c);
        CHECK(c == want);
        attn::PackedLhs(a).times(b, c);
        CHECK(c == want);
        CHECK(worst_relative(c, a * b, a, b) <= 1e-5);
    }
}

TEST_CASE("pack_row_tiles: the obvious interleaving copy for every row count, width and row stride", "[gemm]") {
    std::mt19937 rng(3);
    for (int rows = 0; rows <= 13; ++rows)
        for (int cols = 0; cols <= 13; ++cols) {
            const int ld = cols + std::uniform_int_distribution<int>(0, 3)(rng);
            std::vector<float> src(static_cast<std::size_t>(std::max(rows, 1)) * std::max(ld, 1));
            for (float& v : src) v = std::uniform_real_distribution<float>(-1, 1)(rng);
            const int tiles = attn::kernels::tile_count(rows);
            std::vector<float> got(static_cast<std::size_t>(tiles) * cols * 4, 42.0f), want(got.size());
            for (int t = 0; t < tiles; ++t)
                for (int k = 0; k < cols; ++k)
                    for (int i = 0; i < 4; ++i) {
                        const int row = 4 * t + i;
                        want[(static_cast<std::size_t>(t) * cols + k) * 4 + i] = row < rows ? src[row * ld + k] : 0.0f;
                    }
            attn::kernels::pack_row_tiles(rows, cols, src.data(), ld, got.data());
            INFO("rows=" << rows << " cols=" << cols << " ld=" << ld);
            CHECK(got == want);
        }
}

TEST_CASE("pack_panels: the obvious column copy for every width, depth and column layout", "[gemm]") {
    // columns of a row-major matrix (stride ld, contiguous groups of 8 included) and
    // columns that are contiguous rows (ld = 1, the packing of a transpose)
    std::mt19937 rng(4);
    for (int rows = 0; rows <= 11; ++rows)
        for (int n = 0; n <= 19; ++n)
            for (const bool transposed : {false, true}) {
                const int ld = transposed ? 1 : n + std::uniform_int_distribution<int>(0, 2)(rng);
                const int row_len = rows + std::uniform_int_distribution<int>(0, 2)(rng);  // transposed: stride of a column
                std::vector<float> src(static_cast<std::size_t>(std::max(1, transposed ? n * row_len : rows * ld)));
                for (float& v : src) v = std::uniform_real_distribution<float>(-1, 1)(rng);
                auto column = [&](int j) { return src.data() + (transposed ? j * row_len : j); };
                const int panels = attn::kernels::panel_count(n);
                std::vector<float> got(static_cast<std::size_t>(panels) * rows * 8, 42.0f), want(got.size());
                for (int p = 0; p < panels; ++p)
                    for (int k = 0; k < rows; ++k)
                        for (int j = 0; j < 8; ++j) {
                            const int col = 8 * p + j;
                            want[(static_cast<std::size_t>(p) * rows + k) * 8 + j] = col < n ? column(col)[k * ld] : 0.0f;
                        }
                attn::kernels::pack_panels(rows, n, ld, column, got.data());
                INFO("rows=" << rows << " n=" << n << " ld=" << ld << " transposed=" << transposed);
                CHECK(got == want);
            }
}

TEST_CASE("gemm: a product of at most 128 rows packs B a block of 64 columns at a time and equals the in-order sum", "[gemm]") {
    // A model's run at T <= 128: the weights (768×1024 here, 3 MB) are packed 64 columns
    // at a time into a small buffer (768×64 floats), not whole into the workspace; the
    // numbers are those of the in-order sum, for gemm, gemm_bt and PackedLhs alike.
    std::mt19937 rng(2216);
    const std::size_t block = sizeof(float) * 768 * 64;
    for (const int m : {1, 16, 29, 128}) {
        for (const int n : {1024, 1021, 20}) {
            INFO("m=" << m << " n=" << n);
            const attn::Matrix a = ref::random_matrix(rng, m, 768, -2, 2);
            const attn::Matrix b = ref::random_matrix(rng, 768, n, -2, 2);
            const attn::Matrix want = in_order_product(a, b);
            const std::size_t tiles = sizeof(float) * static_cast<std::size_t>(attn::kernels::tile_count(m)) * 768 * 4;
            const std::size_t panels = n >= 64 ? block : sizeof(float) * 768 * 8 * static_cast<std::size_t>(attn::kernels::panel_count(n));
            attn::Matrix c;
            attn::gemm_release_workspace();
            attn::gemm(a, b, c);
            CHECK(c == want);
            CHECK(attn::gemm_workspace_bytes() == tiles + panels);
            attn::gemm_release_workspace();
            attn::gemm_bt(a, attn::Matrix(b.transpose()), c);
            CHECK(c == want);
            CHECK(attn::gemm_workspace_bytes() == tiles + panels);
            attn::PackedLhs(a).times(b, c);
            CHECK(c == want);
            if (n > 805) {
                attn::gemm(a, b.middleCols(5, 800), c);  // a block of B's columns, rows n apart
                CHECK(c == in_order_product(a, attn::Matrix(b.middleCols(5, 800))));
            }
        }
    }
    // from 129 rows on B is packed whole (its panels are most of the workspace)
    const attn::Matrix a = ref::random_matrix(rng, 129, 768, -2, 2), b = ref::random_matrix(rng, 768, 512, -2, 2);
    attn::gemm_release_workspace();
    attn::Matrix c;
    attn::gemm(a, b, c);
    CHECK(c == in_order_product(a, b));
    CHECK(attn::gemm_workspace_bytes() >= sizeof(float) * 768 * 512);
}
