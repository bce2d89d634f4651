#pragma once
// A slow, obvious reference implementation of multi-head self-attention,
// written independently of src/core: plain nested loops in double precision.
// The tests compare the float Eigen path against it.
//
// Conventions (same as the API contract in src/core/*.hpp):
//   x (T×C) is the input X' (embeddings + positional encoding);
//   head h (D = C/H) uses columns h·D … (h+1)·D-1 of W_Q, W_K, W_V and the
//   same rows of W_O; mask[i][j] == true means query i may attend to key j.

#include "text/tokenizer.hpp"
#include "base/types.hpp"
#include "attention/positional.hpp"
#include "attention/weights.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace ref {

using Mat = std::vector<std::vector<double>>;
using BoolMat = std::vector<std::vector<bool>>;

inline Mat zeros(int rows, int cols) {
    return Mat(static_cast<std::size_t>(rows), std::vector<double>(static_cast<std::size_t>(cols), 0.0));
}

inline int rows(const Mat& m) { return static_cast<int>(m.size()); }
inline int cols(const Mat& m) { return m.empty() ? 0 : static_cast<int>(m[0].size()); }

// ---- conversions ------------------------------------------------------------

inline Mat from(const attn::Matrix& m) {
    Mat out = zeros(static_cast<int>(m.rows()), static_cast<int>(m.cols()));
    for (int i = 0; i < m.rows(); ++i)
        for (int j = 0; j < m.cols(); ++j) out[i][j] = static_cast<double>(m(i, j));
    return out;
}

inline BoolMat from(const attn::MaskMatrix& m) {
    BoolMat out(static_cast<std::size_t>(m.rows()), std::vector<bool>(static_cast<std::size_t>(m.cols()), false));
    for (int i = 0; i < m.rows(); ++i)
        for (int j = 0; j < m.cols(); ++j) out[i][j] = m(i, j);
    return out;
}

inline attn::Matrix to_float(const Mat& m) {
    attn::Matrix out(rows(m), cols(m));
    for (int i = 0; i < rows(m); ++i)
        for (int j = 0; j < cols(m); ++j) out(i, j) = static_cast<float>(m[i][j]);
    return out;
}

inline attn::MaskMatrix to_mask(const BoolMat& m) {
    const int r = static_cast<int>(m.size());
    const int c = r == 0 ? 0 : static_cast<int>(m[0].size());
    attn::MaskMatrix out(r, c);
    for (int i = 0; i < r; ++i)
        for (int j = 0; j < c; ++j) out(i, j) = m[i][j];
    return out;
}

// ---- positional encoding ------------------------------------------------------

/// "Attention Is All You Need", interleaved: column 2i is sin, 2i+1 is cos of
/// pos / 10000^(2i/C). With odd C the last column (2i = C-1) is a sin.
inline double sinusoid(int pos, int col, int d_model) {
    const int i = col / 2;
    const double angle = static_cast<double>(pos) / std::pow(10000.0, (2.0 * i) / static_cast<double>(d_model));
    return (col % 2 == 0) ? std::sin(angle) : std::cos(angle);
}

inline Mat sinusoidal(int tokens, int d_model) {
    Mat p = zeros(tokens, d_model);
    for (int t = 0; t < tokens; ++t)
        for (int c = 0; c < d_model; ++c) p[t][c] = sinusoid(t, c, d_model);
    return p;
}

// ---- masks --------------------------------------------------------------------

inline BoolMat all_true(int t) { return BoolMat(t, std::vector<bool>(t, true)); }

inline BoolMat causal(int t) {
    BoolMat m(t, std::vector<bool>(t, false));
    for (int i = 0; i < t; ++i)
        for (int j = 0; j <= i; ++j) m[i][j] = true;
    return m;
}

// ---- the steps ------------------------------------------------------------------

/// x (T×C) · W[:, col0 .. col0+D-1]  →  T×D
inline Mat project_columns(const Mat& x, const Mat& w, int col0, int d) {
    const int t = rows(x), c = cols(x);
    Mat out = zeros(t, d);
    for (int i = 0; i < t; ++i)
        for (int j = 0; j < d; ++j) {
            double s = 0.0;
            for (int k = 0; k < c; ++k) s += x[i][k] * w[k][col0 + j];
            out[i][j] = s;
        }
    return out;
}

/// q (T×D), k (T×D) → q·kᵀ (T×T)
inline Mat scores(const Mat& q, const Mat& k) {
    const int t = rows(q), d = cols(q);
    Mat out = zeros(t, rows(k));
    for (int i = 0; i < t; ++i)
        for (int j = 0; j < rows(k); ++j) {
            double s = 0.0;
            for (int e = 0; e < d; ++e) s += q[i][e] * k[j][e];
            out[i][j] = s;
        }
    return out;
}

inline double scale_factor(int d_head, bool scale) {
    return scale ? 1.0 / std::sqrt(static_cast<double>(d_head)) : 1.0;
}

