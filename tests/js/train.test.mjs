// The training engine through the JS API (web/trainer.js, via engine.js) and
// the CLI's train / grad / run: tasks, validation, learning in wasm,
// determinism against the native build, checkpoints, errors, memory.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createEngine, TASKS } from '../../web/engine.js';
import { cliRun, tempDir } from './helpers.mjs';
import { setTensor } from './checkpoints.mjs';

const engine = await createEngine();
const tmp = tempDir('attn-train-');

test('tasks() lists every task with its sentence, pattern, recipe and an example', () => {
  const tasks = engine.tasks();
  assert.deepEqual(tasks.map((t) => t.name), TASKS);
  for (const t of tasks) {
    assert.ok(t.description.length > 20 && t.pattern.length > 20, t.name);
    assert.equal(t.defaults.task, t.name);
    assert.ok(t.steps > 0);
    if (t.name !== 'text') {
      assert.equal(t.vocabulary[0], '[PAD]');
      assert.equal(t.example.tokens.length, t.example.targets.length);
      assert.ok(t.example.targets.some((x) => x !== null), `${t.name} example has a target`);
    }
  }
});

test('createTrainer rejects bad settings with the core\'s message', () => {
  assert.throws(() => engine.createTrainer({ task: 'juggle' }), (e) => e instanceof RangeError && /juggle/.test(e.message) && /induction/.test(e.message));
  assert.throws(() => engine.createTrainer({ task: 'reverse', dModel: 10, heads: 3 }), (e) => e instanceof RangeError && e.message === 'd_model 10 is not divisible by 3 heads');
  assert.throws(() => engine.createTrainer({ task: 'reverse', lr: Number.NaN }), RangeError);
  assert.throws(() => engine.createTrainer({ task: 'reverse', layers: '2' }), TypeError);
  assert.throws(() => engine.createTrainer({ task: 'text', corpus: '' }), (e) => e instanceof RangeError && /corpus/.test(e.message));
  assert.throws(() => engine.createTrainer({ task: 'text', corpus: 'a \ud800 b' }), TypeError);
  assert.throws(() => engine.createTrainer(null), TypeError);
});

test('settings are read exactly once (a getter that changes its answer cannot reach the core twice)', () => {
  let reads = 0;
  const hostile = { task: 'reverse', get layers() { reads += 1; return reads === 1 ? 1 : 4096; } };
  const t = engine.createTrainer(hostile);
  assert.equal(reads, 1);
  assert.equal(t.config.layers, 1);
  t.dispose();
});

test('reverse trained in wasm reaches 99% held-out accuracy with an anti-diagonal head', () => {
  const t = engine.createTrainer({ task: 'reverse' });
  const steps = engine.tasks().find((x) => x.name === 'reverse').steps;
  const r = t.step(steps);
  assert.equal(r.step, steps);
  assert.equal(t.stepCount, steps);
  assert.ok(Number.isFinite(r.loss) && r.ms > 0);
  const e = t.evaluate({ samples: 512 });
  assert.ok(e.accuracy >= 0.99, `accuracy ${e.accuracy}`);
  const scores = t.headScores(64);
  assert.ok(Math.max(...scores.map((h) => h.scores['anti-diagonal'])) >= 0.9);
  const p = t.probe();
  assert.ok(p.correct.every((c) => c === true));
  assert.equal(p.layers[0].heads[0].weights.rows, p.ids.length);
  assert.equal(p.keys[0].name, 'anti-diagonal');
  // ablating every head leaves the model blind to order
  const blind = t.evaluate({ samples: 256, ablate: [[0, 0], [0, 1]] });
  assert.ok(blind.accuracy < 0.5, `ablated accuracy ${blind.accuracy}`);
  t.dispose();
});

test('the same seed gives the same weights in wasm twice, and the native CLI agrees after 50 steps', () => {
  const a = engine.createTrainer({ task: 'copy', seed: 7 });
  const b = engine.createTrainer({ task: 'copy', seed: 7 });
  a.step(50);
  b.step(50);
  const wa = a.save();
  assert.deepEqual(wa, b.save());
  const file = path.join(tmp, 'copy50.safetensors');
  const r = cliRun(['train', '--task', 'copy', '--seed', '7', '--steps', '50', '--out', file]);
  assert.equal(r.status, 0, r.stderr);
  const native = engine.loadTrainer(new Uint8Array(readFileSync(file)));
  // same steps: compare every weight (libm's exp/log/erf may differ in the last bit between glibc and
  // emscripten's musl, so identity is not guaranteed; report the distance)
  const pa = a.probe(), pn = native.probe();
  let worst = 0;
  for (let l = 0; l < pa.layers.length; l++) {
    for (let h = 0; h < pa.layers[l].heads.length; h++) {
      const x = pa.layers[l].heads[h].weights.data, y = pn.layers[l].heads[h].weights.data;
      for (let i = 0; i < x.length; i++) worst = Math.max(worst, Math.abs(x[i] - y[i]));
    }
  }
  assert.ok(worst < 1e-4, `wasm vs native attention weights after 50 steps differ by ${worst}`);
  assert.equal(native.stepCount, 50);
  for (const t of [a, b, native]) t.dispose();
});

