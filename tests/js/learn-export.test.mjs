// The Learn steps' export (issue #23 follow-up): each backward step's `figure` in
// its registry (learn/step-registry.js), read by export.js stepFigure as the forward steps'
// are. Each figure's matrix is checked against the trainer's own backwardTrace,
// called here directly (not through learn.js, which the page uses), for the head
// asked; its title is the one the page shows (written out by hand below); masked
// keys are marked and exactly 0; the scale switch is named; a step without a
// backward has no figure; no exported number is wider than its cell.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createEngine } from '../../web/engine.js';
import { createModelCache } from '../../web/app/playground/models.js';
import { createTrainedSource } from '../../web/app/playground/sources/trained.js';
import { normalizeState } from '../../web/app/playground/state.js';
import { LEARN_STEPS } from '../../web/app/playground/learn/steps.js';
import { LEARN_REGISTRY } from '../../web/app/playground/learn/step-registry.js';
import { STEP_REGISTRY } from '../../web/app/playground/step-registry.js';
import { stepFigure, figureToSvg, figureLayout, estimateWidth } from '../../web/app/playground/export.js';
import { formatValue } from '../../web/app/kit/format.js';
import { REPO_ROOT } from './helpers.mjs';

let engine;
let cache;
// one source per model for the whole file, as the page has one: a state without steps by hand puts the shipped weights back
const sources = new Map();
before(async () => {
  engine = await createEngine();
  cache = createModelCache({ fetchShipped: async (name, file) => new Uint8Array(readFileSync(path.join(REPO_ROOT, 'models', file))) });
});

/** The page's source of a trained model (sources/trained.js): its trace and its Learn part. */
async function sourceOf(model) {
  if (!sources.has(model)) sources.set(model, createTrainedSource(await cache.load(engine, model)));
  return sources.get(model);
}

const SENTENCE = 'The animal didn\'t cross the street because it was too tired.';

/** What the page has on a Learn step: the layer's trace and the backward (learn.js), as the controller makes them. */
async function pageData(model, fields = {}) {
  const source = await sourceOf(model);
  const state = normalizeState({ model, sentence: SENTENCE, layer: 1, head: 1, query: 7, ...fields });
  let synced = null;
  const result = { ...source.trace(state, { onSynced: (s) => { synced = s; } }), source };
  assert.equal(synced.problem, null);
  return { state, trace: result.trace, L: source.learn(state, result) };
}

/** A fresh trainer of the model's shipped weights (the page's one may have taken steps by hand). */
function freshTrainer(model) {
  return engine.loadTrainer(new Uint8Array(readFileSync(path.join(REPO_ROOT, 'models', `${model}.safetensors`))));
}

const figureOf = (d, step, extra = {}) => stepFigure(d.trace, { ...d.state, step, ...extra }, { learn: d.L });

/** A Float32Array's numbers as a plain array (for deepEqual). */
const plain = (a) => Array.from(a);

/** A palette with the fields the renderers read (colours are not what these tests are about). */
const LUT = { lut: new Uint8Array(768).fill(200), dark: new Uint8Array(256) };
const PALETTE = { font: 'sans-serif', surface: '#ffffff', text: '#111111', muted: '#555555', masked: '#cccccc', maskedText: '#333333', lightText: '#ffffff', darkText: '#000000', sequential: LUT, diverging: LUT };

test('every Learn step has a figure in its registry, as every forward step does', () => {
  for (const s of [...STEP_REGISTRY, ...LEARN_REGISTRY]) assert.equal(typeof s.figure, 'function', s.id);
});

