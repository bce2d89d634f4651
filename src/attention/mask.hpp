#pragma once
// Attention masks: T×T booleans, true = the query (row) may attend to the key
// (column). A forbidden score becomes -inf before softmax, so its weight is 0.

#include "base/types.hpp"

#include <string>

namespace attn {

enum class MaskKind { none, causal, padding, causal_padding, custom };
/// Every kind in enum order: the list JS sees (engine.info.masks, MASKS), whose
/// index is what forwardFast takes.
inline constexpr MaskKind kMaskKinds[] = {MaskKind::none, MaskKind::causal, MaskKind::padding,
                                          MaskKind::causal_padding, MaskKind::custom};

/// "none" | "causal" | "padding" | "causal+padding" | "custom".
MaskKind parse_mask(const std::string& name);
const char* mask_name(MaskKind m);

/// The mask for `tokens` positions of which the first `real_tokens` are the
/// sentence and the rest padding. padding hides padding keys from every query;
/// causal hides keys after the query. Not for MaskKind::custom.
MaskMatrix build_mask(MaskKind kind, int tokens, int real_tokens);

}  // namespace attn
