#pragma once
// A 4-lane float vector, the only SIMD vocabulary the fast kernels use.
// Three backends, one set of kernels written against them:
//   __wasm_simd128__  WebAssembly SIMD128 intrinsics (<wasm_simd128.h>, a compiler header)
//   __SSE2__          SSE2 intrinsics: every x86-64, the native "portable form"
//   otherwise         plain C++ over float[4]: the scalar wasm build, a CPU without SSE2, and
//                     any build with ATTN_SCALAR_KERNELS defined (tests/core/test_scalar_kernels.cpp
//                     compares it with the SSE2 form, bit for bit)
// The default builds never use FMA: the native build computes what the wasm build
// computes, bit for bit. One option fuses: the relaxed-SIMD wasm flavour
// (ATTN_RELAXED_SIMD, ./build_wasm.sh --relaxed), where madd() is relaxed_madd
// (see madd below and src/tools/relaxed_opcodes.py); its results differ from the
// exact build's in the last bits, and it runs only where relaxed SIMD does.

#include <cstdint>
#include <cstring>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#define ATTN_SIMD_BACKEND "wasm-simd128"
#elif defined(__SSE2__) && !defined(ATTN_SCALAR_KERNELS)
#include <emmintrin.h>
#define ATTN_SIMD_BACKEND "sse2"
#else
#define ATTN_SIMD_BACKEND "scalar"
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ATTN_INLINE inline __attribute__((always_inline))
#define ATTN_NOINLINE inline __attribute__((noinline))
#else
#define ATTN_INLINE inline
#define ATTN_NOINLINE inline
#endif

namespace attn::simd {

#if defined(__wasm_simd128__)

using F4 = v128_t;
ATTN_INLINE F4 load(const float* p) { return wasm_v128_load(p); }
ATTN_INLINE void store(float* p, F4 v) { wasm_v128_store(p, v); }
/// All four lanes = *p (v128.load32_splat: a load, no shuffle).
ATTN_INLINE F4 load_splat(const float* p) { return wasm_v128_load32_splat(p); }
ATTN_INLINE F4 splat(float x) { return wasm_f32x4_splat(x); }
ATTN_INLINE F4 zero() { return wasm_f32x4_const(0.0f, 0.0f, 0.0f, 0.0f); }
ATTN_INLINE F4 add(F4 a, F4 b) { return wasm_f32x4_add(a, b); }
ATTN_INLINE F4 sub(F4 a, F4 b) { return wasm_f32x4_sub(a, b); }
ATTN_INLINE F4 mul(F4 a, F4 b) { return wasm_f32x4_mul(a, b); }
#if defined(ATTN_RELAXED_SIMD)
/// a·b + c, fused where the CPU has FMA (one rounding instead of two; relaxed SIMD
/// lets the engine choose). Emscripten 3.1.6 writes __builtin_wasm_fma_f32x4 with the
/// proposal's old opcode 0xfd 0xaf 0x01, which no engine runs any more: the build
/// rewrites it to f32x4.relaxed_madd (0xfd 0x85 0x02), computing a·b + c with the
/// operands in this order (src/tools/relaxed_opcodes.py checks every rewrite).
ATTN_INLINE F4 madd(F4 a, F4 b, F4 c) { return __builtin_wasm_fma_f32x4(a, b, c); }
#define ATTN_FUSED_MADD 1
#endif
/// Lane-wise max; both inputs are never NaN here (pmax semantics are enough).
ATTN_INLINE F4 max(F4 a, F4 b) { return wasm_f32x4_pmax(a, b); }
ATTN_INLINE F4 min(F4 a, F4 b) { return wasm_f32x4_pmin(a, b); }
/// |a|, lane-wise (the sign bit cleared; NaN stays NaN).
ATTN_INLINE F4 abs(F4 a) { return wasm_f32x4_abs(a); }
/// All-ones lanes where a >= b.
ATTN_INLINE F4 ge(F4 a, F4 b) { return wasm_f32x4_ge(a, b); }
ATTN_INLINE F4 bit_and(F4 a, F4 b) { return wasm_v128_and(a, b); }
/// mask ? a : b, lane-wise, mask lanes all-ones or all-zeros.
ATTN_INLINE F4 select(F4 mask, F4 a, F4 b) { return wasm_v128_bitselect(a, b, mask); }
/// Lanes where the byte flag is non-zero become all-ones.
ATTN_INLINE F4 mask_from_bytes(const bool* m) {
    return wasm_i32x4_make(m[0] ? -1 : 0, m[1] ? -1 : 0, m[2] ? -1 : 0, m[3] ? -1 : 0);
}
ATTN_INLINE float hsum(F4 v) {
    const F4 a = add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    return wasm_f32x4_extract_lane(add(a, wasm_i32x4_shuffle(a, a, 1, 0, 3, 2)), 0);
}
/// 2^n for integral n in [-126, 127] given as floats: the exponent field built
/// directly. wasm_i32x4_trunc_sat_f32x4 is one native instruction sequence
/// (Emscripten's SSE-emulated _mm_cvttps_epi32 would be a scalar loop).
ATTN_INLINE F4 pow2i(F4 n) {
    const v128_t i = wasm_i32x4_trunc_sat_f32x4(n);
    return wasm_i32x4_shl(wasm_i32x4_add(i, wasm_i32x4_splat(127)), 23);
}
/// Round to the nearest integer (ties to even), as a float.
ATTN_INLINE F4 round_nearest(F4 x) { return wasm_f32x4_nearest(x); }
/// Transposes the 4×4 block whose rows are r0…r3.
ATTN_INLINE void transpose4(F4& r0, F4& r1, F4& r2, F4& r3) {
    const F4 t0 = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5);
    const F4 t2 = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7), t3 = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7);
    r0 = wasm_i64x2_shuffle(t0, t1, 0, 2);
    r1 = wasm_i64x2_shuffle(t0, t1, 1, 3);
    r2 = wasm_i64x2_shuffle(t2, t3, 0, 2);
    r3 = wasm_i64x2_shuffle(t2, t3, 1, 3);
}

