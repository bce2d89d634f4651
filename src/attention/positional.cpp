#include "attention/positional.hpp"

#include "base/random.hpp"

#include <cmath>

namespace attn {

Positional parse_positional(const std::string& name) {
    if (name == "none") return Positional::none;
    if (name == "sinusoidal") return Positional::sinusoidal;
    if (name == "learned") return Positional::learned;
    throw Error("unknown positional encoding \"" + name + "\" (expected none, sinusoidal or learned)");
}

const char* positional_name(Positional p) {
    switch (p) {
        case Positional::none: return "none";
        case Positional::sinusoidal: return "sinusoidal";
        case Positional::learned: return "learned";
    }
    return "none";
}

Matrix positional_encoding(Positional kind, int tokens, int d_model, std::uint32_t seed) {
    Matrix p = Matrix::Zero(tokens, d_model);  // (T, C)
    if (kind == Positional::sinusoidal) {
        // Computed in double and rounded once, so native and wasm agree exactly.
        for (int pos = 0; pos < tokens; ++pos) {
            for (int j = 0; j < d_model; ++j) {
                const int two_i = j - (j % 2);
                const double angle = pos / std::pow(10000.0, static_cast<double>(two_i) / d_model);
                p(pos, j) = static_cast<float>(j % 2 == 0 ? std::sin(angle) : std::cos(angle));
            }
        }
    } else if (kind == Positional::learned) {
        for (int pos = 0; pos < tokens; ++pos)
            counter_uniform_row(seed, Stream::learned_position, static_cast<std::uint64_t>(pos), 1.0f,
                                [&](int j, float v) { p(pos, j) = v; }, d_model);
    }
    return p;
}

}  // namespace attn
