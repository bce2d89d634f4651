#pragma once
// Generation one token at a time with a KV cache, for causal models (GPT-2,
// and our own models trained with the causal mask).
//
// Under the causal mask, row t of every head's weights covers keys 0 … t
// only, so appending token t+1 changes no earlier row: every layer's earlier
// rows (their residual stream, and so their keys and values) are exactly what
// they were. An append therefore runs the model on the new position alone,
// with the same embedding, block (block.hpp) and head as the full forward:
//
//   x = E[id] + P[t] (+ TT[0]) (LN_e)                      one row (1×C)
//   per layer: the block, its attention reading the layer's KV cache:
//              q, k, v of the new row (RoPE: q, k turned by t); K[t] = k, V[t] = v
//                                                           stored: the cache's new row (H_kv heads)
//              head h: w = softmax(q_h·K_g[0…t]ᵀ · scale (ALiBi: − m_h·(t − j)))
//                                                           g = h / (H / H_kv); keys 0 … t-1 from the cache
//   logits = head(LN_f(x))                                  1×V
//
// tests/core/test_generation.cpp checks its logits and weights against
// trace_model on the extended sequence.
//
// Choosing the next token: the argmax (greedy; ties to the smaller id), or a
// sample from softmax(logits / temperature) over the top_k largest logits
// (0 = all), drawn with the counter-based generator (random.hpp) at
// (seed, Stream::generation, position): the same seed and sequence give the
// same token natively and in wasm, whatever came before, so a link replays.

#include "model/block.hpp"
#include "model/layers.hpp"
#include "model/model.hpp"

#include <cstdint>
#include <vector>

namespace attn {

/// The sampling settings' ranges (a temperature of 0 would be greedy: ask for that instead).
inline constexpr double kMinTemperature = 0.05;
inline constexpr double kMaxTemperature = 5.0;

struct GenerationOptions {
    bool sample = false;       ///< false: the argmax
    double temperature = 1.0;  ///< kMinTemperature … kMaxTemperature (sample only)
    int top_k = 0;             ///< 0 = every token; else 1 … V (sample only)
    std::uint32_t seed = 0;
};

/// Throws attn::Error (bad_input) naming the setting and its range.
void validate_generation_options(const GenerationOptions& options, int vocab);

/// The token chosen after `logits` (V values) at sequence position `position`
/// (the index the new token will have).
std::int32_t choose_token(const float* logits, int vocab, const GenerationOptions& options, int position);

/// The rows a prompt's append computes together: enough that a weight matrix read once serves
/// many rows, few enough that a block's attention weights (H × rows × the keys before it) stay
/// small at a long context (32 heads, 8,192 keys: 64 MiB).
inline constexpr int kPrefillRows = 64;

/// The keys and values of every layer for the tokens appended so far.
class KvCache {
public:
    /// Refuses a model without the causal mask by name (BERT reads the tokens
    /// after each one: it cannot generate one token at a time). Keeps a
    /// reference to the model, which must outlive the cache.
    explicit KvCache(const Model& model);
    ~KvCache();
    KvCache(const KvCache&) = delete;
    KvCache& operator=(const KvCache&) = delete;

    int length() const { return static_cast<int>(ids_.size()); }
    const std::vector<std::int32_t>& ids() const { return ids_; }
    /// Appends token `id` at position length(): computes only its row (above).
    /// Throws attn::Error: too_long_for_model at the model's context, bad_input
    /// for an id outside the vocabulary, not_finite where the row's activations
    /// overflow (the cache then holds the tokens it held, without logits).
    void append(std::int32_t id);
    /// Appends the tokens `ids` at positions length() … (a prompt): the same numbers as
    /// appending them one at a time, to float rounding, computed kPrefillRows rows per
    /// block, so that each weight matrix is read once a block, not once a token (a prompt
    /// of 512 tokens on a SmolLM2-135M-shaped BF16 model: 28 s one at a time in Chromium).
    /// The logits and weights are the last token's. Refuses, with nothing appended, ids
    /// outside the vocabulary or past the context; where a row's activations overflow, the
    /// cache holds the tokens it held before the call.
    void append(const std::vector<std::int32_t>& ids);
    /// Forgets the tokens from `length` on (0 … length()): undo. The logits and
    /// weights are cleared until the next append.
    void truncate(int length);
    /// The last append's logits (1×V; empty before the first append or after truncate).
    const Matrix& logits() const { return logits_; }
    /// The last append's attention weights of head h in layer l over keys 0 … length()-1.
    const std::vector<float>& weights(int layer, int head) const;

private:
    /// The new row's forward at position t: its keys and values into the cache, the logits
    /// and weights (throws not_finite where a NaN or an infinity first appears).
    void append_row(std::int32_t id, int t);
    /// append_row for the rows ids[0 … n−1] at positions t … t+n−1, as one block.
    void append_rows(const std::int32_t* ids, int n, int t);
    /// Refuses (before anything is computed) token `id` at position t.
    void check_token(std::int32_t id, int t) const;
    /// Clears the last append's logits and weights (after truncate, or an append that failed).
    void forget_last();

    const Model& model_;
    ParamSlots slots_;
    std::vector<std::int32_t> ids_;
    std::vector<KvRows> kv_;                            ///< per layer, rows 0 … length()-1 used (capacity grows by doubling)
    std::vector<std::vector<std::vector<float>>> weights_;  ///< [layer][head], the last append's row
    Matrix logits_;
    EmbeddingCache embedding_;                          ///< the sinusoids of a sinusoidal model, up to its context (made once)
    RelativePositions positions_;                       ///< RoPE's angles of the new position, ALiBi's slopes
};

}  // namespace attn
