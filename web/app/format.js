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

/** Short form for matrix cells: 3 significant-ish characters ("−0.40", "12.3"). */
export function formatCell(x) {
  const s = special(x);
  if (s) return s;
  const a = Math.abs(x);
  let out;
  if (a >= 1e4) out = x.toExponential(0);
  else if (a >= 100) out = x.toFixed(0);
  else if (a >= 10) out = x.toFixed(1);
  else out = x.toFixed(2);
  if (/^-0(\.0+)?$/.test(out)) out = out.slice(1);
  return typographic(out);
}

/** Formula form: three decimals, exponent for tiny or huge values ("0.213", "4.1e−6"). */
export function formatNumber(x, decimals = 3) {
  const s = special(x);
  if (s) return s;
  const a = Math.abs(x);
  let out;
  if (a !== 0 && (a < 0.5 * 10 ** -decimals || a >= 1e6)) out = x.toExponential(2);
  else out = x.toFixed(decimals);
  if (/^-0(\.0+)?$/.test(out)) out = out.slice(1);
  return typographic(out);
}

/** A number in a product, parenthesised when negative: "(−0.400)". */
export function formatFactor(x, decimals = 3) {
  const s = formatNumber(x, decimals);
  return x < 0 || s.startsWith(MINUS) ? `(${s})` : s;
}

/** Full single-precision detail: 7 significant digits ("0.2130000"). */
export function formatExact(x) {
  const s = special(x);
  if (s) return s;
  return typographic(x.toPrecision(7));
}

/** 12 → "₁₂" */
export function subscript(n) {
  return String(n).split('').map((c) => SUBSCRIPT[c.charCodeAt(0) - 48] ?? c).join('');
}

/** Token text for a label: control characters made visible, long text cut with an ellipsis. */
export function tokenLabel(text, max = 16) {
  // eslint-disable-next-line no-control-regex
  const clean = String(text).replace(/[\u0000-\u001f\u007f]/g, '\ufffd');
  const chars = Array.from(clean);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}\u2026` : clean;
}

/** “text” in curly quotes, cut to max characters. */
export function quoted(text, max = 16) {
  return `\u201c${tokenLabel(text, max)}\u201d`;
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