test('each Learn step exports its matrix for the head asked, equal to the trainer\u2019s backwardTrace, under the page\u2019s title', async () => {
  const d = await pageData('coreference');
  const h = 1;
  const l = 1;
  const trainer = freshTrainer('coreference');
  let bw;
  try {
    bw = trainer.backwardTrace({ text: SENTENCE, scale: true });
  } finally {
    trainer.dispose();
  }
  const head = bw.layers[l].heads[h];
  const T = d.trace.tokens.length;
  const D = d.trace.config.dHead;
  const C = d.trace.config.dModel;
  const tokens = d.trace.tokens.map((t) => t.text);
  const want = {
    dout: ['dO, head 2', head.dOutput, T, D],
    dweights: ['dP = dO\u00b7V\u1d40, head 2', head.dWeights, T, T],
    dsoftmax: ['dS\u2032, head 2', head.dScaled, T, T],
    dscale: ['dS = dS\u2032/\u221ad_k, head 2', head.dScores, T, T],
    dqkv: ['dQ = dS\u00b7K', head.dQuery, T, D],
  };
  for (const [step, [title, m, rows, cols]] of Object.entries(want)) {
    const fig = figureOf(d, step);
    assert.equal(fig.title, title, step);
    assert.equal(fig.rows, rows, step);
    assert.equal(fig.cols, cols, step);
    assert.deepEqual(plain(fig.values), plain(m.data), step);
    assert.deepEqual(fig.rowLabels, tokens, step);
    assert.match(fig.caption, /layer 2 of 2, head 2 of 4/, step);
    assert.equal(fig.blocked, null, `${step}: the coreference model has no mask`);
  }
  // dW_Q: head 2's columns D … 2D−1 of the layer's C×C gradient, indexed here by hand
  const dparams = figureOf(d, 'dparams');
  assert.equal(dparams.title, 'dW_Q, head 2\u2019s columns');
  assert.equal(dparams.rows, C);
  assert.equal(dparams.cols, D);
  const dWQ = bw.layers[l].dWQuery;
  for (let c = 0; c < C; c++) for (let k = 0; k < D; k++) assert.equal(dparams.values[c * D + k], dWQ.data[c * C + h * D + k], `dW_Q[${c}, ${h * D + k}]`);
  assert.deepEqual(dparams.colLabels, Array.from({ length: D }, (_, k) => String(h * D + k)));
  assert.deepEqual(dparams.rowLabels, Array.from({ length: C }, (_, c) => String(c)));
  // the loss: dL/dlogits at "it" (position 7) over the five likeliest words and the answer
  const loss = figureOf(d, 'loss');
  assert.equal(loss.title, 'dL/dlogits at \u201cit\u201d, the likeliest words');
  const V = bw.probabilities.cols;
  const p = bw.probabilities.data.subarray(7 * V, 8 * V);
  const ids = Array.from({ length: V }, (_, j) => j).sort((a, b) => p[b] - p[a] || a - b).slice(0, 5);
  const y = bw.targets[7];
  if (!ids.includes(y)) ids.push(y);
  assert.equal(loss.rows, 1);
  assert.deepEqual(plain(loss.values), ids.map((j) => bw.dLogits.data[7 * V + j]));
  const vocabulary = d.trace.model.vocabulary;
  assert.deepEqual(loss.colLabels, ids.map((j) => `${vocabulary[j]}${j === y ? ' (answer)' : ''}`));
  assert.equal(vocabulary[y], 'animal');
  assert.ok(loss.values[ids.indexOf(y)] < 0, 'the answer\u2019s gradient is negative');
  assert.match(loss.caption, /the 59 left out are at most /);
  // the step by hand before any: one row, the trained weights' attention row of "it"
  const sgd = figureOf(d, 'sgd');
  assert.equal(sgd.title, 'Attention row of \u201cit\u201d, head 2');
  assert.deepEqual(sgd.rowLabels, ['trained']);
  assert.deepEqual(plain(sgd.values), plain(head.weights.data.subarray(7 * T, 8 * T)));
});

test('after a step by hand, the step figure has the attention row before and after it, as a fresh trainer computes them', async () => {
  const d = await pageData('coreference', { sgd: ['1:1.1'] });
  const h = 1;
  const T = d.trace.tokens.length;
  const trainer = freshTrainer('coreference');
  let beforeRow;
  let afterRow;
  try {
    const targets = trainer.backwardTrace({ text: SENTENCE }).targets;
    beforeRow = plain(trainer.backwardTrace({ text: SENTENCE }).layers[1].heads[h].weights.data.subarray(7 * T, 8 * T));
    trainer.sgdStep({ text: SENTENCE, targets, lr: 1, scope: 'head', layer: 1, head: 1 });
    afterRow = plain(trainer.backwardTrace({ text: SENTENCE }).layers[1].heads[h].weights.data.subarray(7 * T, 8 * T));
  } finally {
    trainer.dispose();
  }
  const fig = figureOf(d, 'sgd');
  assert.deepEqual(fig.rowLabels, ['before', 'after']);
  assert.deepEqual(plain(fig.values), [...beforeRow, ...afterRow]);
  assert.notDeepEqual(beforeRow, afterRow);
  assert.match(fig.caption, /learning rate 1, on head 2 of layer 2/);
  assert.equal(fig.kind, 'sequential');
});

