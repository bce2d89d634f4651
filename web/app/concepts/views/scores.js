// Idea 3's view: one row of scores as bars (raw, scaled, softmax) with the
// softmax of one key written out, then every row of every head as two heatmaps.
// Draws the model the controller (../scores.js) gives it.

import { el } from '../../kit/dom.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { createFormula } from '../../kit/formula.js';

/** The concept lab writes its formulas with 3 significant digits, like its metrics and bars. */
const DIGITS = 3;
import { headMark, formatValue } from '../../kit/format.js';
import {
  createDemoFrame, createMetric, createVerdict, createNote, textField, selectField, checkField, seedField, tokenChips,
  labelsOf, q, formatSum, headOptions,
} from '../common.js';
import { createBars } from '../bars.js';

export function createScoresView(root, { onState, tooltip }) {
  const f = createDemoFrame(root, 'scores', {
    claim: [
      'A raw score is a dot product q\u00b7k: it can be negative, and a row of them adds up to anything.',
      'Only after dividing by \u221ad_k and taking the softmax of each row do we get weights: all non-negative, each row summing to exactly one.',
    ],
  });
  const c = f.controls;
  const inS = textField(c, 'Sentence', { testid: 'scores-s', onInput: (s) => onState({ s }) });
  const chips = tokenChips(c, { label: 'Query (row)', onPick: (i) => onState({ q: i }), testid: 'scores-query' });
  const headSel = selectField(c, 'Head', { options: [], onChange: (h) => onState({ head: h }), parse: Number, testid: 'scores-head' });
  const scaleBox = checkField(c, 'Divide the scores by \u221ad_k', { onChange: (v) => onState({ scale: v }), testid: 'scores-scale' });
  const seed = seedField(c, { onChange: (x) => onState({ seed: x }) });

  let model = null; // the last one drawn, for the tooltips

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
  const formula = createFormula(card1, { testid: 'scores-formula', digits: DIGITS });

  const card2 = f.card('Every row of every head');
  const verdict2 = createVerdict(card2);
  const mAll = createMetric(verdict2, { label: 'largest distance of a weight row\u2019s sum from 1', testid: 'scores-allrows', wide: true });
  const mNeg = createMetric(verdict2, { label: 'entries below zero, all heads', testid: 'scores-negatives', wide: true });
  const maps = el('div', 'cx-figure-row');
  card2.append(maps);
  const select = (i, j) => onState({ q: i, k: j });
  const word = (i) => q(model.trace.tokens[i].text);
  const hmS = createHeatmap(maps, {
    id: 'scores-raw',
    share: 0.5,
    tooltip,
    onCellClick: select,
    describe: (i, j) => ({ name: `S${headMark(model.head)}[${i}, ${j}]`, provenance: `q of ${word(i)} \u00b7 k of ${word(j)}, from the engine` }),
  });
  const hmA = createHeatmap(maps, {
    id: 'scores-weights',
    share: 0.5,
    tooltip,
    onCellClick: select,
    describe: (i, j) => ({ name: `A${headMark(model.head)}[${i}, ${j}]`, provenance: `softmax of row ${i} of S\u2032, from the engine` }),
  });

  function drawControls(s, m) {
    inS.set(s.s);
    scaleBox.set(s.scale);
    seed.set(s.seed);
    if (!m) return;
    headSel.setOptions(headOptions(m.H));
    headSel.set(m.head);
    chips.update(m.trace.tokens, m.i);
  }

  function drawRow(s, m) {
    const { head, i, j, T, D, raw: rs, scaled: ss, weights: ws } = m;
    const labels = labelsOf(m.trace);
    note1.set(`Head ${head + 1}, query ${i} ${word(i)}: its ${T} raw scores, the same scores ${s.scale ? `divided by \u221ad_k = \u221a${D} = ${formatValue(Math.sqrt(D), 3)}` : 'unscaled (the scale is off)'}, and the softmax of that row.`);
    mRawMin.set(rs.min, { text: formatValue(rs.min, 3), tone: rs.min < 0 ? 'bad' : null, noteText: rs.min < 0 ? 'negative: not a weight' : 'this row happens to have none; try another query' });
    mRawSum.set(rs.sum, { text: formatValue(rs.sum, 3), tone: Math.abs(rs.sum - 1) > 1e-3 ? 'bad' : null, noteText: Math.abs(rs.sum - 1) > 1e-3 ? 'not 1' : 'close to 1 by chance' });
    mWMin.set(ws.min, { text: formatValue(ws.min, 3), tone: ws.min >= 0 ? 'good' : 'bad', noteText: ws.min >= 0 ? 'never negative' : 'negative!' });
    mWSum.set(ws.sum, { text: formatSum(ws.sum), tone: Math.abs(ws.sum - 1) < 1e-5 ? 'good' : 'bad', noteText: 'a distribution' });
    barsRaw.update({ labels, values: rs.values, range: Math.max(Math.abs(rs.min), Math.abs(rs.max)), selected: j, shapeText: `row ${i}`, digits: 3, foot: [el('span', 'num', { text: `sum ${formatValue(rs.sum, 3)}`, testid: 'scores-raw-foot' })] });
    barsScaled.update({ labels, values: ss.values, range: Math.max(Math.abs(ss.min), Math.abs(ss.max)), selected: j, shapeText: s.scale ? `S/\u221a${D}` : 'scale off: S\u2032 = S', digits: 3, foot: [el('span', 'num', { text: `sum ${formatValue(ss.sum, 3)}` })] });
    barsW.update({ labels, values: ws.values, range: Math.max(ws.max, 1e-9), selected: j, shapeText: 'softmax', digits: 3, foot: [el('span', 'num cx-strong', { text: `sum ${formatSum(ws.sum)}` })] });
    const { total, mine } = m.softmax;
    formula.set([
      [`A[${i}, ${j}] = exp(S\u2032[${i}, ${j}] \u2212 max) / \u03a3 exp(S\u2032[${i}, \u00b7] \u2212 max) = exp(`, { n: ss.values[j] }, ' \u2212 ', { p: ss.max }, ') / ', { n: total }, ' = ', { n: mine / total, digits: 4 }, { muted: ` (engine: ${formatValue(ws.values[j], 4)})` }],
      { caption: `Key ${j} ${word(j)}: raw ${formatValue(rs.values[j], 3)} \u2192 scaled ${formatValue(ss.values[j], 3)} \u2192 weight ${formatValue(ws.values[j], 3)}. The exponential makes every weight positive; dividing by the row total makes the row sum to one. Click a cell below to pick another.` },
    ]);
  }

  function drawAll(m, pal) {
    const { head, i, j, T, H, all } = m;
    const labels = labelsOf(m.trace);
    const h = m.trace.heads[head];
    mAll.set(all.worst, { tone: all.worst < 1e-6 ? 'zero' : 'bad', noteText: `${all.rows} rows (${H} heads \u00d7 ${T} queries): each sums to 1 up to float rounding` });
    mNeg.set(all.negWeights, { text: `${all.negRaw} raw scores, ${all.negWeights} weights`, noteText: `of ${all.entries} each (${H} heads \u00d7 ${T} \u00d7 ${T}): raw scores are often negative, weights never` });
    hmS.update({ matrix: h.scores, title: `Raw scores S${headMark(head)}`, shapeText: `${T} queries \u00d7 ${T} keys`, rowLabels: labels, colLabels: labels, kind: 'diverging', palette: pal, selRow: i, selCol: j });
    hmA.update({ matrix: h.weights, title: `Weights A${headMark(head)} (rows sum to 1)`, shapeText: `${T} queries \u00d7 ${T} keys`, rowLabels: labels, colLabels: labels, kind: 'sequential', palette: pal, selRow: i, selCol: j });
  }

  return {
    frame: f,
    /** model: scoresModel(…) or null (no result yet: only the controls are set). */
    update(s, m, pal) {
      drawControls(s, m);
      if (!m) return;
      model = m;
      drawRow(s, m);
      drawAll(m, pal);
    },
  };
}
