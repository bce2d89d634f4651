#pragma once
// FNV-1a (Fowler–Noll–Vo, the "1a" order: xor the byte, then multiply), 32 and
// 64 bits: the one string hash of the core. Not for security; for ids that
// must be the same natively and in wasm (the tokenizer's hashed vocabulary,
// the coreference task's held-out split, each parameter's random stream).
//   32-bit: offset basis 2166136261,           prime 16777619
//   64-bit: offset basis 14695981039346656037, prime 1099511628211

#include <cstdint>
#include <string_view>

namespace attn {

inline constexpr std::uint32_t kFnv32Basis = 2166136261u;
inline constexpr std::uint32_t kFnv32Prime = 16777619u;
inline constexpr std::uint64_t kFnv64Basis = 14695981039346656037ULL;
inline constexpr std::uint64_t kFnv64Prime = 1099511628211ULL;

/// FNV-1a 32-bit of the bytes of `text`.
constexpr std::uint32_t fnv1a32(std::string_view text) {
    std::uint32_t h = kFnv32Basis;
    for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * kFnv32Prime;
    return h;
}

/// FNV-1a 64-bit of the bytes of `text`; another `basis` only for a stream
/// that was made with one (model/parameters.cpp's parameter streams).
constexpr std::uint64_t fnv1a64(std::string_view text, std::uint64_t basis = kFnv64Basis) {
    std::uint64_t h = basis;
    for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * kFnv64Prime;
    return h;
}

}  // namespace attn
