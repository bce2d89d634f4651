#include "attention/fast_attention.hpp"

#include "attention/attention.hpp"
#include "kernels/bounds.hpp"
#include "attention/validate.hpp"
#include "kernels/kernels.hpp"
#include "kernels/simd.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace attn {
namespace {

using kernels::kMR;  // the kernels' row tile: four queries
using kernels::kNR;
using kernels::panel_count;

using kernels::grow;
using kernels::opaque;

/// At most this many row tiles (64 queries) per block of scores.
constexpr int kMaxBlockTiles = 16;
/// Keys per pass of weights·V: a panel of V (256×8 floats, 8 KB) stays in L1.
constexpr int kKeyBlock = 256;

void check(const Eigen::Ref<const Matrix>& x, const Weights& w, int heads, const MaskSpec& mask,
           const AttentionPositions& positions) {
    const Eigen::Index t = x.rows();
    if (mask.kind == MaskKind::custom && !mask.matrix) throw Error(Error::Code::bad_mask, "a custom mask needs its matrix");
    const MaskMatrix* m = mask.kind == MaskKind::custom ? mask.matrix : nullptr;
    check_attention_inputs(x, w, heads, m ? m->rows() : t, m ? m->cols() : t);
    check_positions(positions, x.cols() / heads);
}

/// key_end[i]: query i may see keys [0, key_end[i]) (and, for a custom mask,
/// only those its row allows). Returns true when a custom mask must still be
/// consulted entry by entry; false when every row is a prefix of the keys
/// (none, causal, padding, causal+padding, or a custom matrix equal to one).
bool key_ranges(const MaskSpec& mask, int t, int* key_end) {
    if (mask.kind != MaskKind::custom) {
        const bool causal = mask.kind == MaskKind::causal || mask.kind == MaskKind::causal_padding;
        const bool padding = mask.kind == MaskKind::padding || mask.kind == MaskKind::causal_padding;
        const int real = padding ? std::clamp(mask.real_tokens, 0, t) : t;
        for (int i = 0; i < t; ++i) key_end[i] = std::min(causal ? i + 1 : t, real);
        return false;
    }
    bool prefix = true;
    for (int i = 0; i < t; ++i) {
        const bool* row = mask.matrix->data() + static_cast<std::ptrdiff_t>(i) * t;
        int leading = 0;
        while (leading < t && row[leading]) ++leading;
        int last = t;
        while (last > leading && !row[last - 1]) --last;
        key_end[i] = last;  // the last allowed key + 1 (0 for a fully masked row)
        prefix = prefix && last == leading;
    }
    return !prefix;
}

/// Weights below e^-64 ≈ 1.6e-28 of a row's largest are written as exact
/// zeros: next to that largest weight's 1 they cannot change a float sum, and
/// their products with V could be denormal, which wasm cannot flush to zero
/// (a denormal costs a microcode assist per operation on x86).
constexpr float kSoftmaxCutoff = -64.0f;

/// The fused mask + softmax pass over one row tile of scaled scores,
/// s[k][i] = score of query row i (of 4) against key k, keys [0, tile_end).
/// Row i may see keys [0, key_end[i]) (a custom mask, when given as four row
/// pointers, narrows them further; a null row pointer allows nothing). Every
/// allowed score becomes e^(s − max), unnormalised; every other entry becomes
/// an exact 0 without evaluating exp() on it. Writes 1 / Σ e per row into
/// inv_sum, or 0 for a row with nothing allowed (its weights stay zero).
/// Working on four rows at once keeps every step vertical: one vector is one
/// key for four queries, so maxima and sums need no horizontal reductions.
ATTN_NOINLINE void softmax_tile(float* s, const int* key_end, int tile_end, const bool* const* custom,
                                float* inv_sum) {
    using namespace simd;
    const float neg_inf = -std::numeric_limits<float>::infinity();
    // keys below `open` are allowed in all four rows (range masks only)
    const int open = custom ? 0 : *std::min_element(key_end, key_end + kMR);
    alignas(16) float end_f[kMR];
    for (int i = 0; i < kMR; ++i) end_f[i] = static_cast<float>(key_end[i]);
    const F4 ends = load(end_f);
    auto allowed = [&](int k) -> F4 {
        if (!custom) return ge(ends, splat(static_cast<float>(k + 1)));  // k < key_end[i]
        bool m[kMR];
        for (int i = 0; i < kMR; ++i) m[i] = custom[i] && custom[i][k];
        return mask_from_bytes(m);
    };
    // pass 1: each row's maximum over its allowed keys
    F4 max4 = splat(neg_inf);
    for (int k = 0; k < open; ++k) max4 = max(max4, load(s + k * kMR));
    for (int k = open; k < tile_end; ++k) max4 = max(max4, select(allowed(k), load(s + k * kMR), splat(neg_inf)));
    // a row with nothing allowed keeps -inf: use 0 so no lane computes inf - inf
    max4 = select(ge(max4, splat(std::numeric_limits<float>::lowest())), max4, zero());
    // pass 2: e = exp(s − max) ≤ 1, the reference's stable softmax numerator.
    // The denominator: plain float sums over blocks of at most 8 keys, each
    // folded into a compensated (Kahan) total, `comp` carrying what each fold
    // rounded away into the next. A float running sum of T terms drifts by up
    // to T·2^-24 of the total (3e-6 at T = 2048); this one by at most 7·2^-24
    // (a block) + 2^-23 at any T, so the implied weights sum to 1 within 1e-6.
    // The per-key chain stays one addition long, as without compensation.
    constexpr int kSumBlock = 8;
    F4 total = zero(), comp = zero();
    const auto fold = [&](F4 block) {
        const F4 y = sub(block, comp);
        const F4 t = add(total, y);
        comp = sub(sub(t, total), y);
        total = t;
    };
    for (int k0 = 0; k0 < open; k0 += kSumBlock) {
        F4 block = zero();
        for (int k = k0; k < std::min(k0 + kSumBlock, open); ++k) {
            const F4 e = exp4<true>(sub(load(s + k * kMR), max4), kSoftmaxCutoff);
            store(s + k * kMR, e);
            block = add(block, e);
        }
        fold(block);
    }
    for (int k0 = open; k0 < tile_end; k0 += kSumBlock) {
        F4 block = zero();
        for (int k = k0; k < std::min(k0 + kSumBlock, tile_end); ++k) {
            // a hidden lane's score is replaced by the row max before exp (nothing
            // can overflow) and its result by an exact 0
            const F4 keep = allowed(k);
            const F4 e =
                select(keep, exp4<true>(sub(select(keep, load(s + k * kMR), max4), max4), kSoftmaxCutoff), zero());
            store(s + k * kMR, e);
            block = add(block, e);
        }
        fold(block);
    }
    // pass 3 (deferred): the caller scales weights·V by 1/sum instead of every weight
    alignas(16) float sums[kMR];
    store(sums, sub(total, comp));  // the compensated total, rounded once
    for (int i = 0; i < kMR; ++i) inv_sum[i] = sums[i] > 0.0f ? 1.0f / sums[i] : 0.0f;  // sum >= 1 when any allowed
}

/// Pass 1 of a block: scores[r][key][i] = (q_(4r+i) · k_key)·factor for the key panels
/// row tile r may see (keys < tile_end[r]), from Q_h as row tiles (tiles, D, 4)
/// and K_hᵀ as panels (D, 8). Key-major per tile, so one vector holds one key's
/// scores for four queries: the layout the softmax and weights·V passes read.
/// The 4×8 register tile (4 queries × 8 keys) is transposed on its way out.
ATTN_NOINLINE void block_scores(int tiles, const int* tile_end, int d, const float* query_tiles, const float* keys,
                                float factor, float* scores, int ld_s) {
    const simd::F4 f = simd::splat(factor);
    int block_end = 0;
    for (int r = 0; r < tiles; ++r) block_end = std::max(block_end, tile_end[r]);
    for (int p = 0; p < panel_count(block_end); ++p) {
        const float* key_panel = keys + static_cast<std::ptrdiff_t>(p) * d * kNR;
        for (int r = 0; r < tiles; ++r) {
            if (p * kNR >= tile_end[r]) continue;
            simd::F4 acc[kMR][2];
            kernels::zero(acc);
            kernels::kernel<kMR, 2>(d, query_tiles + r * d * kMR, key_panel, acc);
            float* out = scores + (static_cast<std::ptrdiff_t>(r) * ld_s + p * kNR) * kMR;
            for (int v = 0; v < 2; ++v) {  // keys 4v … 4v+3
                simd::transpose4(acc[0][v], acc[1][v], acc[2][v], acc[3][v]);
                for (int j = 0; j < 4; ++j) simd::store(out + (4 * v + j) * kMR, simd::mul(acc[j][v], f));
            }
        }
    }
}

/// ALiBi, between passes 1 and 2 of a block: −slope·|i − key| added to the scaled
/// score of every query row i (i0 + 4r + lane of row tile r) and key below tile_end[r].
ATTN_NOINLINE void block_alibi(int tiles, const int* tile_end, int i0, float slope, float* scores, int ld_s) {
    for (int r = 0; r < tiles; ++r) {
        float* s = scores + static_cast<std::ptrdiff_t>(r) * ld_s * kMR;
        const int row0 = i0 + r * kMR;
        for (int k = 0; k < tile_end[r]; ++k)
            for (int i = 0; i < kMR; ++i) {
                const int distance = row0 + i > k ? row0 + i - k : k - row0 - i;
                s[k * kMR + i] -= slope * static_cast<float>(distance);
            }
    }
}

/// Pass 3 of a block: out rows (row stride ld_out, D columns) = weights·V_h
/// scaled by inv_sum per row, from the weights (key-major row tiles, keys <
/// tile_end[r]) and V_h as panels (T, 8). `rows` real rows (the last tile may be
/// partial). Keys go in blocks of kKeyBlock, so a block of V panels (256×8
/// floats each) stays in L1 while every row tile passes over it; partial sums
/// accumulate in `out`, and the last block of a tile applies 1/sum.
ATTN_NOINLINE void block_values(int tiles, int rows, const int* tile_end, int d, int t, const float* scores, int ld_s,
                                const float* values, const float* inv_sum, float* out, std::ptrdiff_t ld_out) {
    int block_end = 0;
    for (int r = 0; r < tiles; ++r) block_end = std::max(block_end, tile_end[r]);
    for (int k0 = 0; k0 == 0 || k0 < block_end; k0 += kKeyBlock)
        for (int p = 0; p < panel_count(d); ++p) {
            const float* value_panel = values + (static_cast<std::ptrdiff_t>(p) * t + k0) * kNR;
            for (int r = 0; r < tiles; ++r) {
                const int kc = std::min(kKeyBlock, tile_end[r] - k0);
                if (kc <= 0 && k0 > 0) continue;  // (k0 == 0 with kc <= 0 writes the zeros)
                simd::F4 acc[kMR][2];
                kernels::zero(acc);
                kernels::kernel<kMR, 2>(std::max(kc, 0), scores + (static_cast<std::ptrdiff_t>(r) * ld_s + k0) * kMR,
                                        value_panel, acc);
                const bool last = k0 + kKeyBlock >= tile_end[r];
                kernels::store_tile(acc, std::min(kMR, rows - r * kMR), std::min(kNR, d - p * kNR),
                                    out + r * kMR * ld_out + p * kNR, ld_out, last ? inv_sum + r * kMR : nullptr,
                                    k0 > 0);
            }
        }
}

}  // namespace

