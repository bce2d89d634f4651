// Idea 6: positional encoding. Without positions, attention treats the input
// as a set: "dog chases cat" gives exactly the outputs of "cat chases dog",
// permuted (0 up to float rounding after un-permuting); with sinusoidal or
// learned positions the outputs differ. Below: the sinusoidal encoding itself
// (heatmap, a few dimensions as curves, the position·position dot products).

import { el } from '../views/dom.js';
import { createHeatmap } from '../views/heatmap.js';
import {
  createDemoFrame, createMetric, createVerdict, createNote, textField, selectField, seedField, createTable,
  attempt, rowOf, labelsOf, q, formatDiff,
} from './common.js';
import { createLineChart } from './chart.js';
import { createRace } from './race-view.js';

const PES = ['none', 'sinusoidal', 'learned'];
const PE_TEXT = { none: 'none', sinusoidal: 'sinusoidal', learned: 'learned' };
const SAME = 1e-5; // "the same up to float rounding"

/**
 * perm[i] = the index in a of token i of b (matching token ids, each used once),
 * or null when b is not a reordering of a.
 */
export function permutationOf(a, b) {
  if (a.length !== b.length) return null;
  const used = new Array(a.length).fill(false);
  const perm = [];
  for (const t of b) {
    const k = a.findIndex((x, j) => !used[j] && x.id === t.id);
    if (k < 0) return null;
    used[k] = true;
    perm.push(k);
  }
  return perm;
}

/** max over rows i and columns c of |Ya[perm[i], c] − Yb[i, c]|. */
function permutedDiff(ya, yb, perm) {
  let m = 0;
  for (let i = 0; i < perm.length; i++) {
    const ra = rowOf(ya, perm[i]);
    const rb = rowOf(yb, i);
    for (let c = 0; c < ra.length; c++) m = Math.max(m, Math.abs(ra[c] - rb[c]));
  }
  return m;
}

/** The rows of m in the order perm gives. */
function reorder(m, perm) {
  const data = new Float32Array(perm.length * m.cols);
  perm.forEach((k, i) => data.set(rowOf(m, k), i * m.cols));
  return { rows: perm.length, cols: m.cols, data };
}

