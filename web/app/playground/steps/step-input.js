// Step 3: X' = X + P, element by element. For a trained model the step shows
// the residual stream x coming into the selected layer (layer 1: X + P; later
// layers: the previous block's output) and X' = LayerNorm(x), what Q, K and V
// are computed from.

import { createStepFrame, tok, at, row, clampIndex, operator } from '../../kit/common.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { figureTitle } from '../../kit/notation.js';

/** Mean and σ = √(biased variance + 1e-5) of one row, as the core's LayerNorm. */
function rowStats(m, i) {
  const r = row(m, i);
  let mean = 0;
  for (const x of r) mean += x;
  mean /= r.length;
  let v = 0;
  for (const x of r) v += (x - mean) ** 2;
  return { mean, sigma: Math.sqrt(v / r.length + 1e-5) };
}

export function createInputStep(root, ctx) {
  const f = createStepFrame(root, 'input');
  let trace = null;
  const select = (i, j) => ctx.select({ query: i, dim: j });
  const top = f.row('figure-row-compact');
  const hmX = createHeatmap(top, { id: 'input-x', compact: true, share: 0.45, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: select, describe: (i, j) => ({ name: `X[${i}, ${j}]  ${tok(trace, i)}`, provenance: 'the token\u2019s embedding' }) });
  const plus = operator(top, '+');
  const hmP = createHeatmap(top, { id: 'input-p', compact: true, share: 0.45, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: select, describe: (i, j) => ({ name: `P[${i}, ${j}]  (position ${i})`, provenance: 'the position\u2019s encoding' }) });
  const equals = operator(top, '=');
  const hmS = createHeatmap(top, {
    id: 'input-stream', compact: true, share: 0.3, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: select,
    describe: (i, j) => ({ name: `x[${i}, ${j}]  ${tok(trace, i)}`, provenance: trace.model.layer === 0 ? `= X[${i}, ${j}] + P[${i}, ${j}]` : `the output of layer ${trace.model.layer}\u2019s block (its step 12)` }),
  });
  const hm = createHeatmap(f.row(), {
    id: 'input',
    tooltip: ctx.tooltip, getWidth: ctx.width,
    onCellClick: select,
    describe: (i, j) => (trace.model
      ? { name: `X\u2032[${i}, ${j}]  ${tok(trace, i)}`, provenance: trace.model.rmsnorm ? `= RMSNorm(x)[${i}, ${j}]: row ${i} of x divided by its root mean square, times a learned gain (no mean, no bias)` : trace.model.layernorm ? `= LayerNorm(x)[${i}, ${j}]: row ${i} of x, centred, scaled to unit variance, times a learned gain plus a learned bias` : `= x[${i}, ${j}] (this model has no LayerNorm)` }
      : { name: `X\u2032[${i}, ${j}]  ${tok(trace, i)}`, provenance: `= X[${i}, ${j}] + P[${i}, ${j}]` }),
  });

  function updateRandom(tr, v, d) {
    f.explain(
      'The token\u2019s vector and its position\u2019s vector are simply added, number by number. The result X\u2032 carries both what the word is and where it is.',
      'Every later step starts from these rows.',
    );
    f.formula.set([
      [`X\u2032[${v.q}, ${d}] = X[${v.q}, ${d}] + P[${v.q}, ${d}] = `, { n: at(tr.embeddings, v.q, d) }, ' + ', { f: at(tr.positional, v.q, d) }, ' = ', { result: at(tr.input, v.q, d) }],
    ]);
    const common = { rowLabels: v.labels, colLabels: null, kind: 'diverging', palette: v.palette, selRow: v.q, selCol: d, showCol: false };
    hmX.update({ ...common, matrix: tr.embeddings, title: 'X', share: 0.45 });
    hmP.update({ ...common, matrix: tr.positional, title: 'P', range: tr.config.positional === 'none' ? 1 : null, share: 0.45 });
    hm.update({ ...common, matrix: tr.input, title: figureTitle('input', tr, v.head) });
  }

  function updateTrained(tr, v, d) {
    const m = tr.model;
    const first = m.layer === 0;
    const lines = [];
    // a post-LN checkpoint (BERT): its embeddings are normalised, its blocks normalise after attention
    const postNorm = Boolean(m.pretrained?.postNorm);
    // rotary positions (Llama, Qwen): nothing is added to the embeddings
    const rotary = tr.config.positional === 'rope' || tr.config.positional === 'alibi';
    if (first && postNorm) {
      lines.push([`x[${v.q}, ${d}] = LayerNorm(X + P + T\u2080)[${v.q}, ${d}] = `, { n: at(tr.stream, v.q, d) }]);
      lines.push({ caption: 'T\u2080: the token-type embedding of segment 0 (one sentence); BERT normalises the sum of the three embeddings.' });
    } else if (first && rotary) {
      lines.push([`x[${v.q}, ${d}] = X[${v.q}, ${d}] = `, { n: at(tr.stream, v.q, d) }]);
      lines.push({ caption: 'No position vector is added: RoPE turns the queries and keys by their position later (step 4b).' });
    } else if (first) {
      lines.push([`x[${v.q}, ${d}] = X[${v.q}, ${d}] + P[${v.q}, ${d}] = `, { n: at(tr.embeddings, v.q, d) }, ' + ', { f: at(tr.positional, v.q, d) }, ' = ', { n: at(tr.stream, v.q, d) }]);
    } else {
      lines.push([`x[${v.q}, ${d}] = the output of layer ${m.layer}\u2019s block = `, { n: at(tr.stream, v.q, d) }]);
    }
    if (m.rmsnorm && m.rms1) {
      // RMSNorm (Llama, Qwen): no mean taken away, no bias; the engine's row rms includes ε
      const rms = m.rms1.rms[v.q];
      lines.push([`X\u2032[${v.q}, ${d}] = x[${v.q}, ${d}] / rms \u00b7 g[${d}] = `, { n: at(tr.stream, v.q, d) }, ' / ', { f: rms }, ' \u00b7 ', { n: m.rms1.gain[d] }, ' = ', { result: at(tr.input, v.q, d) }]);
      lines.push({ caption: `rms = \u221a(mean of x[${v.q}, c]\u00b2 over its C = ${v.C} numbers + \u03b5): the root mean square of row ${v.q}; g is layer ${m.layer + 1}\u2019s learned gain. Unlike GPT-2\u2019s LayerNorm, RMSNorm takes no mean away and adds no bias.` });
    } else if (m.layernorm && m.ln1) {
      const { mean, sigma } = rowStats(tr.stream, v.q);
      lines.push([`X\u2032[${v.q}, ${d}] = (x[${v.q}, ${d}] \u2212 \u03bc) / \u03c3 \u00b7 g[${d}] + b[${d}] = (`, { n: at(tr.stream, v.q, d) }, ' \u2212 ', { f: mean }, ') / ', { f: sigma }, ' \u00b7 ', { n: m.ln1.gain[d] }, ' + ', { n: m.ln1.bias[d] }, ' = ', { result: at(tr.input, v.q, d) }]);
      lines.push({ caption: `\u03bc and \u03c3: the mean and standard deviation of row ${v.q} of x (over its C = ${v.C} numbers); g and b are the learned gain and bias of layer ${m.layer + 1}\u2019s first LayerNorm.` });
    } else {
      lines.push([`X\u2032[${v.q}, ${d}] = x[${v.q}, ${d}] = `, { result: at(tr.input, v.q, d) }]);
    }
    f.explain(
      first && rotary
        ? 'The residual stream x starts as the token\u2019s vector alone: this model adds no position vector (its positions act inside attention). Each layer reads x and adds its own findings back to it.'
        : first
        ? 'The token\u2019s vector and its position\u2019s vector are added, number by number: x carries both what the word is and where it is. This sum is the residual stream: each layer reads it and adds its own findings back to it.'
        : `Layer ${m.layer + 1} reads the residual stream x as layer ${m.layer} left it: the embeddings plus everything the earlier blocks added.`,
      postNorm
        ? 'This model (BERT) normalises after attention, not before: Q, K and V are computed from x itself, and its LayerNorms come after each residual sum.'
        : m.rmsnorm
        ? 'Before attention, RMSNorm divides each token\u2019s row by its root mean square and multiplies by a learned gain: X\u2032 is what Q, K and V are computed from. It is LayerNorm without the mean and the bias: the row is not centred, only rescaled.'
        : m.layernorm
        ? 'Before attention, LayerNorm rescales each token\u2019s row to mean 0 and variance 1, then applies a learned gain and bias: X\u2032 is what Q, K and V are computed from.'
        : 'This model has no LayerNorm: Q, K and V are computed from x itself.',
    );
    f.formula.set(lines);
    const common = { rowLabels: v.labels, colLabels: null, kind: 'diverging', palette: v.palette, selRow: v.q, selCol: d, showCol: false };
    if (first) {
      hmX.update({ ...common, matrix: tr.embeddings, title: 'X', share: 0.3 });
      hmP.update({ ...common, matrix: tr.positional, title: 'P', range: tr.config.positional === 'none' ? 1 : null, share: 0.3 });
    }
    // a rotary model adds no P: x is X
    hmP.element.hidden = !first || rotary;
    plus.hidden = !first || rotary;
    hmS.update({ ...common, matrix: tr.stream, title: first ? 'x' : `x (into layer ${m.layer + 1})`, share: first ? 0.3 : 0.6 });
    hm.update({ ...common, matrix: tr.input, title: figureTitle('input', tr, v.head) });
  }

  return {
    update(tr, v) {
      trace = tr;
      const d = clampIndex(v.d, v.C);
      const trained = Boolean(tr.model);
      const first = !trained || tr.model.layer === 0;
      hmX.element.hidden = !first;
      hmP.element.hidden = !first;
      plus.hidden = !first;
      equals.hidden = !trained || !first;
      hmS.element.hidden = !trained;
      if (trained) updateTrained(tr, v, d);
      else updateRandom(tr, v, d);
    },
  };
}
