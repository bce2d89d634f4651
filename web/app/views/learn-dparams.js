// Learn 7: the head's parameter gradients. Its columns of W_Q get
// dW_Q = X′ᵀ·dQ (and W_K, W_V alike); its rows of W_O get Oᵀ·dY. Beside them,
// every head's gradient norms in this layer.

import { el } from './dom.js';
import { at, col, clampIndex, headColumns } from './common.js';
import { productTerms } from './formula.js';
import { createLearnFrame, learnMap, shownHead, fillTable } from './learn-frame.js';
import { headGradNorms } from '../learn-math.js';

export function createLearnParamsStep(root, ctx) {
  const f = createLearnFrame(root, 'dparams', ctx);
  const r = f.row();
  let D = 1;
  let column = 0;
  let last = null;
  const hm = learnMap(r, ctx, 'learn-dwq', (c, d) => ({ name: `dW_Q[${c}, ${last ? last.head * D + d : d}]`, provenance: '= \u03a3_i X\u2032[i, c]\u00b7dQ[i, d]: every token\u2019s input times how its query should move' }), {
    share: 0.5,
    select: (c, d) => {
      column = d;
      return { dim: c, key: d }; // the key too, so that a click on another column of the same row draws again
    },
  });
  const table = el('table', 'learn-table', { testid: 'learn-headnorms' });
  r.append(el('figure', 'learn-figure', {}, el('figcaption', 'hm-caption', {}, el('span', 'hm-title', { text: 'Every head\u2019s gradient norms in this layer' })), table));

  return {
    update(tr, v) {
      const L = f.update(tr, v);
      D = tr.config.dHead;
      f.explain(
        `The weights get their gradients last. Q = X\u2032\u00b7W_Q, so the head\u2019s ${D} columns of W_Q get dW_Q = X\u2032\u1d40\u00b7dQ: each token\u2019s input row times how its query should move, summed over the tokens. W_K and W_V the same with dK and dV; the head\u2019s rows of W_O get O\u1d40\u00b7dY.`,
        'A step of gradient descent moves each weight a little against its gradient (the last step). The table says which heads this sentence would change most.',
      );
      if (!L) return;
      const { layer, head } = shownHead(L, tr, v);
      last = { head: v.head };
      const c = clampIndex(v.d, tr.config.dModel);
      const d = clampIndex(column, D);
      const dW = headColumns(layer.dWQuery, v.head, D);
      f.formula.set([[`dW_Q[${c}, ${v.head * D + d}] = \u03a3_i X\u2032[i, ${c}]\u00b7dQ[i, ${d}] = `, ...productTerms(col(layer.normed, c), col(head.dQuery, d), { max: 4 }), ' = ', { result: at(dW, c, d) }]]);
      hm.update({ matrix: dW, title: `dW_Q, head ${v.head + 1}\u2019s columns`, kind: 'diverging', palette: v.palette, rowLabels: v.dimLabels, colLabels: null, selRow: c, selCol: d });
      fillTable(table, ['head', '\u2016dW_Q\u2016', '\u2016dW_K\u2016', '\u2016dW_V\u2016', '\u2016dW_O\u2016'],
        headGradNorms(layer, D).map((n, h) => [{ text: String(h + 1) }, { n: n.q }, { n: n.k }, { n: n.v }, { n: n.o }]), v.head);
    },
  };
}
