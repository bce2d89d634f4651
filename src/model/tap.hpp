#pragma once
// The recorder callback: the forward and backward name each intermediate as
// they produce it, rec(Point::attn_norm, layer, x), and the tap decides what
// to keep (the idea of llama.cpp's cb(cur, "attn_norm", il)). The block and the
// layer kinds never test what is recorded: they hand over what they have and
// ask wants() only before work that nothing but a kept intermediate needs (a
// head's scaled scores, an ablated head's own output).
//
// Tap itself keeps nothing (training, generation without a trace); TraceTap
// keeps what a Recorder's rules say (model.hpp: layer, vectors, logits,
// top_k) in its ModelTrace and GradientTrace, never a value that is not finite
// (a trace holds no NaN: check_kept); generation's tap keeps the new row's
// attention weights (generation.cpp).

#include "model/model.hpp"
#include "base/types.hpp"

#include <cstdint>
#include <vector>

namespace attn {

/// The named intermediates, in the order a forward and a backward produce them
/// (the backward's, from d_logits on, last: TraceTap tells them apart so).
/// Per head: q … head_out, d_head_out … d_v (T×D or T×S, S keys); the rest T×C
/// (ffn_hidden T×F, logits T×V) or, for the model's, rows of T.
enum class Point {
    // the embeddings (layer -1)
    token_embed,   ///< E[ids]
    pos_embed,     ///< P[first … first+T−1] (zeros without positions)
    type_embed,    ///< TT[0] on every row
    embed_norm,    ///< LN_e(E + P + TT)
    // a block
    block_in,       ///< the residual stream in
    attn_norm,      ///< the attention's input: LN1(x) (pre-LN), x itself otherwise
    attn_norm_rms,  ///< rmsnorm: per row, the rms LN1 divided by to make attn_norm (T×1; pre-LN)
    q, k, v,        ///< a head's query, key (its K/V head's), value; after RoPE with rope
    q_before_rope, k_before_rope,  ///< rope: the head's query and key before the rotation
    scores,         ///< q·kᵀ
    scaled,         ///< scores · scale
    row_max,        ///< per query row: the largest allowed scaled score (T×1)
    row_sum,        ///< per query row: the softmax's denominator (T×1)
    weights,        ///< the softmax over the allowed keys
    head_out,       ///< weights·v: the head's own output (an ablated one's too)
    attn_concat,    ///< the heads' outputs side by side (an ablated head's slot zero)
    attn_out,       ///< concat·W_O (+ b_O)
    attn_residual,  ///< the stream + the attention's output (before LN1 in post-LN)
    ffn_norm,       ///< the MLP's input (pre-LN: LN2(residual); post-LN: LN1(residual), also without an MLP)
    ffn_norm_rms,   ///< rmsnorm: per row, the rms of the norm that made ffn_norm (T×1)
    ffn_gate,       ///< gated MLP: m·W_gate + b_gate, before the activation
    ffn_up,         ///< gated MLP: m·W_in + b_in
    ffn_hidden,     ///< act(m·W_in + b_in); gated: act(gate) ⊙ up
    ffn_out,        ///< hidden·W_out + b_out
    block_out,      ///< the residual stream out
    // the top (layer -1; the output head's rows may come in blocks: Site::row)
    final_norm,      ///< LN_f(x) (the last block's output without LN_f)
    final_norm_rms,  ///< rmsnorm: per row, the rms LN_f divided by (T×1)
    head_transform,  ///< LN_t(act(h·W_t + b_t)) (output_transform)
    logits,          ///< h·W_U (+ b_U)
    // the backward's gradients of the loss
    d_logits,     ///< ∂loss/∂logits (layer -1)
    d_block_out,  ///< ∂loss/∂(a block's output stream)
    d_attn_out,   ///< ∂loss/∂(the attention's output, before the residual add)
    d_head_out, d_weights, d_scaled, d_scores, d_q, d_k, d_v,  ///< a head's (HeadGradTrace)
    d_q_before_rope, d_k_before_rope,  ///< rope: a head's dQ, dK turned back (the rotation's backward)
    d_block_in,   ///< ∂loss/∂(a block's input stream)
};

/// Where an intermediate belongs: its layer (-1: the embeddings and the top), its
/// head (-1: the whole layer's), and the index of its first row (the output head
/// hands its rows in blocks; 0 otherwise).
struct Site {
    int layer = -1;
    int head = -1;
    int row = 0;
};

/// Throws attn::Error (not_finite) saying that the intermediate `point` at `at` holds a NaN
/// or an infinity ("layer 3, the attention scores of head 5 are not finite …") and what to
/// change: finite weights whose products overflow float32 (recorder.cpp).
[[noreturn]] void throw_not_finite(Point point, const Site& at);

/// The callback every forward and backward path takes. This base keeps nothing.
/// The calls cost one predictable branch when nothing is kept (training): the value
/// is bound for put() only after keeps() said yes.
class Tap {
public:
    Tap() = default;
    virtual ~Tap() = default;

