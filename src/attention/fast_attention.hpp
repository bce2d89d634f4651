#pragma once
// The fast, output-only multi-head self-attention forward pass:
//   y (T×C) = concat_h softmax(mask(Q_h·K_hᵀ·scale)) · V_h  · W_O
// the same numbers as multi_head_output() (the Eigen reference it is tested
// against, within 1e-5) from hand-written SIMD kernels (kernels.hpp, simd.hpp):
//   - Q, K, V in one product x·[W_Q | W_K | W_V] with register-blocked kernels
//     over packed operands;
//   - per head, per block of up to 64 query rows: scaled scores, then a fused
//     mask + stable softmax pass that never evaluates exp() of a masked entry
//     (it writes an exact 0), then weights·V, normalised on the way out;
//   - keys a causal or padding mask hides are skipped, not computed: a causal
//     mask does half the score work;
//   - RoPE rotates Q's and K's rows once after the projection; ALiBi's −m_h·|i − j|
//     is added to a block's scaled scores before the softmax pass;
//   - one block of scores (64 rows × T) instead of T×T, and every buffer is
//     kept for the next call, so repeated calls allocate nothing;
//   - the weights' packed panels are kept too, with a copy of the weights they
//     were packed from: a call with bit-identical weights (the usual case: a
//     model's weights do not change between calls) compares instead of packing.
// The kernels are wasm SIMD128 intrinsics in WebAssembly and the same code over
// SSE2 natively (simd.hpp).

#include "attention/mask.hpp"
#include "attention/positional.hpp"
#include "base/types.hpp"
#include "attention/weights.hpp"

#include <cstddef>
#include <vector>

namespace attn {

/// Which keys each query may see. Allowed-key ranges (none, causal, padding)
/// are skipped exactly; a custom matrix is consulted entry by entry (and
/// recognised when it is one of the range masks in disguise).
struct MaskSpec {
    MaskKind kind = MaskKind::none;
    int real_tokens = 0;                  ///< padding kinds: keys >= real_tokens are hidden
    const MaskMatrix* matrix = nullptr;   ///< custom: T×T, true = may attend; must outlive the call

    static MaskSpec none() { return {}; }
    static MaskSpec causal() { return {MaskKind::causal, 0, nullptr}; }
    static MaskSpec padding(int real_tokens) { return {MaskKind::padding, real_tokens, nullptr}; }
    static MaskSpec causal_padding(int real_tokens) { return {MaskKind::causal_padding, real_tokens, nullptr}; }
    static MaskSpec custom(const MaskMatrix& m) { return {MaskKind::custom, 0, &m}; }
    /// The spec build_mask(kind, tokens, real_tokens) describes (not MaskKind::custom).
    static MaskSpec from_kind(MaskKind kind, int real_tokens);
};

/// Owns the workspace of the fast path; one object per thread.
class FastAttention {
public:
    /// x (T×C), weights (C×C each), heads H (C divisible by H) → y (T×C); positions:
    /// RoPE or ALiBi inside the attention (row t at position t), as multi_head_output().
    /// Throws attn::Error naming the shapes, or the first entry of x or the
    /// weights that is not finite or beyond ±1e6, like multi_head_output().
    void forward(const Eigen::Ref<const Matrix>& x, const Weights& weights, int heads, const MaskSpec& mask,
                 bool scale, Matrix& y, const AttentionPositions& positions = {});

    /// Keeps `weights` (C×C each, checked like forward()'s; moved in, not
    /// copied) and their packed panels for forward_kept(): a model's weights,
    /// given once instead of with every call. Replaces weights kept before.
    void keep_weights(Weights weights);
    /// forward() on the kept weights: the same numbers, bit for bit, without
    /// copying, checking or comparing the weights again (x is still checked).
    /// Throws bad_state when no weights are kept, bad_shape when x is not T×C.
    void forward_kept(const Eigen::Ref<const Matrix>& x, int heads, const MaskSpec& mask, bool scale, Matrix& y,
                      const AttentionPositions& positions = {});
    /// C of the kept weights; 0 when none are kept.
    int kept_c() const { return kept_c_; }

