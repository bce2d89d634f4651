// Idea 1's view: one token's output against the plain average (weights as bars,
// the three rows as a heatmap), and one word in two sentences. Draws the model
// the controller (../context.js) gives it.

import { el } from '../../kit/dom.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { headMark, formatValue } from '../../kit/format.js';
import {
  createDemoFrame, createMetric, createVerdict, createNote, textField, selectField, seedField, tokenChips,
  stackRows, labelsOf, q, formatDiff, headOptions,
} from '../common.js';
import { createBars } from '../bars.js';
import { PE_OPTIONS } from './options.js';

export function createContextView(root, { onState, tooltip }) {
  const f = createDemoFrame(root, 'context', {
    claim: [
      'Each token\u2019s output is a mix of all the value vectors, weighted by how well its query matches each key; the weights differ from token to token, so the output is not the plain average.',
      'Because the weights depend on the neighbours, the same word in another sentence comes out as a different vector.',
    ],
  });
  const c = f.controls;
  const inA = textField(c, 'First sentence', { testid: 'ctx-a', onInput: (a) => onState({ a }) });
  const inB = textField(c, 'Second sentence (uses the same word)', { testid: 'ctx-b', onInput: (b) => onState({ b }) });
  const chips = tokenChips(c, { label: 'Token of the first sentence', onPick: (i) => onState({ q: i }), testid: 'ctx-token' });
  const peSel = selectField(c, 'Positional encoding', { options: PE_OPTIONS, onChange: (pe) => onState({ pe }), testid: 'ctx-pe' });
  const headSel = selectField(c, 'Head', { options: [], onChange: (h) => onState({ head: h }), parse: Number, testid: 'ctx-head' });
  const seed = seedField(c, { onChange: (x) => onState({ seed: x }) });

  // card 1: one token against the average
  const card1 = f.card('One token: its output against the plain average of the values');
  const note1 = createNote(card1);
  const verdict1 = createVerdict(card1);
  const mAvg = createMetric(verdict1, { label: 'largest difference between the output and the plain average', testid: 'ctx-diff-avg' });
  const mSpread = createMetric(verdict1, { label: 'its weights, smallest \u2026 largest', testid: 'ctx-weight-spread' });
  const row1 = el('div', 'cx-figure-row');
  card1.append(row1);
  const bars = createBars(row1, { caption: 'Attention weights of the token', testid: 'ctx-weights', valueHeader: 'weight' });
  const hmHead = createHeatmap(row1, {
    id: 'ctx-head',
    tooltip,
    describe: (i, j) => ({ name: `${['output', 'average', 'difference'][i]}[${j}]`, provenance: ['\u03a3_j A[i, j]\u00b7V[j, d], from the engine', '(1/T)\u00b7\u03a3_j V[j, d], the plain average of the value vectors: the engine\u2019s output with every weight 1/T', 'output \u2212 average'][i] }),
  });

  // card 2: the same word in two sentences
  const card2 = f.card('The same word in two sentences');
  const note2 = createNote(card2);
  const verdict2 = createVerdict(card2);
  const mIn = createMetric(verdict2, { label: 'largest difference between the word\u2019s two inputs X\u2032', testid: 'ctx-input-diff' });
  const mOut = createMetric(verdict2, { label: 'largest difference between the word\u2019s two outputs Y', testid: 'ctx-diff-sentences' });
  const hmWord = createHeatmap(card2, {
    id: 'ctx-word',
    tooltip,
    describe: (i, j) => ({ name: `${['Y, first sentence', 'Y, second sentence', 'difference'][i]}[${j}]`, provenance: i < 2 ? 'the layer\u2019s output row (all heads, after W_O), from the engine' : 'first \u2212 second' }),
  });
  const note3 = createNote(card2, 'cx-try');

  function drawControls(s, m) {
    inA.set(s.a);
    inB.set(s.b);
    peSel.set(s.pe);
    seed.set(s.seed);
    if (!m) return;
    headSel.setOptions(headOptions(m.H));
    headSel.set(m.h);
    chips.update(m.a.tokens, m.i);
  }

  function drawAverage(m, pal) {
    const { T, h, i, D } = m;
    const x = m.average;
    const word = q(m.a.tokens[i].text);
    note1.set(`Head ${h + 1}, token ${i} ${word}: the bars are the weights it gives to each of the ${T} tokens (the tick marks 1/T = ${formatValue(1 / T, 3)}, what a plain average would give). The output row mixes the value vectors with these weights; the average row gives every token the same weight.`);
    mAvg.set(x.max, { tone: x.max > 1e-5 ? 'nonzero' : 'zero', noteText: x.max > 1e-5 ? 'not the average' : 'equal to the average' });
    mSpread.set(x.wMax - x.wMin, { text: `${formatValue(x.wMin, 3)} \u2026 ${formatValue(x.wMax, 3)}`, noteText: `a plain average: all 1/T = ${formatValue(1 / T, 3)}` });
    bars.update({ labels: labelsOf(m.a), values: x.weights, range: Math.max(x.wMax, 1 / T), reference: 1 / T, selected: i, shapeText: `query ${i}: ${word}`, digits: 3 });
    hmHead.update({
      matrix: stackRows([x.out, x.avg, x.diff]),
      title: `Head ${h + 1}, token ${word}`,
      shapeText: `3 rows \u00d7 d_k = ${D}`,
      rowLabels: [`output O${headMark(h)}`, 'plain average', 'difference'],
      colLabels: null,
      kind: 'diverging',
      palette: pal,
      selRow: 2,
      selCol: null,
    });
  }

  function drawWord(s, m, pal) {
    const word = q(m.a.tokens[m.i].text);
    const w = m.word;
    if (!w) {
      note2.set(`${word} does not appear in the second sentence. Type a second sentence that uses it (same spelling and case) to compare.`);
      mIn.set(NaN, { text: '\u2014' });
      mOut.set(NaN, { text: '\u2014' });
      hmWord.hidden = true;
      note3.set('');
      return;
    }
    hmWord.hidden = false;
    note2.set(`${word} is token ${m.i} of the first sentence and token ${w.j} of the second. It enters attention as the input row X\u2032 (embedding + position) and leaves as the output row Y (all ${m.H} heads, after W_O).`);
    const same = w.input === 0;
    mIn.set(w.input, { tone: same ? 'zero' : null, noteText: !same ? 'they differ: the word sits at another position' : s.pe === 'none' ? 'identical: no positions are added' : 'identical: same word, same position' });
    mOut.set(w.output, { tone: w.output > 1e-5 ? 'nonzero' : 'zero', noteText: w.output > 1e-5 ? 'different outputs' : 'the same output' });
    hmWord.update({
      matrix: stackRows([w.ya, w.yb, w.diff]),
      title: `Output Y of ${word}`,
      shapeText: `3 rows \u00d7 C = ${w.ya.length}`,
      rowLabels: ['sentence 1', 'sentence 2', 'difference'],
      colLabels: null,
      kind: 'diverging',
      palette: pal,
      selRow: 2,
      selCol: null,
    });
    if (same) note3.set(`Same input row, different output row: the difference (largest ${formatDiff(w.output)}) comes from the other words alone.`);
    else if (s.pe !== 'none') note3.set('Here the word sits at different positions, so part of the difference is the positional encoding. Put it at the same position in both sentences, or switch positions to none, to see the context alone at work.');
    else note3.set(`Different outputs from the context alone (largest difference ${formatDiff(w.output)}).`);
  }

  return {
    frame: f,
    /** model: contextModel(…) or null (no result yet: only the controls are set). */
    update(s, m, pal) {
      drawControls(s, m);
      if (!m) return;
      drawAverage(m, pal);
      drawWord(s, m, pal);
    },
  };
}
