// Text measuring and fitting for canvas labels: whole (issue #16), shrunk or
// on two lines, never silently cut.
//
// Ownership: nothing here is module-level state. Each heatmap (or lines view)
// makes its own measuring context and its own fitter, whose cache is bounded
// (maxEntries, cleared when full) and dies with its owner.

/** A 2D context on a detached canvas, only for measureText. */
export function createMeasurer(doc = document) {
  return doc.createElement('canvas').getContext('2d');
}

/** The longest prefix of chars (an array) at most maxW wide in ctx's font, as a count (binary search). */
function prefixCount(ctx, chars, maxW, suffix = '') {
  let lo = 0;
  let hi = chars.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(chars.slice(0, mid).join('') + suffix).width <= maxW) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * A label in one or two lines, never cut: [text] when it fits maxW (or when
 * twoLines is false), else text split in two: at the balanced point (found by
 * binary search, so a token of thousands of characters costs a few dozen
 * measures), or after the nearest space, hyphen, underscore, slash or dot when
 * that makes the longer half at most 25% longer.
 * The lines may still be wider than maxW: the layout sized the gutter for them.
 */
export function labelLines(ctx, text, maxW, twoLines = true) {
  if (!twoLines || ctx.measureText(text).width <= maxW) return [text];
  const chars = Array.from(text);
  if (chars.length < 2) return [text];
  const widthOf = (k) => Math.max(ctx.measureText(chars.slice(0, k).join('')).width, ctx.measureText(chars.slice(k).join('')).width);
  // the balanced split: the first k whose prefix is at least half the width
  const half = ctx.measureText(text).width / 2;
  let k = Math.max(1, Math.min(chars.length - 1, prefixCount(ctx, chars, half)));
  if (k + 1 < chars.length && widthOf(k + 1) < widthOf(k)) k += 1;
  let best = { k, w: widthOf(k) };
  let soft = -1;
  for (let i = 1; i < chars.length; i++) {
    if (/[\s\-_/.]/.test(chars[i - 1]) && (soft < 0 || Math.abs(i - k) < Math.abs(soft - k))) soft = i;
  }
  if (soft > 0) {
    const w = widthOf(soft);
    if (w <= 1.25 * best.w) best = { k: soft, w };
  }
  return [chars.slice(0, best.k).join('').trimEnd(), chars.slice(best.k).join('')];
}

/**
 * A label cut to at most hardW per line, marked with "…" (only for a token far
 * longer than any gutter, e.g. thousands of characters: the tooltip and the
 * readout still give it whole).
 */
function cutLines(ctx, text, hardW, twoLines) {
  const chars = Array.from(text);
  if (!twoLines) return [`${chars.slice(0, prefixCount(ctx, chars, hardW, '\u2026')).join('')}\u2026`];
  const n1 = Math.max(1, prefixCount(ctx, chars, hardW));
  const rest = chars.slice(n1);
  return [chars.slice(0, n1).join(''), `${rest.slice(0, prefixCount(ctx, rest, hardW, '\u2026')).join('')}\u2026`];
}

/**
 * How one token label is drawn whole in at most maxW pixels (issue #16, never
 * cut): in basePx when it fits; else in a smaller font, down to minPx; else, when
 * twoLines, on two lines in that font; else on one line wider than maxW (the
 * layout makes the gutter as wide). Only a line wider than hardMaxW (a token of
 * hundreds of characters) is cut, visibly, with "…".
 * Measured in the bold weight, so the selected (bold) label and the others get
 * the same size. Returns {px, lines, width (the widest line, px), cut}.
 */
export function fitLabel(ctx, text, { family, basePx, minPx, maxW, twoLines, hardMaxW = Infinity }) {
  ctx.font = `600 ${basePx}px ${family}`;
  const w = ctx.measureText(text).width;
  if (w <= maxW) return { px: basePx, lines: [text], width: w, cut: false };
  const px = Math.max(minPx, Math.floor((2 * basePx * maxW) / w) / 2);
  ctx.font = `600 ${px}px ${family}`;
  let lines = [text];
  const ws = ctx.measureText(text).width;
  if (ws > maxW && twoLines) lines = labelLines(ctx, text, maxW);
  let width = lines.length === 1 ? ws : Math.max(...lines.map((l) => ctx.measureText(l).width));
  let cut = false;
  if (width > hardMaxW) {
    lines = cutLines(ctx, text, hardMaxW, twoLines);
    width = Math.max(...lines.map((l) => ctx.measureText(l).width));
    cut = true;
  }
  return { px, lines, width, cut };
}

/** fitLabel with a bounded cache (one per heatmap: labels are laid out on every selection change). */
export function createLabelFitter(maxEntries = 8000) {
  const cache = new Map();
  return function fit(ctx, text, o) {
    const key = `${o.family}|${o.basePx}|${o.minPx}|${Math.floor(o.maxW)}|${o.hardMaxW ?? ''}|${o.twoLines ? 2 : 1}|${text}`;
    let out = cache.get(key);
    if (out === undefined) {
      out = fitLabel(ctx, text, o);
      if (cache.size >= maxEntries) cache.clear();
      cache.set(key, out);
    }
    return out;
  };
}
