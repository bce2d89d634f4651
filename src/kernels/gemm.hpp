#pragma once
// Matrix products for the traced (every-intermediate) path, computed with the
// hand-written SIMD kernels of kernels.hpp (wasm SIMD128, SSE2 natively, or
// plain C++), the same kernels the fast output-only path uses.
//
// Every entry c(i, j) is Σ_k a(i, k)·b(k, j) summed in order k = 0, 1, … from
// 0, with no FMA: the result does not depend on where a row or column sits in
// its matrix, so equal operands give bit-identical products, and the native
// (SSE2) and wasm (SIMD128) builds compute the same numbers.

#include "base/types.hpp"
#include "kernels/half.hpp"

#include <cstddef>
#include <vector>

namespace attn {

/// The products pack their operands into a workspace kept from call to call
/// (one per thread, so repeated products of one size allocate nothing). It is
/// bounded: a product whose packed operands need more than this is freed when
/// the product is done (at T = 2048 weights·V alone packs 16 MB), so what stays
/// allocated between calls is at most this much per thread.
inline constexpr std::size_t kGemmWorkspaceKeepBytes = std::size_t{4} << 20;

/// Bytes the calling thread's workspace holds now.
std::size_t gemm_workspace_bytes();
/// Frees the calling thread's workspace.
void gemm_release_workspace();

/// c (m×n) = a (m×k) · b (k×n). c is resized; it must not alias a or b.
void gemm(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b, Matrix& c);

/// c (m×n) = a (m×k) · bᵀ, b (n×k). c is resized; it must not alias a or b.
void gemm_bt(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b, Matrix& c);

/// c (m×n) = aᵀ · b, a (k×m), b (k×n): the weight gradients of a backward
/// pass (Xᵀ·dY). c is resized; it must not alias a or b.
void gemm_at(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b, Matrix& c);

/// A matrix stored as the kernels' panels (Parameters::use_panels; kernels.hpp):
/// b (k×n row-major, n a multiple of 8) into panels (k·n floats: panel p, the
/// columns 8p … 8p+7, is k rows of 8), and back.
void pack_matrix_panels(const float* b, int k, int n, float* panels);
void unpack_matrix_panels(const float* panels, int k, int n, float* b);

/// c (m×n) = a (m×k) · B, B (k×n) stored as panels (pack_matrix_panels): the same
/// numbers as gemm(a, B, c), without packing B. c is resized.
void gemm_panels(const Eigen::Ref<const Matrix>& a, const float* b_panels, int k, int n, Matrix& c);

// ---- 16-bit right operands (F16, BF16 weights kept as they are; half.hpp) ----
// Each is converted to float32 a block of 64 columns at a time, inside the packing,
// into the workspace, and multiplied by the same kernel in the same order: the
// numbers of the product over the float32 values, bit for bit, without a float32
// copy of the whole matrix.

/// pack_matrix_panels of 16-bit values (the same layout, 2 bytes an element).
void pack_matrix_panels(const std::uint16_t* b, int k, int n, std::uint16_t* panels);
/// unpack_matrix_panels of 16-bit panels, converted to float32.
void unpack_matrix_panels(const std::uint16_t* panels, WeightFormat f, int k, int n, float* b);
/// gemm_panels with 16-bit panels of format f.
void gemm_panels(const Eigen::Ref<const Matrix>& a, const std::uint16_t* b_panels, WeightFormat f, int k, int n, Matrix& c);
/// c (m×n) = a (m×k) · B, B (k×n) 16-bit row-major: gemm's numbers. c is resized.
void gemm_half(const Eigen::Ref<const Matrix>& a, const std::uint16_t* b, WeightFormat f, int k, int n, Matrix& c);
/// c (m×n) = a (m×k) · Bᵀ, B (n×k) 16-bit row-major: gemm_bt's numbers. c is resized.
void gemm_bt_half(const Eigen::Ref<const Matrix>& a, const std::uint16_t* b, WeightFormat f, int n, int k, Matrix& c);

/// A left operand packed once for several products a·b₁, a·b₂, … (the
/// per-head projections of one input): the same numbers as gemm(a, b, c).
class PackedLhs {
public:
    explicit PackedLhs(const Eigen::Ref<const Matrix>& a);
    /// c (m×n) = a · b (k×n). c is resized; it must not alias b.
    void times(const Eigen::Ref<const Matrix>& b, Matrix& c) const;

private:
    int m_, k_;
    std::vector<float> tiles_;  // a as row tiles (kernels.hpp)
};

}  // namespace attn