MaskSpec MaskSpec::from_kind(MaskKind kind, int real_tokens) {
    switch (kind) {
        case MaskKind::none: return none();
        case MaskKind::causal: return causal();
        case MaskKind::padding: return padding(real_tokens);
        case MaskKind::causal_padding: return causal_padding(real_tokens);
        case MaskKind::custom: break;
    }
    throw Error(Error::Code::bad_mask, "MaskSpec::from_kind needs the matrix of a custom mask: use MaskSpec::custom");
}

const char* FastAttention::backend() { return ATTN_SIMD_BACKEND; }

std::size_t FastAttention::workspace_bytes() const {
    const auto kept = static_cast<std::size_t>(kept_.w_query.size() + kept_.w_key.size() + kept_.w_value.size() +
                                               kept_.w_output.size());
    return sizeof(float) * (kept + w_qkv_.capacity() + w_out_.capacity() + w_source_.capacity() + row_tiles_.capacity() +
                            rope_.cos.capacity() + rope_.sin.capacity() +
                            qkv_.capacity() +
                            concat_.capacity() + keys_.capacity() + values_.capacity() + scores_.capacity() +
                            query_tiles_.capacity() + inv_sum_.capacity()) +
           sizeof(int) * key_end_.capacity();
}

void FastAttention::release() {
    packed_c_ = 0;
    kept_ = Weights{};
    kept_c_ = 0;
    kept_packed_ = false;
    for (auto* b : {&w_qkv_, &w_out_, &w_source_, &row_tiles_, &qkv_, &concat_, &keys_, &values_, &scores_, &query_tiles_,
                    &inv_sum_})
        kernels::release(*b);
    kernels::release(key_end_);
    rope_ = RopeTable{};
}