inline Mat scaled(const Mat& s, double factor) {
    Mat out = s;
    for (auto& row : out)
        for (double& v : row) v *= factor;
    return out;
}

/// Row softmax over the allowed entries; forbidden entries 0; a fully masked
/// row is all zeros.
inline Mat masked_softmax(const Mat& s, const BoolMat& mask) {
    const int t = rows(s), n = cols(s);
    Mat out = zeros(t, n);
    for (int i = 0; i < t; ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        bool any = false;
        for (int j = 0; j < n; ++j)
            if (mask[i][j]) {
                any = true;
                mx = std::max(mx, s[i][j]);
            }
        if (!any) continue;
        double sum = 0.0;
        for (int j = 0; j < n; ++j)
            if (mask[i][j]) {
                out[i][j] = std::exp(s[i][j] - mx);
                sum += out[i][j];
            }
        for (int j = 0; j < n; ++j) out[i][j] /= sum;
    }
    return out;
}

/// a (T×N) · b (N×D)
inline Mat matmul(const Mat& a, const Mat& b) {
    const int t = rows(a), n = cols(a), d = cols(b);
    Mat out = zeros(t, d);
    for (int i = 0; i < t; ++i)
        for (int j = 0; j < d; ++j) {
            double s = 0.0;
            for (int k = 0; k < n; ++k) s += a[i][k] * b[k][j];
            out[i][j] = s;
        }
    return out;
}

struct Head {
    Mat query, key, value, scores, scaled, weights, output;
    Mat query_before_rope, key_before_rope;  // rope only
};

/// RoPE on one head's rows (T×D, D even): row t's pair (i, i + D/2) turned by the angle
/// t·base^(−2i/D), written out again here (RoFormer; Hugging Face's rotate_half layout).
inline Mat rope_rows(const Mat& m, double base = 10000) {
    Mat out = m;
    const int d = cols(m);
    for (int t = 0; t < rows(m); ++t)
        for (int i = 0; i < d / 2; ++i) {
            const double angle = t * std::pow(base, -2.0 * i / d);
            const double a = m[t][i], b = m[t][i + d / 2];
            out[t][i] = a * std::cos(angle) - b * std::sin(angle);
            out[t][i + d / 2] = a * std::sin(angle) + b * std::cos(angle);
        }
    return out;
}

/// ALiBi's slope of head h (0-based) of H: 2^(−8(h+1)/H) when H is a power of two; otherwise
/// the slopes of the largest power of two n below H, then every other slope of 2n heads
/// (Press et al. 2022, as their code builds them).
inline double alibi_slope(int h, int heads) {
    int n = 1;
    while (n * 2 <= heads) n *= 2;
    if (h < n) return std::pow(2.0, -8.0 * (h + 1) / n);
    return std::pow(2.0, -8.0 * (2 * (h - n) + 1) / (2 * n));
}

struct Result {
    std::vector<Head> heads;
    Mat concat;
    Mat output;
};

/// positional rope: each head's q and k rotated (rope_rows); alibi: −m_h·|i − j| added to the
/// scaled scores before the softmax (scaled itself is kept without it, as the trace keeps it).
inline Result multi_head(const Mat& x, const Mat& wq, const Mat& wk, const Mat& wv, const Mat& wo,
                         int heads, const BoolMat& mask, bool scale,
                         attn::Positional positional = attn::Positional::none) {
    const int t = rows(x), c = cols(x);
    const int d = c / heads;
    Result r;
    r.concat = zeros(t, c);
    for (int h = 0; h < heads; ++h) {
        Head hd;
        hd.query = project_columns(x, wq, h * d, d);
        hd.key = project_columns(x, wk, h * d, d);
        hd.value = project_columns(x, wv, h * d, d);
        if (positional == attn::Positional::rope) {
            hd.query_before_rope = hd.query;
            hd.key_before_rope = hd.key;
            hd.query = rope_rows(hd.query);
            hd.key = rope_rows(hd.key);
        }
        hd.scores = scores(hd.query, hd.key);
        hd.scaled = scaled(hd.scores, scale_factor(d, scale));
        if (positional == attn::Positional::alibi) {
            Mat biased = hd.scaled;
            for (int i = 0; i < t; ++i)
                for (int j = 0; j < t; ++j) biased[i][j] -= alibi_slope(h, heads) * std::abs(i - j);
            hd.weights = masked_softmax(biased, mask);
        } else {
            hd.weights = masked_softmax(hd.scaled, mask);
        }
        hd.output = matmul(hd.weights, hd.value);
        for (int i = 0; i < t; ++i)
            for (int j = 0; j < d; ++j) r.concat[i][h * d + j] = hd.output[i][j];
        r.heads.push_back(std::move(hd));
    }
    // concat · W_O: column j of the output is Σ_h Σ_e head_h[i][e] · W_O[h·D+e][j].
    r.output = zeros(t, c);
    for (int i = 0; i < t; ++i)
        for (int j = 0; j < c; ++j) {
            double s = 0.0;
            for (int h = 0; h < heads; ++h)
                for (int e = 0; e < d; ++e) s += r.concat[i][h * d + e] * wo[h * d + e][j];
            r.output[i][j] = s;
        }
    return r;
}

