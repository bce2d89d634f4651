// The backward of a loaded pretrained model through the engine's JS API
// (PretrainedModel.backwardTrace / sgdStep / undoStep over
// src/bindings/pretrained_bindings.cpp) against the native CLI's
// `attn grad --model DIR` (a separate build of the same core), on the small
// Hub-layout test checkpoints of tests/pretrained/make_checkpoints.py: every
// number within 1e-5; the default targets; the step by hand and its exact undo.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine } from '../../web/engine.js';
import { PretrainedModel } from '../../web/pretrained.js';
import { MAX_SGD_STEPS } from '../../web/app/playground/state.js';
import { cliTrace, cliRun, tempDir } from './helpers.mjs';
import { checkpointsDir, GPT2_TOKENIZER } from './pretrained.mjs';

const TOLERANCE = 1e-5;
let engine;
let dir;
before(async () => {
  engine = await createEngine();
  const root = checkpointsDir();
  dir = tempDir('ap-pbackward-');
  cpSync(join(root, 'bert-mlm'), join(dir, 'bert-mlm'), { recursive: true });
  cpSync(join(root, 'gpt2-vocab'), join(dir, 'gpt2-vocab'), { recursive: true });
  writeFileSync(join(dir, 'gpt2-vocab', 'tokenizer.json'), readFileSync(GPT2_TOKENIZER));
});
after(() => {
  engine?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const text = (name, file) => (existsSync(join(dir, name, file)) ? readFileSync(join(dir, name, file), 'utf8') : '');

function load(name) {
  const bytes = new Uint8Array(readFileSync(join(dir, name, 'model.safetensors')));
  const loader = engine.openCheckpoint(text(name, 'config.json'), bytes.subarray(0, engine.safetensorsHeaderSize(bytes.subarray(0, 8))), bytes.length);
  const size = loader.stagingBytes;
  for (const { begin, end } of loader.needed) for (let a = begin; a < end; a += size) loader.feed(a, bytes.subarray(a, Math.min(end, a + size)));
  return loader.finish({
    tokenizerJson: text(name, 'tokenizer.json'), vocabJson: text(name, 'vocab.json'), mergesTxt: text(name, 'merges.txt'),
    vocabTxt: text(name, 'vocab.txt'), tokenizerConfigJson: text(name, 'tokenizer_config.json'),
  });
}

/** max |a − b| over an engine matrix and the CLI's rows. */
function maxDiff(m, rows, what) {
  assert.equal(m.rows, rows.length, `${what}: rows`);
  let d = 0;
  for (let i = 0; i < m.rows; i++) {
    assert.equal(rows[i].length, m.cols, `${what}: cols`);
    for (let j = 0; j < m.cols; j++) d = Math.max(d, Math.abs(m.data[i * m.cols + j] - rows[i][j]));
  }
  return d;
}

function compare(bw, json, layer, what) {
  assert.ok(Math.abs(bw.loss - json.loss) < TOLERANCE, `${what}: loss ${bw.loss} vs the CLI's ${json.loss}`);
  assert.deepEqual(Array.from(bw.targets), json.batch.targets[0], `${what}: targets`);
  assert.deepEqual(Array.from(bw.defaults), json.defaults, `${what}: default targets`);
  assert.equal(bw.memoryBytes, json.learn_memory_bytes);
  let worst = maxDiff(bw.dLogits, json.d_logits, 'd_logits');
  worst = Math.max(worst, maxDiff(bw.probabilities, json.probabilities, 'probabilities'));
  const L = bw.layers[layer];
  const keys = { dWQuery: 'w_query', dWKey: 'w_key', dWValue: 'w_value', dWOutput: 'w_output' };
  for (const [k, name] of Object.entries(keys)) worst = Math.max(worst, maxDiff(L[k], json.grads[`layers.${layer}.${name}`], k));
  const fields = { dOutput: 'd_output', dWeights: 'd_weights', dScaled: 'd_scaled', dScores: 'd_scores', dQuery: 'd_query', dKey: 'd_key', dValue: 'd_value' };
  L.heads.forEach((h, i) => {
    for (const [k, name] of Object.entries(fields)) worst = Math.max(worst, maxDiff(h[k], json.layers[layer].heads[i][name], `head ${i} ${k}`));
  });
  bw.layers.forEach((l, i) => assert.equal(l === null, i !== layer, `${what}: only layer ${layer} is filled`));
  assert.ok(worst < TOLERANCE, `${what}: the largest difference from the CLI is ${worst}`);
  return worst;
}

test('a GPT-2 checkpoint: the backward of every layer, with and without the scale, equals the native CLI\u2019s within 1e-5', () => {
  const m = load('gpt2-vocab');
  try {
    const sentence = 'the cat sat on the mat';
    for (let layer = 0; layer < m.config.layers; layer++) {
      for (const scale of [true, false]) {
        const json = cliTrace(['grad', '--model', join(dir, 'gpt2-vocab'), '--sentence', sentence, '--layer', String(layer), scale ? '--scale' : '--no-scale']);
        const bw = m.backwardTrace({ text: sentence, layer, scale });
        assert.equal(bw.scale, scale);
        compare(bw, json, layer, `gpt2 layer ${layer} scale ${scale}`);
        // the default targets are the next token at every position but the last
        const ids = m.tokenize(sentence).map((t) => t.id);
        assert.deepEqual(Array.from(bw.defaults), [...ids.slice(1), -1]);
      }
    }
  } finally {
    m.dispose();
  }
});

test('a BERT checkpoint: the default target at [MASK] is the model\u2019s own top fill, another one raises the loss, both equal the CLI\u2019s', () => {
  const m = load('bert-mlm');
  try {
    const sentence = 'the cat [MASK] on the mat';
    const json = cliTrace(['grad', '--model', join(dir, 'bert-mlm'), '--sentence', sentence, '--layer', '1']);
    const bw = m.backwardTrace({ text: sentence, layer: 1 });
    compare(bw, json, 1, 'bert default');
    const tokens = m.tokenize(sentence);
    const q = tokens.findIndex((t) => t.id === m.maskId);
    const top = m.trace(sentence, { layer: 0 }).top;
    assert.equal(bw.defaults[q], top.ids[q * top.k], 'the default is the likeliest fill');
    // another answer: "dog" at the [MASK]
    const dog = m.tokenize('dog').find((t) => t.start >= 0).id;
    const targets = Array.from(bw.defaults);
    targets[q] = dog;
    const other = m.backwardTrace({ text: sentence, layer: 1, targets });
    const cli = cliTrace(['grad', '--model', join(dir, 'bert-mlm'), '--sentence', sentence, '--layer', '1', '--target', `${q}:dog`]);
    compare(other, cli, 1, 'bert dog');
    assert.ok(other.loss > bw.loss, `another answer than the top fill costs more: ${other.loss} vs ${bw.loss}`);
    // no [MASK]: a clear message, in the engine and the CLI
    assert.throws(() => m.backwardTrace({ text: 'the cat sat on the mat' }), (e) => e.code === 'bad_input' && /\[MASK\]/.test(e.message));
    const r = cliRun(['grad', '--model', join(dir, 'bert-mlm'), '--sentence', 'the cat sat on the mat', '--format', 'json']);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /write \[MASK\] in place of a word/);
    // a target that is not one token, a layer past the model: refused by name
    const bad = cliRun(['grad', '--model', join(dir, 'bert-mlm'), '--sentence', sentence, '--target', `${q}:zebraxyz`, '--format', 'json']);
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /"zebraxyz" is not one token of this model/);
    const past = cliRun(['grad', '--model', join(dir, 'bert-mlm'), '--sentence', sentence, '--layer', '2', '--format', 'json']);
    assert.notEqual(past.status, 0);
    assert.match(past.stderr, /--layer 2 is past the model's 2 layers/);
  } finally {
    m.dispose();
  }
});

test('a step by hand on a layer\u2019s attention lowers the loss, and undoStep puts the weights back exactly', () => {
  for (const name of ['gpt2-vocab', 'bert-mlm']) {
    const m = load(name);
    try {
      const sentence = name === 'bert-mlm' ? 'the cat [MASK] on the mat' : 'the cat sat on the mat';
      const before = m.backwardTrace({ text: sentence, layer: 1 });
      const weightsBefore = m.trace(sentence, { layer: 1 }).layers[1].wQuery.data.slice();
      for (const head of [-1, 0]) {
        const step = m.sgdStep({ text: sentence, targets: before.targets, lr: 0.5, layer: 1, head });
        assert.equal(step.steps, 1);
        assert.ok(step.size > 0);
        assert.ok(Math.abs(step.loss - before.loss) < 1e-12, 'the step reports the loss before it');
        const after = m.backwardTrace({ text: sentence, layer: 1, targets: before.targets });
        assert.ok(after.loss < before.loss, `${name} head ${head}: ${after.loss} < ${before.loss}`);
        assert.equal(m.undoStep(), 0);
        const back = m.backwardTrace({ text: sentence, layer: 1, targets: before.targets });
        assert.equal(back.loss, before.loss, `${name}: the loss after undo is the loss before, exactly`);
        assert.deepEqual(m.trace(sentence, { layer: 1 }).layers[1].wQuery.data, weightsBefore);
      }
      assert.throws(() => m.undoStep(), (e) => e.code === 'bad_state');
      assert.throws(() => m.sgdStep({ text: sentence, lr: 0, layer: 1 }), (e) => e.code === 'bad_input');
    } finally {
      m.dispose();
    }
  }
});

test('the undo stack of steps by hand holds the last PretrainedModel.UNDO_LIMIT (20): past it the oldest is dropped; undoSteps says how many remain', () => {
  assert.equal(PretrainedModel.UNDO_LIMIT, 20);
  assert.ok(MAX_SGD_STEPS <= PretrainedModel.UNDO_LIMIT, 'the page\u2019s link holds no more steps than the engine can undo');
  const m = load('gpt2-vocab');
  try {
    const sentence = 'the cat sat on the mat';
    const weights = () => m.trace(sentence, { layer: 1 }).layers[1].wQuery.data.slice();
    assert.equal(m.undoSteps, 0);
    const extra = 2;
    let kept = null;
    for (let i = 0; i < PretrainedModel.UNDO_LIMIT + extra; i++) {
      const step = m.sgdStep({ text: sentence, lr: 0.01, layer: 1, head: 0 });
      assert.equal(step.steps, Math.min(i + 1, PretrainedModel.UNDO_LIMIT));
      if (i === extra - 1) kept = weights();  // the oldest steps can no longer be undone: this is as far back as it goes
    }
    assert.equal(m.undoSteps, PretrainedModel.UNDO_LIMIT);
    for (let left = PretrainedModel.UNDO_LIMIT - 1; left >= 0; left--) {
      assert.equal(m.undoStep(), left);
      assert.equal(m.undoSteps, left);
    }
    assert.deepEqual(weights(), kept, 'the undos put back the weights after the dropped steps, exactly');
    assert.throws(() => m.undoStep(), (e) => e.code === 'bad_state');
  } finally {
    m.dispose();
  }
  assert.throws(() => m.undoSteps, (e) => e.code === 'bad_state');
});

test('the pretrained worker\u2019s runner answers backward, sgd and undo requests with the model\u2019s own numbers', async () => {
  const { createHubRunner } = await import('../../web/app/hub/runner.js');
  const { readdirSync } = await import('node:fs');
  const replies = [];
  const runner = createHubRunner((msg) => replies.push(msg), { loadEngine: async () => engine });
  const sentence = 'the cat sat on the mat';
  await runner.onMessage({ type: 'backward', req: 1, sentence });
  assert.equal(replies.at(-1).type, 'error', 'no model yet: an error reply');
  assert.equal(replies.at(-1).code, 'bad_state');
  const folder = join(dir, 'gpt2-vocab');
  const files = readdirSync(folder).map((n) => new File([readFileSync(join(folder, n))], n));
  await runner.onMessage({ type: 'load', source: { kind: 'files', files } });
  assert.equal(replies.at(-1).type, 'loaded', JSON.stringify(replies.at(-1)));
  const direct = load('gpt2-vocab');
  try {
    await runner.onMessage({ type: 'backward', req: 2, sentence, layer: 1, scale: false });
    const got = replies.at(-1);
    assert.equal(got.type, 'backward');
    assert.equal(got.req, 2);
    const want = direct.backwardTrace({ text: sentence, layer: 1, scale: false });
    assert.equal(got.trace.loss, want.loss);
    assert.deepEqual(got.trace.layers[1].heads[0].dScaled.data, want.layers[1].heads[0].dScaled.data);
    const own = direct.backwardTrace({ text: sentence, layer: 1 }).loss;  // the model's own scale, as the step's
    await runner.onMessage({ type: 'sgd', req: 3, sentence, lr: 0.5, layer: 1, head: 1 });
    assert.equal(replies.at(-1).type, 'stepped');
    assert.equal(replies.at(-1).step.steps, 1);
    await runner.onMessage({ type: 'backward', req: 4, sentence, layer: 1 });
    assert.ok(replies.at(-1).trace.loss < own, `the step lowered the loss: ${replies.at(-1).trace.loss} < ${own}`);
    await runner.onMessage({ type: 'undo', req: 5 });
    assert.deepEqual(replies.at(-1), { type: 'undone', req: 5, steps: 0 });
    await runner.onMessage({ type: 'backward', req: 6, sentence, layer: 1 });
    assert.equal(replies.at(-1).trace.loss, own, 'undone exactly');
  } finally {
    direct.dispose();
    runner.dispose();
  }
});