test('save → load gives identical predictions and the same step; a text model loads without its corpus', () => {
  const t = engine.createTrainer({ task: 'brackets', seed: 3 });
  t.step(40);
  const back = engine.loadTrainer(t.save());
  assert.equal(back.stepCount, 40);
  assert.deepEqual(back.probe().predictions, t.probe().predictions);
  assert.deepEqual(back.probe().layers[1].heads[1].weights, t.probe().layers[1].heads[1].weights);
  for (const x of [t, back]) x.dispose();

  const corpus = 'the cat sat on the mat . the dog sat on the log . '.repeat(40);
  const lm = engine.createTrainer({ task: 'text', corpus, length: 8, maxVocab: 20 });
  lm.step(5);
  const bytes = lm.save();
  const bare = engine.loadTrainer(bytes);
  assert.equal(bare.hasTask, false);
  assert.deepEqual(bare.vocabulary, lm.vocabulary);
  const tr = bare.trace({ text: 'The cat sat on the rug' });
  assert.deepEqual(tr.tokens.map((x) => x.text), ['the', 'cat', 'sat', 'on', 'the', 'rug']);
  assert.equal(tr.tokens[5].id, 1, '"rug" is [UNK]');
  assert.throws(() => bare.step(), (e) => /corpus/.test(e.message));
  const resumed = engine.loadTrainer(bytes, { corpus });
  assert.equal(resumed.hasTask, true);
  resumed.step(1);
  for (const x of [lm, bare, resumed]) x.dispose();
});

test('bad checkpoint bytes give a clear error and leave the engine working', () => {
  assert.throws(() => engine.loadTrainer([1, 2, 3]), TypeError);
  assert.throws(() => engine.loadTrainer(new Uint8Array([1, 2, 3])), (e) => e instanceof Error && /8/.test(e.message));
  const t = engine.createTrainer({ task: 'reverse' });
  const good = t.save();
  assert.throws(() => engine.loadTrainer(good.subarray(0, good.length - 3)), (e) => e instanceof Error && /safetensors/.test(e.message));
  assert.throws(() => engine.loadTrainer(setTensor(good, 'embed', Number.NaN)), (e) => /NaN/.test(e.message));
  const noisy = new Uint8Array(good);
  noisy[10] = 0x7b; // '{' inside the header
  assert.throws(() => engine.loadTrainer(noisy), Error);
  t.step(1);
  assert.equal(t.stepCount, 1);
  t.dispose();
});

test('a non-finite loss stops with the step named, and keeps the weights', () => {
  const t = engine.createTrainer({ task: 'reverse' });
  t.step(2);
  const poisoned = engine.loadTrainer(setTensor(t.save(), 'unembed', 3e38));
  const before = poisoned.save();
  assert.throws(() => poisoned.step(), (e) => e instanceof RangeError && /step 3/.test(e.message) && /learning rate/.test(e.message));
  assert.equal(poisoned.stepCount, 2);
  assert.deepEqual(poisoned.save(), before);
  for (const x of [t, poisoned]) x.dispose();
});

test('stepBatch trains on a given batch; bad batches are refused', () => {
  const t = engine.createTrainer({ task: 'reverse' });
  const batch = { ids: [[2, 3, 4, 5, 6, 7, 8, 9]], targets: [[9, 8, 7, 6, 5, 4, 3, 2]] };
  const first = t.stepBatch(batch, 1);
  const later = t.stepBatch(batch, 30);
  assert.ok(later.loss < first.loss);
  assert.equal(t.stepCount, 31);
  assert.throws(() => t.stepBatch({ ids: [[1, 2]], targets: [[1]] }), RangeError);
  assert.throws(() => t.stepBatch({ ids: [[99, 2, 3, 4, 5, 6, 7, 8]], targets: [[1, 1, 1, 1, 1, 1, 1, 1]] }), (e) => /token id 99/.test(e.message));
  t.dispose();
});

test('a disposed trainer refuses every call', () => {
  const t = engine.createTrainer({ task: 'reverse' });
  t.dispose();
  t.dispose();
  for (const call of [() => t.step(), () => t.evaluate(), () => t.probe(), () => t.save()]) assert.throws(call, TypeError);
});

