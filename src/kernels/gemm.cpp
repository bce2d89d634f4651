#include "kernels/gemm.hpp"

#include "kernels/kernels.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace attn {
namespace {

using kernels::kMR;
using kernels::kNR;
using kernels::panel_count;
using kernels::tile_count;

/// Workspace reused across calls (one per thread): A as row tiles, B as
/// panels. Bounded: after a product it keeps at most kGemmWorkspaceKeepBytes
/// (gemm.hpp); a larger one is freed when the product is done.
struct Workspace {
    std::vector<float> tiles;
    std::vector<float> panels;
    std::vector<float> rows;  ///< 16-bit rows converted before their packing (gemm_bt_half)
    std::size_t bytes() const { return sizeof(float) * (tiles.capacity() + panels.capacity() + rows.capacity()); }
};

Workspace& workspace() {
    thread_local Workspace w;
    return w;
}

using kernels::grow;
using kernels::opaque;

/// Frees the workspace when it holds more than the bound; every product ends with it.
void trim(Workspace& ws) {
    if (ws.bytes() > kGemmWorkspaceKeepBytes) {
        kernels::release(ws.tiles);
        kernels::release(ws.panels);
        kernels::release(ws.rows);
    }
}

/// c (row stride ldc) = A (row tiles) · B (packed panels of k×8).
void packed_product(int m, int n, int k, const float* tiles, const float* panels, float* c, std::ptrdiff_t ldc) {
    const std::ptrdiff_t panel_size = static_cast<std::ptrdiff_t>(k) * kNR;
    kernels::gemm(m, n, k, tiles, [&](int p) { return kernels::Panel{panels + p * panel_size, kNR}; }, c, ldc);
}

/// Up to this many row tiles (128 rows), gemm, gemm_bt and PackedLhs pack B a block
/// of kBlockPanels panels at a time into a small buffer and multiply every row tile by
/// it while it is in cache, instead of packing all of B first: few row tiles reuse
/// each panel, and the whole-B workspace (above kGemmWorkspaceKeepBytes allocated
/// afresh and zero-filled every call) cost more than the packing. Measured natively
/// in GPT-2 small's forward (CPU time): T = 16 0.44 → 0.29 s (the zero-fill and page
/// faults of the fresh workspaces, the 154 MB of the tied unembedding's among them,
/// were 15% of it), T = 128 1.45 → 1.32 s; at T = 512 both ways take 5.4 s, so larger
/// products keep the whole-B packing. Reading B in place instead (its rows 12 KB
/// apart) was slower than packing it: a new page at every k step.
constexpr int kInBlocksTiles = 32;
constexpr int kBlockPanels = 8;  ///< 64 columns: at k = 768 a 196 KB block (L2), rows read 256 bytes at a time

/// c (row stride ldc) = A (row tiles) · B (k×n): B's column j starts at b + j·col_step,
/// its entries ld apart (gemm: 1 and the row stride; gemm_bt: the row stride of bᵀ's
/// rows and 1), packed block by block into `block` (k × 8·kBlockPanels floats): the
/// same kernel and order of sums as packed_product.
void blocked_product(int m, int n, int k, const float* tiles, const float* b, std::ptrdiff_t col_step,
                     std::ptrdiff_t ld, float* block, float* c, std::ptrdiff_t ldc) {
    const std::ptrdiff_t panel_size = static_cast<std::ptrdiff_t>(k) * kNR;
    for (int j0 = 0; j0 < n; j0 += kBlockPanels * kNR) {
        const int width = std::min(kBlockPanels * kNR, n - j0);
        if (col_step == 1)
            kernels::pack_row_major(k, width, ld, b + j0, block);
        else
            kernels::pack_panels(k, width, ld, [&](int j) { return b + (j0 + j) * col_step; }, block);
        kernels::gemm(m, width, k, tiles, [&](int p) { return kernels::Panel{block + p * panel_size, kNR}; }, c + j0, ldc);
    }
}

/// Packs a as row tiles, then c = tiles · B (n columns as blocked_product takes them)
/// for an A of at most kInBlocksTiles row tiles.
void finish_in_blocks(const Eigen::Ref<const Matrix>& a, int n, const float* b, std::ptrdiff_t col_step, std::ptrdiff_t ld,
                      Workspace& ws, Matrix& c) {
    const int m = static_cast<int>(a.rows()), k = static_cast<int>(a.cols());
    float* tiles = grow(ws.tiles, static_cast<std::size_t>(tile_count(m)) * k * kMR);
    kernels::pack_row_tiles(m, k, a.data(), a.outerStride(), tiles);
    float* block = grow(ws.panels, static_cast<std::size_t>(std::min(panel_count(n), kBlockPanels)) * k * kNR);
    opaque(blocked_product)(m, n, k, tiles, b, col_step, ld, block, c.data(), n);
    trim(ws);
}

void check_inner(Eigen::Index a_cols, Eigen::Index b_inner, const char* what) {
    if (a_cols != b_inner)
        throw Error(Error::Code::bad_shape, std::string(what) + ": inner dimensions differ (" + std::to_string(a_cols) + " vs " +
                    std::to_string(b_inner) + ")");
}

/// B's columns as panels (k, 8) in ws.panels: column j starts at b.data() + j, rows outerStride apart.
const float* pack_b(const Eigen::Ref<const Matrix>& b, Workspace& ws) {
    const int k = static_cast<int>(b.rows()), n = static_cast<int>(b.cols());
    float* panels = grow(ws.panels, static_cast<std::size_t>(panel_count(n)) * k * kNR);
    kernels::pack_row_major(k, n, b.outerStride(), b.data(), panels);
    return panels;
}

/// Sizes c (m×n); false when nothing is left to multiply: c is empty, or the
/// inner dimension k is 0 and c has been set to zeros.
bool prepare(Matrix& c, int m, int n, int k) {
    c.resize(m, n);
    if (m == 0 || n == 0) return false;
    if (k == 0) {
        c.setZero();
        return false;
    }
    return true;
}

/// Packs a as row tiles, then c = tiles · panels (already packed into ws.panels).
void finish(const Eigen::Ref<const Matrix>& a, int n, Workspace& ws, Matrix& c) {
    const int m = static_cast<int>(a.rows()), k = static_cast<int>(a.cols());
    float* tiles = grow(ws.tiles, static_cast<std::size_t>(tile_count(m)) * k * kMR);
    kernels::pack_row_tiles(m, k, a.data(), a.outerStride(), tiles);
    opaque(packed_product)(m, n, k, tiles, ws.panels.data(), c.data(), n);
    trim(ws);
}

}  // namespace

