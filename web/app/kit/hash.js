// FNV-1a, 32 bits (xor the byte, then multiply; offset basis 2166136261, prime
// 16777619): the pages' one byte hash, as src/base/hash.hpp is the engine's. For
// digests that say "the same numbers" (a head map's floats, a stored checkpoint's
// bytes), never for security.

export const FNV32_BASIS = 2166136261;
const FNV32_PRIME = 16777619;

/** FNV-1a 32 of `bytes` (a Uint8Array), from `basis`, the last byte first when `reverse`. */
export function fnv1a32(bytes, { basis = FNV32_BASIS, reverse = false } = {}) {
  let h = basis;
  const n = bytes.length;
  for (let i = 0; i < n; i++) h = Math.imul(h ^ bytes[reverse ? n - 1 - i : i], FNV32_PRIME);
  return h >>> 0;
}

/** 8 hex digits of a 32-bit value. */
export const hex32 = (x) => (x >>> 0).toString(16).padStart(8, '0');
