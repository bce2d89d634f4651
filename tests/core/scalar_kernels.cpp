// Compiled only in CMake's attn_scalar_kernels, with -Dattn=attn_scalar and ATTN_SCALAR_KERNELS:
// every attn:: below is the scalar copy's (scalar_kernels.hpp).
#include "scalar_kernels.hpp"

#include "attention/fast_attention.hpp"
#include "kernels/gemm.hpp"

#if !defined(ATTN_SCALAR_KERNELS)
#error "scalar_kernels.cpp belongs to attn_scalar_kernels (CMakeLists.txt), built with ATTN_SCALAR_KERNELS"
#endif

namespace scalar_kernels {

const char* backend() { return attn::FastAttention::backend(); }

void gemm(const Matrix& a, const Matrix& b, Matrix& c) { attn::gemm(a, b, c); }

void gemm_bt(const Matrix& a, const Matrix& b, Matrix& c) { attn::gemm_bt(a, b, c); }

void exp(const float* x, float* out, std::size_t n) { attn::detail::fast_exp(x, out, n); }

void softmax(const Matrix& scaled, bool causal, Matrix& weights) { attn::detail::fast_softmax(scaled, causal, weights); }

Matrix forward(const Matrix& x, const Matrix& wq, const Matrix& wk, const Matrix& wv, const Matrix& wo, int heads,
               const MaskMatrix* mask, bool causal, bool scale) {
    const attn::Weights w{wq, wk, wv, wo};
    const attn::MaskSpec spec = mask ? attn::MaskSpec::custom(*mask) : causal ? attn::MaskSpec::causal() : attn::MaskSpec::none();
    return attn::fast_multi_head_output(x, w, heads, spec, scale);
}

}  // namespace scalar_kernels