void gemm(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b, Matrix& c) {
    check_inner(a.cols(), b.rows(), "gemm");
    const int m = static_cast<int>(a.rows()), n = static_cast<int>(b.cols()), k = static_cast<int>(a.cols());
    if (!prepare(c, m, n, k)) return;
    Workspace& ws = workspace();
    if (tile_count(m) <= kInBlocksTiles) return finish_in_blocks(a, n, b.data(), 1, b.outerStride(), ws, c);
    pack_b(b, ws);
    finish(a, n, ws, c);
}

void gemm_bt(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b, Matrix& c) {
    check_inner(a.cols(), b.cols(), "gemm_bt");
    const int m = static_cast<int>(a.rows()), n = static_cast<int>(b.rows()), k = static_cast<int>(a.cols());
    if (!prepare(c, m, n, k)) return;
    Workspace& ws = workspace();
    // column j of bᵀ is row j of b: contiguous, one float apart
    if (tile_count(m) <= kInBlocksTiles) return finish_in_blocks(a, n, b.data(), b.outerStride(), 1, ws, c);
    float* panels = grow(ws.panels, static_cast<std::size_t>(panel_count(n)) * k * kNR);
    const float* b0 = b.data();
    const std::ptrdiff_t ldb = b.outerStride();
    kernels::pack_panels(k, n, 1, [&](int j) { return b0 + j * ldb; }, panels);
    finish(a, n, ws, c);
}

