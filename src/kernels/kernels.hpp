#pragma once
// Register-blocked matrix-product kernels over packed operands, written once
// against the 4-lane vocabulary of simd.hpp (wasm SIMD128, SSE2, or plain C++).
//
// The one kernel: acc (MA×NV vectors) += Σ_k a[k][0..MA) ⊗ b[k][0..4·NV)
//   a packed k-major, MA floats per k: each one broadcast (v128.load32_splat,
//     a plain load, no shuffle);
//   b packed k-major, 4·NV floats per k: NV vector loads.
// Both operands advance by one pointer each with constant offsets inside a
// step, so the wasm loads carry their offsets as immediates and V8 emits no
// per-row address arithmetic (measured: row pointers with a runtime stride cost
// a third of the speed). The MA·NV accumulators stay in registers for the
// whole k loop: MA·NV multiply+add pairs per MA + NV loads.
//
// Layouts used by the callers:
//   row tiles  [tile][k][4]  four rows of a row-major matrix, interleaved
//   panels     [panel][k][8] eight columns of a matrix (kNR = 8)

#include "kernels/simd.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace attn::kernels {

inline constexpr int kMR = 4;  ///< rows of a row tile (one vector across rows)
inline constexpr int kNR = 8;  ///< columns of a panel (two vectors)

inline int tile_count(int rows) { return (rows + kMR - 1) / kMR; }
inline int panel_count(int n) { return (n + kNR - 1) / kNR; }

/// acc[i][v] += Σ_{k<kc} a[k·MA + i] · b[k·ldb + 4v … 4v+3]; ldb = 4·NV for a
/// packed panel, or the row stride of a row-major matrix read in place.
template <int MA, int NV>
ATTN_INLINE void kernel(int kc, const float* __restrict a, const float* __restrict b, simd::F4 (&acc)[MA][NV],
                        std::ptrdiff_t ldb = 4 * NV) {
    using namespace simd;
    for (int k = 0; k < kc; ++k) {
        F4 bv[NV];
        for (int v = 0; v < NV; ++v) bv[v] = load(b + 4 * v);
        for (int i = 0; i < MA; ++i) {
            const F4 x = load_splat(a + i);
            for (int v = 0; v < NV; ++v) acc[i][v] = madd(x, bv[v], acc[i][v]);
        }
        a += MA;
        b += ldb;
    }
}

/// kernel() on a packed panel (ldb = 4·NV) that also reads one cache line ahead every
/// 8 steps: the float at `touch` (then 16 floats on, while touch < touch_end) into
/// `sink`. WebAssembly has no prefetch instruction; a load whose value nobody waits for
/// is the nearest thing: it brings the next panel from memory while this one is
/// multiplied, where otherwise the first row tile to read a panel waits for it (16
/// rows times GPT-2 small's matrices, wasm in Node, panels not in cache: 25 → 30
/// GFLOP/s). The sums are kernel()'s, in the same order.
template <int MA, int NV>
ATTN_INLINE void kernel_touching(int kc, const float* __restrict a, const float* __restrict b, simd::F4 (&acc)[MA][NV],
                                 const float*& touch, const float* touch_end, simd::F4& sink) {
    using namespace simd;
    int k = 0;
    for (; k + 8 <= kc; k += 8) {
        if (touch < touch_end) {
            sink = add(sink, load(touch));
            touch += 16;
        }
        kernel<MA, NV>(8, a, b, acc);
        a += 8 * MA;
        b += 8 * 4 * NV;
    }
    kernel<MA, NV>(kc - k, a, b, acc);
}

template <int MA, int NV>
ATTN_INLINE void zero(simd::F4 (&acc)[MA][NV]) {
    for (int i = 0; i < MA; ++i)
        for (int v = 0; v < NV; ++v) acc[i][v] = simd::zero();
}