/// Where the weights' panels are: read in place when a row is at most 64
/// floats (8-column panels of rows 256 bytes apart spread over enough L1
/// sets); otherwise packed as panels of (C, 8) into the workspace.
struct FastAttention::WeightPanels {
    const float* parts[3];  // W_Q, W_K, W_V: [W_Q | W_K | W_V] (C, 3C) as one matrix
    const float* w_output;
    const float* qkv_packed = nullptr;
    const float* out_packed = nullptr;
    int c;
    bool in_place;
    kernels::Panel qkv(int p) const {
        return in_place ? kernels::Panel{parts[p * kNR / c] + p * kNR % c, c}
                        : kernels::Panel{qkv_packed + static_cast<std::ptrdiff_t>(p) * c * kNR, kNR};
    }
    kernels::Panel out(int p) const {
        return in_place ? kernels::Panel{w_output + p * kNR, c}
                        : kernels::Panel{out_packed + static_cast<std::ptrdiff_t>(p) * c * kNR, kNR};
    }

    /// w's panels: in place when small enough (the packed pointers still to set otherwise).
    static WeightPanels of(const Weights& w, int c) {
        return {{w.w_query.data(), w.w_key.data(), w.w_value.data()}, w.w_output.data(), nullptr, nullptr, c,
                c <= 64 && c % kNR == 0};
    }
};