#elif defined(__SSE2__) && !defined(ATTN_SCALAR_KERNELS)

using F4 = __m128;
ATTN_INLINE F4 load(const float* p) { return _mm_loadu_ps(p); }
ATTN_INLINE void store(float* p, F4 v) { _mm_storeu_ps(p, v); }
ATTN_INLINE F4 load_splat(const float* p) { return _mm_load1_ps(p); }
ATTN_INLINE F4 splat(float x) { return _mm_set1_ps(x); }
ATTN_INLINE F4 zero() { return _mm_setzero_ps(); }
ATTN_INLINE F4 add(F4 a, F4 b) { return _mm_add_ps(a, b); }
ATTN_INLINE F4 sub(F4 a, F4 b) { return _mm_sub_ps(a, b); }
ATTN_INLINE F4 mul(F4 a, F4 b) { return _mm_mul_ps(a, b); }
ATTN_INLINE F4 max(F4 a, F4 b) { return _mm_max_ps(a, b); }
ATTN_INLINE F4 min(F4 a, F4 b) { return _mm_min_ps(a, b); }
ATTN_INLINE F4 abs(F4 a) { return _mm_and_ps(a, _mm_castsi128_ps(_mm_set1_epi32(0x7FFFFFFF))); }
ATTN_INLINE F4 ge(F4 a, F4 b) { return _mm_cmpge_ps(a, b); }
ATTN_INLINE F4 bit_and(F4 a, F4 b) { return _mm_and_ps(a, b); }
ATTN_INLINE F4 select(F4 mask, F4 a, F4 b) { return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b)); }
ATTN_INLINE F4 mask_from_bytes(const bool* m) {
    return _mm_castsi128_ps(_mm_set_epi32(m[3] ? -1 : 0, m[2] ? -1 : 0, m[1] ? -1 : 0, m[0] ? -1 : 0));
}
ATTN_INLINE float hsum(F4 v) {
    const F4 a = _mm_add_ps(v, _mm_movehl_ps(v, v));
    return _mm_cvtss_f32(_mm_add_ss(a, _mm_shuffle_ps(a, a, 1)));
}
ATTN_INLINE F4 pow2i(F4 n) {
    const __m128i i = _mm_cvttps_epi32(n);  // a native instruction on x86
    return _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(i, _mm_set1_epi32(127)), 23));
}
/// Round to nearest (ties to even) with SSE2 only: cvtps2dq honours the
/// default MXCSR rounding mode, round-to-nearest-even.
ATTN_INLINE F4 round_nearest(F4 x) { return _mm_cvtepi32_ps(_mm_cvtps_epi32(x)); }
ATTN_INLINE void transpose4(F4& r0, F4& r1, F4& r2, F4& r3) { _MM_TRANSPOSE4_PS(r0, r1, r2, r3); }

#else

struct F4 {
    float v[4];
};
ATTN_INLINE F4 load(const float* p) { return F4{{p[0], p[1], p[2], p[3]}}; }
ATTN_INLINE void store(float* p, F4 a) { p[0] = a.v[0], p[1] = a.v[1], p[2] = a.v[2], p[3] = a.v[3]; }
ATTN_INLINE F4 load_splat(const float* p) { return F4{{*p, *p, *p, *p}}; }
ATTN_INLINE F4 splat(float x) { return F4{{x, x, x, x}}; }
ATTN_INLINE F4 zero() { return splat(0.0f); }
#define ATTN_LANEWISE(name, expr)                                  \
    ATTN_INLINE F4 name(F4 a, F4 b) {                              \
        F4 r;                                                      \
        for (int l = 0; l < 4; ++l) r.v[l] = (expr);               \
        return r;                                                  \
    }
