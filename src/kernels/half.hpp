#pragma once
// 16-bit weights (F16, BF16 checkpoints kept as they are in memory): the formats
// and their exact conversion to float32, one value at a time and eight at a
// time (wasm SIMD128, SSE2, or plain C++). Every F16 and BF16 value is a
// float32 exactly, so a product over converted weights gives the numbers of the
// same product over the weights loaded as float32, bit for bit.
//
// BF16 is a float32's upper half: a shift. F16 needs a real conversion (wasm
// SIMD128 has no f16 instructions): its exponent is rebiased by an integer add,
// and a subnormal is renormalised by one float subtraction of a power of two
// (exact), so no float32 subnormal is ever computed (natively a subnormal
// operand costs a microcode assist).

#include "kernels/simd.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace attn {

/// How a weight tensor is stored: float32, or 16-bit (bfloat16, IEEE half).
enum class WeightFormat : std::uint8_t { f32, bf16, f16 };

/// "F32", "BF16", "F16" (the safetensors dtype names).
inline const char* weight_format_name(WeightFormat f) {
    return f == WeightFormat::bf16 ? "BF16" : f == WeightFormat::f16 ? "F16" : "F32";
}

namespace half {

inline float bits_to_float(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

inline float bf16_to_float(std::uint16_t h) { return bits_to_float(static_cast<std::uint32_t>(h) << 16); }

/// IEEE half → float32, exactly (subnormals, ±0, ±infinity, NaN with its payload).
inline float f16_to_float(std::uint16_t h) {
    constexpr std::uint32_t kExp = 0x7C00u << 13;  // the F16 exponent field, moved to float32's place
    std::uint32_t o = (static_cast<std::uint32_t>(h) & 0x7FFFu) << 13;
    const std::uint32_t exp = o & kExp;
    o += (127u - 15u) << 23;  // rebias
    if (exp == kExp) {
        o += (128u - 16u) << 23;  // infinity, NaN: the largest exponent
    } else if (exp == 0) {        // zero, subnormal: 2^-14·(1 + m/1024) − 2^-14 = m·2^-24
        const float f = bits_to_float(o + (1u << 23)) - bits_to_float(113u << 23);
        std::memcpy(&o, &f, sizeof o);
    }
    return bits_to_float(o | ((static_cast<std::uint32_t>(h) & 0x8000u) << 16));
}

inline float to_float(std::uint16_t h, WeightFormat f) { return f == WeightFormat::bf16 ? bf16_to_float(h) : f16_to_float(h); }

/// out[0 … 8) = the eight 16-bit values at in, as float32.
ATTN_INLINE void widen8(const std::uint16_t* in, WeightFormat f, float* out) {
#if defined(__wasm_simd128__)
    const v128_t v = wasm_v128_load(in);
    const v128_t z = wasm_i32x4_splat(0);
    // little-endian lanes: (0, h) pairs are h << 16
    v128_t lo = wasm_i16x8_shuffle(z, v, 0, 8, 1, 9, 2, 10, 3, 11);
    v128_t hi = wasm_i16x8_shuffle(z, v, 4, 12, 5, 13, 6, 14, 7, 15);
    if (f == WeightFormat::f16) {
        const auto convert = [](v128_t x) {  // x = h << 16
            const v128_t sign = wasm_v128_and(x, wasm_i32x4_splat(static_cast<int>(0x80000000u)));
            v128_t o = wasm_u32x4_shr(wasm_v128_and(x, wasm_i32x4_splat(0x7FFF0000)), 3);
            const v128_t exp = wasm_v128_and(o, wasm_i32x4_splat(0x7C00 << 13));
            o = wasm_i32x4_add(o, wasm_i32x4_splat((127 - 15) << 23));
            const v128_t infnan = wasm_i32x4_eq(exp, wasm_i32x4_splat(0x7C00 << 13));
            const v128_t small = wasm_i32x4_eq(exp, wasm_i32x4_splat(0));
            o = wasm_i32x4_add(o, wasm_v128_and(infnan, wasm_i32x4_splat((128 - 16) << 23)));
            const v128_t renorm = wasm_f32x4_sub(wasm_i32x4_add(o, wasm_i32x4_splat(1 << 23)), wasm_i32x4_splat(113 << 23));
            o = wasm_v128_bitselect(renorm, o, small);
            return wasm_v128_or(o, sign);
        };
        lo = convert(lo);
        hi = convert(hi);
    }
    wasm_v128_store(out, lo);
    wasm_v128_store(out + 4, hi);
#elif defined(__SSE2__) && !defined(ATTN_SCALAR_KERNELS)
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
    const __m128i z = _mm_setzero_si128();
    __m128i lo = _mm_unpacklo_epi16(z, v), hi = _mm_unpackhi_epi16(z, v);  // h << 16
    if (f == WeightFormat::f16) {
        const auto convert = [](__m128i x) {
            const __m128i sign = _mm_and_si128(x, _mm_set1_epi32(static_cast<int>(0x80000000u)));
            __m128i o = _mm_srli_epi32(_mm_and_si128(x, _mm_set1_epi32(0x7FFF0000)), 3);
            const __m128i exp = _mm_and_si128(o, _mm_set1_epi32(0x7C00 << 13));
            o = _mm_add_epi32(o, _mm_set1_epi32((127 - 15) << 23));
            const __m128i infnan = _mm_cmpeq_epi32(exp, _mm_set1_epi32(0x7C00 << 13));
            const __m128i small = _mm_cmpeq_epi32(exp, _mm_setzero_si128());
            o = _mm_add_epi32(o, _mm_and_si128(infnan, _mm_set1_epi32((128 - 16) << 23)));
            const __m128i renorm = _mm_castps_si128(_mm_sub_ps(_mm_castsi128_ps(_mm_add_epi32(o, _mm_set1_epi32(1 << 23))),
                                                               _mm_castsi128_ps(_mm_set1_epi32(113 << 23))));
            o = _mm_or_si128(_mm_and_si128(small, renorm), _mm_andnot_si128(small, o));
            return _mm_or_si128(o, sign);
        };
        lo = convert(lo);
        hi = convert(hi);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), lo);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 4), hi);
#else
    for (int i = 0; i < 8; ++i) out[i] = to_float(in[i], f);
#endif
}

/// out[0 … n) = in[0 … n) as float32.
inline void widen(const std::uint16_t* in, std::size_t n, WeightFormat f, float* out) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) widen8(in + i, f, out + i);
    for (; i < n; ++i) out[i] = to_float(in[i], f);
}

}  // namespace half
}  // namespace attn
