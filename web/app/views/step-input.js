// Step 3: X' = X + P, element by element.

import { createStepFrame, tok, at, clampIndex, operator } from './common.js';
import { createHeatmap } from './heatmap.js';

export function createInputStep(root, ctx) {
  const f = createStepFrame(root, 'input');
  let trace = null;
  const select = (i, j) => ctx.select({ query: i, dim: j });
  const top = f.row('figure-row-compact');
  const hmX = createHeatmap(top, { id: 'input-x', compact: true, share: 0.45, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: select, describe: (i, j) => ({ name: `X[${i}, ${j}]  ${tok(trace, i)}`, provenance: 'the token\u2019s embedding' }) });
  operator(top, '+');
  const hmP = createHeatmap(top, { id: 'input-p', compact: true, share: 0.45, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: select, describe: (i, j) => ({ name: `P[${i}, ${j}]  (position ${i})`, provenance: 'the position\u2019s encoding' }) });
  const hm = createHeatmap(f.row(), {
    id: 'input',
    tooltip: ctx.tooltip, getWidth: ctx.width,
    onCellClick: select,
    describe: (i, j) => ({ name: `X\u2032[${i}, ${j}]  ${tok(trace, i)}`, provenance: `= X[${i}, ${j}] + P[${i}, ${j}]` }),
  });

  return {
    update(tr, v) {
      trace = tr;
      const d = clampIndex(v.d, v.C);
      f.explain(
        'The token\u2019s vector and its position\u2019s vector are simply added, number by number. The result X\u2032 carries both what the word is and where it is.',
        'Every later step starts from these rows.',
      );
      f.formula.set([
        [`X\u2032[${v.q}, ${d}] = X[${v.q}, ${d}] + P[${v.q}, ${d}] = `, { n: at(tr.embeddings, v.q, d) }, ' + ', { f: at(tr.positional, v.q, d) }, ' = ', { result: at(tr.input, v.q, d) }],
      ]);
      const common = { rowLabels: v.labels, colLabels: null, kind: 'diverging', palette: v.palette, selRow: v.q, selCol: d, showCol: false };
      hmX.update({ ...common, matrix: tr.embeddings, title: 'X' });
      hmP.update({ ...common, matrix: tr.positional, title: 'P', range: tr.config.positional === 'none' ? 1 : null });
      hm.update({ ...common, matrix: tr.input, title: 'Input X\u2032' });
    },
  };
}
