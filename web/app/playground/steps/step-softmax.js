// Step 8: softmax per row. Shows the weights, the selected row as bars that
// sum to one, and the lines view.

import { createStepFrame, tok, at, clampIndex, createModelNote, createFitNote } from '../../kit/common.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { createRowBars } from '../views/bars.js';
import { createLinesView } from '../views/lines.js';
import { figureTitle } from '../../kit/notation.js';
import { softmaxInput, alibiSlope } from '../alibi.js';

export function createSoftmaxStep(root, ctx) {
  const f = createStepFrame(root, 'softmax');
  const modelNote = createModelNote(f);
  const fitNote = createFitNote(f, { onPickModel: (model) => ctx.select({ model }) });
  let trace = null;
  const r = f.row();
  const hm = createHeatmap(r, {
    id: 'softmax',
    share: 0.55,
    tooltip: ctx.tooltip, getWidth: ctx.width,
    onCellClick: (i, j) => ctx.select({ query: i, key: j }),
    describe: (i, j) => ({ name: `A[${i}, ${j}]  ${tok(trace, i)} \u2192 ${tok(trace, j)}`, provenance: at(trace.mask, i, j) ? `= exp(S\u2032[${i}, ${j}]) / \u03a3_j exp(S\u2032[${i}, j]): how much ${tok(trace, i)} attends to ${tok(trace, j)}` : 'masked: exp(\u2212\u221e) = 0' }),
  });
  const r2 = f.row();
  const bars = createRowBars(r2);
  const lines = createLinesView(r2, { onSelectQuery: (i) => ctx.select({ query: i }), getWidth: ctx.width });

  return {
    /** The colour scale of the step's weight map, as the reader set it (the export draws the same). */
    figureScale: () => hm.scaleChoice,
    update(tr, v) {
      modelNote.update(tr);
      fitNote.update(tr);
      trace = tr;
      const h = tr.heads[v.head];
      const T = v.T;
      const k = clampIndex(v.k, T);
      f.explain(
        'Softmax turns each row of scores into weights: take e to the power of each score, then divide by the row\u2019s total. Every weight is between 0 and 1, and each row adds up to exactly 1.',
        'Bigger scores get most of the weight; \u2212\u221e gets exactly 0.',
      );
      // the row's maximum over allowed keys and the denominator, as the engine computed them
      // (its trace's rowMax, rowSum: the denominator is 0 only when every key is blocked)
      const max = h.rowMax[v.q];
      const denom = h.rowSum[v.q];
      const w = at(h.weights, v.q, k);
      const input = softmaxInput(tr, v.head);
      if (denom === 0) {
        f.formula.set([[`A[${v.q}, ${k}] = `, { result: w }], { caption: `Every key is blocked for query ${v.q}, so its whole row of weights is 0.` }]);
      } else if (!at(tr.mask, v.q, k)) {
        f.formula.set([[`A[${v.q}, ${k}] = exp(\u2212\u221e) / \u2026 = `, { result: w }], { caption: 'This key is masked, so its weight is exactly 0.' }]);
      } else {
        // with ALiBi the softmax reads S′ − m_h·|i − j| (the mask step's matrix)
        const s = at(input, v.q, k);
        const alibi = alibiSlope(tr, v.head) !== null;
        const S = alibi ? 'masked S\u2032' : 'S\u2032';
        f.formula.set([
          [`A[${v.q}, ${k}] = exp(${S}[${v.q}, ${k}] \u2212 m) / \u03a3_j exp(${S}[${v.q}, j] \u2212 m) = exp(`, { n: s }, ' \u2212 ', { f: max }, ') / ', { n: denom }, ' = ', { n: Math.exp(s - max) }, ' / ', { n: denom }, ' = ', { result: w }],
          { caption: `m = ${'\u2009'}the row\u2019s largest allowed score, subtracted only so that exp never overflows; it cancels out.${alibi ? ' The scores already carry the ALiBi bias of the mask step.' : ''}` },
        ]);
      }
      hm.update({ matrix: h.weights, title: figureTitle('softmax', tr, v.head), rowLabels: v.labels, colLabels: v.labels, kind: 'sequential', range: 1, maskedZeros: tr.mask.data, palette: v.palette, selRow: v.q, selCol: k });
      bars.update({ labels: v.labels, scaled: input, weights: h.weights, mask: tr.mask, q: v.q });
      lines.update({ labels: v.labels, weights: h.weights, mask: tr.mask, q: v.q, head: v.head, palette: v.palette });
    },
  };
}
