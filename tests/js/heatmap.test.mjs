// The heatmap's pure parts (no DOM): the colour scale a weight map picks
// (heatmap/colors.js) and the layout's sizing rules (heatmap/layout.js).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveScale, rowMaxima, cellIndex, READABLE } from '../../web/app/kit/heatmap/colors.js';
import { computeLayout, MAX_ASPECT, COMFORT, labelTexts, MIN_LABEL_PX, GUTTER_SHARE } from '../../web/app/kit/heatmap/layout.js';
import { fitLabel, labelLines } from '../../web/app/kit/heatmap/text.js';

const palette = { font: 'sans-serif' };
/** A measuring context stand-in: every character 7 px wide. */
const measure = { font: '', measureText: (t) => ({ width: 7 * Array.from(t).length }) };

/** T×T weights: row i has weight `peak` on key i and the rest spread evenly. */
function weights(T, peak) {
  const data = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) data[i * T + j] = i === j ? peak : (1 - peak) / (T - 1);
  return { rows: T, cols: T, data };
}

test('auto scale: 0–1 when the typical row maximum reaches READABLE, row max when rows are nearly uniform', () => {
  const peaked = resolveScale({ matrix: weights(12, 0.6), kind: 'sequential', palette }, 'auto');
  assert.equal(peaked.kind, 'fixed');
  assert.equal(peaked.auto, true);
  const flat = resolveScale({ matrix: weights(300, 2 / 300), kind: 'sequential', palette }, 'auto');
  assert.equal(flat.kind, 'row');
  assert.ok(flat.typical < READABLE);
  // the reader's choice wins over auto
  assert.equal(resolveScale({ matrix: weights(300, 2 / 300), kind: 'sequential', palette }, 'fixed').kind, 'fixed');
  assert.equal(resolveScale({ matrix: weights(12, 0.6), kind: 'sequential', palette }, 'row').kind, 'row');
  // signed maps are never rescaled
  assert.equal(resolveScale({ matrix: weights(12, 0.6), kind: 'diverging', palette }, 'auto').kind, 'range');
});

test('row max scale: each row\u2019s largest allowed weight is the darkest colour; masked cells do not count', () => {
  const m = { matrix: weights(300, 2 / 300), kind: 'sequential', palette };
  const scale = resolveScale(m, 'row');
  for (const i of [0, 17, 299]) assert.equal(cellIndex(m, i * 300 + i, scale), 255);
  // a causal mask: row 0 has one allowed key (the masked cells' weights are exact zeros)
  const T = 5;
  const data = new Float32Array(T * T);
  const mask = new Uint8Array(T * T);
  for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) { data[i * T + j] = 1 / (i + 1); mask[i * T + j] = 1; }
  data[0 * T + 3] = 0.9; // a value under the mask is ignored
  const max = rowMaxima({ matrix: { rows: T, cols: T, data }, kind: 'sequential', maskedZeros: mask, palette });
  assert.deepEqual(Array.from(max).map((x) => Math.fround(x)), [1, 0.5, 1 / 3, 0.25, 0.2].map(Math.fround));
});

test('layout: a compact T×D thumbnail is at most MAX_ASPECT times as tall as wide, or its rows are at their 2 px minimum', () => {
  for (const T of [12, 44, 100, 315]) {
    const labels = Array.from({ length: T }, (_, i) => `w${i}`);
    const m = { matrix: { rows: T, cols: 4, data: new Float32Array(T * 4) }, kind: 'diverging', palette, rowLabels: labels };
    const L = computeLayout(m, { measure, compact: true, width: 860, share: 0.45, rowTexts: labelTexts(labels) });
    const cellsH = L.rows * L.ch;
    assert.ok(cellsH <= MAX_ASPECT * L.W || L.ch === 2, `T=${T}: ${L.W}×${L.H}, rows ${L.ch} px`);
  }
});

test('layout: a 44-token weight map takes the whole row instead of 8 px cells in its share', () => {
  const T = 44;
  const labels = Array.from({ length: T }, (_, i) => `w${i}`);
  const m = { matrix: weights(T, 0.5), kind: 'sequential', palette, rowLabels: labels, colLabels: labels };
  const L = computeLayout(m, { measure, compact: false, width: 860, share: 0.55, rowTexts: labelTexts(labels), maxH: 648 });
  assert.ok(L.cw >= COMFORT, `cells ${L.cw} px`);
  assert.ok(L.W > 0.55 * 860 && L.W <= 860, `map ${L.W} px of 860`);
  assert.ok(L.H <= 648 || L.ch === 11, `fits the 648 px box: ${L.H}`);
});

