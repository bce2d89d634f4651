// One sentence's backward (issue #23): trainer.backwardTrace() in wasm against the
// native `attn grad --model` on the two shipped trained models, every gradient
// intermediate of every layer and head, with the model's scale and without it, and
// with a target the user picked; bad targets are refused with a code.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createEngine } from '../../web/engine.js';
import { cliRun, REPO_ROOT } from './helpers.mjs';

const MODELS = path.join(REPO_ROOT, 'models');
let engine;
before(async () => { engine = await createEngine(); });

/** A wasm matrix {rows, cols, data} as an array of rows. */
const rowsOf = (m) => Array.from({ length: m.rows }, (_, i) => Array.from(m.data.slice(i * m.cols, (i + 1) * m.cols)));

/** max |a − b| / max(max |b|, 1e-6) of a wasm matrix against the CLI's (an array of rows). */
function relative(wasm, b, what) {
  const a = rowsOf(wasm);
  assert.equal(a.length, b.length, `${what}: rows`);
  let diff = 0, scale = 0;
  a.forEach((row, i) => {
    assert.equal(row.length, b[i].length, `${what}: columns of row ${i}`);
    row.forEach((x, j) => { diff = Math.max(diff, Math.abs(x - b[i][j])); scale = Math.max(scale, Math.abs(b[i][j])); });
  });
  return diff / Math.max(scale, 1e-6);
}

const FIELDS = [['d_output', 'dOutput'], ['d_weights', 'dWeights'], ['d_scaled', 'dScaled'], ['d_scores', 'dScores'],
  ['d_query', 'dQuery'], ['d_key', 'dKey'], ['d_value', 'dValue']];

const CASES = [
  { model: 'coreference', sentence: 'The animal didn\'t cross the street because it was too tired.', args: [] },
  { model: 'coreference', sentence: 'The animal didn\'t cross the street because it was too tired.', args: ['--no-scale', '--target', '7:street'], scale: false, target: [7, 'street'] },
  { model: 'language', sentence: 'the cat sat on the mat', args: [] },
  { model: 'language', sentence: 'the cat sat on the mat', args: ['--no-scale'], scale: false },
];

for (const c of CASES) {
  test(`${c.model} ${c.args.join(' ') || '(defaults)'}: backwardTrace equals attn grad --model within 1e-5`, () => {
    const file = path.join(MODELS, `${c.model}.safetensors`);
    const r = cliRun(['grad', '--model', file, '--sentence', c.sentence, ...c.args, '--format', 'json']);
    assert.equal(r.status, 0, r.stderr);
    const cli = JSON.parse(r.stdout);
    const trainer = engine.loadTrainer(new Uint8Array(readFileSync(file)));
    try {
      const options = { text: c.sentence };
      if (c.scale === false) options.scale = false;
      if (c.target) {
        const targets = cli.batch.targets[0].slice();
        options.targets = targets;  // the CLI's own targets, which must name the word at the position
        assert.equal(targets[c.target[0]], trainer.vocabulary.indexOf(c.target[1]));
      }
      const js = trainer.backwardTrace(options);
      assert.deepEqual(js.targets, cli.batch.targets[0]);
      assert.equal(js.scale, cli.config.scale);
      assert.ok(Math.abs(js.loss - cli.loss) <= 1e-5 * Math.abs(cli.loss), `loss ${js.loss} vs ${cli.loss}`);
      assert.ok(relative(js.dLogits, cli.d_logits, 'dLogits') <= 1e-5);
      assert.equal(js.layers.length, cli.layers.length);
      cli.layers.forEach((layer, l) => layer.heads.forEach((head, h) => {
        for (const [key, jsKey] of FIELDS) {
          const e = relative(js.layers[l].heads[h][jsKey], head[key], `layer ${l} head ${h} ${key}`);
          assert.ok(e <= 1e-5, `layer ${l} head ${h} ${key}: ${e}`);
        }
      }));
      for (const [name, g] of Object.entries(cli.grads)) {
        const flat = (Array.isArray(g[0]) ? g.flat() : g);
        const norm = Math.sqrt(flat.reduce((s, x) => s + x * x, 0));
        assert.ok(Math.abs(js.gradNorms[name] - norm) <= 1e-5 * Math.max(norm, 1e-6), `‖∂${name}‖ ${js.gradNorms[name]} vs ${norm}`);
      }
    } finally {
      trainer.dispose();
    }
  });
}