void gemm_at(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b, Matrix& c) {
    check_inner(a.rows(), b.rows(), "gemm_at");
    const int m = static_cast<int>(a.cols()), n = static_cast<int>(b.cols()), k = static_cast<int>(a.rows());
    if (!prepare(c, m, n, k)) return;
    Workspace& ws = workspace();
    pack_b(b, ws);
    // row tiles of aᵀ: tile t, step kk holds a(kk, 4t … 4t+3), four contiguous floats of row kk
    float* tiles = grow(ws.tiles, static_cast<std::size_t>(tile_count(m)) * k * kMR);
    const float* a0 = a.data();
    const std::ptrdiff_t lda = a.outerStride();
    for (int t = 0; t < tile_count(m); ++t) {
        float* tile = tiles + static_cast<std::ptrdiff_t>(t) * k * kMR;
        const int valid = std::min(kMR, m - t * kMR);
        for (int kk = 0; kk < k; ++kk) {
            const float* row = a0 + kk * lda + t * kMR;
            for (int i = 0; i < kMR; ++i) tile[kk * kMR + i] = i < valid ? row[i] : 0.0f;
        }
    }
    opaque(packed_product)(m, n, k, tiles, ws.panels.data(), c.data(), n);
    trim(ws);
}

PackedLhs::PackedLhs(const Eigen::Ref<const Matrix>& a)
    : m_(static_cast<int>(a.rows())), k_(static_cast<int>(a.cols())) {
    tiles_.resize(static_cast<std::size_t>(tile_count(m_)) * k_ * kMR);
    if (!tiles_.empty()) kernels::pack_row_tiles(m_, k_, a.data(), a.outerStride(), tiles_.data());
}

void PackedLhs::times(const Eigen::Ref<const Matrix>& b, Matrix& c) const {
    check_inner(k_, b.rows(), "PackedLhs::times");
    const int n = static_cast<int>(b.cols());
    if (!prepare(c, m_, n, k_)) return;
    Workspace& ws = workspace();
    if (tile_count(m_) <= kInBlocksTiles) {
        const int n = static_cast<int>(b.cols());
        float* block = grow(ws.panels, static_cast<std::size_t>(std::min(panel_count(n), kBlockPanels)) * k_ * kNR);
        opaque(blocked_product)(m_, n, k_, tiles_.data(), b.data(), 1, b.outerStride(), block, c.data(), n);
    } else {
        const float* panels = pack_b(b, ws);
        opaque(packed_product)(m_, n, k_, tiles_.data(), panels, c.data(), n);
    }
    trim(ws);
}

namespace {

void check_panel_width(int n) {
    if (n % kNR != 0) throw Error(Error::Code::bad_shape, "panels hold 8 columns each; the matrix has " + std::to_string(n));
}

}  // namespace

void pack_matrix_panels(const float* b, int k, int n, float* panels) {
    check_panel_width(n);
    kernels::pack_row_major(k, n, n, b, panels);
}

void unpack_matrix_panels(const float* panels, int k, int n, float* b) {
    check_panel_width(n);
    const std::ptrdiff_t panel_size = static_cast<std::ptrdiff_t>(k) * kNR;
    for (int p = 0; p < n / kNR; ++p)
        for (int r = 0; r < k; ++r)
            std::copy_n(panels + p * panel_size + static_cast<std::ptrdiff_t>(r) * kNR, kNR,
                        b + static_cast<std::ptrdiff_t>(r) * n + p * kNR);
}