test('layout: cells with numbers are never narrower than their widest number', () => {
  const m = { matrix: { rows: 12, cols: 12, data: new Float32Array(144) }, kind: 'diverging', palette, rowLabels: null };
  for (const widest of [20, 33, 44, 60]) {
    const L = computeLayout(m, { measure, compact: false, width: 340, share: 1, rowTexts: [], numberW: () => widest });
    assert.equal(L.numbers, true);
    assert.ok(L.cw >= widest + 4, `widest ${widest} px in ${L.cw} px cells`);
  }
});

// ---- labels are never cut (issue #16) ------------------------------------------------

/** A measuring stand-in that follows the font size: every character 0.6 em wide. */
function sizedMeasure() {
  const ctx = { font: '12px sans-serif', measureText: (t) => ({ width: 0.6 * Number(/(\d+(?:\.\d+)?)px/.exec(ctx.font)[1]) * Array.from(t).length }) };
  return ctx;
}

test('fitLabel: a label fits in its font, else shrinks (not below minPx), else goes on two lines; the text is always whole', () => {
  const ctx = sizedMeasure();
  const o = { family: 'sans-serif', basePx: 12, minPx: 9, maxW: 100 };
  assert.deepEqual(fitLabel(ctx, 'cat', { ...o, twoLines: true }), { px: 12, lines: ['cat'], width: 0.6 * 12 * 3, cut: false });
  const mid = fitLabel(ctx, 'x'.repeat(16), { ...o, twoLines: true }); // 115 px at 12 px: shrinks
  assert.ok(mid.px < 12 && mid.px >= 9 && mid.width <= 100 && mid.lines.length === 1, JSON.stringify(mid));
  const word = 'Pneumonoultramicroscopicsili'; // 28 letters: 151 px even at 9 px
  const two = fitLabel(ctx, word, { ...o, twoLines: true });
  assert.equal(two.px, 9);
  assert.equal(two.lines.length, 2);
  assert.equal(two.lines.join(''), word);
  assert.ok(two.width <= 100, `${two.width}`);
  const one = fitLabel(ctx, word, { ...o, twoLines: false });
  assert.deepEqual(one.lines, [word]);
  assert.ok(one.width > 100, 'one line: wider than maxW, the gutter grows');
  assert.equal(one.cut, false);
  // a token of thousands of characters: two lines cut visibly at hardMaxW, found in a few dozen measures
  let measured = 0;
  const counting = { get font() { return ctx.font; }, set font(f) { ctx.font = f; }, measureText: (t) => { measured++; return ctx.measureText(t); } };
  const huge = fitLabel(counting, 'a'.repeat(20000), { ...o, twoLines: true, hardMaxW: 200 });
  assert.equal(huge.cut, true);
  assert.equal(huge.lines.length, 2);
  assert.ok(huge.lines[1].endsWith('\u2026') && huge.width <= 200, JSON.stringify({ w: huge.width, n: huge.lines.map((l) => l.length) }));
  assert.ok(measured < 200, `${measured} measures`);
  // a break after a space or hyphen is preferred when nearly balanced
  const hy = labelLines(ctx, 'state-of-the-art-model', 60);
  assert.equal(hy.join(''), 'state-of-the-art-model');
  assert.match(hy[0], /-$/, `broken after a hyphen: ${hy}`);
  const plain = labelLines(ctx, 'abcdefghijklmnopqrstuv', 60);
  assert.deepEqual(plain, ['abcdefghijk', 'lmnopqrstuv'], 'no soft break: the halves balanced');
});

test('layout: a 28-letter token is drawn whole; the gutter takes what it needs, up to GUTTER_SHARE or its two lines', () => {
  const word = 'Pneumonoultramicroscopicsili';
  const labels = ['The', word, 'cat', 'sat', 'on', 'the', 'mat'];
  const T = labels.length;
  const m = { matrix: { rows: T, cols: T, data: new Float32Array(T * T) }, kind: 'diverging', palette, rowLabels: labels, colLabels: labels };
  for (const width of [860, 340]) {
    const ctx = sizedMeasure();
    const L = computeLayout(m, { measure: ctx, compact: false, width, share: 0.55, rowTexts: labelTexts(labels), maxH: 648 });
    const row = fitLabel(ctx, word, L.rowFit);
    assert.equal(row.lines.join(''), word, `${width}: the row label is the whole word`);
    assert.ok(row.width <= L.labelW - 8, `${width}: row label ${row.width} px in a ${L.labelW} px gutter`);
    assert.ok(row.px >= MIN_LABEL_PX);
    assert.ok(L.labelW <= Math.max(96, GUTTER_SHARE * width) + 1 || row.lines.length === 1, `${width}: gutter ${L.labelW}`);
    const col = fitLabel(ctx, word, L.colFit);
    assert.equal(col.lines.join(''), word);
    assert.ok(col.width <= L.headH - 8, `${width}: column label ${col.width} px in a ${L.headH} px header`);
  }
  assert.deepEqual(labelTexts(['a\u0007b', word]), ['a\ufffdb', word]);
});