FastAttention::WeightPanels FastAttention::pack_weights(const Weights& w, int c) {
    WeightPanels wp = WeightPanels::of(w, c);
    if (!wp.in_place) {
        const std::size_t cc = static_cast<std::size_t>(c) * c;
        const Matrix* parts[4] = {&w.w_query, &w.w_key, &w.w_value, &w.w_output};
        // the panels are a copy of the weights, so equal bits pack to equal panels
        bool same = packed_c_ == c && w_source_.size() == 4 * cc;
        for (int i = 0; i < 4 && same; ++i) same = kernels::same_bits(parts[i]->data(), w_source_.data() + i * cc, cc);
        if (!same) {
            packed_c_ = 0;  // until the panels and their source are both written
            pack_panels_of(w, c);
            float* source = grow(w_source_, 4 * cc);
            w_source_.resize(4 * cc);
            for (int i = 0; i < 4; ++i) std::copy(parts[i]->data(), parts[i]->data() + cc, source + i * cc);
            packed_c_ = c;
        }
        wp.qkv_packed = w_qkv_.data();
        wp.out_packed = w_out_.data();
    }
    return wp;
}

/// w_qkv_, w_out_ = the panels of w (no longer those of the kept weights).
void FastAttention::pack_panels_of(const Weights& w, int c) {
    kept_packed_ = false;
    const float* parts[3] = {w.w_query.data(), w.w_key.data(), w.w_value.data()};
    float* w_qkv = grow(w_qkv_, static_cast<std::size_t>(panel_count(3 * c)) * c * kNR);
    float* w_out = grow(w_out_, static_cast<std::size_t>(panel_count(c)) * c * kNR);
    kernels::pack_panels(c, 3 * c, c, [&](int j) { return parts[std::min(j / c, 2)] + j % c; }, w_qkv);
    kernels::pack_row_major(c, c, c, w.w_output.data(), w_out);
}

