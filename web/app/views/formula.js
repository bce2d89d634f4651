// The formula box: the current step's formula with the real numbers
// substituted, e.g. "S[7,1] = q₇·k₁ = (0.120)(−0.400) + … = 0.213".
// A line is a list of parts: strings, {n} numbers, {f} factors (parenthesised
// when negative), {result} the value of the selected cell, {em} emphasis.

import { el, clear } from './dom.js';
import { formatNumber, formatFactor, formatExact } from '../format.js';

export function createFormula(parent, { testid = 'formula' } = {}) {
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
        for (const part of line) row.append(renderPart(part));
        box.append(row);
      }
    },
  };
}

function renderPart(part) {
  if (typeof part === 'string') return document.createTextNode(part);
  if (part.result !== undefined) {
    const out = el('output', 'num result', { text: formatNumber(part.result, part.decimals ?? 3), title: formatExact(part.result), testid: part.testid ?? 'formula-result' });
    out.dataset.value = String(part.result);
    return out;
  }
  if (part.n !== undefined) return el('span', 'num', { text: formatNumber(part.n, part.decimals ?? 3), title: formatExact(part.n) });
  if (part.f !== undefined) return el('span', 'num', { text: formatFactor(part.f, part.decimals ?? 3), title: formatExact(part.f) });
  if (part.p !== undefined) return el('span', 'num', { text: `(${formatNumber(part.p, part.decimals ?? 3)})`, title: formatExact(part.p) });
  if (part.em !== undefined) return el('strong', 'formula-em', { text: part.em });
  if (part.sym !== undefined) return el('span', 'formula-sym', { text: part.sym });
  if (part.muted !== undefined) return el('span', 'formula-muted', { text: part.muted });
  return document.createTextNode('');
}

/**
 * a·b summed: [(a0)(b0), " + ", …] with at most `max` terms shown (the first
 * max−1 and the last), the hidden ones counted.
 */
export function productTerms(as, bs, { max = 6, decimals = 3 } = {}) {
  const n = as.length;
  const parts = [];
  const shown = n <= max ? [...Array(n).keys()] : [...Array(max - 1).keys(), n - 1];
  shown.forEach((i, k) => {
    if (k > 0) parts.push(' + ');
    if (n > max && k === max - 1) parts.push({ muted: `\u2026 (${n - max} more) \u2026` }, ' + ');
    parts.push({ p: as[i], decimals }, { p: bs[i], decimals });
  });
  return parts;
}
