// Learn 3: dP = dO·Vᵀ. Which attention weights would the loss like larger
// (negative) or smaller (positive)?

import { tok, at, row, clampIndex } from '../../kit/common.js';
import { productTerms } from '../../kit/formula.js';
import { learnStep, learnMap, shownHead } from './learn-frame.js';
import { learnFigureTitle } from '../../kit/notation.js';

export const createLearnWeightsStep = learnStep('dweights', {
  explain: () => [
    'The head\u2019s output is a weighted sum of the values, O = P\u00b7V. So the gradient of each weight P[i, j] is how well value v_j lines up with the direction dO[i] the loss wants: dP = dO\u00b7V\u1d40.',
    'Negative (blue): the loss would like this weight larger, so that more of v_j comes in. Positive: smaller.',
  ],
  build(f, ctx, trace) {
    const hm = learnMap(f.row(), ctx, 'learn-dweights', (i, j) => ({ name: `dP[${i}, ${j}]  ${tok(trace(), i)} \u2192 ${tok(trace(), j)}`, provenance: `= dO[${i}]\u00b7v_${j}: negative, the loss wants this weight larger` }));
    return (tr, v, L) => {
      if (!L) return;
      const { head } = shownHead(L, tr, v);
      const k = clampIndex(v.k, v.T);
      f.formula.set([[`dP[${v.q}, ${k}] = dO[${v.q}]\u00b7v_${k} = `, ...productTerms(row(head.dOutput, v.q), row(head.value, k), { max: 5 }), ' = ', { result: at(head.dWeights, v.q, k) }]]);
      hm.update({ matrix: head.dWeights, title: learnFigureTitle('dweights', tr, v.head), kind: 'diverging', palette: v.palette, rowLabels: v.labels, colLabels: v.labels, selRow: v.q, selCol: k });
    };
  },
});
