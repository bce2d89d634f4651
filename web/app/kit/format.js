// Number and label formatting for the page. One place decides how a float
// looks, so a cell, a formula and a tooltip never disagree.

export const MINUS = '\u2212';
const SUBSCRIPT = ['\u2080', '\u2081', '\u2082', '\u2083', '\u2084', '\u2085', '\u2086', '\u2087', '\u2088', '\u2089'];

function typographic(s) {
  return s.replace(/-/g, MINUS);
}

function special(x) {
  if (x === -Infinity) return `${MINUS}\u221e`;
  if (x === Infinity) return '\u221e';
  if (Number.isNaN(x)) return 'NaN';
  return null;
}

/**
 * THE rule for a number shown to the reader (cells, bars, legends, lines):
 * `digits` significant digits, the proper minus sign (U+2212), and
 *   fixed notation when 0.001 ≤ |x| < 10^digits ("0.213", "−0.00494", "12.3", "−412"),
 *   scientific otherwise, with the same significant digits ("4.94e−4", "1.23e4"),
 *   exact zero as "0", ±∞ and NaN spelled out.
 * It round-trips within half a unit of its last digit and is never longer than
 * valueWidth(digits) characters, so a slot that wide never clips it.
 */
export function formatValue(x, digits = 3) {
  const s = special(x);
  if (s) return s;
  if (x === 0) return '0';
  const p = Math.max(1, Math.min(21, Math.round(digits)));
  const exp = x.toExponential(p - 1); // rounded to p significant digits: "-4.94e-4"
  const e = Number(exp.slice(exp.indexOf('e') + 1));
  let out;
  if (e >= -3 && e < p) out = x.toFixed(p - 1 - e);
  else out = exp.replace('e+', 'e');
  return typographic(out);
}

/**
 * How many significant digits each place gives formatValue, so the choice is
 * made once: a heatmap cell 3 (2 when the cells are too narrow, layout.js), a
 * legend or a chart label 3, a number in a formula or a side panel 4 (one more
 * than a cell, so a term is matched with its cell), the cell inspector
 * (tooltip), a hover title and the screen-reader readout 7 (a float32's full
 * precision).
 */
export const DIGITS = Object.freeze({ cell: 3, cellNarrow: 2, legend: 3, formula: 4, exact: 7 });

/** The most characters formatValue(x, digits) can take (sign, digits, point, "e−", three exponent digits). */
export function valueWidth(digits = 3) {
  const p = Math.max(1, Math.min(21, Math.round(digits)));
  return p + (p > 1 ? 1 : 0) + 6;
}

/** formatValue's text back to a number (for tests and copy-paste): "−4.94e−4" → -0.000494. */
export function parseValue(text) {
  const t = text.replace(/\u2212/g, '-');
  if (t === '\u221e') return Infinity;
  if (t === '-\u221e') return -Infinity;
  return Number(t);
}

/** 12 → "₁₂" */
export function subscript(n) {
  return String(n).split('').map((c) => SUBSCRIPT[c.charCodeAt(0) - 48] ?? c).join('');
}

/**
 * Token text for a label, shown whole (issue #16: labels are never cut): control
 * characters made visible. The second argument is ignored (it was a length
 * limit); a view with little room wraps or shrinks the label instead.
 */
export function tokenLabel(text) {
  return tokenText(text);
}

/** “token” in curly quotes, whole. */
export function quoted(text) {
  return `\u201c${tokenText(text)}\u201d`;
}

/**
 * The start of a running text (a whole sentence quoted in a caption or a menu),
 * cut at a word boundary near max characters with "…". Only for sentences, never
 * for a token label.
 */
export function excerpt(text, max = 60) {
  const chars = Array.from(tokenText(text));
  if (chars.length <= max) return chars.join('');
  const head = chars.slice(0, max - 1).join('');
  const space = head.lastIndexOf(' ');
  return `${space > max / 2 ? head.slice(0, space) : head}\u2026`;
}

/**
 * A size in bytes in human decimal units by THE rule: whole bytes below 1 kB, then
 * formatValue of the kB, MB or GB (285 → "285 B", 1.5e5 → "150 kB", 42e6 → "42.0 MB",
 * 1.72e10 → "17.2 GB"); never scientific notation (issue #40, 11).
 */
export function formatBytes(bytes, digits = 3) {
  if (!Number.isFinite(bytes) || bytes < 0) return '\u2014';
  if (bytes < 999.5) return `${Math.round(bytes)} B`;
  // the next unit once the value rounds to 1000 (999.6 kB → "1.00 MB", never "1.00e3 kB")
  for (const [unit, size] of [['kB', 1e3], ['MB', 1e6]]) {
    if (Number((bytes / size).toPrecision(digits)) < 1000) return `${formatValue(bytes / size, digits)} ${unit}`;
  }
  const gb = bytes / 1e9;
  // past a million GB the digits stay whole rather than go scientific
  return `${gb < 10 ** digits ? formatValue(gb, digits) : Math.round(gb).toLocaleString('en-US')} GB`;
}

/** 0.2 → "0.2×" */
export function formatSpeed(speed) {
  return `${speed}\u00d7`;
}

/**
 * A fraction as a percentage by THE rule: formatValue(100·x, digits) and "%"
 * (0.973 → "97.3%", 1 → "100%", 0.05 → "5.00%"); not finite → "—".
 */
export function formatPercent(x, digits = 3) {
  if (typeof x !== 'number' || !Number.isFinite(x)) return '\u2014';
  return `${formatValue(100 * x, digits)}%`;
}

/**
 * An axis tick (a round number the axis chose): the shortest formatValue text
 * that reads back as exactly v, fixed notation when one of up to 6 digits is
 * exact ("0.5", "128", "2000"), else scientific ("1e−4", "2.5e7").
 */
export function formatTick(v) {
  let sci = null;
  for (let d = 1; d <= 6; d++) {
    const s = formatValue(v, d);
    if (parseValue(s) !== v) continue;
    if (!s.includes('e')) return s;
    sci ??= s;
  }
  return sci ?? formatValue(v, 3);
}

/** The spacing of about `count` axis ticks over `span`: 1, 2, 2.5 or 5 times a power of ten. */
export function niceStep(span, count) {
  const raw = span / Math.max(1, count);
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

/** Token text shown whole (never cut): control characters made visible. */
export function tokenText(text) {
  // eslint-disable-next-line no-control-regex
  return String(text).replace(/[\u0000-\u001f\u007f]/g, '\ufffd');
}

const SUPERSCRIPT = ['\u2070', '\u00b9', '\u00b2', '\u00b3', '\u2074', '\u2075', '\u2076', '\u2077', '\u2078', '\u2079'];

/** 12 → "¹²" */
export function superscript(n) {
  return String(n).split('').map((c) => SUPERSCRIPT[c.charCodeAt(0) - 48] ?? c).join('');
}

/** The notation's head mark, counted from 1 like the Head picker: head index 0 → "⁽¹⁾" (Q⁽¹⁾). */
export function headMark(index) {
  return `\u207d${superscript(index + 1)}\u207e`;
}
