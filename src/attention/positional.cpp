#include "attention/positional.hpp"

#include "base/random.hpp"

#include <cmath>

namespace attn {

Positional parse_positional(const std::string& name) {
    for (const Positional p : kPositionals)
        if (name == positional_name(p)) return p;
    throw Error("unknown positional encoding \"" + name.substr(0, 32) +
                "\" (expected none, sinusoidal, learned, rope or alibi)");
}

const char* positional_name(Positional p) {
    switch (p) {
        case Positional::none: return "none";
        case Positional::sinusoidal: return "sinusoidal";
        case Positional::learned: return "learned";
        case Positional::rope: return "rope";
        case Positional::alibi: return "alibi";
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

// ---- RoPE ----------------------------------------------------------------------------

RopeScaling parse_rope_scaling(const std::string& name) {
    if (name == "none") return RopeScaling::none;
    if (name == "llama3") return RopeScaling::llama3;
    throw Error("RoPE scaling \"" + name.substr(0, 32) + "\" is not supported (supported: none, llama3)");
}

const char* rope_scaling_name(RopeScaling s) { return s == RopeScaling::llama3 ? "llama3" : "none"; }

std::vector<double> rope_frequencies(int head_dim, const RopeSettings& r) {
    const int half = head_dim / 2;
    std::vector<double> theta(static_cast<std::size_t>(half));
    const double two_pi = 6.283185307179586476925286766559;
    for (int i = 0; i < half; ++i) {
        double t = std::pow(r.base, -2.0 * i / head_dim);
        if (r.scaling == RopeScaling::llama3) {
            const double wavelength = two_pi / t, L = r.original_context;
            if (wavelength > L / r.low_freq_factor) {
                t /= r.factor;
            } else if (wavelength >= L / r.high_freq_factor) {  // between the two bands: blended
                const double s = (L / wavelength - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
                t = (1 - s) * t / r.factor + s * t;
            }
        }
        theta[static_cast<std::size_t>(i)] = t;
    }
    return theta;
}

void rope_table(int head_dim, const RopeSettings& rope, int first, int rows, RopeTable& table) {
    const std::vector<double> theta = rope_frequencies(head_dim, rope);
    const int half = head_dim / 2;
    table.first = first;
    table.rows = rows;
    table.half = half;
    table.cos.resize(static_cast<std::size_t>(rows) * half);
    table.sin.resize(static_cast<std::size_t>(rows) * half);
    for (int r = 0; r < rows; ++r)
        for (int i = 0; i < half; ++i) {
            const double angle = static_cast<double>(first + r) * theta[static_cast<std::size_t>(i)];
            table.cos[static_cast<std::size_t>(r) * half + i] = static_cast<float>(std::cos(angle));
            table.sin[static_cast<std::size_t>(r) * half + i] = static_cast<float>(std::sin(angle));
        }
}

void rope_rotate_row(float* x, int heads, int head_dim, const float* cos, const float* sin, bool inverse) {
    const int half = head_dim / 2;
    for (int h = 0; h < heads; ++h) {
        float* a = x + static_cast<std::ptrdiff_t>(h) * head_dim;
        float* b = a + half;
        // plain loops over contiguous floats, which the compiler vectorises (SSE2, wasm SIMD128)
        if (!inverse) {
            for (int i = 0; i < half; ++i) {
                const float ai = a[i], bi = b[i];
                a[i] = ai * cos[i] - bi * sin[i];
                b[i] = bi * cos[i] + ai * sin[i];
            }
        } else {
            for (int i = 0; i < half; ++i) {
                const float ai = a[i], bi = b[i];
                a[i] = ai * cos[i] + bi * sin[i];
                b[i] = bi * cos[i] - ai * sin[i];
            }
        }
    }
}

// ---- ALiBi ---------------------------------------------------------------------------

std::vector<float> alibi_slopes(int heads) {
    std::vector<float> out;
    if (heads < 1) return out;
    int n = 1;  // the largest power of two ≤ H
    while (n * 2 <= heads) n *= 2;
    for (int h = 1; h <= n; ++h) out.push_back(static_cast<float>(std::exp2(-8.0 * h / n)));
    for (int h = 1; static_cast<int>(out.size()) < heads; h += 2)
        out.push_back(static_cast<float>(std::exp2(-8.0 * h / (2 * n))));
    return out;
}

}  // namespace attn
