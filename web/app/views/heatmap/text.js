// Text measuring and fitting for canvas labels.
//
// Ownership: nothing here is module-level state. Each heatmap (or lines view)
// makes its own measuring context and its own fitter, whose cache is bounded
// (maxEntries, cleared when full) and dies with its owner.

/** A 2D context on a detached canvas, only for measureText. */
export function createMeasurer(doc = document) {
  return doc.createElement('canvas').getContext('2d');
}

/** Longest prefix of text (plus …) at most maxW pixels wide in ctx's font; '' if not even one character fits. */
export function fitText(ctx, text, maxW) {
  if (maxW <= 0) return '';
  if (ctx.measureText(text).width <= maxW) return text;
  const chars = Array.from(text);
  let lo = 0;
  let hi = chars.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(`${chars.slice(0, mid).join('')}\u2026`).width <= maxW) lo = mid;
    else hi = mid - 1;
  }
  return lo > 0 ? `${chars.slice(0, lo).join('')}\u2026` : '';
}

/**
 * fitText with a cache keyed by font, width and text. Labels are redrawn on
 * every selection change, so the cache saves most measureText calls; it holds
 * at most maxEntries results.
 */
export function createTextFitter(maxEntries = 4000) {
  const cache = new Map();
  return function fit(ctx, text, maxW) {
    if (maxW <= 0) return '';
    const key = `${ctx.font}|${Math.floor(maxW)}|${text}`;
    let out = cache.get(key);
    if (out === undefined) {
      out = fitText(ctx, text, maxW);
      if (cache.size >= maxEntries) cache.clear();
      cache.set(key, out);
    }
    return out;
  };
}
