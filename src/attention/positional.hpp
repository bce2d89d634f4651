#pragma once
// Positional encodings. The absolute kinds add a vector P (T×C) to the embeddings
// (none, sinusoidal, learned); the relative kinds act inside attention instead and
// add nothing to x:
//   rope   each head's q and k rotated by their position m: the pair (i, i + D/2)
//          (Hugging Face's rotate_half layout) turned by the angle m·θᵢ, θᵢ = base^(−2i/D)
//          (RoFormer, Su et al. 2021), so that ⟨R(m)q, R(n)k⟩ depends on m − n only;
//   alibi  −m_h·|i − j| added to head h's scaled score of query i and key j (Press et
//          al. 2022, "Train Short, Test Long"); under a causal mask |i − j| = i − j.
// The model (model/) and the single-layer playground (multi_head.hpp, fast_attention.hpp)
// both use the functions below; their independent double references are
// model/layer_reference.cpp and tests/core/reference.hpp.

#include "base/types.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

enum class Positional { none, sinusoidal, learned, rope, alibi };
/// Every kind in enum order (engine.info.positionals, POSITIONALS in JS).
inline constexpr Positional kPositionals[] = {Positional::none, Positional::sinusoidal, Positional::learned,
                                              Positional::rope, Positional::alibi};

/// "none" | "sinusoidal" | "learned" | "rope" | "alibi"; throws attn::Error for anything else.
Positional parse_positional(const std::string& name);
const char* positional_name(Positional p);
/// rope and alibi: the kinds that act inside attention (P is zero for them).
inline bool acts_in_attention(Positional p) { return p == Positional::rope || p == Positional::alibi; }

/// P (T×C). sinusoidal, as in "Attention Is All You Need", interleaved:
///   P(pos, 2i) = sin(pos / 10000^(2i/C)),  P(pos, 2i+1) = cos(same angle).
/// learned: a seeded table (uniform in [-1, 1)) for positions 0 … kMaxTokens-1.
/// none, rope, alibi: zeros.
Matrix positional_encoding(Positional kind, int tokens, int d_model, std::uint32_t seed);

// ---- RoPE ----------------------------------------------------------------------------

/// How RoPE's frequencies are made: as they are, or Llama 3's rescaling of the low ones.
enum class RopeScaling { none, llama3 };
/// "none" | "llama3"; throws attn::Error naming the supported ones for anything else.
RopeScaling parse_rope_scaling(const std::string& name);
const char* rope_scaling_name(RopeScaling s);

/// RoPE's settings (Hugging Face's rope_theta and rope_scaling).
struct RopeSettings {
    double base = 10000;             ///< θ base
    RopeScaling scaling = RopeScaling::none;
    double factor = 8;               ///< llama3: the low frequencies are divided by it
    double low_freq_factor = 1;      ///< llama3: wavelengths above L / low_freq_factor are divided
    double high_freq_factor = 4;     ///< llama3: wavelengths below L / high_freq_factor are kept
    int original_context = 8192;     ///< llama3: L, original_max_position_embeddings
};

/// θᵢ for i = 0 … D/2 − 1 (D even), in double: base^(−2i/D). With llama3 scaling, for the
/// wavelength λᵢ = 2π/θᵢ: θᵢ where λᵢ < L/high_freq_factor, θᵢ/factor where
/// λᵢ > L/low_freq_factor, and between them (1 − s)·θᵢ/factor + s·θᵢ with
/// s = (L/λᵢ − low_freq_factor) / (high_freq_factor − low_freq_factor).
std::vector<double> rope_frequencies(int head_dim, const RopeSettings& rope);

/// cos and sin of the angles m·θᵢ of positions m = first … first + rows − 1, row-major
/// rows × D/2 each: computed in double and rounded once, so native and wasm agree.
struct RopeTable {
    int first = 0, rows = 0, half = 0;
    std::vector<float> cos, sin;
    const float* cos_row(int r) const { return cos.data() + static_cast<std::size_t>(r) * half; }
    const float* sin_row(int r) const { return sin.data() + static_cast<std::size_t>(r) * half; }
};
void rope_table(int head_dim, const RopeSettings& rope, int first, int rows, RopeTable& table);

/// Rotates `heads` consecutive heads of D values at x (one row of Q or K) by one
/// position's angles (a row of a RopeTable): value i of a head pairs with i + D/2,
/// (a, b) → (a·cos − b·sin, b·cos + a·sin). inverse: by minus the angle, which is also
/// the rotation's backward (R(m) is orthogonal: ∂loss/∂x = R(−m)·∂loss/∂(R(m)x)).
void rope_rotate_row(float* x, int heads, int head_dim, const float* cos, const float* sin, bool inverse = false);

// ---- ALiBi ---------------------------------------------------------------------------

/// ALiBi's slope of each of H heads: m_h = 2^(−8h/H) for h = 1 … H when H is a power of
/// two; otherwise (the paper's authors' rule) the slopes of the largest power of two
/// n < H, then the odd-numbered slopes of 2n heads, 2^(−8h/(2n)) for h = 1, 3, 5, …, for
/// the remaining H − n heads. Computed in double, rounded once.
std::vector<float> alibi_slopes(int heads);

/// What RoPE or ALiBi needs inside an attention (the other kinds: nothing).
struct AttentionPositions {
    Positional kind = Positional::none;
    RopeSettings rope;
};

}  // namespace attn
