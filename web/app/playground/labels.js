// Label arrays for the views: token texts, "i · token" positions and
// dimension numbers. A token label array stays the same object while the
// tokens are the same, so views keyed on it (label measuring, select options)
// skip work after, say, a seed change.

export function createLabels() {
  let lastTokens = [];
  let lastPositions = [];
  const tokenCache = new WeakMap();
  const positionCache = new WeakMap();
  const dimCache = new Map();

  /** The same array as last time when the texts are equal. */
  function stable(texts, last) {
    return texts.length === last.length && texts.every((x, i) => x === last[i]) ? last : texts;
  }

  return {
    /** The token texts of a trace. */
    tokens(tr) {
      if (!tokenCache.has(tr)) {
        lastTokens = stable(tr.tokens.map((t) => t.text), lastTokens);
        tokenCache.set(tr, lastTokens);
      }
      return tokenCache.get(tr);
    },
    /** "0 · The", "1 · animal", … */
    positions(tr) {
      if (!positionCache.has(tr)) {
        lastPositions = stable(tr.tokens.map((t, i) => `${i} \u00b7 ${t.text}`), lastPositions);
        positionCache.set(tr, lastPositions);
      }
      return positionCache.get(tr);
    },
    /** "0" … "n−1". */
    dims(n) {
      if (!dimCache.has(n)) dimCache.set(n, Array.from({ length: n }, (_, i) => String(i)));
      return dimCache.get(n);
    },
  };
}