test('memory stays flat over 10,000 steps', () => {
  const t = engine.createTrainer({ task: 'reverse', dModel: 8, batch: 4 });
  t.step(200);
  t.evaluate({ samples: 32 });
  t.probe();
  const heap = engine.allocatedBytes(), memory = engine.memoryBytes();
  for (let i = 0; i < 100; i++) {
    t.step(100);
    if (i % 20 === 0) { t.evaluate({ samples: 32 }); t.probe(); }
  }
  assert.equal(t.stepCount, 10200);
  assert.equal(engine.memoryBytes(), memory);
  assert.equal(engine.allocatedBytes(), heap);
  t.dispose();
});

// ---- the CLI ------------------------------------------------------------------------------

test('attn grad prints config, params, batch, loss and grads with matching shapes', () => {
  const r = cliRun(['grad', '--task', 'coreference', '--layers', '1', '--mlp', '4', '--batch', '3', '--format', 'json']);
  assert.equal(r.status, 0, r.stderr);
  const dump = JSON.parse(r.stdout);
  assert.deepEqual(Object.keys(dump), ['config', 'params', 'batch', 'loss', 'grads']);
  assert.deepEqual(Object.keys(dump.config), ['vocab', 'context', 'layers', 'd_model', 'heads', 'mlp', 'layernorm', 'positional', 'causal', 'scale', 'tied']);
  assert.deepEqual(Object.keys(dump.grads), Object.keys(dump.params));
  assert.ok(dump.params['layers.0.mlp.w_in'].length === dump.config.d_model);
  assert.ok(Array.isArray(dump.batch.lengths), 'coreference pads its sentences');
  assert.equal(dump.batch.ids.length, 3);
  for (const [name, p] of Object.entries(dump.params)) {
    assert.equal(JSON.stringify(dump.grads[name].length), JSON.stringify(p.length), name);
  }
  assert.ok(dump.loss > 0);
});

test('attn train writes a checkpoint that attn run and the wasm engine read identically', () => {
  const file = path.join(tmp, 'coref.safetensors');
  const t = cliRun(['train', '--task', 'coreference', '--steps', '20', '--out', file]);
  assert.equal(t.status, 0, t.stderr);
  assert.match(t.stdout, /held-out: loss [0-9.]+, accuracy/);
  assert.match(t.stdout, /antecedent/);
  const sentence = 'The animal didn\'t cross the street because it was too tired.';
  const run = cliRun(['run', '--model', file, '--sentence', sentence, '--format', 'json']);
  assert.equal(run.status, 0, run.stderr);
  const json = JSON.parse(run.stdout);
  const wasm = engine.loadTrainer(new Uint8Array(readFileSync(file))).trace({ text: sentence });
  assert.deepEqual(json.tokens.map((x) => x.text), wasm.tokens.map((x) => x.text));
  let worst = 0;
  json.layers.forEach((layer, l) => layer.heads.forEach((h, k) => h.weights.flat().forEach((v, i) => {
    worst = Math.max(worst, Math.abs(v - wasm.layers[l].heads[k].weights.data[i]));
  })));
  assert.ok(worst < 1e-6, `CLI vs wasm weights differ by ${worst}`);
  assert.deepEqual(Object.keys(json.layers[0]).slice(0, 3), ['input', 'normed', 'heads']);
  const table = cliRun(['run', '--model', file, '--sentence', sentence, '--format', 'table']);
  assert.equal(table.status, 0, table.stderr);
  assert.match(table.stdout, /layer 0 head 0/);
});

test('attn train/grad/run reject bad flags with exit code 2 and a message', () => {
  const cases = [
    [['train', '--task', 'juggle'], /juggle/],
    [['train', '--task', 'reverse', '--steps', '5', '--steps', '6'], /given twice/],
    [['train', '--task', 'reverse', '--layers', ' 2'], /whole number/],
    [['train', '--task', 'reverse', '--layers', '+2'], /whole number/],
    [['train', '--task', 'reverse', '--layers', '2 '], /whole number/],
    [['train', '--task', 'reverse', '--lr', 'fast'], /--lr/],
    [['train', '--task', 'reverse', '--d-model', '10', '--heads', '3', '--steps', '1'], /divisible/],
    [['train', '--steps', '3'], /--task is required/],
    [['train', '--task', 'text', '--steps', '1'], /corpus/],
    [['grad', '--task', 'reverse', '--format', 'table'], /json/],
    [['run', '--model', path.join(tmp, 'missing.safetensors'), '--sentence', 'x'], /cannot read/],
    [['run', '--sentence', 'x'], /--model/],
  ];
  const junk = path.join(tmp, 'junk.safetensors');
  writeFileSync(junk, 'not a checkpoint at all');
  cases.push([['run', '--model', junk, '--sentence', 'x'], /header/]);
  for (const [args, message] of cases) {
    const r = cliRun(args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
    assert.equal(r.stdout, '', args.join(' '));
  }
});
