// Step 4: Q, K and V of the selected head, all three from the same input X'.

import { createStepFrame, tok, at, row, col, clampIndex, headColumns, operator } from '../../kit/common.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { productTerms } from '../../kit/formula.js';
import { headSup, figureTitle } from '../../kit/notation.js';

const WHAT = { Q: 'query', K: 'key', V: 'value' };

export function createProjectionsStep(root, ctx) {
  const f = createStepFrame(root, 'projections');
  let trace = null;
  let head = 0;
  const select = (i, j) => ctx.select({ query: i, dim: j });
  const top = f.row();
  const maps = {};
  for (const name of ['Q', 'K', 'V']) {
    maps[name] = createHeatmap(top, {
      id: `projection-${name.toLowerCase()}`,
      share: 0.32,
      tooltip: ctx.tooltip, getWidth: ctx.width,
      onCellClick: select,
      describe: (i, j) => {
        const D = trace.config.dHead;
        return { name: `${name}${headSup(head + 1)}[${i}, ${j}]  ${tok(trace, i)}`, provenance: `= \u03a3_c X\u2032[${i}, c] \u00b7 W_${name}[c, ${head * D + j}]: the ${WHAT[name]} of ${tok(trace, i)} in head ${head + 1}` };
      },
    });
  }
  const bottom = f.row('figure-row-compact');
  const hmX = createHeatmap(bottom, { id: 'projection-input', compact: true, share: 0.6, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: select, describe: (i, j) => ({ name: `X\u2032[${i}, ${j}]  ${tok(trace, i)}`, provenance: trace.model ? 'the input row after LayerNorm (step 3)' : 'the input row (embedding + position)' }) });
  operator(bottom, '\u00d7');
  const hmW = createHeatmap(bottom, {
    id: 'projection-wq',
    compact: true,
    share: 0.3,
    tooltip: ctx.tooltip, getWidth: ctx.width,
    onCellClick: (i, j) => ctx.select({ dim: j }),
    describe: (i, j) => ({ name: `W_Q[${i}, ${head * trace.config.dHead + j}]`, provenance: `column ${j} of head ${head + 1}\u2019s slice of W_Q (${trace.model ? 'learned' : 'seeded'} weights)` }),
  });

  return {
    update(tr, v) {
      trace = tr;
      head = v.head;
      const { D, C } = v;
      const d = clampIndex(v.d, D);
      const h = tr.heads[v.head];
      const x = row(tr.input, v.q);
      f.explain(
        `The same input row is multiplied by three different weight matrices. The query says what this token is looking for, the key what it offers to others, the value what it passes on when chosen.`,
        `Head ${v.head + 1} uses its own d_k = C/H = ${C}/${v.H} = ${D} columns of W_Q, W_K and W_V, so each head looks at the tokens in a smaller space of its own.${tr.model ? ` These are layer ${tr.model.layer + 1}\u2019s learned matrices.` : ''}`,
      );
      const lines = [];
      for (const [name, m, w, bias] of [['Q', h.query, tr.wQuery, tr.bias?.query], ['K', h.key, tr.wKey, tr.bias?.key], ['V', h.value, tr.wValue, tr.bias?.value]]) {
        const wcol = col(headColumns(w, v.head, D), d);
        // a pretrained checkpoint (GPT-2, BERT) adds a learned bias b to each projection
        const j = v.head * D + d;
        lines.push([
          `${name}${headSup(v.head + 1)}[${v.q}, ${d}] = \u03a3_c X\u2032[${v.q}, c]\u00b7W_${name}[c, ${j}]${bias ? ` + b_${name}[${j}]` : ''} = `,
          ...productTerms(x, wcol, { max: 4 }),
          ...(bias ? [' + ', { n: bias[j] }] : []),
          ' = ',
          { result: at(m, v.q, d), testid: name === 'Q' ? 'formula-result' : `formula-result-${name.toLowerCase()}` },
        ]);
      }
      lines.push({ caption: `Three different columns, one input row: Q, K and V of ${tok(tr, v.q)} all come from X\u2032[${v.q}].` });
      f.formula.set(lines);
      const common = { rowLabels: v.labels, colLabels: null, kind: 'diverging', palette: v.palette, selRow: v.q, selCol: d, showCol: false };
      maps.Q.update({ ...common, matrix: h.query, title: figureTitle('projections', tr, v.head) });
      maps.K.update({ ...common, matrix: h.key, title: `Keys K${headSup(v.head + 1)}` });
      maps.V.update({ ...common, matrix: h.value, title: `Values V${headSup(v.head + 1)}` });
      hmX.update({ ...common, matrix: tr.input, title: 'Input X\u2032', selCol: null });
      hmW.update({ matrix: headColumns(tr.wQuery, v.head, D), title: `W_Q, head ${v.head + 1}`, rowLabels: v.dimLabels, colLabels: null, kind: 'diverging', palette: v.palette, selRow: null, selCol: d });
    },
  };
}
