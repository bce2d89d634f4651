#pragma once
// Token embeddings: a seeded table indexed by token id. The vector of a token
// depends only on (seed, id), never on its position, so the same word gets the
// same vector in every sentence. Entries are uniform with unit variance;
// the [PAD] token embeds as zeros.

#include "base/types.hpp"
#include "text/tokenizer.hpp"

#include <cstdint>
#include <vector>

namespace attn {

/// One token's embedding row (length C) into `out`.
void embed_token(std::int32_t id, std::uint32_t seed, Eigen::Ref<Vector> out);

/// tokens (T) → embeddings X (T×C).
Matrix embed_tokens(const std::vector<Token>& tokens, int d_model, std::uint32_t seed);

}  // namespace attn
