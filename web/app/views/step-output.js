// Step 12: Y = concat · W_O, the layer's output.

import { createStepFrame, tok, at, row, col, clampIndex, operator } from './common.js';
import { createHeatmap } from './heatmap.js';
import { productTerms } from './formula.js';

export function createOutputStep(root, ctx) {
  const f = createStepFrame(root, 'output');
  let trace = null;
  const top = f.row('figure-row-compact');
  const hmC = createHeatmap(top, { id: 'output-concat', compact: true, share: 0.45, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: (i) => ctx.select({ query: i }), describe: (i, j) => ({ name: `concat[${i}, ${j}]  ${tok(trace, i)}`, provenance: 'the heads side by side (step 11)' }) });
  operator(top, '\u00d7');
  const hmW = createHeatmap(top, { id: 'output-wo', compact: true, share: 0.45, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: (i, j) => ctx.select({ dim: j }), describe: (i, j) => ({ name: `W_O[${i}, ${j}]`, provenance: 'output weights (seeded)' }) });
  const hm = createHeatmap(f.row(), {
    id: 'output',
    tooltip: ctx.tooltip, getWidth: ctx.width,
    onCellClick: (i, j) => ctx.select({ query: i, dim: j }),
    describe: (i, j) => ({ name: `Y[${i}, ${j}]  ${tok(trace, i)}`, provenance: `= \u03a3_c concat[${i}, c]\u00b7W_O[c, ${j}]` }),
  });

  return {
    update(tr, v) {
      trace = tr;
      const j = clampIndex(v.d, v.C);
      f.explain(
        'A last C\u00d7C matrix W_O mixes what the heads found into the output Y: one new vector per token, the same shape as the input, but now each one carries context from the tokens it attended to.',
        'In a transformer this is added back to the input and passed on to the next layer.',
      );
      f.formula.set([
        [`Y[${v.q}, ${j}] = \u03a3_c concat[${v.q}, c]\u00b7W_O[c, ${j}] = `, ...productTerms(row(tr.concat, v.q), col(tr.wOutput, j), { max: 5 }), ' = ', { result: at(tr.output, v.q, j) }],
      ]);
      const common = { kind: 'diverging', palette: v.palette, colLabels: null };
      hmC.update({ ...common, matrix: tr.concat, title: 'concat', rowLabels: v.labels, selRow: v.q, selCol: null });
      hmW.update({ ...common, matrix: tr.wOutput, title: 'W_O', rowLabels: v.dimLabels, selRow: null, selCol: j });
      hm.update({ ...common, matrix: tr.output, title: 'Output Y', rowLabels: v.labels, selRow: v.q, selCol: j, showCol: false });
    },
  };
}