ATTN_LANEWISE(add, a.v[l] + b.v[l])
ATTN_LANEWISE(sub, a.v[l] - b.v[l])
ATTN_LANEWISE(mul, a.v[l] * b.v[l])
ATTN_LANEWISE(max, a.v[l] < b.v[l] ? b.v[l] : a.v[l])
ATTN_LANEWISE(min, b.v[l] < a.v[l] ? b.v[l] : a.v[l])
#undef ATTN_LANEWISE
namespace detail {
ATTN_INLINE std::uint32_t bits(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
}
ATTN_INLINE float from_bits(std::uint32_t u) {
    float x;
    std::memcpy(&x, &u, 4);
    return x;
}
}  // namespace detail
ATTN_INLINE F4 ge(F4 a, F4 b) {
    F4 r;
    for (int l = 0; l < 4; ++l) r.v[l] = detail::from_bits(a.v[l] >= b.v[l] ? 0xFFFFFFFFu : 0u);
    return r;
}
ATTN_INLINE F4 bit_and(F4 a, F4 b) {
    F4 r;
    for (int l = 0; l < 4; ++l) r.v[l] = detail::from_bits(detail::bits(a.v[l]) & detail::bits(b.v[l]));
    return r;
}
ATTN_INLINE F4 abs(F4 a) {
    F4 r;
    for (int l = 0; l < 4; ++l) r.v[l] = detail::from_bits(detail::bits(a.v[l]) & 0x7FFFFFFFu);
    return r;
}
ATTN_INLINE F4 select(F4 mask, F4 a, F4 b) {
    F4 r;
    for (int l = 0; l < 4; ++l) r.v[l] = detail::bits(mask.v[l]) ? a.v[l] : b.v[l];
    return r;
}
ATTN_INLINE F4 mask_from_bytes(const bool* m) {
    F4 r;
    for (int l = 0; l < 4; ++l) r.v[l] = detail::from_bits(m[l] ? 0xFFFFFFFFu : 0u);
    return r;
}
ATTN_INLINE float hsum(F4 a) { return (a.v[0] + a.v[2]) + (a.v[1] + a.v[3]); }
ATTN_INLINE F4 pow2i(F4 n) {
    F4 r;
    for (int l = 0; l < 4; ++l)
        r.v[l] = detail::from_bits(static_cast<std::uint32_t>(static_cast<std::int32_t>(n.v[l]) + 127) << 23);
    return r;
}
ATTN_INLINE F4 round_nearest(F4 x) {
    // 1.5·2^23: adding and subtracting it rounds to nearest-even for |x| < 2^22.
    F4 r;
    for (int l = 0; l < 4; ++l) {
        const float t = x.v[l] + 12582912.0f;
        r.v[l] = t - 12582912.0f;
    }
    return r;
}
ATTN_INLINE void transpose4(F4& r0, F4& r1, F4& r2, F4& r3) {
    F4* rows[4] = {&r0, &r1, &r2, &r3};
    for (int i = 0; i < 4; ++i)
        for (int j = i + 1; j < 4; ++j) {
            const float x = rows[i]->v[j];
            rows[i]->v[j] = rows[j]->v[i];
            rows[j]->v[i] = x;
        }
}

#endif

#if !defined(ATTN_FUSED_MADD)
/// a·b + c: a product and a sum, each rounded (every build but the relaxed flavour).
ATTN_INLINE F4 madd(F4 a, F4 b, F4 c) { return add(mul(a, b), c); }
#endif

/// Inputs below this give exp() < 1.7e-38; exp4 returns an exact 0 for them, so
/// no denormal ever comes out of it (wasm cannot flush denormals to zero).
inline constexpr float kExpUnderflow = -87.0f;
/// exp4 is accurate up to here (exp(88) ≈ 1.65e38 < FLT_MAX).
inline constexpr float kExpOverflow = 88.0f;

/// e^x lane-wise: x = n·ln2 + r with |r| ≤ ln2/2, e^r by the Cephes degree-7
/// polynomial (max relative error 8e-8, tested), times 2^n built in the
/// exponent bits. Inputs below `lowest` (≥ kExpUnderflow) give an exact 0;
/// inputs above kExpOverflow are clamped to it unless the caller knows x ≤ 0
/// (kNonPositive, the softmax case), which saves the clamp.
template <bool kNonPositive = false>
ATTN_INLINE F4 exp4(F4 x, float lowest = kExpUnderflow) {
    const F4 keep = ge(x, splat(lowest));
    x = max(x, splat(lowest));
    if (!kNonPositive) x = min(x, splat(kExpOverflow));
    const F4 n = round_nearest(mul(x, splat(1.44269504088896341f)));
    // r = x - n·ln2 in two steps (ln2 = hi + lo, hi exact in few bits) keeps r exact.
    F4 r = sub(x, mul(n, splat(0.693359375f)));
    r = sub(r, mul(n, splat(-2.12194440e-4f)));
    F4 p = splat(1.9875691500e-4f);
    p = add(mul(p, r), splat(1.3981999507e-3f));
    p = add(mul(p, r), splat(8.3334519073e-3f));
    p = add(mul(p, r), splat(4.1665795894e-2f));
    p = add(mul(p, r), splat(1.6666665459e-1f));
    p = add(mul(p, r), splat(5.0000001201e-1f));
    p = add(add(mul(p, mul(r, r)), r), splat(1.0f));
    return bit_and(mul(p, pow2i(n)), keep);
}

}  // namespace attn::simd