namespace {

/// Products of at most this many row tiles by panels already in memory (gemm_panels)
/// read ahead while they multiply (kernel_touching): with few rows, the first row tile
/// to reach a panel otherwise waits for it to come from memory.
constexpr int kTouchingTiles = 8;
/// How many panels ahead the reads go.
constexpr int kTouchPanels = 2;
/// Where the read-ahead's values go, so that they are not dropped.
volatile float touch_sink;

/// packed_product for m ≤ 4·kTouchingTiles rows and panels contiguous in memory, each
/// row tile's pass over a panel reading ahead into the panels kTouchPanels on.
void touching_product(int m, int n, int k, const float* tiles, const float* panels, float* c, std::ptrdiff_t ldc,
                      int distance) {
    const std::ptrdiff_t panel_size = static_cast<std::ptrdiff_t>(k) * kNR;
    const int np = panel_count(n), nt = tile_count(m);
    const float* end = panels + np * panel_size - 16;  // the last line a read may start
    simd::F4 sink = simd::zero();
    for (int p = 0; p < np; ++p) {
        const float* touch = panels + std::min(p + distance, np) * panel_size;
        for (int t = 0; t < nt; ++t) {
            simd::F4 acc[kMR][2];
            kernels::zero(acc);
            kernels::kernel_touching<kMR, 2>(k, tiles + static_cast<std::ptrdiff_t>(t) * k * kMR, panels + p * panel_size, acc,
                                             touch, end, sink);
            kernels::store_tile(acc, std::min(kMR, m - t * kMR), std::min(kNR, n - p * kNR), c + t * kMR * ldc + p * kNR, ldc);
        }
    }
    alignas(16) float out[4];
    simd::store(out, sink);
    touch_sink = out[0];
}

}  // namespace

void gemm_panels(const Eigen::Ref<const Matrix>& a, const float* b_panels, int k, int n, Matrix& c) {
    check_inner(a.cols(), k, "gemm_panels");
    check_panel_width(n);
    const int m = static_cast<int>(a.rows());
    if (!prepare(c, m, n, k)) return;
    Workspace& ws = workspace();
    float* tiles = grow(ws.tiles, static_cast<std::size_t>(tile_count(m)) * k * kMR);
    kernels::pack_row_tiles(m, k, a.data(), a.outerStride(), tiles);
    if (tile_count(m) <= kTouchingTiles)
        opaque(touching_product)(m, n, k, tiles, b_panels, c.data(), n, kTouchPanels);
    else
        opaque(packed_product)(m, n, k, tiles, b_panels, c.data(), n);
    trim(ws);
}

std::size_t gemm_workspace_bytes() { return workspace().bytes(); }

void gemm_release_workspace() {
    kernels::release(workspace().tiles);
    kernels::release(workspace().panels);
    kernels::release(workspace().rows);
}

// ---- 16-bit right operands ------------------------------------------------------------

namespace {

/// How a 16-bit B (k×n) is laid out: as panels, row-major, or as the rows of Bᵀ (n×k).
enum class HalfLayout { panels, rows, transposed_rows };

/// Columns j0 … j0 + width of a 16-bit B (k×n) as float32 panels in `block` (through `rows` for
/// transposed_rows). A function of its own, called through opaque(): in wasm, conversion loops
/// inlined beside the product's kernel make V8 spill the kernel's accumulators.
void convert_half_block(int k, int n, int j0, int width, const std::uint16_t* b, WeightFormat f, HalfLayout layout,
                        float* block, float* rows) {
    const std::ptrdiff_t panel_size = static_cast<std::ptrdiff_t>(k) * kNR;
    if (layout == HalfLayout::panels) {  // width is a multiple of 8: whole panels, contiguous
        half::widen(b + j0 * static_cast<std::ptrdiff_t>(k), static_cast<std::size_t>(width) * k, f, block);
    } else if (layout == HalfLayout::rows) {
        const int full = width / kNR, rest = width - full * kNR;
        for (int kk = 0; kk < k; ++kk) {
            const std::uint16_t* src = b + static_cast<std::ptrdiff_t>(kk) * n + j0;
            float* dst = block + static_cast<std::ptrdiff_t>(kk) * kNR;
            for (int p = 0; p < full; ++p) half::widen8(src + p * kNR, f, dst + p * panel_size);
            if (rest)
                for (int j = 0; j < kNR; ++j) dst[full * panel_size + j] = j < rest ? half::to_float(src[full * kNR + j], f) : 0.0f;
        }
    } else {  // the rows j0 … j0 + width of Bᵀ are contiguous: convert, then pack them as gemm_bt does
        half::widen(b + j0 * static_cast<std::ptrdiff_t>(k), static_cast<std::size_t>(width) * k, f, rows);
        kernels::pack_panels(k, width, 1, [&](int j) { return rows + static_cast<std::ptrdiff_t>(j) * k; }, block);
    }
}

/// c (row stride n) = A (row tiles) · B, B 16-bit: each block of kBlockPanels panels converted
/// to float32 panels, then multiplied by packed_product, gemm's kernel: every entry is summed
/// as gemm sums it.
void half_product(int m, int n, int k, const float* tiles, const std::uint16_t* b, WeightFormat f, HalfLayout layout,
                  int block_panels, float* block, float* rows, float* c) {
    for (int j0 = 0; j0 < n; j0 += block_panels * kNR) {
        const int width = std::min(block_panels * kNR, n - j0);
        opaque(convert_half_block)(k, n, j0, width, b, f, layout, block, rows);
        opaque(packed_product)(m, width, k, tiles, block, c + j0, n);
    }
}

void half_gemm(const Eigen::Ref<const Matrix>& a, const std::uint16_t* b, WeightFormat f, HalfLayout layout, int k, int n,
               Matrix& c) {
    const int m = static_cast<int>(a.rows());
    if (!prepare(c, m, n, k)) return;
    Workspace& ws = workspace();
    float* tiles = grow(ws.tiles, static_cast<std::size_t>(tile_count(m)) * k * kMR);
    kernels::pack_row_tiles(m, k, a.data(), a.outerStride(), tiles);
    // with few row tiles, one panel at a time: converted, it is still in L1 when they multiply
    // it (wasm in Node, SmolLM2's shape at T = 16: 8 panels a block took 1.5× the float32 time)
    const int block_panels = std::min(panel_count(n), tile_count(m) <= kTouchingTiles ? 1 : kBlockPanels);
    const std::size_t block_floats = static_cast<std::size_t>(block_panels) * k * kNR;
    float* block = grow(ws.panels, block_floats);
    float* rows = layout == HalfLayout::transposed_rows ? grow(ws.rows, block_floats) : nullptr;
    opaque(half_product)(m, n, k, tiles, b, f, layout, block_panels, block, rows, c.data());
    trim(ws);
}

}  // namespace