/// Stores rows [0, rows) of a 4×8 accumulator tile into c (row stride ldc),
/// columns [0, n_valid): c = acc, or c += acc with `accumulate`; then each row
/// multiplied by row_scale[i] when given.
ATTN_INLINE void store_tile(const simd::F4 (&acc)[kMR][2], int rows, int n_valid, float* c, std::ptrdiff_t ldc,
                            const float* row_scale = nullptr, bool accumulate = false) {
    using namespace simd;
    for (int i = 0; i < rows; ++i) {
        F4 lo = acc[i][0], hi = acc[i][1];
        float* ci = c + i * ldc;
        alignas(16) float tmp[kNR];
        const bool full = n_valid == kNR;
        if (accumulate) {
            if (!full)
                for (int j = 0; j < kNR; ++j) tmp[j] = j < n_valid ? ci[j] : 0.0f;
            const float* prev = full ? ci : tmp;
            lo = add(load(prev), lo);
            hi = add(load(prev + 4), hi);
        }
        if (row_scale) {
            const F4 s = load_splat(row_scale + i);
            lo = mul(lo, s);
            hi = mul(hi, s);
        }
        if (full) {
            store(ci, lo);
            store(ci + 4, hi);
        } else {  // the last columns of a matrix whose width is not a multiple of 8
            store(tmp, lo);
            store(tmp + 4, hi);
            for (int j = 0; j < n_valid; ++j) ci[j] = tmp[j];
        }
    }
}

/// Packs `rows` rows (cols wide, row stride ld) into row tiles
/// out[t][k][i] = src(4t + i, k), rows past `rows` zero. out holds
/// tile_count(rows)·cols·4 floats. Four rows at a time, four columns per
/// step: four vector loads, one 4×4 transpose, four vector stores (a plain
/// copy, so the tiles hold exactly the source's bits).
inline void pack_row_tiles(int rows, int cols, const float* src, std::ptrdiff_t ld, float* out) {
    using namespace simd;
    for (int t = 0; t < tile_count(rows); ++t) {
        float* tile = out + static_cast<std::ptrdiff_t>(t) * cols * kMR;
        const int n = std::min(kMR, rows - t * kMR);
        if (n == kMR) {
            const float* r0 = src + static_cast<std::ptrdiff_t>(t) * kMR * ld;
            const float *r1 = r0 + ld, *r2 = r1 + ld, *r3 = r2 + ld;
            int k = 0;
            for (; k + 4 <= cols; k += 4) {
                F4 a = load(r0 + k), b = load(r1 + k), c = load(r2 + k), d = load(r3 + k);
                transpose4(a, b, c, d);  // now a = column k of the four rows, b = column k + 1, …
                store(tile + k * kMR, a);
                store(tile + k * kMR + 4, b);
                store(tile + k * kMR + 8, c);
                store(tile + k * kMR + 12, d);
            }
            for (; k < cols; ++k) {
                tile[k * kMR + 0] = r0[k];
                tile[k * kMR + 1] = r1[k];
                tile[k * kMR + 2] = r2[k];
                tile[k * kMR + 3] = r3[k];
            }
            continue;
        }
        for (int i = 0; i < kMR; ++i) {  // the last, partial tile
            const float* row = src + (t * kMR + i) * ld;
            if (i < n)
                for (int k = 0; k < cols; ++k) tile[k * kMR + i] = row[k];
            else
                for (int k = 0; k < cols; ++k) tile[k * kMR + i] = 0.0f;
        }
    }
}

/// pack_panels of n contiguous columns (column j at b + j, rows ld apart: a block of a
/// row-major matrix), row by row: each row's n floats are read in one pass and written
/// to the panels, eight at a time. Going down a panel's eight columns instead reads one
/// 32-byte piece of every row per panel, a row ld floats away, which the hardware
/// prefetcher does not follow across pages (measured natively on the Xeon, 16 rows times
/// a 768×3072 weight matrix that is not in cache: 14.5 → 20.9 GFLOP/s for the product,
/// the packing alone 3.2 → 5.1 GB/s). The same panels, bit for bit.
inline void pack_row_major(int rows, int n, std::ptrdiff_t ld, const float* b, float* out) {
    const int full = n / kNR, rest = n - full * kNR;
    const std::ptrdiff_t panel_size = static_cast<std::ptrdiff_t>(rows) * kNR;
    for (int k = 0; k < rows; ++k) {
        const float* src = b + k * ld;
        float* dst = out + static_cast<std::ptrdiff_t>(k) * kNR;
        for (int p = 0; p < full; ++p) {
            simd::store(dst + p * panel_size, simd::load(src + p * kNR));
            simd::store(dst + p * panel_size + 4, simd::load(src + p * kNR + 4));
        }
        if (rest)
            for (int j = 0; j < kNR; ++j) dst[full * panel_size + j] = j < rest ? src[full * kNR + j] : 0.0f;
    }
}