float* FastAttention::project_qkv(const Eigen::Ref<const Matrix>& x, const WeightPanels& wp) {
    using kernels::tile_count;
    const int t = static_cast<int>(x.rows()), c = static_cast<int>(x.cols());
    const std::ptrdiff_t ld_qkv = 3 * static_cast<std::ptrdiff_t>(c);
    auto qkv_panel = [&](int p) { return wp.qkv(p); };
    // x as row tiles (T/4, C, 4)
    float* row_tiles = grow(row_tiles_, static_cast<std::size_t>(tile_count(t)) * c * kMR);
    kernels::pack_row_tiles(t, c, x.data(), x.outerStride(), row_tiles);
    float* qkv = grow(qkv_, static_cast<std::size_t>(t) * ld_qkv);
    opaque(kernels::gemm<decltype(qkv_panel)>)(t, 3 * c, c, row_tiles, qkv_panel, qkv, ld_qkv);
    return qkv;
}

const bool* FastAttention::key_limits(const MaskSpec& mask, int t) {
    using kernels::tile_count;
    // rows past T, in the last tile, see none
    int* key_end = grow(key_end_, static_cast<std::size_t>(tile_count(t)) * kMR);
    const bool per_entry = key_ranges(mask, t, key_end);
    std::fill(key_end + t, key_end + tile_count(t) * kMR, 0);
    return per_entry ? mask.matrix->data() : nullptr;
}

FastAttention::Blocks FastAttention::block_buffers(int t, int d, int c) {
    Blocks b;
    b.ld_s = panel_count(t) * kNR;  // keys of a scores tile, padded to whole key panels
    b.tiles = std::clamp(16384 / b.ld_s, 1, kMaxBlockTiles);
    b.scores = grow(scores_, static_cast<std::size_t>(b.tiles) * b.ld_s * kMR);
    b.query_tiles = grow(query_tiles_, static_cast<std::size_t>(b.tiles) * d * kMR);
    b.inv_sum = grow(inv_sum_, static_cast<std::size_t>(b.tiles) * kMR);
    b.keys = grow(keys_, static_cast<std::size_t>(panel_count(t)) * d * kNR);
    b.values = grow(values_, static_cast<std::size_t>(panel_count(d)) * t * kNR);
    b.concat = grow(concat_, static_cast<std::size_t>(t) * c);
    return b;
}

void FastAttention::attend_head(int h, int t, int c, int d, float factor, float slope, const float* qkv,
                                const bool* custom, const Blocks& b) {
    using kernels::tile_count;
    const std::ptrdiff_t ld_qkv = 3 * static_cast<std::ptrdiff_t>(c);
    const int* key_end = key_end_.data();
    const float* q_h = qkv + h * d;          // (T, D), row stride 3C
    const float* k_h = qkv + c + h * d;      // (T, D)
    const float* v_h = qkv + 2 * c + h * d;  // (T, D)
    // K_hᵀ as panels of 8 keys (D, 8); V_h as panels of 8 columns (T, 8)
    kernels::pack_panels(d, t, 1, [&](int j) { return k_h + j * ld_qkv; }, b.keys);
    kernels::pack_row_major(t, d, ld_qkv, v_h, b.values);
    int tile_end[kMaxBlockTiles];  // per row tile of a block: the keys its rows need

    for (int t0 = 0; t0 < tile_count(t); t0 += b.tiles) {
        const int tiles = std::min(b.tiles, tile_count(t) - t0), i0 = t0 * kMR;
        const int rows = std::min(tiles * kMR, t - i0);
        for (int r = 0; r < tiles; ++r) {
            const int* ke = key_end + (t0 + r) * kMR;
            tile_end[r] = *std::max_element(ke, ke + kMR);
        }
        // Q_h rows of the block as row tiles (tiles, D, 4)
        kernels::pack_row_tiles(rows, d, q_h + i0 * ld_qkv, ld_qkv, b.query_tiles);
        // pass 1: scaled scores, key-major per tile: scores[r][key][i] = q_i·k_key·scale,
        // only for the key panels a tile's rows may see
        opaque(block_scores)(tiles, tile_end, d, b.query_tiles, b.keys, factor, b.scores, b.ld_s);
        if (slope != 0.0f) block_alibi(tiles, tile_end, i0, slope, b.scores, b.ld_s);
        // pass 2: mask + exp, four rows at a time
        for (int r = 0; r < tiles; ++r) {
            const bool* rows_mask[kMR] = {nullptr, nullptr, nullptr, nullptr};
            if (custom)
                for (int i = 0; i < kMR && i0 + r * kMR + i < t; ++i)
                    rows_mask[i] = custom + static_cast<std::ptrdiff_t>(i0 + r * kMR + i) * t;
            opaque(softmax_tile)(b.scores + static_cast<std::ptrdiff_t>(r) * b.ld_s * kMR, key_end + (t0 + r) * kMR,
                                 tile_end[r], custom ? rows_mask : nullptr, b.inv_sum + r * kMR);
        }
        // pass 3: weights·V_h, normalised by 1/sum on the way out, into the
        // head's columns of concat
        opaque(block_values)(tiles, rows, tile_end, d, t, b.scores, b.ld_s, b.values, b.inv_sum,
                             b.concat + i0 * static_cast<std::ptrdiff_t>(c) + h * d, c);
    }
}