    /// Whether `point` of `layer` is kept: work that only a kept value needs is skipped otherwise.
    bool wants(Point point, int layer) const { return active_ && keeps(point, layer); }
    /// A layer's intermediate (layer -1: the model's).
    template <class M>
    void operator()(Point point, int layer, const M& value) const {
        if (wants(point, layer)) put(point, {layer, -1, 0}, value);
    }
    /// One head's.
    template <class M>
    void operator()(Point point, int layer, int head, const M& value) const {
        if (wants(point, layer)) put(point, {layer, head, 0}, value);
    }
    /// Rows first … first + value.rows() − 1 of a model-level intermediate.
    template <class M>
    void rows(Point point, int first, const M& value) const {
        if (wants(point, -1)) put(point, {-1, -1, first}, value);
    }

protected:
    /// A tap that keeps something (active: keeps() is asked).
    explicit Tap(bool active) : active_(active) {}
    virtual bool keeps(Point point, int layer) const {
        (void)point, (void)layer;
        return false;
    }
    /// Takes an intermediate that keeps() asked for (the value is the caller's: copy what is kept).
    virtual void put(Point point, const Site& at, const Eigen::Ref<const Matrix>& value) const {
        (void)point, (void)at, (void)value;
    }

private:
    bool active_ = false;
};

/// The Recorder's tap (recorder.cpp): keeps in recorder->trace and recorder->gradients
/// what the recorder's rules say, each value as it is produced; the trace's logits
/// and probabilities, and its top-k, from the logits' rows. Null: keeps nothing.
class TraceTap final : public Tap {
public:
    explicit TraceTap(Recorder* recorder) : Tap(recorder != nullptr), r_(recorder) {}
    /// A recorded forward of one sequence of ids.size() tokens, the first `length` real:
    /// empties the trace and the gradients, and writes the trace's ids, length, mask and
    /// its L layer entries (the kept layers with their H heads).
    void start_forward(const ModelConfig& config, const std::vector<std::int32_t>& ids, int length, bool causal);
    /// A recorded backward: the gradients' L layer entries, empty (the layers a
    /// backward does not visit stay so).
    void start_backward(int layers);
    /// Throws not_finite (throw_not_finite) naming the first value of a block it was handed
    /// that was not finite, and was not kept. Called after each block and its own check
    /// (check_block_finite, which names where a NaN began from the block's state, what the
    /// tap may not have seen: a layer whose heads are not kept). A model-level value or a
    /// gradient that is not finite is refused at once.
    void check_kept() const;

private:
    bool keeps(Point point, int layer) const override;
    void put(Point point, const Site& at, const Eigen::Ref<const Matrix>& value) const override;

    Recorder* r_;
    int tokens_ = 0;  ///< T: the trace's rows
    mutable bool not_finite_ = false;  ///< a block's value was not finite: the first one's point and site
    mutable Point not_finite_point_ = Point::block_in;
    mutable Site not_finite_at_;
};

}  // namespace attn
