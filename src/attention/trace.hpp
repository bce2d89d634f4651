#pragma once
// Sentence + settings → the whole computation, every step kept: the single
// entry point the CLI and the WebAssembly bindings call.

#include "attention/mask.hpp"
#include "attention/multi_head.hpp"
#include "attention/positional.hpp"
#include "text/tokenizer.hpp"
#include "base/types.hpp"
#include "attention/weights.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn {

/// The sentence the playground and the JS API start from.
inline constexpr const char* kDefaultSentence = "The animal didn't cross the street because it was too tired.";
/// Most sentences run_batch takes.
inline constexpr int kMaxBatchSentences = 64;

/// The settings of a trace. Its default values are the defaults of the CLI,
/// the JS API (engine.info.defaults) and the playground.
struct Config {
    int d_model = 16;
    int heads = 4;
    std::uint32_t seed = 42;
    Positional positional = Positional::sinusoidal;
    MaskKind mask = MaskKind::none;
    int pad_to = 0;            ///< pad the sentence with [PAD] tokens to this length (0: no padding)
    bool scale = true;         ///< divide scores by sqrt(D)
    bool lowercase = false;
    bool share_heads = false;  ///< every head uses head 0's weights
    std::optional<MaskMatrix> custom_mask;  ///< T×T, required when mask == custom
    std::optional<Weights> weights;         ///< replaces the seeded weights when given
};

struct Trace {
    Config config;
    int d_head = 0;                 ///< D = C / H
    int real_tokens = 0;            ///< tokens of the sentence; the rest are [PAD]
    std::vector<Token> tokens;      ///< T tokens, padding included
    Matrix embeddings;              ///< X (T×C)
    Matrix positional;              ///< P (T×C; zeros for rope and alibi, which act inside attention)
    Matrix input;                   ///< X' = X + P (T×C)
    Vector rope_frequencies;        ///< rope: θᵢ (D/2; angle of position m: m·θᵢ); empty otherwise
    Vector alibi_slopes;            ///< alibi: each head's slope m_h (H); empty otherwise
    Weights weights;                ///< W_Q, W_K, W_V, W_O (C×C)
    MaskMatrix mask;                ///< T×T, true = may attend
    std::vector<HeadTrace> heads;   ///< H heads
    Matrix concat;                  ///< T×C
    Matrix output;                  ///< Y = concat·W_O (T×C)
};

/// The last set of seeded weights, kept for the next run with the same seed
/// and sizes (generating 4·C² seeded numbers is most of a small run; the page
/// reruns on every keystroke). Owned by its caller (one per JS Engine): two
/// caches never share anything. The values are glorot_weights()'s.
class WeightsCache {
public:
    const Weights& get(int d_model, int heads, std::uint32_t seed, bool share_heads);
    std::size_t hits() const { return hits_; }
    std::size_t misses() const { return misses_; }
    /// Bytes of the kept weights (0 when empty).
    std::size_t bytes() const;
    void clear() { kept_.reset(); }

private:
    struct Kept {
        int d_model, heads;
        std::uint32_t seed;
        bool share_heads;
        Weights weights;
    };
    std::optional<Kept> kept_;
    std::size_t hits_ = 0, misses_ = 0;
};

/// Throws attn::Error with the numbers in the message for: d_model < 1 or
/// above kMaxDModel, heads < 1 or above d_model, d_model % heads != 0,
/// pad_to < 0 or above kMaxTokens, positional rope with an odd head width.
void validate_config(const Config& config);

/// The whole trace for one sentence. Throws attn::Error for a sentence above
/// kMaxSentenceBytes (checked first), an empty sentence, invalid UTF-8, more
/// than kMaxTokens tokens (found while tokenizing), a pad_to shorter
/// than the sentence, a custom mask or weights of the wrong shape, or a trace
/// larger than kMaxTraceScoreFloats.
/// With a cache, seeded weights come from it (and stay in it).
Trace run(const std::string& sentence, const Config& config, WeightsCache* cache = nullptr);

/// Several sentences padded to the longest one (or config.pad_to if larger)
/// with [PAD] tokens; each is run with the config (its mask is used as is, so
/// pass MaskKind::padding or causal_padding to hide the padding; a custom mask
/// must be T×T for the common length T and applies to every sentence).
std::vector<Trace> run_batch(const std::vector<std::string>& sentences, const Config& config,
                             WeightsCache* cache = nullptr);

}  // namespace attn
