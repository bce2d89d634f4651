// Learn 7: the head's parameter gradients. Its columns of W_Q get
// dW_Q = X′ᵀ·dQ (and W_K, W_V alike); its rows of W_O get Oᵀ·dY. Beside them,
// every head's gradient norms in this layer.

import { at, col, clampIndex, headColumns } from '../../kit/common.js';
import { learnStep, learnMap, shownHead, fillTable, tableFigure, gradientTerms } from './learn-frame.js';
import { headGradNorms } from './math.js';
import { learnFigureTitle } from '../../kit/notation.js';

export const createLearnParamsStep = learnStep('dparams', {
  explain: (tr) => [
    `The weights get their gradients last. Q = X\u2032\u00b7W_Q, so the head\u2019s ${tr.config.dHead} columns of W_Q get dW_Q = X\u2032\u1d40\u00b7dQ: each token\u2019s input row times how its query should move, summed over the tokens. W_K and W_V the same with dK and dV; the head\u2019s rows of W_O get O\u1d40\u00b7dY.`,
    ...(tr.rope ? ['With RoPE, dQ and dK are first turned back (step 6\u2019s last line): W_Q gets X\u2032\u1d40\u00b7dq with dq the gradient before RoPE, W_K likewise.'] : []),
    'A step of gradient descent moves each weight a little against its gradient (the last step). The table says which heads this sentence would change most.',
  ],
  build(f, ctx, trace) {
    const r = f.row();
    let column = 0; // the column of the head's dW_Q the formula is about (the map's last click)
    let shown = 0; // the head on screen
    const hm = learnMap(r, ctx, 'learn-dwq', (c, d) => ({ name: `dW_Q[${c}, ${shown * trace().config.dHead + d}]`, provenance: '= \u03a3_i X\u2032[i, c]\u00b7dQ[i, d]: every token\u2019s input times how its query should move' }), {
      share: 0.5,
      select: (c, d) => {
        column = d;
        return { dim: c, key: d }; // the key too, so that a click on another column of the same row draws again
      },
    });
    const { table } = tableFigure(r, 'learn-headnorms', 'Every head\u2019s gradient norms in this layer');
    return (tr, v, L) => {
      if (!L) return;
      const { layer, head, D } = shownHead(L, tr, v);
      shown = v.head;
      const c = clampIndex(v.d, tr.config.dModel);
      const d = clampIndex(column, D);
      const dW = headColumns(layer.dWQuery, v.head, D);
      // with RoPE, W_Q gets dq before RoPE (step 6's last line), not the turned dQ
      const [dq, name] = head.dQueryBeforeRope ? [head.dQueryBeforeRope, 'dq'] : [head.dQuery, 'dQ'];
      f.formula.set([[`dW_Q[${c}, ${v.head * D + d}] = \u03a3_i X\u2032[i, ${c}]\u00b7${name}[i, ${d}] = `, ...gradientTerms(col(layer.normed, c), col(dq, d), { max: 4 }), ' = ', { result: at(dW, c, d) }]]);
      hm.update({ matrix: dW, title: learnFigureTitle('dparams', tr, v.head), kind: 'diverging', palette: v.palette, rowLabels: v.dimLabels, colLabels: null, selRow: c, selCol: d });
      fillTable(table, ['head', '\u2016dW_Q\u2016', '\u2016dW_K\u2016', '\u2016dW_V\u2016', '\u2016dW_O\u2016'],
        headGradNorms(layer, D).map((n, h) => [{ text: String(h + 1) }, { n: n.q }, { n: n.k }, { n: n.v }, { n: n.o }]), v.head);
    };
  },
});
