// Idea 6's view: two sentences' outputs, un-permuted, under the three
// encodings (table, verdict, three heatmaps), then the sinusoidal encoding
// itself (heatmap, a few dimensions as curves, the position·position dot
// products). Draws the model the controller (../order.js) gives it.

import { el } from '../../kit/dom.js';
import { createHeatmap } from '../../kit/heatmap.js';
import {
  createDemoFrame, createMetric, createVerdict, createNote, textField, selectField, seedField, createTable,
  labelsOf, q, formatDiff,
} from '../common.js';
import { createLineChart } from '../chart.js';
import { KIND_TEXT } from '../order-distance.js';

const SAME = 1e-5; // "the same up to float rounding"

export function createOrderView(root, { onState, tooltip, encodings }) {
  const f = createDemoFrame(root, 'order', {
    claim: [
      'Attention compares every token with every other, but nothing in that comparison says where a token stands. Without a positional encoding, reordering the words only reorders the outputs: the same vectors come out, permuted.',
      'Adding a position vector to each input (sinusoidal or learned) makes the order matter; so do rotary and ALiBi, which act inside attention on the distance between two words.',
    ],
  });
  const c = f.controls;
  const inA = textField(c, 'First sentence', { testid: 'order-a', onInput: (a) => onState({ a }) });
  const inB = textField(c, 'Second sentence (the same words in another order, or not)', { testid: 'order-b', onInput: (b) => onState({ b }) });
  const peSel = selectField(c, 'Positional encoding shown below', { options: encodings.map((p) => ({ value: p, text: KIND_TEXT[p] ?? p })), onChange: (pe) => onState({ pe }), testid: 'order-pe' });
  const seed = seedField(c, { onChange: (x) => onState({ seed: x }) });

  const card1 = f.card('Same words, other order: are the outputs the same vectors, permuted?');
  const permNote = createNote(card1, 'cx-note cx-strong-note');
  const verdict = createVerdict(card1);
  const mCur = createMetric(verdict, { label: 'largest difference between the two sentences\u2019 outputs, after un-permuting', testid: 'order-diff', wide: true });
  const table = createTable(card1, { caption: `All ${encodings.length} kinds of positions, same sentences and seed`, headers: ['positions', 'largest difference, un-permuted', 'the outputs are'], testid: 'order-table' });
  const note1 = createNote(card1);
  const maps = el('div', 'cx-figure-row');
  card1.append(maps);
  let labelsB = [];
  let permNow = null;
  const hmA = createHeatmap(maps, { id: 'order-ya', tooltip, describe: (i, j) => ({ name: `Y_a[${permNow?.[i] ?? i}, ${j}]`, provenance: `output row of ${q(labelsB[i] ?? '')} in the first sentence, moved to the second sentence\u2019s order` }) });
  const hmB = createHeatmap(maps, { id: 'order-yb', tooltip, describe: (i, j) => ({ name: `Y_b[${i}, ${j}]`, provenance: `output row of ${q(labelsB[i] ?? '')} in the second sentence` }) });
  const hmD = createHeatmap(maps, { id: 'order-diff', tooltip, describe: (i, j) => ({ name: `difference [${i}, ${j}]`, provenance: 'Y_a (reordered) \u2212 Y_b' }) });

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

  function drawControls(s) {
    inA.set(s.a);
    inB.set(s.b);
    peSel.set(s.pe);
    seed.set(s.seed);
    nSel.set(s.n);
    cSel.set(s.c);
  }

  function drawVerdict(s, m) {
    const { perm, diffs, a, b } = m;
    if (!perm) {
      permNote.set(`The second sentence is not a reordering of the first (its tokens differ${a.tokens.length !== b.tokens.length ? ' in number' : ''}), so there is nothing to un-permute. Use the same words in another order, e.g. \u201cdog chases cat\u201d.`);
    } else {
      permNote.set(m.identity
        ? 'The two sentences have the same words in the same order: try swapping two words in the second one.'
        : `The second sentence is a reordering of the first: its token i is token perm(i) of the first, perm = [${perm.join(', ')}].`);
    }
    table.set(encodings.map((p) => ({
      className: p === s.pe ? 'is-current' : '',
      testid: `order-row-${p}`,
      cells: [
        p,
        { text: formatDiff(diffs[p]), value: diffs[p], testid: `order-diff-${p}` },
        { text: !perm ? '\u2014' : diffs[p] < SAME ? 'the same vectors, permuted' : 'different vectors', className: !perm ? '' : diffs[p] < SAME ? 'is-zero' : 'is-nonzero' },
      ],
    })));
    const d = diffs[s.pe];
    mCur.set(d, {
      label: `largest difference between the two sentences\u2019 outputs, after un-permuting (positions: ${KIND_TEXT[s.pe] ?? s.pe})`,
      tone: !perm ? null : d < SAME ? 'zero' : 'nonzero',
      noteText: !perm ? 'not a permutation' : d < SAME ? (d === 0 ? 'exactly the same vectors' : '0 up to float rounding: order is invisible') : 'order changes the outputs',
    });
  }

  function drawOutputs(s, m, pal) {
    const { perm } = m;
    permNow = perm;
    labelsB = labelsOf(m.b);
    // ALiBi's bias depends on |i − j| only, and a reversed sentence keeps every distance
    const reversed = perm && perm.length > 1 && perm.every((k, i) => k === perm.length - 1 - i);
    const alibiBlind = reversed && m.diffs.alibi < SAME
      ? ` With ALiBi the reversed sentence gives the same vectors too (${formatDiff(m.diffs.alibi)}): its bias m\u00b7|i \u2212 j| sees only distances, and reversing keeps every distance. Without a causal mask ALiBi cannot tell a sentence from its reverse; with one (as in the models that use it) the mask gives the direction. Swap only two words to see it differ.`
      : '';
    note1.set(perm
      ? `Positions ${KIND_TEXT[s.pe] ?? s.pe}. Left: the first sentence\u2019s output rows, moved into the second sentence\u2019s word order; middle: the second sentence\u2019s outputs; right: their difference.${s.pe === 'none' ? ' Any difference is float rounding from adding the same numbers in another order.' : ''}${alibiBlind}`
      : `Positions ${KIND_TEXT[s.pe] ?? s.pe}: the outputs of the two sentences.`);
    const shape = (x) => `${x.rows} tokens \u00d7 C = ${x.cols}`;
    hmA.update({ matrix: m.ya, title: perm ? 'Y_a (sentence 1), reordered' : 'Y_a (sentence 1)', shapeText: shape(m.ya), rowLabels: perm ? labelsB : labelsOf(m.ra), colLabels: null, kind: 'diverging', palette: pal, selRow: null, selCol: null });
    hmB.update({ matrix: m.yb, title: 'Y_b (sentence 2)', shapeText: shape(m.yb), rowLabels: labelsB, colLabels: null, kind: 'diverging', palette: pal, selRow: null, selCol: null });
    hmD.hidden = !perm;
    if (perm) hmD.update({ matrix: m.difference, title: 'Difference', shapeText: shape(m.difference), rowLabels: labelsB, colLabels: null, kind: 'diverging', palette: pal, selRow: null, selCol: null, range: Math.max(1e-6, ...Array.from(m.ya.data, Math.abs)) });
  }

  function drawEncoding(e, pal) {
    const { pe, N, C } = e;
    const posLabels = Array.from({ length: N }, (_, i) => String(i));
    note2.set(`P[pos, 2i] = sin(pos / 10000^(2i/C)) and P[pos, 2i+1] = cos(\u2026), here for ${N} positions and C = ${C}. Low dimensions turn fast, high ones slowly, so every position gets its own pattern. The dot product of two positions depends only on how far apart they are: along each diagonal of P\u00b7P\u1d40 it does not change.`);
    hmP.update({ matrix: pe, title: 'Sinusoidal encoding P', shapeText: `${N} positions \u00d7 ${C} dimensions`, rowLabels: posLabels, colLabels: null, kind: 'diverging', palette: pal, selRow: null, selCol: null, range: 1 });
    const dims = [0, 2, 3, C / 4, C / 2].filter((x, i, all) => x < C && all.indexOf(x) === i);
    curves.update({
      series: dims.map((dm, i) => ({ name: `dim ${dm} (${dm % 2 ? 'cos' : 'sin'})`, className: `cx-s-c${i}`, points: Array.from({ length: N }, (_, p) => [p, pe.data[p * C + dm]]), active: true, noDots: true })),
      xDomain: [0, N - 1],
      yDomain: [-1, 1],
    });
    mShift.set(e.shift, { tone: e.shift < 1e-4 ? 'zero' : null, noteText: e.shift < 1e-4 ? 'a function of the distance only (float rounding)' : '' });
    hmDot.update({ matrix: e.dot, title: 'Dot products P[i]\u00b7P[j]', shapeText: `${N} positions \u00d7 ${N} positions`, rowLabels: posLabels, colLabels: posLabels, kind: 'diverging', palette: pal, selRow: null, selCol: null });
  }

  return {
    frame: f,
    /** model: {sentences: orderModel(…) or null, encoding: encodingModel(…) or null}. */
    update(s, m, pal) {
      drawControls(s);
      if (!m.sentences) return;
      drawVerdict(s, m.sentences);
      drawOutputs(s, m.sentences, pal);
      if (m.encoding) drawEncoding(m.encoding, pal);
    },
  };
}
