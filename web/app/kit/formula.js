// The formula box: the current step's formula with the real numbers
// substituted, e.g. "S[7,1] = q₇·k₁ = (0.1200)(−0.4000) + … = 0.2130".
// A line is a list of parts: strings, {n} numbers, {f} factors (parenthesised
// when negative), {result} the value of the selected cell, {em} emphasis.

import { el, clear } from './dom.js';
import { formatValue, DIGITS } from './format.js';

/**
 * Significant digits of a number in a formula (formatValue): 4, one more than a
 * heatmap cell, so a term can be matched with its cell; the hover title holds
 * the full DIGITS.exact.
 */
export const FORMULA_DIGITS = DIGITS.formula;

/** A formula number by the rule, with its detail in the title. */
function num(cls, x, digits, wrap = (t) => t) {
  return el('span', cls, { text: wrap(formatValue(x, digits)), title: formatValue(x, DIGITS.exact) });
}

/** `digits`: the significant digits of its numbers where a part does not say (FORMULA_DIGITS unless told). */
export function createFormula(parent, { testid = 'formula', digits = FORMULA_DIGITS } = {}) {
  const box = el('div', 'formula', { testid });
  parent.append(box);
  return {
    element: box,
    /** lines: array of lines; a line is an array of parts, or {caption} */
    set(lines) {
      clear(box);
      for (const line of lines) {
        if (line && line.caption != null) {
          box.append(el('p', 'formula-caption', { text: line.caption }));
          continue;
        }
        const row = el('p', 'formula-line');
        for (const part of line) row.append(renderPart(part, digits));
        box.append(row);
      }
    },
  };
}

function renderPart(part, defaultDigits) {
  if (typeof part === 'string') return document.createTextNode(part);
  if (part.result !== undefined) {
    const out = el('output', 'num result', { text: formatValue(part.result, part.digits ?? defaultDigits), title: formatValue(part.result, DIGITS.exact), testid: part.testid ?? 'formula-result' });
    out.dataset.value = String(part.result);
    return out;
  }
  const digits = part.digits ?? defaultDigits;
  if (part.n !== undefined) return num('num', part.n, digits);
  // a factor: parenthesised when negative, "(−0.4000)"
  if (part.f !== undefined) return num('num', part.f, digits, (t) => (t.startsWith('\u2212') ? `(${t})` : t));
  if (part.p !== undefined) return num('num', part.p, digits, (t) => `(${t})`);
  if (part.em !== undefined) return el('strong', 'formula-em', { text: part.em });
  if (part.sym !== undefined) return el('span', 'formula-sym', { text: part.sym });
  if (part.muted !== undefined) return el('span', 'formula-muted', { text: part.muted });
  return document.createTextNode('');
}

/**
 * a·b summed: [(a0)(b0), " + ", …] with at most `max` terms shown (the first
 * max−1 and the last), the hidden ones counted.
 */
export function productTerms(as, bs, { max = 6, digits = FORMULA_DIGITS } = {}) {
  const n = as.length;
  const parts = [];
  const shown = n <= max ? [...Array(n).keys()] : [...Array(max - 1).keys(), n - 1];
  shown.forEach((i, k) => {
    if (k > 0) parts.push(' + ');
    if (n > max && k === max - 1) parts.push({ muted: `\u2026 (${n - max} more) \u2026` }, ' + ');
    parts.push({ p: as[i], digits }, { p: bs[i], digits });
  });
  return parts;
}
