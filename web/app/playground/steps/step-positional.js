// Step 2: the positional encoding P, one row per position.

import { createStepFrame, at, clampIndex } from '../../kit/common.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { formatValue, DIGITS } from '../../kit/format.js';
import { figureTitle } from '../../kit/notation.js';

function sinusoid(pos, j, C) {
  const twoI = j - (j % 2);
  const divisor = 10000 ** (twoI / C);
  return { twoI, divisor, angle: pos / divisor, fn: j % 2 === 0 ? 'sin' : 'cos' };
}

export function createPositionalStep(root, ctx) {
  const f = createStepFrame(root, 'positional');
  let trace = null;
  const hm = createHeatmap(f.row(), {
    id: 'positional',
    tooltip: ctx.tooltip, getWidth: ctx.width,
    onCellClick: (i, j) => ctx.select({ query: i, dim: j }),
    describe: (i, j) => {
      const C = trace.config.dModel;
      const kind = trace.config.positional;
      let provenance = 'No positional encoding: zero.';
      if (kind === 'sinusoidal') {
        const s = sinusoid(i, j, C);
        provenance = `= ${s.fn}(${i} / 10000^(${s.twoI}/${C})) = ${s.fn}(${formatValue(s.angle, DIGITS.formula)})`;
      } else if (kind === 'learned') {
        provenance = trace.model ? `= L[${i}, ${j}]: row ${i} of the learned position table.` : `= L[${i}, ${j}]: row ${i} of a seeded table with one row per position.`;
      }
      return { name: `P[${i}, ${j}]  (position ${i})`, provenance };
    },
  });

  return {
    update(tr, v) {
      trace = tr;
      const d = clampIndex(v.d, v.C);
      const kind = tr.config.positional;
      const value = at(tr.positional, v.q, d);
      if (kind === 'sinusoidal') {
        const s = sinusoid(v.q, d, v.C);
        f.explain(
          'Attention by itself does not see word order: shuffle the words and the outputs only shuffle too. So each position gets its own pattern, added to the token\u2019s vector.',
          'Sinusoidal: column pairs are a sine and a cosine of the position, fast-changing in the first columns and slow in the last, like the hands of a clock.',
        );
        f.formula.set([
          [`P[${v.q}, ${d}] = ${s.fn}(${v.q} / 10000^(${s.twoI}/${v.C})) = ${s.fn}(${v.q} / `, { n: s.divisor }, `) = ${s.fn}(`, { n: s.angle }, ') = ', { result: value }],
          { caption: `Position ${v.q}, column ${d}: ${d % 2 === 0 ? 'even columns use sin' : 'odd columns use cos'} of the same angle as their pair.` },
        ]);
      } else if (kind === 'learned') {
        f.explain(
          'Attention by itself does not see word order, so each position gets its own vector, added to the token\u2019s vector.',
          tr.model
            ? `Learned: a table with one row per position, trained along with the embeddings. This model learned ${tr.model.context} rows: it reads at most ${tr.model.context} tokens.`
            : 'Learned: a table with one row per position, trained like the embeddings (here: seeded random numbers in [\u22121, 1)).',
        );
        f.formula.set([[`P[${v.q}, ${d}] = L[${v.q}, ${d}] = `, { result: value }], { caption: `Row ${v.q} of the position table L.` }]);
      } else if (kind === 'rope' || kind === 'alibi') {
        // no position vector: the position acts inside attention (RoPE: step 4b; ALiBi: a bias on the scores)
        f.explain(
          kind === 'rope'
            ? 'This model adds no position vector: P is all zeros. Its positions act inside attention instead: RoPE turns each query and key by an angle that grows with the position (step 4b, after Q, K, V).'
            : 'This model adds no position vector: P is all zeros. ALiBi instead subtracts from each score a penalty that grows with the distance between the two tokens.',
          'So the rows below are zero, and the word order reaches the model only through the scores.',
        );
        f.formula.set([[`P[${v.q}, ${d}] = `, { result: value }], { caption: kind === 'rope' ? 'No position vector: the turn of Q and K carries the position.' : 'No position vector: the distance penalty on the scores carries the position.' }]);
      } else {
        f.explain(
          'Positional encoding is switched off: P is all zeros. The model now sees a bag of words; \u201ccat chases dog\u201d and \u201cdog chases cat\u201d give the same vectors, just in a different order.',
          'Switch \u201cPositional encoding\u201d to sinusoidal or learned to give each position its own pattern.',
        );
        f.formula.set([[`P[${v.q}, ${d}] = `, { result: value }], { caption: 'No positional encoding: every entry is 0.' }]);
      }
      hm.update({ matrix: tr.positional, title: figureTitle('positional', tr, v.head), rowLabels: v.positionLabels, colLabels: null, kind: 'diverging', range: kind === 'none' ? 1 : null, palette: v.palette, selRow: v.q, selCol: d, showCol: false });
    },
  };
}
