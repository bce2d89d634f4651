// Step 12: Y = concat · W_O, the attention layer's output. For a trained model
// also the rest of its block (residual add, LayerNorm and MLP) and, after the
// last layer, the model's answer: the top 5 of its softmax over the vocabulary
// (the next word, for a language model).

import { createStepFrame, tok, at, row, col, clampIndex, operator, createFitNote } from '../../kit/common.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { productTerms } from '../../kit/formula.js';
import { el, clear } from '../../kit/dom.js';
import { formatValue, DIGITS, quoted, tokenLabel } from '../../kit/format.js';
import { topTokens } from '../model-trace.js';
import { figureTitle } from '../../kit/notation.js';

/** The top-5 list: a word, a bar and its probability per row. */
function createPrediction(parent, { testid = 'prediction', shapeText = 'top 5, probabilities' } = {}) {
  const title = el('span', 'hm-title');
  const shape = el('span', 'hm-shape');
  const list = el('ol', 'prediction-list');
  const foot = el('p', 'figure-note');
  const figure = el('figure', 'prediction', { testid }, el('figcaption', 'hm-caption', {}, title, shape), list, foot);
  parent.append(figure);
  return {
    element: figure,
    update({ heading, note, items }) {
      title.textContent = heading;
      shape.textContent = shapeText;
      clear(list);
      for (const it of items) {
        const fill = el('span', 'prediction-fill');
        fill.style.width = `${Math.max(0.5, 100 * it.p).toFixed(2)}%`;
        const li = el('li', 'prediction-item', { testid: 'prediction-item', dataset: { token: it.text, p: String(it.p) } },
          el('bdi', 'prediction-word', { text: tokenLabel(it.text, 18) }),
          el('span', 'prediction-bar', {}, fill),
          el('span', 'prediction-p num', { text: formatValue(it.p, DIGITS.cell) }));
        list.append(li);
      }
      foot.textContent = note;
      foot.hidden = !note;
    },
  };
}