export function createOrderDemo(root, { engine, onState, tooltip, palette }) {
  const f = createDemoFrame(root, 'order', {
    claim: [
      'Attention compares every token with every other, but nothing in that comparison says where a token stands. Without a positional encoding, reordering the words only reorders the outputs: the same vectors come out, permuted.',
      'Adding a position vector to each input (sinusoidal or learned) makes the order matter.',
    ],
  });
  const c = f.controls;
  const inA = textField(c, 'First sentence', { testid: 'order-a', onInput: (a) => onState({ a }) });
  const inB = textField(c, 'Second sentence (the same words in another order, or not)', { testid: 'order-b', onInput: (b) => onState({ b }) });
  const peSel = selectField(c, 'Positional encoding shown below', { options: PES.map((p) => ({ value: p, text: PE_TEXT[p] })), onChange: (pe) => onState({ pe }), testid: 'order-pe' });
  const seed = seedField(c, { onChange: (x) => onState({ seed: x }) });

  const card1 = f.card('Same words, other order: are the outputs the same vectors, permuted?');
  const permNote = createNote(card1, 'cx-note cx-strong-note');
  const verdict = createVerdict(card1);
  const mCur = createMetric(verdict, { label: 'max |Y\u2081[perm(i)] \u2212 Y\u2082[i]| after un-permuting', testid: 'order-diff', wide: true });
  const table = createTable(card1, { caption: 'All three encodings, same sentences and seed', headers: ['positions', 'max |diff|, un-permuted', 'the outputs are'], testid: 'order-table' });
  const note1 = createNote(card1);
  const maps = el('div', 'cx-figure-row');
  card1.append(maps);
  let labelsB = [];
  let permNow = null;
  const hmA = createHeatmap(maps, { id: 'order-ya', tooltip, describe: (i, j) => ({ name: `Y\u2081[${permNow?.[i] ?? i}, ${j}]`, provenance: `output row of ${q(labelsB[i] ?? '')} in the first sentence, moved to the second sentence\u2019s order` }) });
  const hmB = createHeatmap(maps, { id: 'order-yb', tooltip, describe: (i, j) => ({ name: `Y\u2082[${i}, ${j}]`, provenance: `output row of ${q(labelsB[i] ?? '')} in the second sentence` }) });
  const hmD = createHeatmap(maps, { id: 'order-diff', tooltip, describe: (i, j) => ({ name: `difference [${i}, ${j}]`, provenance: 'Y\u2081 (reordered) \u2212 Y\u2082' }) });

  // the sinusoidal encoding
  const card2 = f.card('What the sinusoidal encoding looks like');
  const c2 = el('div', 'cx-controls cx-inline-controls');
  card2.append(c2);
  const nSel = selectField(c2, 'Positions', { options: [16, 32, 64, 100].map((n) => ({ value: n, text: String(n) })), onChange: (n) => onState({ n }), parse: Number, testid: 'order-n' });
  const cSel = selectField(c2, 'Width C', { options: [16, 32, 64, 128].map((n) => ({ value: n, text: String(n) })), onChange: (x) => onState({ c: x }), parse: Number, testid: 'order-c' });
  const note2 = createNote(card2);
  const verdict2 = createVerdict(card2);
  const mShift = createMetric(verdict2, { label: 'largest change along a diagonal of P\u00b7P\u1d40', testid: 'order-shift', wide: true });
  const row2 = el('div', 'cx-figure-row');
  card2.append(row2);
  const hmP = createHeatmap(row2, { id: 'order-pe-map', compact: true, share: 0.3, tooltip, describe: (i, j) => ({ name: `P[${i}, ${j}]`, provenance: `position ${i}, dimension ${j}: ${j % 2 === 0 ? 'sin' : 'cos'}(${i} / 10000^(${j - (j % 2)}/C))` }) });
  const curves = createLineChart(row2, { title: 'A few dimensions over the positions', xLabel: 'position', yLabel: 'P[position, dim]', xLog: false, testid: 'order-curves', description: 'Low dimensions oscillate fast, high dimensions slowly.' });
  const hmDot = createHeatmap(row2, { id: 'order-dot', compact: true, share: 0.3, tooltip, describe: (i, j) => ({ name: `P[${i}]\u00b7P[${j}]`, provenance: `depends only on the distance ${Math.abs(i - j)}` }) });

  const race = createRace(f, 'order', { onState, tooltip, palette });

  let key = null;
  let runs = null;
  let keyP = null;
  let pe = null;
  return {
    hide: () => race.hide(),
    update(s) {
      race.update(s);
      inA.set(s.a);
      inB.set(s.b);
      peSel.set(s.pe);
      seed.set(s.seed);
      nSel.set(s.n);
      cSel.set(s.c);
      const k = JSON.stringify([s.a, s.b, s.seed]);
      if (k !== key) {
        const r = attempt(() => Object.fromEntries(PES.map((p) => [p, {
          a: engine.run({ sentence: s.a, positional: p, seed: s.seed }),
          b: engine.run({ sentence: s.b, positional: p, seed: s.seed }),
        }])));
        if (r.error) {
          f.setError(r.error);
          if (!runs) return;
        } else {
          f.setError(null);
          runs = r.value;
          key = k;
        }
      }
      const pal = palette();
      const ta = runs.none.a;
      const tb = runs.none.b;
      const perm = permutationOf(ta.tokens, tb.tokens);
      permNow = perm;
      labelsB = labelsOf(tb);
      if (!perm) {
        permNote.set(`The second sentence is not a reordering of the first (its tokens differ${ta.tokens.length !== tb.tokens.length ? ' in number' : ''}), so there is nothing to un-permute. Use the same words in another order, e.g. \u201cdog chases cat\u201d.`);
      } else {
        const identity = perm.every((x, i) => x === i);
        permNote.set(identity
          ? 'The two sentences have the same words in the same order: try swapping two words in the second one.'
          : `The second sentence is a reordering of the first: its token i is token perm(i) of the first, perm = [${perm.join(', ')}].`);
      }
      const diffs = Object.fromEntries(PES.map((p) => [p, perm ? permutedDiff(runs[p].a.output, runs[p].b.output, perm) : NaN]));
      table.set(PES.map((p) => ({
        className: p === s.pe ? 'is-current' : '',
        testid: `order-row-${p}`,
        cells: [
          PE_TEXT[p],
          { text: formatDiff(diffs[p]), value: diffs[p], testid: `order-diff-${p}` },
          { text: !perm ? '\u2014' : diffs[p] < SAME ? 'the same vectors, permuted' : 'different vectors', className: !perm ? '' : diffs[p] < SAME ? 'is-zero' : 'is-nonzero' },
        ],
      })));
      const d = diffs[s.pe];
      mCur.set(d, {
        label: `positions ${PE_TEXT[s.pe]}: max |Y\u2081[perm(i)] \u2212 Y\u2082[i]|`,
        tone: !perm ? null : d < SAME ? 'zero' : 'nonzero',
        noteText: !perm ? 'not a permutation' : d < SAME ? (d === 0 ? 'exactly the same vectors' : '0 up to float rounding: order is invisible') : 'order changes the outputs',
      });
      note1.set(perm
        ? `Positions ${PE_TEXT[s.pe]}. Left: the first sentence\u2019s output rows, moved into the second sentence\u2019s word order; middle: the second sentence\u2019s outputs; right: their difference.${s.pe === 'none' ? ' Any difference is float rounding from adding the same numbers in another order.' : ''}`
        : `Positions ${PE_TEXT[s.pe]}: the outputs of the two sentences.`);
      const ra = runs[s.pe].a;
      const rb = runs[s.pe].b;
      const ya = perm ? reorder(ra.output, perm) : ra.output;
      hmA.update({ matrix: ya, title: perm ? 'Y\u2081, rows in the second order' : 'Y\u2081', rowLabels: perm ? labelsB : labelsOf(ra), colLabels: null, kind: 'diverging', palette: pal, selRow: null, selCol: null });
      hmB.update({ matrix: rb.output, title: 'Y\u2082', rowLabels: labelsB, colLabels: null, kind: 'diverging', palette: pal, selRow: null, selCol: null });
      hmD.hidden = !perm;
      if (perm) {
        const diff = new Float32Array(ya.data.length);
        for (let x = 0; x < diff.length; x++) diff[x] = ya.data[x] - rb.output.data[x];
        hmD.update({ matrix: { rows: ya.rows, cols: ya.cols, data: diff }, title: 'Difference', rowLabels: labelsB, colLabels: null, kind: 'diverging', palette: pal, selRow: null, selCol: null, range: Math.max(1e-6, ...Array.from(ya.data, Math.abs)) });
      }

      // the encoding
      const kp = JSON.stringify([s.n, s.c]);
      if (kp !== keyP) {
        const r = attempt(() => engine.run({ sentence: Array(s.n).fill('a').join(' '), positional: 'sinusoidal', dModel: s.c, heads: 1 }).positional);
        if (r.error) {
          f.setError(r.error);
          if (!pe) return;
        } else {
          pe = r.value;
          keyP = kp;
        }
      }
      const N = pe.rows;
      const C = pe.cols;
      const dot = new Float32Array(N * N);
      for (let i = 0; i < N; i++) {
        for (let j = 0; j < N; j++) {
          let sum = 0;
          for (let x = 0; x < C; x++) sum += pe.data[i * C + x] * pe.data[j * C + x];
          dot[i * N + j] = sum;
        }
      }
      let shift = 0;
      for (let i = 0; i + 1 < N; i++) for (let j = 0; j + 1 < N; j++) shift = Math.max(shift, Math.abs(dot[i * N + j] - dot[(i + 1) * N + j + 1]));
      const posLabels = Array.from({ length: N }, (_, i) => String(i));
      note2.set(`P[pos, 2i] = sin(pos / 10000^(2i/C)) and P[pos, 2i+1] = cos(\u2026), here for ${N} positions and C = ${C}. Low dimensions turn fast, high ones slowly, so every position gets its own pattern. The dot product of two positions depends only on how far apart they are: along each diagonal of P\u00b7P\u1d40 it does not change.`);
      hmP.update({ matrix: pe, title: 'Sinusoidal encoding P', shapeText: `${N} positions \u00d7 ${C} dimensions`, rowLabels: posLabels, colLabels: null, kind: 'diverging', palette: pal, selRow: null, selCol: null, range: 1 });
      const dims = [0, 2, 3, C / 4, C / 2].filter((x, i, all) => x < C && all.indexOf(x) === i);
      curves.update({
        series: dims.map((dm, i) => ({ name: `dim ${dm} (${dm % 2 ? 'cos' : 'sin'})`, className: `cx-s-c${i}`, points: Array.from({ length: N }, (_, p) => [p, pe.data[p * C + dm]]), active: true, noDots: true })),
        xDomain: [0, N - 1],
        yDomain: [-1, 1],
      });
      mShift.set(shift, { tone: shift < 1e-4 ? 'zero' : null, noteText: shift < 1e-4 ? 'a function of the distance only (float rounding)' : '' });
      hmDot.update({ matrix: { rows: N, cols: N, data: dot }, title: 'Dot products P[i]\u00b7P[j]', shapeText: `${N} \u00d7 ${N}`, rowLabels: posLabels, colLabels: posLabels, kind: 'diverging', palette: pal, selRow: null, selCol: null });
    },
  };
}
