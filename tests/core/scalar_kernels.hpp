#pragma once
// The fast kernels compiled a second time with their plain C++ backend (src/kernels/simd.hpp with
// ATTN_SCALAR_KERNELS: what the scalar wasm flavour and a CPU without SSE2 run), beside the core's
// own. CMake's attn_scalar_kernels compiles the kernels' files under the namespace attn_scalar
// (-Dattn=attn_scalar), so both forms live in core_tests; this header reaches that copy with
// Eigen types alone (scalar_kernels.cpp), and test_scalar_kernels.cpp compares the two.

#include <Eigen/Core>

#include <cstddef>

namespace scalar_kernels {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MaskMatrix = Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// The copy's FastAttention::backend(): "scalar".
const char* backend();
/// The copy's gemm (c = a·b) and gemm_bt (c = a·bᵀ).
void gemm(const Matrix& a, const Matrix& b, Matrix& c);
void gemm_bt(const Matrix& a, const Matrix& b, Matrix& c);
/// The copy's detail::fast_exp and detail::fast_softmax.
void exp(const float* x, float* out, std::size_t n);
void softmax(const Matrix& scaled, bool causal, Matrix& weights);
/// The copy's fast_multi_head_output with the weights W_Q, W_K, W_V, W_O: with `mask` the T×T
/// matrix (true = may attend), else the causal mask when `causal`, else none.
Matrix forward(const Matrix& x, const Matrix& wq, const Matrix& wk, const Matrix& wv, const Matrix& wo, int heads,
               const MaskMatrix* mask, bool causal, bool scale);

}  // namespace scalar_kernels
