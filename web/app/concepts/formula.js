// The concept lab's formula box: the same markup and parts as views/formula.js
// (strings, {n}, {f}, {p}, {result}, {em}, {sym}, {muted}), with every number
// written by formatValue (`digits` significant digits, 3 unless told), so a
// formula, a metric and a bar never disagree.

import { el, clear } from '../views/dom.js';
import { formatValue, MINUS } from '../format.js';

/** Full detail for a title: 7 significant digits by the same rule. */
export const exact = (x) => formatValue(x, 7);

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
  const d = part.digits ?? 3;
  if (part.result !== undefined) {
    const out = el('output', 'num result', { text: formatValue(part.result, d), title: exact(part.result), testid: part.testid ?? 'formula-result' });
    out.dataset.value = String(part.result);
    return out;
  }
  if (part.n !== undefined) return el('span', 'num', { text: formatValue(part.n, d), title: exact(part.n) });
  if (part.f !== undefined) {
    const s = formatValue(part.f, d);
    return el('span', 'num', { text: s.startsWith(MINUS) ? `(${s})` : s, title: exact(part.f) });
  }
  if (part.p !== undefined) return el('span', 'num', { text: `(${formatValue(part.p, d)})`, title: exact(part.p) });
  if (part.em !== undefined) return el('strong', 'formula-em', { text: part.em });
  if (part.sym !== undefined) return el('span', 'formula-sym', { text: part.sym });
  if (part.muted !== undefined) return el('span', 'formula-muted', { text: part.muted });
  return document.createTextNode('');
}

/**
 * a·b summed: [(a0)(b0), " + ", …] with at most `max` terms shown (the first
 * max−1 and the last), the hidden ones counted.
 */
export function productTerms(as, bs, { max = 6, digits = 3 } = {}) {
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