void FastAttention::project_output(const float* concat, const WeightPanels& wp, int t, int c, Matrix& y) {
    auto out_panel = [&](int p) { return wp.out(p); };
    // concat as row tiles in the buffer x's tiles used
    kernels::pack_row_tiles(t, c, concat, c, row_tiles_.data());
    opaque(kernels::gemm<decltype(out_panel)>)(t, c, c, row_tiles_.data(), out_panel, y.data(), c);
}

void FastAttention::forward(const Eigen::Ref<const Matrix>& x, const Weights& w, int heads, const MaskSpec& mask,
                            bool scale, Matrix& y, const AttentionPositions& positions) {
    check(x, w, heads, mask, positions);
    const int t = static_cast<int>(x.rows()), c = static_cast<int>(x.cols());
    y.resize(t, c);
    if (t == 0 || c == 0) return;
    run(x, pack_weights(w, c), heads, mask, scale, positions, y);
}

void FastAttention::keep_weights(Weights weights) {
    const Eigen::Index c = weights.w_query.rows();
    if (c < 1) throw Error(Error::Code::bad_shape, "kept weights must be at least 1x1, got W_Q of 0 rows");
    check_weights(weights, c);
    kept_c_ = 0;  // until they are kept whole
    kept_packed_ = false;
    kept_ = std::move(weights);
    kept_c_ = static_cast<int>(c);
}

void FastAttention::forward_kept(const Eigen::Ref<const Matrix>& x, int heads, const MaskSpec& mask, bool scale,
                                 Matrix& y, const AttentionPositions& positions) {
    if (kept_c_ == 0) throw Error(Error::Code::bad_state, "forward_kept needs weights: call keep_weights first");
    if (x.cols() != kept_c_)
        throw Error(Error::Code::bad_shape, "x has " + std::to_string(x.cols()) + " columns; the kept weights are " +
                                                std::to_string(kept_c_) + "x" + std::to_string(kept_c_));
    // check()'s checks of x, the heads and the mask; the weights were checked when kept
    const Eigen::Index t = x.rows();
    if (mask.kind == MaskKind::custom && !mask.matrix) throw Error(Error::Code::bad_mask, "a custom mask needs its matrix");
    check_heads(x.cols(), heads);
    check_positions(positions, x.cols() / heads);
    if (mask.kind == MaskKind::custom) check_mask_shape(mask.matrix->rows(), mask.matrix->cols(), t);
    check_bounded(x, "x");
    const int c = kept_c_;
    y.resize(t, c);
    if (t == 0) return;
    run(x, kept_panels(), heads, mask, scale, positions, y);
}

/// The kept weights' panels: in place, or packed into the workspace once (and
/// again after a forward() on other weights packed those there).
FastAttention::WeightPanels FastAttention::kept_panels() {
    WeightPanels wp = WeightPanels::of(kept_, kept_c_);
    if (!wp.in_place) {
        if (!kept_packed_) {
            packed_c_ = 0;  // the panels are no longer those of w_source_
            pack_panels_of(kept_, kept_c_);
            kept_packed_ = true;
        }
        wp.qkv_packed = w_qkv_.data();
        wp.out_packed = w_out_.data();
    }
    return wp;
}

