// The fast kernels' plain C++ backend (src/kernels/simd.hpp; what the scalar wasm flavour and a CPU
// without SSE2 run) against the backend of this build (SSE2 on x86-64): the same products,
// exponentials, softmax rows and attention outputs, bit for bit, since no backend fuses a
// multiply-add and all sum in the same order; and against the Eigen reference. The scalar copy
// is CMake's attn_scalar_kernels, reached through scalar_kernels.hpp.

#include "attention/fast_attention.hpp"
#include "kernels/gemm.hpp"
#include "attention/mask.hpp"
#include "attention/multi_head.hpp"
#include "base/types.hpp"
#include "attention/weights.hpp"
#include "scalar_kernels.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

attn::Matrix random_matrix(std::mt19937& rng, int rows, int cols, float lo, float hi) {
    std::uniform_real_distribution<float> u(lo, hi);
    attn::Matrix m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = u(rng);
    return m;
}

/// Same shape and the same bits in every entry (−0 and +0 differ; NaN never occurs here).
bool same_bits(const attn::Matrix& a, const attn::Matrix& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<std::size_t>(a.size())) == 0;
}

}  // namespace

TEST_CASE("scalar kernels: the second copy runs the plain C++ backend, the core another", "[scalar_kernels]") {
    CHECK(std::string(scalar_kernels::backend()) == "scalar");
#if defined(__SSE2__)
    CHECK(std::string(attn::FastAttention::backend()) == "sse2");
#endif
}

TEST_CASE("scalar kernels: gemm and gemm_bt give the core's bits on random shapes and at C = 768", "[scalar_kernels]") {
    std::mt19937 rng(31);
    std::vector<std::array<int, 3>> shapes = {{1, 1, 1}, {4, 8, 8}, {5, 9, 9}, {31, 63, 33}, {3, 768, 17}, {9, 768, 64}};
    std::uniform_int_distribution<int> dim(1, 40);
    for (int i = 0; i < 120; ++i) shapes.push_back({dim(rng), dim(rng), dim(rng)});
    for (const auto& [m, k, n] : shapes) {
        INFO("m=" << m << " k=" << k << " n=" << n);
        const attn::Matrix a = random_matrix(rng, m, k, -2, 2);
        const attn::Matrix b = random_matrix(rng, k, n, -2, 2);
        const attn::Matrix bt = random_matrix(rng, n, k, -2, 2);
        attn::Matrix c, c_scalar;
        attn::gemm(a, b, c);
        scalar_kernels::gemm(a, b, c_scalar);
        CHECK(same_bits(c, c_scalar));
        attn::gemm_bt(a, bt, c);
        scalar_kernels::gemm_bt(a, bt, c_scalar);
        CHECK(same_bits(c, c_scalar));
    }
}

TEST_CASE("scalar kernels: exp and the softmax rows give the core's bits", "[scalar_kernels]") {
    std::vector<float> x;
    for (float v = -100.0f; v <= 90.0f; v += 0.0137f) x.push_back(v);
    x.insert(x.end(), {0.0f, -0.0f, -87.0f, 88.0f, 1e-30f, -1e-30f});
    std::vector<float> y(x.size()), y_scalar(x.size());
    attn::detail::fast_exp(x.data(), y.data(), x.size());
    scalar_kernels::exp(x.data(), y_scalar.data(), x.size());
    CHECK(std::memcmp(y.data(), y_scalar.data(), sizeof(float) * y.size()) == 0);

    std::mt19937 rng(32);
    for (int t : {1, 3, 8, 17, 64, 129}) {
        for (bool causal : {false, true}) {
            INFO("T=" << t << " causal=" << causal);
            const attn::Matrix scaled = random_matrix(rng, t, t, -30, 30);
            attn::Matrix w, w_scalar;
            attn::detail::fast_softmax(scaled, causal, w);
            scalar_kernels::softmax(scaled, causal, w_scalar);
            CHECK(same_bits(w, w_scalar));
        }
    }
}

TEST_CASE("scalar kernels: attention outputs give the core's bits and match the Eigen reference within 1e-5", "[scalar_kernels]") {
    std::mt19937 rng(33);
    for (int i = 0; i < 60; ++i) {
        const int t = std::uniform_int_distribution<int>(1, 40)(rng);
        const int heads = std::uniform_int_distribution<int>(1, 3)(rng);
        const int d = std::uniform_int_distribution<int>(1, 9)(rng);
        const int c = heads * d;
        const int kind = i % 3;  // no mask, causal, a random matrix (every query keeps its first key)
        const bool scale = i % 2 == 0;
        INFO("T=" << t << " H=" << heads << " D=" << d << " mask kind " << kind << " scale " << scale);
        const attn::Matrix x = random_matrix(rng, t, c, -1, 1);
        attn::Weights w{random_matrix(rng, c, c, -0.5f, 0.5f), random_matrix(rng, c, c, -0.5f, 0.5f),
                        random_matrix(rng, c, c, -0.5f, 0.5f), random_matrix(rng, c, c, -0.5f, 0.5f)};
        attn::MaskMatrix mask = attn::MaskMatrix::Constant(t, t, true);
        if (kind == 1) mask = attn::build_mask(attn::MaskKind::causal, t, t);
        if (kind == 2) {
            std::bernoulli_distribution keep(0.6);
            for (int q = 0; q < t; ++q)
                for (int k = 1; k < t; ++k) mask(q, k) = keep(rng);
        }
        const attn::MaskSpec spec = kind == 2 ? attn::MaskSpec::custom(mask) : kind == 1 ? attn::MaskSpec::causal() : attn::MaskSpec::none();
        const attn::Matrix y = attn::fast_multi_head_output(x, w, heads, spec, scale);
        const attn::Matrix y_scalar = scalar_kernels::forward(x, w.w_query, w.w_key, w.w_value, w.w_output, heads,
                                                              kind == 2 ? &mask : nullptr, kind == 1, scale);
        CHECK(same_bits(y, y_scalar));
        const attn::Matrix want = attn::multi_head_output(x, w, heads, mask, scale);
        const double scale_of = std::max(1e-30, static_cast<double>(want.cwiseAbs().maxCoeff()));
        CHECK((y_scalar - want).cwiseAbs().maxCoeff() / scale_of <= 1e-5);
    }
}