/// Packs n columns of a (rows×·) matrix into panels: out[p][k][j] =
/// column(8p + j)[k·ld], zero past n. `column(j)` points at row 0 of logical
/// column j, so several matrices side by side pack as one. out holds
/// panel_count(n)·rows·8 floats.
template <typename ColumnPointer>
void pack_panels(int rows, int n, std::ptrdiff_t ld, ColumnPointer column, float* out) {
    for (int p = 0; p < panel_count(n); ++p) {
        const int j0 = p * kNR, width = std::min(kNR, n - j0);
        float* panel = out + static_cast<std::ptrdiff_t>(p) * rows * kNR;
        if (width == kNR && column(j0 + kNR - 1) == column(j0) + (kNR - 1)) {
            const float* src = column(j0);  // 8 contiguous columns: copy rows of 8
            for (int k = 0; k < rows; ++k)
                for (int j = 0; j < kNR; ++j) panel[k * kNR + j] = src[k * ld + j];
        } else if (width == kNR && ld == 1) {
            // each column contiguous (the rows of a matrix whose transpose is packed):
            // 4×4 blocks, four vector loads, one transpose, four vector stores
            using namespace simd;
            const float* col[kNR];
            for (int j = 0; j < kNR; ++j) col[j] = column(j0 + j);
            int k = 0;
            for (; k + 4 <= rows; k += 4)
                for (int h = 0; h < kNR; h += 4) {
                    F4 a = load(col[h] + k), b = load(col[h + 1] + k), c = load(col[h + 2] + k), d = load(col[h + 3] + k);
                    transpose4(a, b, c, d);  // a = row k of columns h … h+3, b = row k + 1, …
                    store(panel + k * kNR + h, a);
                    store(panel + (k + 1) * kNR + h, b);
                    store(panel + (k + 2) * kNR + h, c);
                    store(panel + (k + 3) * kNR + h, d);
                }
            for (; k < rows; ++k)
                for (int j = 0; j < kNR; ++j) panel[k * kNR + j] = col[j][k];
        } else {
            for (int j = 0; j < kNR; ++j) {
                const float* src = j < width ? column(j0 + j) : nullptr;
                for (int k = 0; k < rows; ++k) panel[k * kNR + j] = src ? src[k * ld] : 0.0f;
            }
        }
    }
}

/// Where panel p of a B operand is: its first row and the stride between rows.
struct Panel {
    const float* data;
    std::ptrdiff_t ld;
};

/// gemm's row tiles per chunk: a chunk's packed rows (chunk·k·4 floats) take
/// about 768 KB, so they stay in a 2 MB L2 while every panel of B passes over
/// them (measured at k = 768 on a Xeon, wasm: 64 tiles 6% faster than 10).
inline int chunk_tiles(int k) { return std::max(1, (196608 / std::max(k, 1)) / kMR); }

/// Row tiles [t0, t1) of A times one panel of B (its rows ldb apart) into c.
/// Inlined twice by gemm: with ldb = kNR, a constant (a packed panel: the
/// kernel's loads then carry constant offsets), and with a runtime stride.
ATTN_INLINE void tiles_times_panel(int t0, int t1, int m, int k, const float* a_tiles, const float* b,
                                   std::ptrdiff_t ldb, int n_valid, float* c, std::ptrdiff_t ldc) {
    for (int t = t0; t < t1; ++t) {
        simd::F4 acc[kMR][2];
        zero(acc);
        kernel<kMR, 2>(k, a_tiles + static_cast<std::ptrdiff_t>(t) * k * kMR, b, acc, ldb);
        store_tile(acc, std::min(kMR, m - t * kMR), n_valid, c + t * kMR * ldc, ldc);
    }
}

