#include "attention/mask.hpp"

namespace attn {

MaskKind parse_mask(const std::string& name) {
    if (name == "none") return MaskKind::none;
    if (name == "causal") return MaskKind::causal;
    if (name == "padding") return MaskKind::padding;
    if (name == "causal+padding") return MaskKind::causal_padding;
    if (name == "custom") return MaskKind::custom;
    throw Error(Error::Code::bad_mask, "unknown mask \"" + name + "\" (expected none, causal, padding, causal+padding or custom)");
}

const char* mask_name(MaskKind m) {
    switch (m) {
        case MaskKind::none: return "none";
        case MaskKind::causal: return "causal";
        case MaskKind::padding: return "padding";
        case MaskKind::causal_padding: return "causal+padding";
        case MaskKind::custom: return "custom";
    }
    return "none";
}

MaskMatrix build_mask(MaskKind kind, int tokens, int real_tokens) {
    const bool causal = kind == MaskKind::causal || kind == MaskKind::causal_padding;
    const bool padding = kind == MaskKind::padding || kind == MaskKind::causal_padding;
    MaskMatrix m(tokens, tokens);  // (T, T): row = query, column = key
    for (int q = 0; q < tokens; ++q)
        for (int k = 0; k < tokens; ++k)
            m(q, k) = !(causal && k > q) && !(padding && k >= real_tokens);
    return m;
}

}  // namespace attn