void pack_matrix_panels(const std::uint16_t* b, int k, int n, std::uint16_t* panels) {
    check_panel_width(n);
    const std::ptrdiff_t panel_size = static_cast<std::ptrdiff_t>(k) * kNR;
    for (int r = 0; r < k; ++r)
        for (int p = 0; p < n / kNR; ++p) {
            const std::uint16_t* src = b + static_cast<std::ptrdiff_t>(r) * n + p * kNR;
            std::uint16_t* dst = panels + p * panel_size + static_cast<std::ptrdiff_t>(r) * kNR;
            for (int j = 0; j < kNR; ++j) dst[j] = src[j];  // a plain loop: copy_n of 16 bytes is a call in wasm
        }
}

void unpack_matrix_panels(const std::uint16_t* panels, WeightFormat f, int k, int n, float* b) {
    check_panel_width(n);
    const std::ptrdiff_t panel_size = static_cast<std::ptrdiff_t>(k) * kNR;
    for (int p = 0; p < n / kNR; ++p)
        for (int r = 0; r < k; ++r)
            half::widen8(panels + p * panel_size + static_cast<std::ptrdiff_t>(r) * kNR, f, b + static_cast<std::ptrdiff_t>(r) * n + p * kNR);
}

void gemm_panels(const Eigen::Ref<const Matrix>& a, const std::uint16_t* b_panels, WeightFormat f, int k, int n, Matrix& c) {
    check_inner(a.cols(), k, "gemm_panels");
    check_panel_width(n);
    half_gemm(a, b_panels, f, HalfLayout::panels, k, n, c);
}

void gemm_half(const Eigen::Ref<const Matrix>& a, const std::uint16_t* b, WeightFormat f, int k, int n, Matrix& c) {
    check_inner(a.cols(), k, "gemm_half");
    half_gemm(a, b, f, HalfLayout::rows, k, n, c);
}

void gemm_bt_half(const Eigen::Ref<const Matrix>& a, const std::uint16_t* b, WeightFormat f, int n, int k, Matrix& c) {
    check_inner(a.cols(), k, "gemm_bt_half");
    half_gemm(a, b, f, HalfLayout::transposed_rows, k, n, c);
}

}  // namespace attn
