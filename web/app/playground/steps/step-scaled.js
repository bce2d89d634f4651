// Step 6: scores divided by √d_k (or left alone when scaling is off).

import { createStepFrame, tok, at, row, clampIndex, createOffer } from '../../kit/common.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { formatValue, DIGITS } from '../../kit/format.js';
import { el } from '../../kit/dom.js';
import { figureTitle } from '../../kit/notation.js';
import { alibiSlope } from '../alibi.js';

function spread(values) {
  let mean = 0;
  for (const x of values) mean += x;
  mean /= values.length;
  let v = 0;
  for (const x of values) v += (x - mean) ** 2;
  return Math.sqrt(v / values.length);
}

/** On a trained model the scale is part of the checkpoint (its switch is greyed): why, and where it can be switched. */
export function fixedScaleOffer(tr) {
  if (!tr.model) return null;
  return {
    text: `The scale is fixed: this model was trained ${tr.config.scale ? 'with' : 'without'} it, so \u201cScale by 1/\u221ad_k\u201d is greyed out. On random weights you can switch it off and compare the scores.`,
    label: 'Random weights, scale off \u2192',
    patch: { model: 'random', scale: false, step: 'scaled' },
  };
}

export function createScaledStep(root, ctx) {
  const f = createStepFrame(root, 'scaled');
  const offer = createOffer(f, (patch) => ctx.select(patch));
  let trace = null;
  const r = f.row();
  const select = (i, j) => ctx.select({ query: i, key: j });
  const hmS = createHeatmap(r, { id: 'scaled-before', compact: true, share: 0.3, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: select, describe: (i, j) => ({ name: `S[${i}, ${j}]  ${tok(trace, i)} \u2192 ${tok(trace, j)}`, provenance: 'the raw score (step 5)' }) });
  const hm = createHeatmap(r, {
    id: 'scaled',
    share: 0.62,
    tooltip: ctx.tooltip, getWidth: ctx.width,
    onCellClick: select,
    describe: (i, j) => ({ name: `S\u2032[${i}, ${j}]  ${tok(trace, i)} \u2192 ${tok(trace, j)}`, provenance: trace.config.scale ? `= S[${i}, ${j}] / \u221a${trace.config.dHead}` : `= S[${i}, ${j}] (scaling is off)` }),
  });
  const statLine = el('p', 'figure-note', { testid: 'scaled-spread' });
  f.figures.append(statLine);

  return {
    update(tr, v) {
      trace = tr;
      const h = tr.heads[v.head];
      const k = clampIndex(v.k, v.T);
      const D = v.D;
      const s = at(h.scores, v.q, k);
      const s2 = at(h.scaled, v.q, k);
      offer.update(fixedScaleOffer(tr));
      if (tr.config.scale) {
        f.explain(
          `A dot product of d_k-wide vectors grows with d_k: its spread is about \u221ad_k times that of one product. Big scores push softmax to all-or-nothing, where learning stalls.`,
          `Dividing by \u221ad_k = \u221a${D} = ${formatValue(Math.sqrt(D), DIGITS.formula)} keeps the scores in a comfortable range, whatever the head width.`,
        );
        f.formula.set([
          [`S\u2032[${v.q}, ${k}] = S[${v.q}, ${k}] / \u221ad_k = `, { n: s }, ` / \u221a${D} = `, { n: s }, ' / ', { n: Math.sqrt(D) }, ' = ', { result: s2 }],
        ]);
      } else {
        f.explain(
          'Scaling is switched off, so S\u2032 = S. With wide heads the scores spread out and softmax turns nearly one-hot: one key takes all the weight.',
          'Turn \u201cScale by 1/\u221ad_k\u201d back on, or try a larger model width with few heads, to see the difference.',
        );
        f.formula.set([[`S\u2032[${v.q}, ${k}] = S[${v.q}, ${k}] = `, { result: s2 }], { caption: 'Scaling by 1/\u221ad_k is off.' }]);
      }
      const before = spread(row(h.scores, v.q));
      const after = spread(row(h.scaled, v.q));
      const slope = alibiSlope(tr, v.head);
      statLine.textContent = `Spread (standard deviation) of row ${v.q}: ${formatValue(before, DIGITS.cell)} before, ${formatValue(after, DIGITS.cell)} after.${slope === null ? '' : ` ALiBi: the next step adds head ${v.head + 1}\u2019s bias \u2212${formatValue(slope, DIGITS.formula)}\u00b7|i \u2212 j| to these scores, before the mask and the softmax.`}`;
      const common = { rowLabels: v.labels, colLabels: v.labels, kind: 'diverging', palette: v.palette, selRow: v.q, selCol: k };
      // one colour range for both, so the shrink is visible
      let range = 0;
      for (const x of h.scores.data) range = Math.max(range, Math.abs(x));
      hmS.update({ ...common, matrix: h.scores, title: 'Before: S', range: range || 1 });
      hm.update({ ...common, matrix: h.scaled, title: figureTitle('scaled', tr, v.head), range: range || 1 });
    },
  };
}