export function createOutputStep(root, ctx) {
  const f = createStepFrame(root, 'output');
  let trace = null;
  const top = f.row('figure-row-compact');
  const hmC = createHeatmap(top, { id: 'output-concat', compact: true, share: 0.45, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: (i) => ctx.select({ query: i }), describe: (i, j) => ({ name: `concat[${i}, ${j}]  ${tok(trace, i)}`, provenance: 'the heads side by side (step 11)' }) });
  operator(top, '\u00d7');
  const hmW = createHeatmap(top, { id: 'output-wo', compact: true, share: 0.45, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: (i, j) => ctx.select({ dim: j }), describe: (i, j) => ({ name: `W_O[${i}, ${j}]`, provenance: trace.model ? 'output weights (learned)' : 'output weights (seeded)' }) });
  const hm = createHeatmap(f.row(), {
    id: 'output',
    tooltip: ctx.tooltip, getWidth: ctx.width,
    onCellClick: (i, j) => ctx.select({ query: i, dim: j }),
    describe: (i, j) => ({ name: `Y[${i}, ${j}]  ${tok(trace, i)}`, provenance: `= \u03a3_c concat[${i}, c]\u00b7W_O[c, ${j}]` }),
  });

  // the rest of a trained model's block
  const blockTitle = el('h3', 'block-title', { text: 'The rest of the block' });
  const blockText = el('p', 'block-text');
  const block = el('div', 'block', { testid: 'block' }, blockTitle, blockText);
  f.figures.append(block);
  const blockRow = el('div', 'figure-row figure-row-compact');
  block.append(blockRow);
  const select = (i, j) => ctx.select({ query: i, dim: j });
  const hmR = createHeatmap(blockRow, { id: 'block-residual', compact: true, share: 0.3, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: select, describe: (i, j) => ({ name: `r[${i}, ${j}]  ${tok(trace, i)}`, provenance: `= x[${i}, ${j}] + Y[${i}, ${j}]: the residual stream plus what attention found` }) });
  const hmM = createHeatmap(blockRow, { id: 'block-mlp', compact: true, share: 0.3, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: select, describe: (i, j) => ({ name: `MLP[${i}, ${j}]  ${tok(trace, i)}`, provenance: trace.model?.gatedMlp ? '(SiLU(RMSNorm(r)\u00b7W_gate) \u2299 RMSNorm(r)\u00b7W_up)\u00b7W_down: each token on its own, no mixing between tokens' : 'GELU(LayerNorm(r)\u00b7W_in + b_in)\u00b7W_out + b_out: each token on its own, no mixing between tokens' }) });
  const hmB = createHeatmap(blockRow, { id: 'block-out', compact: true, share: 0.3, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: select, describe: (i, j) => ({ name: `out[${i}, ${j}]  ${tok(trace, i)}`, provenance: trace.model?.mlp ? `= r[${i}, ${j}] + MLP[${i}, ${j}]` : `= r[${i}, ${j}] (no MLP)` }) });
  const fitNote = createFitNote(f, { parent: block, onPickModel: (model) => ctx.select({ model }) });
  const predRow = el('div', 'figure-row');
  block.append(predRow);
  const prediction = createPrediction(predRow);
  // when [UNK] is among the top 5: the best words the model can name
  const realWords = createPrediction(predRow, { testid: 'prediction-real', shapeText: 'top 5 without [UNK], probabilities' });
  const nextNote = el('p', 'figure-note', { testid: 'next-layer-note' });
  block.append(nextNote);

  function updateBlock(tr, v, j) {
    const m = tr.model;
    const b = tr.block;
    const common = { kind: 'diverging', palette: v.palette, colLabels: null, rowLabels: v.labels, selRow: v.q, selCol: j, showCol: false };
    hmR.update({ ...common, matrix: b.residual, title: 'r = x + Y' });
    hmM.element.hidden = !b.mlpOutput;
    if (b.mlpOutput) hmM.update({ ...common, matrix: b.mlpOutput, title: `MLP(r), ${m.mlp} hidden` });
    hmB.update({ ...common, matrix: b.out, title: m.layer === m.layers - 1 ? 'Block output' : `Into layer ${m.layer + 2}` });
    blockText.textContent = [
      'Attention\u2019s output Y is added to the residual stream x it read (step 3): r = x + Y, so each token keeps what it was and gains what it gathered.',
      !b.mlpOutput ? 'This model has no MLP: r is the block\u2019s output.'
        : m.gatedMlp ? `Then a gated MLP (SwiGLU) works on each token alone: RMSNorm, two ${m.mlp}-wide layers, gate and up; SiLU(gate) \u2299 up lets the gate open or close each hidden unit (SiLU(g) = g\u00b7\u03c3(g)); down brings it back to C = ${v.C}, and the result is added too.`
        : `Then an MLP works on each token alone: LayerNorm, a ${m.mlp}-wide layer with the GELU nonlinearity, and back to C = ${v.C}; its result is added too.`,
      m.layer === m.layers - 1 ? `After the last block, a final ${m.rmsnorm ? 'RMSNorm' : 'LayerNorm'} and the unembedding turn each row into one score per vocabulary word; softmax makes them probabilities.` : `The result is the residual stream layer ${m.layer + 2} reads.`,
    ].join(' ');
    const lines = [[`r[${v.q}, ${j}] = x[${v.q}, ${j}] + Y[${v.q}, ${j}] = `, { n: at(tr.stream, v.q, j) }, ' + ', { f: at(tr.output, v.q, j) }, ' = ', { n: at(b.residual, v.q, j) }]];
    if (b.mlpGate && b.mlpUp && b.mlpHidden) {
      // one hidden unit of the gated MLP: the selected dimension's, within the F hidden units
      const u = j % b.mlpGate.cols;
      const g = at(b.mlpGate, v.q, u);
      const sig = 1 / (1 + Math.exp(-g));
      lines.push([`hidden[${v.q}, ${u}] = SiLU(gate)\u00b7up = gate\u00b7\u03c3(gate)\u00b7up = `, { n: g }, '\u00b7', { f: sig }, '\u00b7', { f: at(b.mlpUp, v.q, u) }, ' = ', { n: at(b.mlpHidden, v.q, u) }]);
      lines.push({ caption: `gate = RMSNorm(r)\u00b7W_gate and up = RMSNorm(r)\u00b7W_up, ${m.mlp} numbers each; MLP = hidden\u00b7W_down (no biases).` });
    }
    if (b.mlpOutput) lines.push([`out[${v.q}, ${j}] = r[${v.q}, ${j}] + MLP[${v.q}, ${j}] = `, { n: at(b.residual, v.q, j) }, ' + ', { f: at(b.mlpOutput, v.q, j) }, ' = ', { n: at(b.out, v.q, j) }]);
    // the prediction, after the last layer
    prediction.element.hidden = !tr.final;
    realWords.element.hidden = true;
    fitNote.update(tr);
    nextNote.hidden = Boolean(tr.final);
    nextNote.textContent = tr.final ? '' : `The model\u2019s ${m.causal ? 'next-word prediction' : 'answer'} comes after its last layer: pick layer ${m.layers} to see it.`;
    if (tr.final) {
      const items = topTokens(tr.final.probabilities, v.q, m.vocabulary, 5);
      let heading;
      let foot = '';
      if (m.causal) {
        heading = `Next word after ${tok(tr, v.q)}`;
        foot = `What the model expects after the first ${v.q + 1} token${v.q ? 's' : ''}: it sees none of the later ones (causal mask).`;
      } else {
        heading = `The model\u2019s answer at ${tok(tr, v.q)}`;
        if (m.task === 'coreference') foot = tr.tokens[v.q].text === 'it' ? `Trained to name the noun \u201cit\u201d stands for${m.fit?.outside ? '; this sentence is outside what it learned, so this answer is a guess' : ''}.` : `The model was trained to answer only at \u201cit\u201d; at ${tok(tr, v.q)} this output means nothing.`;
      }
      const unk = items.find((it) => it.text === '[UNK]');
      if (unk) {
        const first = items[0] === unk;
        foot = `${foot ? `${foot} ` : ''}[UNK] stands for every word outside its vocabulary of ${(m.vocab - 2).toLocaleString('en-US')} words: ${formatValue(unk.p, DIGITS.cell)} says the model expects a word it does not know, not which one.${first ? ' The best words it knows are beside it.' : ''}`;
        if (first) {
          const real = topTokens(tr.final.probabilities, v.q, m.vocabulary, 7).filter((it) => it.text !== '[UNK]' && it.text !== '[PAD]').slice(0, 5);
          realWords.element.hidden = false;
          realWords.update({ heading: 'The words it knows', note: '', items: real });
        }
      }
      prediction.update({ heading, note: foot, items });
      const best = items[0];
      const given = !m.causal ? `at ${tok(tr, v.q)}` : v.q ? `| ${tok(tr, 0)} \u2026 ${tok(tr, v.q)}` : `| ${tok(tr, 0)}`;
      lines.push([`p(${quoted(best.text, 14)} ${given}) = softmax(${m.rmsnorm ? 'RMSNorm' : 'LayerNorm'}(out[${v.q}])\u00b7W_U)[${quoted(best.text, 14)}] = `, { n: best.p }]);
    }
    return lines;
  }

  return {
    update(tr, v) {
      trace = tr;
      const j = clampIndex(v.d, v.C);
      const m = tr.model;
      f.explain(
        'A last C\u00d7C matrix W_O mixes what the heads found into the output Y: one new vector per token, the same shape as the input, but now each one carries context from the tokens it attended to.',
        m ? 'In this trained model, Y then goes through the rest of the block below.' : 'In a transformer this is added back to the input and passed on to the next layer.',
      );
      const bias = tr.bias?.output; // a pretrained checkpoint's b_O
      const lines = [[`Y[${v.q}, ${j}] = \u03a3_c concat[${v.q}, c]\u00b7W_O[c, ${j}]${bias ? ` + b_O[${j}]` : ''} = `, ...productTerms(row(tr.concat, v.q), col(tr.wOutput, j), { max: 5 }), ...(bias ? [' + ', { n: bias[j] }] : []), ' = ', { result: at(tr.output, v.q, j) }]];
      block.hidden = !m;
      if (m) lines.push(...updateBlock(tr, v, j));
      f.formula.set(lines);
      const common = { kind: 'diverging', palette: v.palette, colLabels: null };
      hmC.update({ ...common, matrix: tr.concat, title: 'concat', rowLabels: v.labels, selRow: v.q, selCol: null });
      hmW.update({ ...common, matrix: tr.wOutput, title: 'W_O', rowLabels: v.dimLabels, selRow: null, selCol: j });
      hm.update({ ...common, matrix: tr.output, title: figureTitle('output', tr, v.head), rowLabels: v.labels, selRow: v.q, selCol: j, showCol: false });
    },
  };
}
