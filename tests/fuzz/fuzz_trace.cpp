// libFuzzer harness of the whole computation (src/attention/trace.hpp) and of the
// fast path against it (src/attention/fast_attention.hpp).
// Input: 8 bytes of settings, then optionally 4·C² raw floats of custom
// weights (any bit pattern: NaN, ±inf, 3e38, denormals), then the sentence.
//   byte 0: d_model (1 … 16)       byte 1: heads (0 … 7, so some do not divide)
//   byte 2: positional (bits 0-1), mask (bits 2-4, 4 = custom from byte 3),
//           no scale (bit 5), lowercase (bit 6), shared heads (bit 7)
//   byte 3: pad_to (bits 0-4), custom weights follow (bit 5), custom mask seed (bits 6-7)
//   bytes 4-7: seed
// Invariants: run() returns or throws attn::Error, nothing else; a trace is
// all finite; every weights row with an allowed key sums to 1 within 1e-6,
// hidden entries are exactly 0, a fully hidden row is all 0; the fast path and
// the Eigen reference give the trace's output within 1e-5 (when the weights
// are tame enough for the comparison to mean something; see below).

#include "check.hpp"
#include "kernels/bounds.hpp"
#include "attention/fast_attention.hpp"
#include "attention/multi_head.hpp"
#include "attention/trace.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

namespace {

double relative_error(const attn::Matrix& got, const attn::Matrix& want) {
    if (got.rows() != want.rows() || got.cols() != want.cols()) return INFINITY;
    if (want.size() == 0) return 0;
    const double scale = std::max(1.0, static_cast<double>(want.cwiseAbs().maxCoeff()));
    return static_cast<double>((got - want).cwiseAbs().maxCoeff()) / scale;
}

attn::MaskSpec spec_of(const attn::Trace& tr) {
    if (tr.config.mask == attn::MaskKind::custom) return attn::MaskSpec::custom(tr.mask);
    return attn::MaskSpec::from_kind(tr.config.mask, tr.real_tokens);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 8) return 0;
    attn::Config c;
    c.d_model = 1 + data[0] % 16;
    c.heads = data[1] % 8;
    c.positional = static_cast<attn::Positional>(std::min(data[2] & 3, 2));
    const int mask = (data[2] >> 2) & 7;
    c.mask = static_cast<attn::MaskKind>(std::min(mask, 4));
    c.scale = !(data[2] & 0x20);
    c.lowercase = data[2] & 0x40;
    c.share_heads = data[2] & 0x80;
    c.pad_to = data[3] & 31;
    const bool custom_weights = data[3] & 0x20;
    const unsigned mask_seed = data[3] >> 6;
    std::memcpy(&c.seed, data + 4, 4);
    std::size_t at = 8;
    bool tame = true;  // weights for which fast and reference must agree
    if (custom_weights) {
        const std::size_t n = static_cast<std::size_t>(c.d_model) * c.d_model;
        if (size < at + 16 * n) return 0;
        attn::Weights w{attn::Matrix(c.d_model, c.d_model), attn::Matrix(c.d_model, c.d_model),
                        attn::Matrix(c.d_model, c.d_model), attn::Matrix(c.d_model, c.d_model)};
        for (attn::Matrix* m : {&w.w_query, &w.w_key, &w.w_value, &w.w_output}) {
            std::memcpy(m->data(), data + at, 4 * n);
            at += 4 * n;
            // Beyond |w| = 1 the scores can be so large that the last-bit
            // differences of two summation orders change which key wins the
            // softmax: both answers are right, so only finiteness is checked.
            for (std::size_t i = 0; i < n; ++i) tame = tame && std::abs(m->data()[i]) <= 1.0f;
        }
        c.weights = w;
    }
    const std::string sentence(reinterpret_cast<const char*>(data + at), size - at);

    attn::Trace tr;
    try {
        if (c.mask == attn::MaskKind::custom) {
            // a T×T mask from the seed bits, for the T the sentence will have
            std::size_t t = attn::tokenize(sentence, {c.lowercase}).size();
            t = std::max<std::size_t>(t, static_cast<std::size_t>(c.pad_to));
            c.custom_mask = attn::MaskMatrix(static_cast<Eigen::Index>(t), static_cast<Eigen::Index>(t));
            for (std::size_t i = 0; i < t * t; ++i) c.custom_mask->data()[i] = ((i * 2654435761u) >> (mask_seed + 3)) & 1;
        }
        tr = attn::run(sentence, c);
    } catch (const attn::Error&) {
        return 0;  // a documented refusal (any other exception reaches libFuzzer as a crash)
    }

    const int t = static_cast<int>(tr.tokens.size());
    FUZZ_CHECK(tr.output.rows() == t && tr.output.cols() == c.d_model, "output %dx%d", (int)tr.output.rows(), (int)tr.output.cols());
    FUZZ_CHECK(tr.input.allFinite() && tr.concat.allFinite() && tr.output.allFinite(), "a trace matrix is not finite");
    for (std::size_t h = 0; h < tr.heads.size(); ++h) {
        const attn::HeadTrace& ht = tr.heads[h];
        FUZZ_CHECK(ht.scores.allFinite() && ht.scaled.allFinite() && ht.weights.allFinite() && ht.output.allFinite(),
                   "head %zu has a non-finite matrix", h);
        for (int i = 0; i < t; ++i) {
            double sum = 0;
            bool any = false;
            for (int j = 0; j < t; ++j) {
                const float w = ht.weights(i, j);
                if (!tr.mask(i, j)) FUZZ_CHECK(w == 0.0f, "head %zu weight (%d, %d) = %g is hidden but not 0", h, i, j, w);
                FUZZ_CHECK(w >= 0.0f && w <= 1.0f, "head %zu weight (%d, %d) = %g", h, i, j, w);
                any = any || tr.mask(i, j);
                sum += w;
            }
            if (any) FUZZ_CHECK(std::abs(sum - 1.0) <= 1e-6, "head %zu row %d sums to 1 %+.3g (T = %d)", h, i, sum - 1.0, t);
            else FUZZ_CHECK(sum == 0.0, "head %zu row %d is fully hidden but sums to %g", h, i, sum);
        }
    }

    const attn::Matrix fast = attn::fast_multi_head_output(tr.input, tr.weights, c.heads, spec_of(tr), c.scale);
    const attn::Matrix reference = attn::multi_head_output(tr.input, tr.weights, c.heads, tr.mask, c.scale);
    FUZZ_CHECK(fast.allFinite() && reference.allFinite(), "an output-only path is not finite");
    if (tame) {
        FUZZ_CHECK(relative_error(fast, tr.output) <= 1e-5, "fast path vs trace: %.3g", relative_error(fast, tr.output));
        FUZZ_CHECK(relative_error(reference, tr.output) <= 1e-5, "reference vs trace: %.3g", relative_error(reference, tr.output));
    }
    return 0;
}