test('the scale switch off: the dS figure says so and is the backward without 1/\u221ad_k; the other steps name the switch', async () => {
  const d = await pageData('coreference', { learnScale: false });
  const trainer = freshTrainer('coreference');
  let off;
  try {
    off = trainer.backwardTrace({ text: SENTENCE, scale: false });
  } finally {
    trainer.dispose();
  }
  const fig = figureOf(d, 'dscale');
  assert.equal(fig.title, 'dS, without 1/\u221ad_k, head 2');
  assert.match(fig.caption, /^the scale switch is off/);
  assert.deepEqual(plain(fig.values), plain(off.layers[1].heads[1].dScores.data));
  const dout = figureOf(d, 'dout');
  assert.deepEqual(plain(dout.values), plain(off.layers[1].heads[1].dOutput.data));
  assert.match(dout.caption, /the scale switch is off: this backward \(and the forward under it\) runs without 1\/\u221ad_k/);
  // the dS caption says it once; the step by hand is on the model's own scale, and says that instead
  assert.equal(fig.caption.match(/scale switch/g).length, 1);
  const sgd = figureOf(d, 'sgd');
  assert.doesNotMatch(sgd.caption, /scale switch/);
  assert.match(sgd.caption, /the steps use the model\u2019s own 1\/\u221ad_k/);
  // on (the model's own): the dS caption says on, the others say nothing of it
  const on = await pageData('coreference');
  assert.match(figureOf(on, 'dscale').caption, /^the scale switch is on: 1\/\u221ad_k on the backward too, dS = dS\u2032\/\u221a8/);
  assert.doesNotMatch(figureOf(on, 'dout').caption, /scale switch/);
});

test('the causal language model: dS\u2032 and dS mark exactly the masked keys, whose gradient is exactly 0; dP is not marked but says why', async () => {
  const d = await pageData('language');
  const T = d.trace.tokens.length;
  for (const step of ['dsoftmax', 'dscale']) {
    const fig = figureOf(d, step);
    assert.equal(fig.blockedAs, 'zero', step);
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < T; j++) {
        assert.equal(fig.blocked[i * T + j], j > i ? 1 : 0, `${step} [${i}, ${j}]`);
        if (j > i) assert.equal(fig.values[i * T + j], 0, `${step} [${i}, ${j}] is exactly 0`);
      }
    }
    assert.match(fig.caption, /a key the causal mask hides gets exactly 0 gradient/, step);
    assert.match(figureToSvg(fig, PALETTE), /grey hatched = masked \(exactly 0\)/, step);
  }
  const dP = figureOf(d, 'dweights');
  assert.equal(dP.blocked, null);
  assert.match(dP.caption, /a weight the causal mask hides stays 0, so its dP goes no further \(dS\u2032 is exactly 0 there\)/);
  const sgd = figureOf(d, 'sgd');
  assert.deepEqual(Array.from(sgd.blocked), Array.from({ length: T }, (_, j) => (j > 7 ? 1 : 0)));
});

test('a Learn step without a backward has no figure: no answer on the sentence, or no backward at all', async () => {
  const source = await sourceOf('coreference');
  const state = normalizeState({ model: 'coreference', sentence: 'the dog was tired .', query: 1 });
  const result = { ...source.trace(state), source };
  const L = source.learn(state, result);
  assert.ok(L.problem);
  const trace = result.trace;
  for (const step of LEARN_STEPS) {
    assert.equal(stepFigure(trace, { ...state, step }, { learn: L }), null, step);
    assert.equal(stepFigure(trace, { ...state, step }, { learn: { unavailable: 'no backward' } }), null, step);
    assert.equal(stepFigure(trace, { ...state, step }), null, step);
  }
  // the forward steps do not need one
  assert.equal(stepFigure(trace, { ...state, step: 'softmax' }).title, 'Weights A = softmax(S\u2032), head 1');
});

test('an exported gradient prints every number with \u2212 and whole: its cells widen to the widest number', async () => {
  const d = await pageData('language', { sgd: ['1:1.1'] });
  for (const step of LEARN_STEPS) {
    const fig = figureOf(d, step);
    const L = figureLayout(fig);
    assert.ok(L.showNumbers, step);
    for (const v of fig.values) {
      const t = formatValue(v, L.digits);
      assert.ok(estimateWidth(t, 11) <= L.cellW - 4, `${step}: ${t} in a ${L.cellW} px cell`);
    }
    const svg = figureToSvg(fig, PALETTE);
    const texts = [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    assert.deepEqual(texts.filter((t) => /(^|[\s(=:,[/])-\d|\de-\d/.test(t)), [], step);
    assert.ok(texts.includes(fig.title), `${step}: the title is one line of the SVG`);
  }
});
