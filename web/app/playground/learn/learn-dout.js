// Learn 2: back to the attention output. The gradient flows from the logits back
// through the unembedding, the final LayerNorm, the later layers, the MLP and
// the residual stream, and through W_O into the head: dO, one row per token.

import { tok, at, row, clampIndex, operator } from '../../kit/common.js';
import { learnStep, learnMap, shownHead, gradientTerms } from './learn-frame.js';
import { rowNorm } from './math.js';
import { learnFigureTitle } from '../../kit/notation.js';

export const createLearnOutStep = learnStep('dout', {
  explain: (tr) => {
    const m = tr.model;
    return [
      `Going backward, the gradient passes the steps in reverse: the unembedding, the final LayerNorm${m.layer < m.layers - 1 ? ', the later layers' : ''}${m.mlp ? ', the MLP' : ''} and the residual stream, then W_O. What arrives at this head is dO: one row per token, one number per dimension of its output O.`,
      'A row of zeros means that token\u2019s output does not reach any answer.',
    ];
  },
  build(f, ctx, trace) {
    const r = f.row();
    const hmS = learnMap(r, ctx, 'learn-dstream', (i, j) => ({ name: `d out[${i}, ${j}]  ${tok(trace(), i)}`, provenance: '\u2202L/\u2202(this layer\u2019s output stream)' }), { share: 0.5, compact: true, select: (i) => ({ query: i }) });
    operator(r, '\u2192');
    const hm = learnMap(r, ctx, 'learn-dout', (i, j) => ({ name: `dO[${i}, ${j}]  ${tok(trace(), i)}`, provenance: '\u2202L/\u2202O: how the loss changes when this number of the head\u2019s output grows' }), { share: 0.45, select: (i, j) => ({ query: i, dim: j }) });
    return (tr, v, L) => {
      if (!L) return;
      const { layer, head, D } = shownHead(L, tr, v);
      const d = clampIndex(v.d, D);
      f.formula.set([
        [`dO[${v.q}, ${d}] = \u03a3_c dY[${v.q}, c]\u00b7W_O[${v.head * D + d}, c] = `, ...gradientTerms(row(layer.dAttention, v.q), row(layer.wOutput, v.head * D + d), { max: 4 }), ' = ', { result: at(head.dOutput, v.q, d) }],
        [`\u2016dO[${v.q}]\u2016 = `, { n: rowNorm(head.dOutput, v.q) }, `, and \u2016d out[${v.q}]\u2016 = `, { n: rowNorm(layer.dStreamOut, v.q) }, ` at the output of layer ${tr.model.layer + 1}`],
        { caption: 'dY is the gradient at the attention\u2019s output Y: the residual stream carries it back from the layer\u2019s output (r = x + Y), plus what comes back through the MLP.' },
      ]);
      const common = { kind: 'diverging', palette: v.palette, rowLabels: v.labels, colLabels: null, selRow: v.q };
      hmS.update({ ...common, matrix: layer.dStreamOut, title: `d out, layer ${tr.model.layer + 1}`, selCol: null });
      hm.update({ ...common, matrix: head.dOutput, title: learnFigureTitle('dout', tr, v.head), selCol: d });
    };
  },
});
