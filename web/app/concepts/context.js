// Idea 1: self-attention builds context-aware vectors, not a plain average.
// Evidence: one token's head output O[i] = Σ_j A[i,j]·V[j] beside the uniform
// average (1/T)·Σ_j V[j] and their difference; and one word in two sentences:
// the same input row, two different output rows Y.

import { el } from '../views/dom.js';
import { createHeatmap } from '../views/heatmap.js';
import { subscript } from '../format.js';
import {
  createDemoFrame, createMetric, createVerdict, createNote, textField, selectField, seedField, tokenChips,
  attempt, rowOf, maxAbs, stackRows, clampIndex, labelsOf, q, formatDiff,
} from './common.js';
import { createBars } from './bars.js';
import { createRace } from './race-view.js';

const PE_OPTIONS = [
  { value: 'none', text: 'none' },
  { value: 'sinusoidal', text: 'sinusoidal' },
  { value: 'learned', text: 'learned' },
];

/** Index of the first token of b with the same id as token `id` (−1 if none). */
function findToken(trace, id) {
  return trace.tokens.findIndex((t) => t.id === id);
}

export function createContextDemo(root, { engine, onState, tooltip, palette }) {
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
  const seed = seedField(c, { onChange: (s) => onState({ seed: s }) });

  // card 1: one token against the average
  const card1 = f.card('One token: its output against the plain average of the values');
  const note1 = createNote(card1);
  const verdict1 = createVerdict(card1);
  const mAvg = createMetric(verdict1, { label: 'max |output \u2212 average|', testid: 'ctx-diff-avg' });
  const mSpread = createMetric(verdict1, { label: 'weights range (an average would use 1/T for all)', testid: 'ctx-weight-spread' });
  const row1 = el('div', 'cx-figure-row');
  card1.append(row1);
  const bars = createBars(row1, { caption: 'Attention weights of the token', testid: 'ctx-weights', valueHeader: 'weight' });
  const hmHead = createHeatmap(row1, {
    id: 'ctx-head',
    tooltip,
    describe: (i, j, v) => ({ name: `${['output', 'average', 'difference'][i]}[${j}]`, provenance: ['\u03a3_j A[i, j]\u00b7V[j, d], from the engine', '(1/T)\u00b7\u03a3_j V[j, d], the plain average of the engine\u2019s value vectors', 'output \u2212 average'][i] }),
  });

  // card 2: the same word in two sentences
  const card2 = f.card('The same word in two sentences');
  const note2 = createNote(card2);
  const verdict2 = createVerdict(card2);
  const mIn = createMetric(verdict2, { label: 'max |input X\u2032 \u2212 input X\u2032|', testid: 'ctx-input-diff' });
  const mOut = createMetric(verdict2, { label: 'max |output Y \u2212 output Y|', testid: 'ctx-diff-sentences' });
  const hmWord = createHeatmap(card2, {
    id: 'ctx-word',
    tooltip,
    describe: (i, j) => ({ name: `${['Y, first sentence', 'Y, second sentence', 'difference'][i]}[${j}]`, provenance: i < 2 ? 'the layer\u2019s output row (all heads, after W_O), from the engine' : 'first \u2212 second' }),
  });
  const note3 = createNote(card2, 'cx-try');

  const race = createRace(f, 'context', { onState, tooltip, palette });

  let key = null;
  let runs = null;

  return {
    hide: () => race.hide(),
    update(s) {
      race.update(s);
      inA.set(s.a);
      inB.set(s.b);
      peSel.set(s.pe);
      seed.set(s.seed);
      const k = JSON.stringify([s.a, s.b, s.pe, s.seed]);
      if (k !== key) {
        const r = attempt(() => ({
          a: engine.run({ sentence: s.a, positional: s.pe, seed: s.seed }),
          b: engine.run({ sentence: s.b, positional: s.pe, seed: s.seed }),
        }));
        if (r.error) {
          f.setError(r.error);
          if (!runs) return;
        } else {
          f.setError(null);
          runs = r.value;
          key = k;
        }
      }
      const { a, b } = runs;
      const T = a.tokens.length;
      const H = a.heads.length;
      const i = clampIndex(s.q, T);
      const h = clampIndex(s.head, H);
      if (i !== s.q || h !== s.head) queueMicrotask(() => onState({ q: i, head: h }));
      headSel.setOptions(a.heads.map((_, x) => ({ value: x, text: `${x + 1} of ${H}` })));
      headSel.set(h);
      const tokenB = findToken(b, a.tokens[i].id);
      chips.update(a.tokens, i);
      const pal = palette();
      const word = q(a.tokens[i].text);

      // 1. output vs plain average (head h)
      const head = a.heads[h];
      const D = head.value.cols;
      const out = rowOf(head.output, i);
      const avg = new Float32Array(D);
      for (let j = 0; j < T; j++) for (let d = 0; d < D; d++) avg[d] += head.value.data[j * D + d];
      for (let d = 0; d < D; d++) avg[d] /= T;
      const diff = out.map((x, d) => x - avg[d]);
      const dAvg = maxAbs(out, avg);
      const w = rowOf(head.weights, i);
      let wMin = Infinity;
      let wMax = -Infinity;
      for (const x of w) {
        wMin = Math.min(wMin, x);
        wMax = Math.max(wMax, x);
      }
      note1.set(`Head ${h + 1}, token ${i} ${word}: the bars are the weights it gives to each of the ${T} tokens (the tick marks 1/T = ${(1 / T).toFixed(3)}, what a plain average would give). The output row mixes the value vectors with these weights; the average row gives every token the same weight.`);
      mAvg.set(dAvg, { tone: dAvg > 1e-5 ? 'nonzero' : 'zero', noteText: dAvg > 1e-5 ? 'not the average' : 'equal to the average' });
      mSpread.set(wMax - wMin, { text: `${wMin.toFixed(3)} \u2026 ${wMax.toFixed(3)}`, noteText: `1/T = ${(1 / T).toFixed(3)}` });
      bars.update({ labels: labelsOf(a), values: w, range: Math.max(wMax, 1 / T), reference: 1 / T, selected: i, shapeText: `query ${i}: ${word}`, decimals: 3 });
      hmHead.update({
        matrix: stackRows([out, avg, diff]),
        title: `Head ${h + 1}, token ${word}`,
        shapeText: `3 \u00d7 D = ${D}`,
        rowLabels: [`output O${subscript(h + 1)}`, 'plain average', 'difference'],
        colLabels: null,
        kind: 'diverging',
        palette: pal,
        selRow: 2,
        selCol: null,
      });

      // 2. the same word in two sentences
      if (tokenB < 0) {
        note2.set(`${word} does not appear in the second sentence. Type a second sentence that uses it (same spelling and case) to compare.`);
        mIn.set(NaN, { text: '\u2014' });
        mOut.set(NaN, { text: '\u2014' });
        hmWord.hidden = true;
        note3.set('');
        return;
      }
      hmWord.hidden = false;
      const xa = rowOf(a.input, i);
      const xb = rowOf(b.input, tokenB);
      const ya = rowOf(a.output, i);
      const yb = rowOf(b.output, tokenB);
      const dIn = maxAbs(xa, xb);
      const dOut = maxAbs(ya, yb);
      note2.set(`${word} is token ${i} of the first sentence and token ${tokenB} of the second. It enters attention as the input row X\u2032 (embedding + position) and leaves as the output row Y (all ${H} heads, after W_O).`);
      mIn.set(dIn, { tone: dIn === 0 ? 'zero' : null, noteText: dIn === 0 ? 'the same input' : 'inputs differ (position)' });
      mOut.set(dOut, { tone: dOut > 1e-5 ? 'nonzero' : 'zero', noteText: dOut > 1e-5 ? 'different outputs' : 'same output' });
      hmWord.update({
        matrix: stackRows([ya, yb, ya.map((x, d) => x - yb[d])]),
        title: `Output Y of ${word}`,
        shapeText: `3 \u00d7 C = ${ya.length}`,
        rowLabels: ['sentence 1', 'sentence 2', 'difference'],
        colLabels: null,
        kind: 'diverging',
        palette: pal,
        selRow: 2,
        selCol: null,
      });
      if (dIn === 0) note3.set(`Same input row, different output row: the difference (max ${formatDiff(dOut)}) comes from the other words alone.`);
      else if (s.pe !== 'none') note3.set(`Here the word sits at different positions, so part of the difference is the positional encoding. Put it at the same position in both sentences, or switch positions to none, to see the context alone at work.`);
      else note3.set(`Different outputs from the context alone (max difference ${formatDiff(dOut)}).`);
    },
  };
}