    /// Bytes held by the reusable workspace (the kept weights included).
    std::size_t workspace_bytes() const;
    /// Frees the workspace (the next call allocates it again).
    void release();
    /// "wasm-simd128", "sse2" or "scalar": the kernels this build runs.
    static const char* backend();

private:
    // forward()'s pieces, in order
    struct WeightPanels;
    struct Blocks {
        int ld_s = 0, tiles = 0;  // keys per scores row tile (whole key panels), row tiles per block
        float *scores = nullptr, *query_tiles = nullptr, *inv_sum = nullptr, *keys = nullptr, *values = nullptr,
              *concat = nullptr;
    };
    WeightPanels pack_weights(const Weights& w, int c);
    void pack_panels_of(const Weights& w, int c);
    WeightPanels kept_panels();
    void run(const Eigen::Ref<const Matrix>& x, const WeightPanels& wp, int heads, const MaskSpec& mask, bool scale,
             const AttentionPositions& positions, Matrix& y);
    float* project_qkv(const Eigen::Ref<const Matrix>& x, const WeightPanels& wp);
    const bool* key_limits(const MaskSpec& mask, int t);
    Blocks block_buffers(int t, int d, int c);
    void attend_head(int h, int t, int c, int d, float factor, float slope, const float* qkv, const bool* custom,
                     const Blocks& b);
    void project_output(const float* concat, const WeightPanels& wp, int t, int c, Matrix& y);

    std::vector<float> w_qkv_;    // [W_Q | W_K | W_V] packed, ceil(3C/8) panels of C×8
    std::vector<float> w_out_;    // W_O packed, ceil(C/8) panels of C×8
    std::vector<float> w_source_; // the weights w_qkv_, w_out_ hold: W_Q, W_K, W_V, W_O (4·C²), empty if none
    int packed_c_ = 0;            // their C
    Weights kept_;                // keep_weights()'s, for forward_kept()
    int kept_c_ = 0;              // their C, 0 when none
    bool kept_packed_ = false;    // w_qkv_, w_out_ hold kept_'s panels
    std::vector<float> row_tiles_;    // x, later concat, as row tiles (T/4, C, 4)
    std::vector<float> qkv_;          // (T, 3C): Q, K, V side by side
    std::vector<float> concat_;       // (T, C): the heads' outputs
    std::vector<float> keys_;         // K_hᵀ packed: ceil(T/8) panels of (D, 8)
    std::vector<float> values_;       // V_h packed: ceil(D/8) panels of (T, 8)
    std::vector<float> query_tiles_;  // Q_h rows of a block as row tiles (tiles, D, 4)
    std::vector<float> scores_;       // a block's scores, key-major per row tile (tiles, T↑8, 4)
    std::vector<float> inv_sum_;      // 1 / softmax denominator per row of a block
    std::vector<int> key_end_;        // per query: keys at and past this are hidden
    RopeTable rope_;                  // RoPE's cos and sin of positions 0 … T−1 (rope only)
};

/// Convenience: one forward with a fresh workspace.
Matrix fast_multi_head_output(const Eigen::Ref<const Matrix>& x, const Weights& weights, int heads,
                              const MaskSpec& mask, bool scale, const AttentionPositions& positions = {});

namespace detail {
/// e^x for n floats with the kernels' vectorised exp (x < -87 gives 0); for tests.
void fast_exp(const float* x, float* out, std::size_t n);
/// Row softmax of scaled scores (rows×T) by the fast path's fused pass (the
/// same code forward() runs on each row tile), normalised: the weights the
/// fast path never stores; for tests. With `causal`, row i sees keys [0, i].
void fast_softmax(const Eigen::Ref<const Matrix>& scaled, bool causal, Matrix& weights);
}  // namespace detail

}  // namespace attn
