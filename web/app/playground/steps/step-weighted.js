// Step 9: the head's output row = weights · values.

import { createStepFrame, tok, at, row, col, clampIndex, createModelNote } from '../../kit/common.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { createLinesView } from '../views/lines.js';
import { productTerms } from '../../kit/formula.js';
import { headSup, figureTitle } from '../../kit/notation.js';

export function createWeightedStep(root, ctx) {
  const f = createStepFrame(root, 'weighted');
  const modelNote = createModelNote(f);
  let trace = null;
  let head = 0;
  const r = f.row();
  const lines = createLinesView(r, { onSelectQuery: (i) => ctx.select({ query: i }), getWidth: ctx.width });
  const hmV = createHeatmap(r, { id: 'weighted-v', share: 0.26, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: (i, j) => ctx.select({ key: i, dim: j }), describe: (i, j) => ({ name: `V${headSup(head + 1)}[${i}, ${j}]  ${tok(trace, i)}`, provenance: 'the value of this token (step 4)' }) });
  const hm = createHeatmap(r, {
    id: 'weighted',
    share: 0.26,
    tooltip: ctx.tooltip, getWidth: ctx.width,
    onCellClick: (i, j) => ctx.select({ query: i, dim: j }),
    describe: (i, j) => ({ name: `O${headSup(head + 1)}[${i}, ${j}]  ${tok(trace, i)}`, provenance: `= \u03a3_j A[${i}, j]\u00b7V[j, ${j}]: the values, weighted by how much ${tok(trace, i)} attends to each token` }),
  });

  return {
    update(tr, v) {
      modelNote.update(tr);
      trace = tr;
      head = v.head;
      const h = tr.heads[v.head];
      const d = clampIndex(v.d, v.D);
      f.explain(
        'The new vector of the query is a blend of all the value rows, each multiplied by its weight. Tokens with big weights contribute most: this is where context flows into each word.',
        'It is not a plain average: the weights differ from token to token and from head to head.',
      );
      f.formula.set([
        [`O${headSup(v.head + 1)}[${v.q}, ${d}] = \u03a3_j A[${v.q}, j]\u00b7V[j, ${d}] = `, ...productTerms(row(h.weights, v.q), col(h.value, d), { max: 6 }), ' = ', { result: at(h.output, v.q, d) }],
        { caption: `Column ${d} of the output of ${tok(tr, v.q)} in head ${v.head + 1}: the weights of its row times column ${d} of V.` },
      ]);
      lines.update({ labels: v.labels, weights: h.weights, mask: tr.mask, q: v.q, head: v.head, palette: v.palette });
      const common = { rowLabels: v.labels, colLabels: null, kind: 'diverging', palette: v.palette, selCol: d, showCol: true };
      hmV.update({ ...common, matrix: h.value, title: `Values V${headSup(v.head + 1)}`, selRow: null });
      hm.update({ ...common, matrix: h.output, title: figureTitle('weighted', tr, v.head), selRow: v.q, showCol: false });
    },
  };
}
