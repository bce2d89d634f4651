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

/**
 * A label in one or two lines, never cut: [text] when it fits maxW (or when
 * twoLines is false), else text split in two where the longer half is shortest
 * (a break after a space, hyphen, underscore, slash or dot wins when its longer half is at most 25% longer).
 * The lines may still be wider than maxW: the layout sized the gutter for them.
 */
export function labelLines(ctx, text, maxW, twoLines = true) {
  if (!twoLines || ctx.measureText(text).width <= maxW) return [text];
  const chars = Array.from(text);
  if (chars.length < 2) return [text];
  let best = null;
  for (let k = 1; k < chars.length; k++) {
    const a = chars.slice(0, k).join('');
    const b = chars.slice(k).join('');
    const w = Math.max(ctx.measureText(a).width, ctx.measureText(b).width);
    const soft = /[\s\-_/.]/.test(chars[k - 1]);
    const score = w * (soft ? 0.8 : 1);
    if (!best || score < best.score) best = { score, lines: [a.trimEnd(), b] };
  }
  return best.lines;
}

/**
 * How one token label is drawn whole in at most maxW pixels (issue #16, never
 * cut): in basePx when it fits; else in a smaller font, down to minPx; else, when
 * twoLines, on two lines in that font; else on one line wider than maxW (the
 * layout makes the gutter as wide). Measured in the bold weight, so the
 * selected (bold) label and the others get the same size.
 * Returns {px, lines, width (the widest line, px)}.
 */
export function fitLabel(ctx, text, { family, basePx, minPx, maxW, twoLines }) {
  ctx.font = `600 ${basePx}px ${family}`;
  const w = ctx.measureText(text).width;
  if (w <= maxW) return { px: basePx, lines: [text], width: w };
  const px = Math.max(minPx, Math.floor((2 * basePx * maxW) / w) / 2);
  ctx.font = `600 ${px}px ${family}`;
  const ws = ctx.measureText(text).width;
  if (ws <= maxW || !twoLines) return { px, lines: [text], width: ws };
  const lines = labelLines(ctx, text, maxW);
  return { px, lines, width: Math.max(...lines.map((l) => ctx.measureText(l).width)) };
}

/** fitLabel with a bounded cache (one per heatmap: labels are laid out on every selection change). */
export function createLabelFitter(maxEntries = 8000) {
  const cache = new Map();
  return function fit(ctx, text, o) {
    const key = `${o.family}|${o.basePx}|${o.minPx}|${Math.floor(o.maxW)}|${o.twoLines ? 2 : 1}|${text}`;
    let out = cache.get(key);
    if (out === undefined) {
      out = fitLabel(ctx, text, o);
      if (cache.size >= maxEntries) cache.clear();
      cache.set(key, out);
    }
    return out;
  };
}
