// Learn 5: the scale on the backward, dS = dS′/√d_k, and the same backward
// without 1/√d_k on the same weights, side by side: the rows saturate, the
// softmax passes less, dS and dW_Q shrink.

import { tok, at, clampIndex } from '../../kit/common.js';
import { learnStep, learnMap, shownHead, fillTable, tableFigure } from './learn-frame.js';
import { norm, rowPass, headShareNorm } from './math.js';
import { learnFigureTitle } from '../../kit/notation.js';

/** The measures of one head in one backward: loss, saturation, what the softmax passes, ‖dS‖, ‖dW_Q‖, ‖dW_K‖ of the head. */
function measures(bw, l, h, D) {
  const layer = bw.layers[l];
  const head = layer.heads[h];
  // over the rows the gradient reaches (dP ≠ 0): the others feed no answer
  const rows = rowPass(head).filter((x) => x.dP > 0);
  const mean = (key) => rows.reduce((s, x) => s + x[key], 0) / Math.max(1, rows.length);
  return [bw.loss, mean('max'), mean('pass'), norm(head.dScores.data), headShareNorm(layer.dWQuery, h, D), headShareNorm(layer.dWKey, h, D)];
}
const NAMES = ['loss L', 'largest weight of a row (mean)', '\u2016dS\u2032\u1d62\u2016 / \u2016dP\u1d62\u2016 (mean)', '\u2016dS\u2016 of this head', '\u2016dW_Q\u2016 of this head', '\u2016dW_K\u2016 of this head'];

export const createLearnScaleStep = learnStep('dscale', {
  explain: (tr) => [
    `The forward divided the scores by \u221ad_k = \u221a${tr.config.dHead}, so the backward multiplies by the same: dS = dS\u2032/\u221ad_k. Without it the scores are \u221a${tr.config.dHead} times larger, the softmax rows saturate, and (step 4) a saturated row passes almost nothing back: the gradient that should teach W_Q and W_K collapses. That is what \u201ceffectively halting learning\u201d means.`,
    'A small gradient is not always a problem: when the model is already right (a weight near 1 on the right key, p(answer) near 1) there is little to learn. It is one when a row is saturated on the wrong key: the loss is high, and still almost nothing comes back. Pick another answer above to see that case. The means in the table are over the rows the gradient reaches.',
  ],
  build(f, ctx, trace) {
    const r = f.row();
    const hm = learnMap(r, ctx, 'learn-dscores', (i, j) => ({ name: `dS[${i}, ${j}]  ${tok(trace(), i)} \u2192 ${tok(trace(), j)}`, provenance: '\u2202L/\u2202(Q\u00b7K\u1d40)[i, j]' }), { share: 0.55 });
    const { table } = tableFigure(r, 'learn-compare', 'The same weights, with and without 1/\u221ad_k');
    return (tr, v, L) => {
      if (!L) return;
      const D = tr.config.dHead;
      const { head } = shownHead(L, tr, v);
      const k = clampIndex(v.k, v.T);
      const s = L.bw.scale;
      f.formula.set([
        s ? [`dS[${v.q}, ${k}] = dS\u2032[${v.q}, ${k}] / \u221ad_k = `, { n: at(head.dScaled, v.q, k) }, ` / \u221a${D} = `, { result: at(head.dScores, v.q, k) }]
          : [`dS[${v.q}, ${k}] = dS\u2032[${v.q}, ${k}] (no 1/\u221ad_k) = `, { result: at(head.dScores, v.q, k) }],
      ]);
      hm.update({ matrix: head.dScores, title: learnFigureTitle('dscale', tr, v.head, { scale: s }), kind: 'diverging', palette: v.palette, rowLabels: v.labels, colLabels: v.labels, selRow: v.q, selCol: k, maskedZeros: tr.mask.data });
      const on = measures(L.on, tr.model.layer, v.head, D);
      const off = measures(L.off, tr.model.layer, v.head, D);
      fillTable(table, ['', 'with 1/\u221ad_k', 'without'], NAMES.map((name, i) => [{ text: name }, { n: on[i] }, { n: off[i] }]));
    };
  },
});