test('backwardTrace refuses a target outside the vocabulary and a sentence the task sets none on', () => {
  const trainer = engine.loadTrainer(new Uint8Array(readFileSync(path.join(MODELS, 'coreference.safetensors'))));
  try {
    assert.throws(() => trainer.backwardTrace({ text: 'the dog was tired .', targets: [0, 0, 99999, 0, 0] }),
      (e) => e.code === 'bad_input' && /outside the vocabulary/.test(e.message));
    assert.throws(() => trainer.backwardTrace({ text: 'the dog was tired .' }),
      (e) => e.code === 'bad_input' && /target/.test(e.message));
  } finally {
    trainer.dispose();
  }
});

test('attn grad --model names an unknown target word and a bad position', () => {
  const file = path.join(MODELS, 'coreference.safetensors');
  const s = 'The animal didn\'t cross the street because it was too tired.';
  const r = cliRun(['grad', '--model', file, '--sentence', s, '--target', '7:zebra', '--format', 'json']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /"zebra" is not a word of this model/);
  const p = cliRun(['grad', '--model', file, '--sentence', s, '--target', '40:animal', '--format', 'json']);
  assert.equal(p.status, 2);
  assert.match(p.stderr, /--target's position expects a whole number from 0 to 11/);
});

const DEFAULT = 'The animal didn\'t cross the street because it was too tired.';
const load = (name) => engine.loadTrainer(new Uint8Array(readFileSync(path.join(MODELS, `${name}.safetensors`))));
const bits = (f32) => Buffer.from(f32.buffer, f32.byteOffset, f32.byteLength);

test('backwardTrace carries its own forward (weights under the scale switch) and the layer\'s weight gradients', () => {
  const trainer = load('coreference');
  try {
    const fwd = trainer.trace({ text: DEFAULT });
    const on = trainer.backwardTrace({ text: DEFAULT });
    const off = trainer.backwardTrace({ text: DEFAULT, scale: false });
    const D = trainer.config.dModel / trainer.config.heads;
    on.layers.forEach((layer, l) => {
      assert.deepEqual(Array.from(layer.normed.data), Array.from(fwd.layers[l].normed.data), `layer ${l} X′`);
      layer.heads.forEach((h, k) => {
        assert.deepEqual(Array.from(h.weights.data), Array.from(fwd.layers[l].heads[k].weights.data), `layer ${l} head ${k} P`);
        // dW_Q's columns of this head = X′ᵀ·dQ, summed here in double
        for (const [dw, dx] of [['dWQuery', 'dQuery'], ['dWKey', 'dKey'], ['dWValue', 'dValue']]) {
          let worst = 0, size = 0;
          for (let c = 0; c < layer.normed.cols; c++) {
            for (let d = 0; d < D; d++) {
              let sum = 0;
              for (let i = 0; i < layer.normed.rows; i++) sum += layer.normed.data[i * layer.normed.cols + c] * h[dx].data[i * D + d];
              const got = layer[dw].data[c * layer[dw].cols + k * D + d];
              worst = Math.max(worst, Math.abs(got - sum));
              size = Math.max(size, Math.abs(sum));
            }
          }
          assert.ok(worst <= 1e-4 * Math.max(size, 1e-6), `layer ${l} head ${k} ${dw}: ${worst} of ${size}`);
        }
      });
      const norm = Math.hypot(...layer.dWQuery.data);
      assert.ok(Math.abs(norm - on.gradNorms[`layers.${l}.w_query`]) <= 1e-5 * norm);
    });
    // without 1/√d_k the rows sharpen: some row's largest weight grows
    const maxOf = (m, i) => Math.max(...m.data.slice(i * m.cols, (i + 1) * m.cols));
    const P1 = on.layers[1].heads[0].weights, P0 = off.layers[1].heads[0].weights;
    assert.ok(Array.from({ length: P1.rows }, (_, i) => maxOf(P0, i) - maxOf(P1, i)).some((x) => x > 0.01));
  } finally {
    trainer.dispose();
  }
});

for (const [model, text] of [['coreference', DEFAULT], ['language', 'the cat sat on the mat']]) {
  test(`${model}: one SGD step at a small learning rate lowers the loss, and setParameters undoes it bit for bit`, () => {
    const trainer = load(model);
    try {
      const before = trainer.parameters();
      const steps = trainer.stepCount;
      const loss0 = trainer.backwardTrace({ text }).loss;
      const r = trainer.sgdStep({ text, lr: 0.01 });
      assert.equal(r.loss, loss0, 'sgdStep reports the loss before its step');
      assert.ok(r.size > 0);
      const loss1 = trainer.backwardTrace({ text }).loss;
      assert.ok(loss1 < loss0, `loss ${loss0} → ${loss1}`);
      assert.notDeepEqual(bits(trainer.parameters()), bits(before));
      assert.equal(trainer.stepCount, steps, 'stepCount untouched');
      trainer.setParameters(before);
      assert.ok(bits(trainer.parameters()).equals(bits(before)), 'the exact weights are back');
      assert.equal(trainer.backwardTrace({ text }).loss, loss0);
    } finally {
      trainer.dispose();
    }
  });
}

test('sgdStep with scope head moves only that head\'s share of the layer, and is refused for bad values', () => {
  const trainer = load('coreference');
  try {
    const steps = trainer.stepCount;
    const before = trainer.parameters();
    const targets = trainer.backwardTrace({ text: DEFAULT }).targets.slice();
    targets[7] = trainer.vocabulary.indexOf('street');
    trainer.sgdStep({ text: DEFAULT, targets, lr: 0.5, scope: 'head', layer: 1, head: 2 });
    const after = trainer.parameters();
    let moved = 0;
    for (let i = 0; i < after.length; i++) moved += after[i] !== before[i];
    const { dModel: C, heads: H } = trainer.config;
    assert.ok(moved > 0 && moved <= 4 * C * (C / H), `${moved} moved`);
    assert.equal(trainer.stepCount, steps);
    const code = (fn) => { try { fn(); } catch (e) { return e.code; } return 'none'; };
    assert.equal(code(() => trainer.sgdStep({ text: DEFAULT, lr: 0 })), 'bad_input');
    assert.equal(code(() => trainer.sgdStep({ text: DEFAULT, lr: 1000 })), 'bad_input');
    assert.equal(code(() => trainer.sgdStep({ text: DEFAULT, lr: 0.1, scope: 'layer' })), 'bad_input');
    assert.equal(code(() => trainer.sgdStep({ text: DEFAULT, lr: 0.1, scope: 'head', layer: 9, head: 0 })), 'bad_input');
    assert.equal(code(() => trainer.setParameters(after.subarray(1))), 'bad_shape');
    const nan = after.slice();
    nan[3] = NaN;
    assert.equal(code(() => trainer.setParameters(nan)), 'not_finite');
    assert.equal(code(() => trainer.setParameters([1, 2])), 'bad_input');
    assert.ok(bits(trainer.parameters()).equals(bits(after)), 'a refused call changes nothing');
  } finally {
    trainer.dispose();
  }
});

test('backwardTrace carries dY (dAttention) and W_O of each layer: every head\'s dO is dY times that head\'s rows of W_O', () => {
  for (const name of ['coreference', 'language']) {
    const trainer = load(name);
    try {
      const b = trainer.backwardTrace({ text: name === 'language' ? 'the cat sat on the mat' : DEFAULT });
      for (const [l, layer] of b.layers.entries()) {
        const { dAttention: dy, wOutput: w } = layer;
        const C = w.cols, H = layer.heads.length, D = C / H;
        assert.equal(dy.cols, C);
        layer.heads.forEach((head, h) => {
          let diff = 0, largest = 0; // relative to the head's largest |dO| (float32 products)
          for (let i = 0; i < dy.rows; i++)
            for (let d = 0; d < D; d++) {
              let sum = 0;
              for (let c = 0; c < C; c++) sum += dy.data[i * C + c] * w.data[(h * D + d) * C + c];
              diff = Math.max(diff, Math.abs(head.dOutput.data[i * D + d] - sum));
              largest = Math.max(largest, Math.abs(sum));
            }
          assert.ok(largest > 0, `${name} layer ${l} head ${h}: the gradient reached it`);
          assert.ok(diff <= 1e-5 * largest, `${name} layer ${l} head ${h}: max |dO − dY·W_O| ${diff} of ${largest}`);
        });
      }
    } finally {
      trainer.dispose();
    }
  }
});
