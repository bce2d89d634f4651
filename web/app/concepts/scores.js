// Idea 3: scaled dot-product attention. Raw scores Q·Kᵀ can be negative and
// their rows sum to anything; after the 1/√D scale and the row softmax every
// row is a distribution (non-negative, sums to 1).

import { el } from '../views/dom.js';
import { createHeatmap } from '../views/heatmap.js';
import { createFormula } from '../views/formula.js';
import { subscript, formatNumber } from '../format.js';
import {
  createDemoFrame, createMetric, createVerdict, createNote, textField, selectField, checkField, seedField, tokenChips,
  createCachedRun, rowOf, clampIndex, labelsOf, q, formatSum,
} from './common.js';
import { createBars } from './bars.js';

function rowStats(values) {
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  for (const x of values) {
    min = Math.min(min, x);
    max = Math.max(max, x);
    sum += x;
  }
  return { min, max, sum };
}

export function createScoresDemo(root, { engine, onState, tooltip, palette }) {
  const f = createDemoFrame(root, 'scores', {
    claim: [
      'A raw score is a dot product q\u00b7k: it can be negative, and a row of them adds up to anything.',
      'Only after dividing by \u221aD and taking the softmax of each row do we get weights: all non-negative, each row summing to exactly one.',
    ],
  });
  const c = f.controls;
  const inS = textField(c, 'Sentence', { testid: 'scores-s', onInput: (s) => onState({ s }) });
  const chips = tokenChips(c, { label: 'Query (row)', onPick: (i) => onState({ q: i }), testid: 'scores-query' });
  const headSel = selectField(c, 'Head', { options: [], onChange: (h) => onState({ head: h }), parse: Number, testid: 'scores-head' });
  const scaleBox = checkField(c, 'Divide the scores by \u221aD', { onChange: (v) => onState({ scale: v }), testid: 'scores-scale' });
  const seed = seedField(c, { onChange: (x) => onState({ seed: x }) });

  let trace = null;
  let head = 0;

  const card1 = f.card('One row of scores, before and after softmax');
  const note1 = createNote(card1);
  const verdict = createVerdict(card1);
  const mRawMin = createMetric(verdict, { label: 'smallest raw score', testid: 'scores-raw-min' });
  const mRawSum = createMetric(verdict, { label: 'sum of the raw row', testid: 'scores-raw-sum' });
  const mWMin = createMetric(verdict, { label: 'smallest weight', testid: 'scores-weight-min' });
  const mWSum = createMetric(verdict, { label: 'sum of the weights', testid: 'scores-weight-sum' });
  const row = el('div', 'cx-figure-row cx-bars-row');
  card1.append(row);
  const barsRaw = createBars(row, { caption: 'Raw scores S = q\u00b7k', testid: 'scores-raw', signed: true, valueHeader: 'S' });
  const barsScaled = createBars(row, { caption: 'Scaled S\u2032', testid: 'scores-scaled', signed: true, valueHeader: 'S\u2032' });
  const barsW = createBars(row, { caption: 'Weights A = softmax(S\u2032)', testid: 'scores-weights', valueHeader: 'A' });
  const formula = createFormula(card1, { testid: 'scores-formula' });

  const card2 = f.card('Every row of every head');
  const verdict2 = createVerdict(card2);
  const mAll = createMetric(verdict2, { label: 'largest |row sum \u2212 1| over all weight rows', testid: 'scores-allrows', wide: true });
  const mNeg = createMetric(verdict2, { label: 'entries below zero, all heads', testid: 'scores-negatives', wide: true });
  const maps = el('div', 'cx-figure-row');
  card2.append(maps);
  const select = (i, j) => onState({ q: i, k: j });
  const hmS = createHeatmap(maps, {
    id: 'scores-raw',
    share: 0.5,
    tooltip,
    onCellClick: select,
    describe: (i, j) => ({ name: `S${subscript(head + 1)}[${i}, ${j}]`, provenance: `q of ${q(trace.tokens[i].text)} \u00b7 k of ${q(trace.tokens[j].text)}, from the engine` }),
  });
  const hmA = createHeatmap(maps, {
    id: 'scores-weights',
    share: 0.5,
    tooltip,
    onCellClick: select,
    describe: (i, j) => ({ name: `A${subscript(head + 1)}[${i}, ${j}]`, provenance: `softmax of row ${i} of S\u2032, from the engine` }),
  });

  const run = createCachedRun(engine, f);
  return {
    update(s) {
      inS.set(s.s);
      scaleBox.set(s.scale);
      seed.set(s.seed);
      const tr = run({ sentence: s.s, scale: s.scale, seed: s.seed });
      if (!tr) return;
      trace = tr;
      const T = tr.tokens.length;
      const H = tr.heads.length;
      const D = tr.config.dHead;
      head = clampIndex(s.head, H);
      const i = clampIndex(s.q, T);
      const j = clampIndex(s.k, T);
      if (i !== s.q || j !== s.k || head !== s.head) queueMicrotask(() => onState({ q: i, k: j, head }));
      headSel.setOptions(tr.heads.map((_, x) => ({ value: x, text: `${x + 1} of ${H}` })));
      headSel.set(head);
      chips.update(tr.tokens, i);
      const pal = palette();
      const labels = labelsOf(tr);
      const h = tr.heads[head];
      const raw = rowOf(h.scores, i);
      const scaled = rowOf(h.scaled, i);
      const w = rowOf(h.weights, i);
      const rs = rowStats(raw);
      const ss = rowStats(scaled);
      const ws = rowStats(w);
      const word = q(tr.tokens[i].text);

      note1.set(`Head ${head + 1}, query ${i} ${word}: its ${T} raw scores, the same scores ${s.scale ? `divided by \u221aD = \u221a${D} = ${Math.sqrt(D).toFixed(3)}` : 'unscaled (the scale is off)'}, and the softmax of that row.`);
      mRawMin.set(rs.min, { text: formatNumber(rs.min, 3), tone: rs.min < 0 ? 'bad' : null, noteText: rs.min < 0 ? 'negative: not a weight' : 'this row happens to have none; try another query' });
      mRawSum.set(rs.sum, { text: formatNumber(rs.sum, 3), tone: Math.abs(rs.sum - 1) > 1e-3 ? 'bad' : null, noteText: Math.abs(rs.sum - 1) > 1e-3 ? 'not 1' : 'close to 1 by chance' });
      mWMin.set(ws.min, { text: formatNumber(ws.min, 4), tone: ws.min >= 0 ? 'good' : 'bad', noteText: ws.min >= 0 ? 'never negative' : 'negative!' });
      mWSum.set(ws.sum, { text: formatSum(ws.sum), tone: Math.abs(ws.sum - 1) < 1e-5 ? 'good' : 'bad', noteText: 'a distribution' });
      const rawRange = Math.max(Math.abs(rs.min), Math.abs(rs.max));
      barsRaw.update({ labels, values: raw, range: rawRange, selected: j, shapeText: `row ${i}`, decimals: 2, foot: [el('span', 'num', { text: `sum ${formatNumber(rs.sum, 3)}`, testid: 'scores-raw-foot' })] });
      barsScaled.update({ labels, values: scaled, range: Math.max(Math.abs(ss.min), Math.abs(ss.max)), selected: j, shapeText: s.scale ? `S/\u221a${D}` : 'scale off: S\u2032 = S', decimals: 2, foot: [el('span', 'num', { text: `sum ${formatNumber(ss.sum, 3)}` })] });
      barsW.update({ labels, values: w, range: Math.max(ws.max, 1e-9), selected: j, shapeText: 'softmax', decimals: 3, foot: [el('span', 'num cx-strong', { text: `sum ${formatSum(ws.sum)}` })] });
      // the softmax of the selected key, with the engine's numbers substituted
      let total = 0;
      for (const x of scaled) total += Math.exp(x - ss.max);
      const mine = Math.exp(scaled[j] - ss.max);
      formula.set([
        [`A[${i}, ${j}] = exp(S\u2032[${i}, ${j}] \u2212 max) / \u03a3 exp(S\u2032[${i}, \u00b7] \u2212 max) = exp(`, { n: scaled[j] }, ' \u2212 ', { p: ss.max }, ') / ', { n: total }, ' = ', { n: mine / total, decimals: 4 }, { muted: ` (engine: ${formatNumber(w[j], 4)})` }],
        { caption: `Key ${j} ${q(tr.tokens[j].text)}: raw ${formatNumber(raw[j], 3)} \u2192 scaled ${formatNumber(scaled[j], 3)} \u2192 weight ${formatNumber(w[j], 4)}. The exponential makes every weight positive; dividing by the row total makes the row sum to one. Click a cell below to pick another.` },
      ]);

      // every row of every head
      let worst = 0;
      let negRaw = 0;
      let negW = 0;
      let rowsCount = 0;
      for (const hh of tr.heads) {
        for (let r = 0; r < T; r++) {
          let sum = 0;
          for (let x = 0; x < T; x++) {
            const a = hh.weights.data[r * T + x];
            sum += a;
            if (a < 0) negW++;
            if (hh.scores.data[r * T + x] < 0) negRaw++;
          }
          worst = Math.max(worst, Math.abs(sum - 1));
          rowsCount++;
        }
      }
      mAll.set(worst, { tone: worst < 1e-6 ? 'zero' : 'bad', noteText: `${rowsCount} rows (${H} heads \u00d7 ${T} queries): each sums to 1 up to float rounding` });
      mNeg.set(negW, { text: `${negRaw} raw scores, ${negW} weights`, noteText: `of ${H * T * T} each: raw scores are often negative, weights never` });
      hmS.update({ matrix: h.scores, title: `Raw scores S${subscript(head + 1)}`, rowLabels: labels, colLabels: labels, kind: 'diverging', palette: pal, selRow: i, selCol: j });
      hmA.update({ matrix: h.weights, title: `Weights A${subscript(head + 1)} (rows sum to 1)`, rowLabels: labels, colLabels: labels, kind: 'sequential', palette: pal, selRow: i, selCol: j });
    },
  };
}
