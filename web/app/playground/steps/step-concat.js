// Step 11: the heads' outputs side by side.

import { createStepFrame, tok, at, clampIndex } from '../../kit/common.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { headSup, figureTitle } from '../../kit/notation.js';

export function createConcatStep(root, ctx) {
  const f = createStepFrame(root, 'concat');
  let trace = null;
  const hm = createHeatmap(f.row(), {
    id: 'concat',
    tooltip: ctx.tooltip, getWidth: ctx.width,
    onCellClick: (i, j) => ctx.select({ query: i, dim: j, head: Math.floor(j / trace.config.dHead) }),
    describe: (i, j) => {
      const D = trace.config.dHead;
      const h = Math.floor(j / D);
      return { name: `concat[${i}, ${j}]  ${tok(trace, i)}`, provenance: `= O${headSup(h + 1)}[${i}, ${j - h * D}]: column ${j - h * D} of head ${h + 1}\u2019s output` };
    },
  });

  return {
    update(tr, v) {
      trace = tr;
      const c = clampIndex(v.d, v.C);
      const h = Math.floor(c / v.D);
      const dd = c - h * v.D;
      f.explain(
        `The ${v.H} head outputs, each d_k = ${v.D} wide, are placed side by side, giving back one row of C = ${v.C} numbers per token. Nothing is added or mixed yet.`,
      );
      f.formula.set([
        [`concat[${v.q}, ${c}] = O${headSup(h + 1)}[${v.q}, ${dd}] = `, { result: at(tr.concat, v.q, c) }],
        { caption: `Columns ${h * v.D}\u2013${(h + 1) * v.D - 1} come from head ${h + 1}.` },
      ]);
      const names = tr.heads.map((_, i) => `head ${i + 1}`);
      hm.update({ matrix: tr.concat, title: figureTitle('concat', tr, v.head), rowLabels: v.labels, colLabels: null, kind: 'diverging', palette: v.palette, selRow: v.q, selCol: c, showCol: false, colBands: { size: v.D, colors: v.palette.headColors, names } });
    },
  };
}