/// c (m×n, row stride ldc) = A (m×k, packed as row tiles) · B (k×n), whose
/// panel p (columns 8p … 8p+7) is panel(p). Row tiles go in chunks small
/// enough to stay in cache while every panel of B passes over them.
template <typename PanelOf>
void gemm(int m, int n, int k, const float* a_tiles, PanelOf panel, float* c, std::ptrdiff_t ldc) {
    const int chunk = chunk_tiles(k);
    for (int t0 = 0; t0 < tile_count(m); t0 += chunk) {
        const int t1 = std::min(tile_count(m), t0 + chunk);
        for (int p = 0; p < panel_count(n); ++p) {
            const Panel b = panel(p);
            const int n_valid = std::min(kNR, n - p * kNR);
            if (b.ld == kNR)
                tiles_times_panel(t0, t1, m, k, a_tiles, b.data, kNR, n_valid, c + p * kNR, ldc);
            else
                tiles_times_panel(t0, t1, m, k, a_tiles, b.data, b.ld, n_valid, c + p * kNR, ldc);
        }
    }
}

/// True when the n floats at a and b have the same bits (an exact copy):
/// blocks of 64 compared with xor, or-ed together (vectorised by the compiler).
inline bool same_bits(const float* a, const float* b, std::size_t n) {
    const auto bits = [](const float* p, std::size_t i) {
        std::uint32_t u;
        std::memcpy(&u, p + i, sizeof u);
        return u;
    };
    std::size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        std::uint32_t diff = 0;
        for (std::size_t j = i; j < i + 64; ++j) diff |= bits(a, j) ^ bits(b, j);
        if (diff) return false;
    }
    for (; i < n; ++i)
        if (bits(a, i) != bits(b, i)) return false;
    return true;
}

/// True when every one of the n floats is finite and |x| <= bound (bound >= 0):
/// bound >= |x| is false for NaN, and ±inf exceed any finite bound. Four
/// independent lane masks, so the loop is not one chain of dependent ands.
inline bool all_within(const float* x, std::size_t n, float bound) {
    using namespace simd;
    const F4 b = splat(bound);
    F4 a0 = ge(b, b), a1 = a0, a2 = a0, a3 = a0;  // all ones
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        a0 = bit_and(a0, ge(b, simd::abs(load(x + i))));
        a1 = bit_and(a1, ge(b, simd::abs(load(x + i + 4))));
        a2 = bit_and(a2, ge(b, simd::abs(load(x + i + 8))));
        a3 = bit_and(a3, ge(b, simd::abs(load(x + i + 12))));
    }
    for (; i < n; ++i)
        if (!(x[i] <= bound && x[i] >= -bound)) return false;
    // 0 in a lane that held all ones in every mask, 1 elsewhere
    return hsum(select(bit_and(bit_and(a0, a1), bit_and(a2, a3)), simd::zero(), splat(1.0f))) == 0.0f;
}

/// The workspaces' one growth rule: a buffer grows to at least n elements and
/// never shrinks by itself, so a call of the same or a smaller size allocates
/// nothing. Its contents are not kept (every caller packs afresh): the old
/// buffer is freed first, so peak memory is the new size, not old + new.
template <typename T>
T* grow(std::vector<T>& buffer, std::size_t n) {
    if (buffer.size() < n) {
        buffer.clear();
        buffer.shrink_to_fit();
        buffer.resize(n);
    }
    return buffer.data();
}

/// Frees a buffer's memory.
template <typename T>
void release(std::vector<T>& buffer) {
    buffer.clear();
    buffer.shrink_to_fit();
}

/// Binaryen (wasm-opt -O3) inlines every function that has a single caller,
/// whatever its noinline attribute; V8 then allocates registers for the whole
/// caller at once and spills the kernels' accumulators in their inner loops
/// (measured: 17 instead of 36 GFLOP/s). A call through a pointer it cannot
/// see through, opaque(f)(args…), keeps each pass a function of its own; it
/// costs one indirect call. The pointer is one per function *type* (set by the
/// first call): only pass functions whose types differ, as every caller does
/// (each kernel pass has its own signature; gemm<PanelOf> differs by PanelOf).
template <typename F>
F* opaque(F* f) {
    static F* volatile pointer = f;
    return pointer;
}

}  // namespace attn::kernels
