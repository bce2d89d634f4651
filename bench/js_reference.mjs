// Plain JavaScript multi-head self-attention over Float32Arrays: the "no
// WebAssembly at all" baseline of the benchmark, written the obvious way
// (row-major loops in cache-friendly i-k-j order, no tricks). Under a causal
// mask it skips the hidden keys, like the fast path.

/** c (m×n) = a (m×k) · b (k×n), all row-major. */
function matmul(a, b, m, k, n, c) {
  c.fill(0);
  for (let i = 0; i < m; i++) {
    const ci = i * n;
    for (let p = 0; p < k; p++) {
      const x = a[i * k + p];
      const bp = p * n;
      for (let j = 0; j < n; j++) c[ci + j] += x * b[bp + j];
    }
  }
  return c;
}

/**
 * y (T×C) = MHA(x): x Float32Array (T×C); w {wQuery, wKey, wValue, wOutput}
 * Float32Arrays (C×C); causal hides keys after the query.
 * Returns {y, bytes}: bytes = the typed arrays it allocated.
 */
export function jsAttention(x, w, t, c, heads, causal, scale) {
  const d = c / heads;
  const q = matmul(x, w.wQuery, t, c, c, new Float32Array(t * c));
  const k = matmul(x, w.wKey, t, c, c, new Float32Array(t * c));
  const v = matmul(x, w.wValue, t, c, c, new Float32Array(t * c));
  const concat = new Float32Array(t * c);
  const p = new Float32Array(t);  // one row of weights
  for (let h = 0; h < heads; h++) {
    const h0 = h * d;
    for (let i = 0; i < t; i++) {
      const end = causal ? i + 1 : t;
      // pass 1: scaled scores and their maximum
      let max = -Infinity;
      for (let j = 0; j < end; j++) {
        let s = 0;
        for (let e = 0; e < d; e++) s += q[i * c + h0 + e] * k[j * c + h0 + e];
        s *= scale;
        p[j] = s;
        if (s > max) max = s;
      }
      // pass 2: exponentials and their sum
      let sum = 0;
      for (let j = 0; j < end; j++) {
        p[j] = Math.exp(p[j] - max);
        sum += p[j];
      }
      // pass 3: weighted sum of values, normalised
      const out = i * c + h0;
      for (let j = 0; j < end; j++) {
        const pj = p[j] / sum;
        const vj = j * c + h0;
        for (let e = 0; e < d; e++) concat[out + e] += pj * v[vj + e];
      }
    }
  }
  const y = matmul(concat, w.wOutput, t, c, c, new Float32Array(t * c));
  return { y, bytes: 4 * (5 * t * c + t) };
}
