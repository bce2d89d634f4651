// The numeric helpers the benchmarks and the tests share (one copy):
// a seeded PRNG and the relative error of an output against its reference.
// No dependencies; imported by bench/run.mjs and tests/js/helpers.mjs.

/** mulberry32: a small seeded PRNG returning floats in [0, 1). */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** max |got − want| / max(1, max |want|) over two arrays of numbers; Infinity when
 * the lengths differ or got holds a non-finite value. */
export function relativeError(got, want) {
  if (!got || got.length !== want.length) return Infinity;
  let diff = 0;
  let scale = 1;
  for (let i = 0; i < want.length; i++) {
    const g = got[i];
    if (!Number.isFinite(g)) return Infinity;
    diff = Math.max(diff, Math.abs(g - want[i]));
    scale = Math.max(scale, Math.abs(want[i]));
  }
  return diff / scale;
}
