// Learn 4: back through the softmax, row by row: dS′ᵢ = Pᵢ ⊙ (dPᵢ − Σₖ Pᵢₖ dPᵢₖ).
// Beside the map, how much of dP each row lets through: a saturated row (one
// weight near 1) passes almost nothing.

import { tok, at, clampIndex } from '../../kit/common.js';
import { learnStep, learnMap, shownHead, fillTable, tableFigure } from './learn-frame.js';
import { rowPass, rowMean } from './math.js';
import { tokenLabel } from '../../kit/format.js';
import { learnFigureTitle } from '../../kit/notation.js';

export const createLearnSoftmaxStep = learnStep('dsoftmax', {
  explain: () => [
    'Softmax ties each row together: raising one score takes weight from all the others. Its backward, row by row, is dS\u2032\u1d62 = P\u1d62 \u2299 (dP\u1d62 \u2212 \u03a3\u2096 P\u1d62\u2096 dP\u1d62\u2096): each weight times how much its dP is above the row\u2019s average.',
    'When a row is saturated, one weight near 1 and the rest near 0, every term is about 0: the first factor is tiny for the small weights, the second for the big one. Such a row passes almost nothing back, whatever dP says.',
  ],
  build(f, ctx, trace) {
    const r = f.row();
    const hm = learnMap(r, ctx, 'learn-dscaled', (i, j) => ({ name: `dS\u2032[${i}, ${j}]  ${tok(trace(), i)} \u2192 ${tok(trace(), j)}`, provenance: `= P[${i}, ${j}]\u00b7(dP[${i}, ${j}] \u2212 \u03a3_k P[${i}, k]\u00b7dP[${i}, k])` }), { share: 0.55 });
    const { table } = tableFigure(r, 'learn-rowpass', 'What each row lets through');
    return (tr, v, L) => {
      if (!L) return;
      const { head } = shownHead(L, tr, v);
      const k = clampIndex(v.k, v.T);
      f.formula.set([
        [`dS\u2032[${v.q}, ${k}] = P[${v.q}, ${k}]\u00b7(dP[${v.q}, ${k}] \u2212 \u03a3_j P[${v.q}, j]\u00b7dP[${v.q}, j]) = `, { p: at(head.weights, v.q, k) }, '\u00b7(', { n: at(head.dWeights, v.q, k) }, ' \u2212 ', { f: rowMean(head, v.q) }, ') = ', { result: at(head.dScaled, v.q, k) }],
      ]);
      hm.update({ matrix: head.dScaled, title: learnFigureTitle('dsoftmax', tr, v.head), kind: 'diverging', palette: v.palette, rowLabels: v.labels, colLabels: v.labels, selRow: v.q, selCol: k, maskedZeros: tr.mask.data });
      // a row no gradient reaches (dP = 0: its token feeds no answer) has nothing to let through
      fillTable(table, ['query', 'largest weight', '\u2016dP\u1d62\u2016', '\u2016dS\u2032\u1d62\u2016 / \u2016dP\u1d62\u2016'],
        rowPass(head).map((x, i) => [{ text: tokenLabel(tr.tokens[i].text) }, { n: x.max, bar: x.max }, { n: x.dP }, x.dP > 0 ? { n: x.pass } : { text: '\u2013' }]), v.q);
    };
  },
});