inline Result multi_head(const attn::Matrix& x, const attn::Weights& w, int heads,
                         const attn::MaskMatrix& mask, bool scale,
                         attn::Positional positional = attn::Positional::none) {
    return multi_head(from(x), from(w.w_query), from(w.w_key), from(w.w_value), from(w.w_output),
                      heads, from(mask), scale, positional);
}

// ---- comparison -------------------------------------------------------------------

inline double max_abs(const Mat& m) {
    double mx = 0.0;
    for (const auto& row : m)
        for (double v : row) mx = std::max(mx, std::abs(v));
    return mx;
}

struct Diff {
    bool shape_ok = false;
    double max_diff = std::numeric_limits<double>::infinity();
    double magnitude = 0.0;  ///< max |expected|
    double tolerance = 0.0;  ///< tol · max(1, magnitude)
    bool ok() const { return shape_ok && max_diff <= tolerance; }
    std::string describe(const std::string& name) const {
        std::ostringstream s;
        s.precision(6);
        s << name << ": shape " << (shape_ok ? "ok" : "WRONG") << ", max |diff| = " << max_diff
          << ", max |expected| = " << magnitude << ", allowed = " << tolerance;
        return s.str();
    }
};

/// Max abs difference between a float matrix and the double reference, with a
/// tolerance of tol absolute for values up to 1 and tol relative to the
/// largest expected value beyond.
inline Diff compare(const attn::Matrix& got, const Mat& expected, double tol) {
    Diff d;
    d.magnitude = max_abs(expected);
    d.tolerance = tol * std::max(1.0, d.magnitude);
    d.shape_ok = got.rows() == rows(expected) && got.cols() == cols(expected);
    if (!d.shape_ok) return d;
    d.max_diff = 0.0;
    for (int i = 0; i < got.rows(); ++i)
        for (int j = 0; j < got.cols(); ++j) {
            const double g = static_cast<double>(got(i, j));
            if (!std::isfinite(g)) {
                d.max_diff = std::numeric_limits<double>::infinity();
                return d;
            }
            d.max_diff = std::max(d.max_diff, std::abs(g - expected[i][j]));
        }
    return d;
}

inline bool all_finite(const attn::Matrix& m) { return m.allFinite(); }

// ---- random helpers -------------------------------------------------------------

inline attn::Matrix random_matrix(std::mt19937& rng, int r, int c, double lo, double hi) {
    std::uniform_real_distribution<double> u(lo, hi);
    attn::Matrix m(r, c);
    for (int i = 0; i < r; ++i)
        for (int j = 0; j < c; ++j) m(i, j) = static_cast<float>(u(rng));
    return m;
}

inline attn::MaskMatrix random_mask(std::mt19937& rng, int t, double p_allowed) {
    std::bernoulli_distribution b(p_allowed);
    attn::MaskMatrix m(t, t);
    for (int i = 0; i < t; ++i)
        for (int j = 0; j < t; ++j) m(i, j) = b(rng);
    return m;
}

/// A random lower-case ASCII word of 1..6 letters.
inline std::string random_word(std::mt19937& rng) {
    std::uniform_int_distribution<int> len(1, 6), letter(0, 25);
    std::string w;
    const int n = len(rng);
    for (int i = 0; i < n; ++i) w.push_back(static_cast<char>('a' + letter(rng)));
    return w;
}

inline std::string join(const std::vector<std::string>& words) {
    std::string s;
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (i) s.push_back(' ');
        s += words[i];
    }
    return s;
}

// ---- independent FNV-1a -------------------------------------------------------------

inline std::uint32_t fnv1a32(const std::string& bytes) {
    std::uint32_t h = 2166136261u;
    for (unsigned char c : bytes) {
        h ^= c;
        h *= 16777619u;
    }
    return h;
}

// ---- independent strict UTF-8 validation --------------------------------------------

inline bool valid_utf8(const std::string& s) {
    std::size_t i = 0;
    const std::size_t n = s.size();
    while (i < n) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        std::size_t len = 0;
        std::uint32_t cp = 0, min = 0;
        if (c < 0x80) { ++i; continue; }
        if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; min = 0x80; }
        else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; min = 0x800; }
        else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; min = 0x10000; }
        else return false;
        if (i + len > n) return false;
        for (std::size_t k = 1; k < len; ++k) {
            const unsigned char cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += len;
    }
    return true;
}

inline std::string utf8(char32_t cp) {
    std::string s;
    if (cp < 0x80) {
        s.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        s.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        s.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        s.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
    return s;
}

}  // namespace ref
