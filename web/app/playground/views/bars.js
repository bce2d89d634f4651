// Softmax as bars: for the selected query, each key's scaled score and its
// weight as a bar; the weights are printed with their sum (exactly 1).
// Rows are built once per length and then only updated.

import { el, clear } from '../../kit/dom.js';
import { formatValue, tokenLabel, DIGITS as D } from '../../kit/format.js';

const DIGITS = D.cell; // significant digits of scores and weights (format.js: formatValue, DIGITS)

const MAX_ROWS = 512;

export function createRowBars(parent) {
  const shape = el('span', 'hm-shape');
  const caption = el('figcaption', 'hm-caption', {}, el('span', 'hm-title', { text: 'One row, before and after softmax' }), shape);
  const head = el('div', 'bars-row bars-header', { attrs: { 'aria-hidden': 'true' } },
    el('span', 'bars-key', { text: 'key' }), el('span', 'bars-score', { text: 'score S\u2032' }), el('span', 'bars-bar', { text: 'weight' }), el('span', 'bars-w'));
  const list = el('div', 'bars-list', { attrs: { role: 'list' } });
  const more = el('p', 'figure-note', { hidden: true });
  const sumS = el('span', 'num');
  const sumEl = el('output', 'num', { testid: 'softmax-sum' });
  const sums = el('div', 'bars-sums', {},
    el('span', null, {}, 'Sum of the scores: ', sumS, ' (anything)'),
    el('span', 'bars-sum-w', {}, 'Sum of the weights: ', sumEl));
  const figure = el('figure', 'bars', { testid: 'softmax-bars' }, caption, head, list, more, sums);
  parent.append(figure);
  let rows = [];
  let rowsFor = null;
  let key = null;

  function build(labels) {
    clear(list);
    rows = [];
    const n = Math.min(labels.length, MAX_ROWS);
    for (let j = 0; j < n; j++) {
      const name = el('span', 'bars-key', { text: tokenLabel(labels[j], 18), title: tokenLabel(labels[j], 200) });
      const score = el('span', 'bars-score num');
      const fill = el('span', 'bars-fill');
      const w = el('span', 'bars-w num');
      const rowEl = el('div', 'bars-row', { attrs: { role: 'listitem' }, testid: `bar-${j}` }, name, score, el('span', 'bars-bar', {}, fill), w);
      list.append(rowEl);
      rows.push({ rowEl, score, fill, w });
    }
    more.hidden = labels.length <= MAX_ROWS;
    more.textContent = `\u2026 and ${labels.length - MAX_ROWS} more keys (the sums include them).`;
    rowsFor = labels;
  }

  return {
    element: figure,
    /** {labels, scaled (T×T), weights (T×T), mask (T×T), q} */
    update({ labels, scaled, weights, mask, q }) {
      if (key && key.w === weights.data && key.q === q) return;
      key = { w: weights.data, q };
      if (rowsFor !== labels) build(labels);
      const T = weights.rows;
      shape.textContent = `query ${q}: ${tokenLabel(labels[q], 16)}`;
      let sumW = 0;
      let sumSc = 0;
      let allowedCount = 0;
      let widest = 0; // characters of the longest number: sets the number columns' width, so none is clipped
      for (let j = 0; j < T; j++) {
        const allowed = mask.data[q * T + j] !== 0;
        const w = weights.data[q * T + j];
        const s = scaled.data[q * T + j];
        sumW += w;
        if (allowed) {
          sumSc += s;
          allowedCount++;
        }
        const r = rows[j];
        if (!r) continue;
        r.rowEl.className = allowed ? 'bars-row' : 'bars-row is-masked';
        r.rowEl.dataset.value = String(w);
        const sText = allowed ? formatValue(s, DIGITS) : '\u2212\u221e';
        const wText = formatValue(w, DIGITS);
        widest = Math.max(widest, sText.length, wText.length);
        r.score.textContent = sText;
        r.score.title = allowed ? formatValue(s, D.exact) : 'masked';
        r.fill.style.width = `${(w * 100).toFixed(2)}%`;
        r.w.textContent = wText;
        r.w.title = formatValue(w, D.exact);
      }
      // a digit is 1ch (tabular figures); the minus sign is a little wider
      figure.style.setProperty('--bars-num-w', `${Math.max(4, widest) + 1.2}ch`);
      sumS.textContent = allowedCount ? formatValue(sumSc, DIGITS) : '\u2014';
      sumEl.textContent = formatValue(sumW, D.exact);
      sumEl.dataset.value = String(sumW);
    },
  };
}