/// Q, K, V, the heads and W_O on panels already in place (forward, forward_kept).
void FastAttention::run(const Eigen::Ref<const Matrix>& x, const WeightPanels& wp, int heads, const MaskSpec& mask,
                        bool scale, const AttentionPositions& positions, Matrix& y) {
    const int t = static_cast<int>(x.rows()), c = static_cast<int>(x.cols()), d = c / heads;
    const float factor = score_scale(d, scale);
    float* qkv = project_qkv(x, wp);                       // Q, K, V = x·W (T, 3C) in one product
    if (positions.kind == Positional::rope) {              // every head's q and k turned by their row's angles
        rope_table(d, positions.rope, 0, t, rope_);
        for (int i = 0; i < t; ++i) {
            float* row = qkv + static_cast<std::ptrdiff_t>(i) * 3 * c;
            rope_rotate_row(row, heads, d, rope_.cos_row(i), rope_.sin_row(i));      // Q
            rope_rotate_row(row + c, heads, d, rope_.cos_row(i), rope_.sin_row(i));  // K
        }
    }
    const bool alibi = positions.kind == Positional::alibi;
    const std::vector<float> slopes = alibi ? alibi_slopes(heads) : std::vector<float>{};  // (no allocation without)
    const bool* custom = key_limits(mask, t);              // which keys each query sees
    const Blocks blocks = block_buffers(t, d, c);          // one block's scores (tiles, keys, 4) stay in cache
    for (int h = 0; h < heads; ++h)
        attend_head(h, t, c, d, factor, alibi ? slopes[static_cast<std::size_t>(h)] : 0.0f, qkv, custom, blocks);
    project_output(blocks.concat, wp, t, c, y);            // y = concat·W_O (T, C)
}

Matrix fast_multi_head_output(const Eigen::Ref<const Matrix>& x, const Weights& weights, int heads,
                              const MaskSpec& mask, bool scale, const AttentionPositions& positions) {
    FastAttention fa;
    Matrix y;
    fa.forward(x, weights, heads, mask, scale, y, positions);
    return y;
}

namespace detail {
void fast_exp(const float* x, float* out, std::size_t n) {
    std::size_t i = 0;
    for (; i + 4 <= n; i += 4) simd::store(out + i, simd::exp4(simd::load(x + i)));
    if (i < n) {
        alignas(16) float tmp[4] = {0, 0, 0, 0};
        for (std::size_t l = 0; l < n - i; ++l) tmp[l] = x[i + l];
        simd::store(tmp, simd::exp4(simd::load(tmp)));
        for (std::size_t l = 0; l < n - i; ++l) out[i + l] = tmp[l];
    }
}

void fast_softmax(const Eigen::Ref<const Matrix>& scaled, bool causal, Matrix& weights) {
    const int rows = static_cast<int>(scaled.rows()), t = static_cast<int>(scaled.cols());
    weights.resize(rows, t);
    std::vector<float> tile(static_cast<std::size_t>(t) * kMR);  // (T, 4): key-major, as forward() lays it out
    for (int r0 = 0; r0 < rows; r0 += kMR) {
        int key_end[kMR];
        float inv_sum[kMR];
        for (int i = 0; i < kMR; ++i) {
            const int row = r0 + i;
            key_end[i] = row >= rows ? 0 : causal ? std::min(row + 1, t) : t;
            for (int k = 0; k < t; ++k) tile[static_cast<std::size_t>(k) * kMR + i] = row < rows ? scaled(row, k) : 0.0f;
        }
        softmax_tile(tile.data(), key_end, *std::max_element(key_end, key_end + kMR), nullptr, inv_sum);
        for (int i = 0; i < kMR && r0 + i < rows; ++i)
            for (int k = 0; k < t; ++k)
                weights(r0 + i, k) = k < key_end[i] ? tile[static_cast<std::size_t>(k) * kMR + i] * inv_sum[i] : 0.0f;
    }
}
}  // namespace detail

}  // namespace attn
