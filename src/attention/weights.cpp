#include "attention/weights.hpp"

#include "kernels/bounds.hpp"
#include "base/random.hpp"

#include <cmath>
#include <cstdint>
#include <string>

namespace attn {
namespace {

Matrix glorot(int c, int d_head, std::uint32_t seed, Stream stream, bool share_heads, bool by_rows) {
    const float limit = static_cast<float>(std::sqrt(6.0 / (2.0 * c)));
    Matrix w(c, c);
    for (int i = 0; i < c; ++i) {
        // With shared heads, the head index is folded away: W_Q/W_K/W_V by
        // column (j mod D), W_O by row (i mod D).
        const int si = (share_heads && by_rows) ? i % d_head : i;
        const int n = (share_heads && !by_rows) ? d_head : c;
        counter_uniform_row(seed, stream, static_cast<std::uint64_t>(si), limit,
                            [&](int j, float v) { w(i, j) = v; }, n);
        for (int j = n; j < c; ++j) w(i, j) = w(i, j % d_head);
    }
    return w;
}

void check(const Matrix& m, const char* name, int c) {
    if (m.rows() != c || m.cols() != c)
        throw Error(Error::Code::bad_shape, std::string(name) + " is " + std::to_string(m.rows()) + "x" + std::to_string(m.cols()) +
                    ", expected " + std::to_string(c) + "x" + std::to_string(c) + " (d_model x d_model)");
    check_bounded(m, name);  // finite and within ±1e6 (bounds.hpp says why)
}

}  // namespace

Weights glorot_weights(int d_model, int heads, std::uint32_t seed, bool share_heads) {
    const int d_head = d_model / heads;
    return Weights{
        glorot(d_model, d_head, seed, Stream::w_query, share_heads, false),
        glorot(d_model, d_head, seed, Stream::w_key, share_heads, false),
        glorot(d_model, d_head, seed, Stream::w_value, share_heads, false),
        glorot(d_model, d_head, seed, Stream::w_output, share_heads, true),
    };
}

void validate_weights(const Weights& w, int d_model) {
    check(w.w_query, "w_query", d_model);
    check(w.w_key, "w_key", d_model);
    check(w.w_value, "w_value", d_model);
    check(w.w_output, "w_output", d_model);
}

}  // namespace attn
