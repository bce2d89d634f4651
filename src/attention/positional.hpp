#pragma once
// Positional encodings P (T×C), added to the embeddings.

#include "base/types.hpp"

#include <cstdint>
#include <string>

namespace attn {

enum class Positional { none, sinusoidal, learned };
/// Every kind in enum order (engine.info.positionals, POSITIONALS in JS).
inline constexpr Positional kPositionals[] = {Positional::none, Positional::sinusoidal, Positional::learned};

/// "none" | "sinusoidal" | "learned"; throws attn::Error for anything else.
Positional parse_positional(const std::string& name);
const char* positional_name(Positional p);

/// P (T×C). sinusoidal, as in "Attention Is All You Need", interleaved:
///   P(pos, 2i) = sin(pos / 10000^(2i/C)),  P(pos, 2i+1) = cos(same angle).
/// learned: a seeded table (uniform in [-1, 1)) for positions 0 … kMaxTokens-1.
/// none: zeros.
Matrix positional_encoding(Positional kind, int tokens, int d_model, std::uint32_t seed);

}  // namespace attn
