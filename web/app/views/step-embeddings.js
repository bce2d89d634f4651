// Step 1: each token id picks a row of the seeded embedding table.

import { createStepFrame, tok, at, clampIndex } from './common.js';
import { createHeatmap } from './heatmap.js';

export function createEmbeddingsStep(root, ctx) {
  const f = createStepFrame(root, 'embeddings');
  let trace = null;
  const hm = createHeatmap(f.row(), {
    id: 'embeddings',
    tooltip: ctx.tooltip, getWidth: ctx.width,
    onCellClick: (i, j) => ctx.select({ query: i, dim: j }),
    describe: (i, j) => {
      const t = trace.tokens[i];
      return {
        name: `X[${i}, ${j}]  ${tok(trace, i)}`,
        provenance: t.id === 0 ? '[PAD] embeds as zeros.' : `= E[${t.id}, ${j}]: entry ${j} of row ${t.id} of the embedding table (the id of ${tok(trace, i)}).`,
      };
    },
  });

  return {
    update(tr, v) {
      trace = tr;
      const d = clampIndex(v.d, v.C);
      const t = tr.tokens[v.q];
      f.explain(
        `Each token\u2019s id picks one row of a table of fixed random numbers (the seed decides them). That row, C = ${v.C} numbers wide, is the token\u2019s vector.`,
        'The same word always gets the same vector, wherever it stands in the sentence. Words never seen before are fine: ids are hashes of the text.',
      );
      f.formula.set([
        [`X[${v.q}, ${d}] = E[${t.id}, ${d}] = `, { result: at(tr.embeddings, v.q, d) }],
        { caption: t.id === 0 ? `Token ${v.q} is [PAD]: padding embeds as zeros.` : `Row ${v.q} of X is row ${t.id} of the embedding table E: the vector of ${tok(tr, v.q)}.` },
      ]);
      hm.update({ matrix: tr.embeddings, title: 'Embeddings X', rowLabels: v.labels, colLabels: null, kind: 'diverging', palette: v.palette, selRow: v.q, selCol: d, showCol: false });
    },
  };
}
