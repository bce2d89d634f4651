// Step 5: S = Q·Kᵀ. For the selected query the row fills cell by cell while
// playing; the products panel shows the per-dimension products adding up.

import { createStepFrame, tok, at, row, clampIndex } from '../../kit/common.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { productTerms } from '../../kit/formula.js';
import { el, clear } from '../../kit/dom.js';
import { formatValue, DIGITS, subscript, quoted } from '../../kit/format.js';
import { lutIndex, lutCss } from '../../kit/palette.js';
import { headSup, figureTitle } from '../../kit/notation.js';

const MAX_PRODUCTS = 16;

function createProducts(parent) {
  const title = el('span', 'hm-title');
  const shape = el('span', 'hm-shape');
  const list = el('div', 'products-list', { attrs: { role: 'list' } });
  const total = el('div', 'products-total');
  const figure = el('figure', 'products', { testid: 'products' }, el('figcaption', 'hm-caption', {}, title, shape), list, total);
  parent.append(figure);
  return {
    update({ q, k, qs, ks, shown, score, palette, labels, complete }) {
      title.textContent = `q${subscript(q)} \u00b7 k${subscript(k)}, dimension by dimension`;
      shape.textContent = `${quoted(labels[q], 12)} \u2192 ${quoted(labels[k], 12)}`;
      clear(list);
      const D = qs.length;
      let maxAbs = 0;
      for (let d = 0; d < D; d++) maxAbs = Math.max(maxAbs, Math.abs(qs[d] * ks[d]));
      let sum = 0;
      for (let d = 0; d < D; d++) {
        const p = qs[d] * ks[d];
        if (d < shown) sum += p;
        if (d >= MAX_PRODUCTS) continue;
        const visible = d < shown;
        const bar = el('span', 'products-bar');
        const fill = el('span', 'products-fill');
        if (visible) {
          const w = maxAbs ? (Math.abs(p) / maxAbs) * 50 : 0;
          fill.style.width = `${w.toFixed(1)}%`;
          fill.style.left = p < 0 ? `${(50 - w).toFixed(1)}%` : '50%';
          fill.style.background = lutCss(palette.diverging, lutIndex(p < 0 ? -1 : 1, 'diverging', 1.25));
        }
        bar.append(fill);
        list.append(el('div', visible ? 'products-row' : 'products-row is-pending', { attrs: { role: 'listitem' } },
          el('span', 'products-d', { text: `d=${d}` }),
          el('span', 'num', { text: formatValue(qs[d], DIGITS.formula) }),
          el('span', 'products-op', { text: '\u00d7' }),
          el('span', 'num', { text: formatValue(ks[d], DIGITS.formula) }),
          el('span', 'products-op', { text: '=' }),
          el('span', 'num products-p', { text: visible ? formatValue(p, DIGITS.formula) : '\u2026', title: visible ? formatValue(p, DIGITS.exact) : '' }),
          bar));
      }
      if (D > MAX_PRODUCTS) list.append(el('p', 'figure-note', { text: `\u2026 and ${D - MAX_PRODUCTS} more dimensions.` }));
      total.replaceChildren(
        el('span', null, { text: complete ? 'Sum = score ' : `Running sum after ${shown} of ${D}: ` }),
        el('output', 'num result', { text: formatValue(complete ? score : sum, DIGITS.formula), title: formatValue(complete ? score : sum, DIGITS.exact) }),
      );
    },
  };
}

export function createScoresStep(root, ctx) {
  const f = createStepFrame(root, 'scores');
  let trace = null;
  const top = f.row();
  const hm = createHeatmap(top, {
    id: 'scores',
    share: 0.6,
    tooltip: ctx.tooltip, getWidth: ctx.width,
    onCellClick: (i, j) => ctx.select({ query: i, key: j }),
    describe: (i, j) => ({ name: `S[${i}, ${j}]  ${tok(trace, i)} \u2192 ${tok(trace, j)}`, provenance: `= q${subscript(i)}\u00b7k${subscript(j)} = \u03a3_d Q[${i}, d]\u00b7K[${j}, d]` }),
  });
  const products = createProducts(top);
  const bottom = f.row('figure-row-compact');
  const hmQ = createHeatmap(bottom, { id: 'scores-q', compact: true, share: 0.45, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: (i) => ctx.select({ query: i }), describe: (i, j) => ({ name: `Q[${i}, ${j}]  ${tok(trace, i)}`, provenance: 'the query of this token (step 4)' }) });
  const hmK = createHeatmap(bottom, { id: 'scores-k', compact: true, share: 0.45, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: (i) => ctx.select({ key: i }), describe: (i, j) => ({ name: `K[${i}, ${j}]  ${tok(trace, i)}`, provenance: 'the key of this token (step 4)' }) });

  return {
    update(tr, v) {
      trace = tr;
      const h = tr.heads[v.head];
      const T = v.T;
      const animating = v.playing && v.progress < 1;
      let k = clampIndex(v.k, T);
      let shown = v.D;
      let reveal = null;
      if (animating) {
        const pos = v.progress * T;
        k = Math.min(T - 1, Math.floor(pos));
        shown = Math.min(v.D, Math.floor((pos - k) * (v.D + 1)));
        reveal = { row: v.q, count: k + (shown >= v.D ? 1 : 0) };
      }
      const qs = row(h.query, v.q);
      const ks = row(h.key, k);
      const score = at(h.scores, v.q, k);
      f.explain(
        'Each query is compared with every key by a dot product: multiply the two vectors dimension by dimension and add up. A large score means \u201cthis key matches what I am looking for\u201d.',
        'Raw scores can be negative and their row does not add up to anything in particular: they are not yet attention weights.',
      );
      f.formula.set([
        [`S[${v.q}, ${k}] = q${subscript(v.q)}\u00b7k${subscript(k)} = `, ...productTerms(qs, ks, { max: 6 }), ' = ', { result: score }],
        { caption: `Query ${tok(tr, v.q)} against key ${tok(tr, k)}, head ${v.head + 1}.${animating ? ' Filling the row key by key\u2026' : ' Click any cell to pick another key.'}` },
      ]);
      hm.update({ matrix: h.scores, title: figureTitle('scores', tr, v.head), rowLabels: v.labels, colLabels: v.labels, kind: 'diverging', palette: v.palette, selRow: v.q, selCol: k, reveal });
      products.update({ q: v.q, k, qs, ks, shown, score, palette: v.palette, labels: v.labels, complete: shown >= v.D });
      const common = { rowLabels: v.labels, colLabels: null, kind: 'diverging', palette: v.palette };
      hmQ.update({ ...common, matrix: h.query, title: `Q${headSup(v.head + 1)}`, selRow: v.q, selCol: null });
      hmK.update({ ...common, matrix: h.key, title: `K${headSup(v.head + 1)}`, selRow: k, selCol: null });
    },
  };
}
