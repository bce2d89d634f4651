// One source of truth per concept (issue #10): the engine's limits, defaults
// and enums come from the C++ and JS derives them; the trace's fields follow
// one table with one naming rule per side; each Engine owns its C++ state; the
// softmax row statistics travel in the trace.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createEngine, ENGINE_CONSTANTS, TASKS, DEFAULT_SETTINGS, MASKS, POSITIONALS, MAX_SENTENCE_BYTES, MAX_BATCH_SENTENCES,
  MAX_TOKENS, MAX_D_MODEL, ERROR_CODES, at,
} from '../../web/engine.js';
import { FIELDS, MASKS as STATE_MASKS, POSITIONALS as STATE_POSITIONALS, MAX_INDEX, DEFAULT_SENTENCE } from '../../web/app/playground/state.js';
import { cliTrace } from './helpers.mjs';

const engine = await createEngine();

// ---- the engine's rules, from the C++ -------------------------------------------------------

test('the generated constants are engine.info without simd and fusedMultiplyAdd (built from the same C++)', () => {
  const { simd, fusedMultiplyAdd, ...info } = engine.info;
  assert.equal(typeof simd, 'boolean');
  assert.equal(fusedMultiplyAdd, false, 'the default build is the exact one');
  assert.deepEqual(JSON.parse(JSON.stringify(ENGINE_CONSTANTS)), JSON.parse(JSON.stringify(info)));
});

test('the limits JS uses are the engine\'s: 2048 tokens, width 1024, 65536 bytes, 64 sentences', () => {
  assert.equal(MAX_TOKENS, engine.info.maxTokens);
  assert.equal(MAX_TOKENS, 2048);
  assert.equal(MAX_D_MODEL, engine.info.maxDModel);
  assert.equal(MAX_D_MODEL, 1024);
  assert.equal(MAX_SENTENCE_BYTES, engine.info.maxSentenceBytes);
  assert.equal(MAX_BATCH_SENTENCES, engine.info.maxBatchSentences);
  assert.equal(MAX_BATCH_SENTENCES, 64);
});

test('MASKS and POSITIONALS are the C++ enums in order, one list shared by engine.js and state.js', () => {
  assert.deepEqual([...MASKS], ['none', 'causal', 'padding', 'causal+padding', 'custom']);
  assert.deepEqual([...MASKS], [...engine.info.masks]);
  assert.deepEqual([...POSITIONALS], ['none', 'sinusoidal', 'learned', 'rope', 'alibi']);
  assert.deepEqual([...POSITIONALS], [...engine.info.positionals]);
  assert.equal(STATE_MASKS, MASKS);
  assert.equal(STATE_POSITIONALS, POSITIONALS);
  assert.ok(Object.isFrozen(MASKS));
  assert.ok(ERROR_CODES.includes('too_many_tokens') && ERROR_CODES.includes('too_large'));
});

test('TASKS are the C++ task list, the same names engine.tasks() describes', () => {
  assert.deepEqual([...TASKS], [...engine.info.tasks]);
  assert.deepEqual(engine.tasks().map((t) => t.name), [...TASKS]);
});

test('DEFAULT_SETTINGS are the C++ Config defaults, and a run without settings uses them', () => {
  const d = engine.info.defaults;
  assert.deepEqual({ ...DEFAULT_SETTINGS }, { ...d, customMask: null, weights: null });
  const trace = engine.run();
  assert.equal(trace.sentence, d.sentence);
  assert.deepEqual(trace.config, {
    dModel: d.dModel, heads: d.heads, dHead: d.dModel / d.heads, seed: d.seed, positional: d.positional, mask: d.mask,
    scale: d.scale, padTo: d.padTo, lowercase: d.lowercase, shareHeads: d.shareHeads,
  });
});

test('the playground\'s URL fields take their limits and defaults from the engine', () => {
  const d = engine.info.defaults;
  assert.equal(FIELDS.dModel.max, engine.info.maxDModel);
  assert.equal(FIELDS.dModel.default, d.dModel);
  assert.equal(FIELDS.heads.default, d.heads);
  assert.equal(FIELDS.seed.default, d.seed);
  assert.equal(FIELDS.positional.default, d.positional);
  assert.equal(FIELDS.mask.default, d.mask);
  assert.equal(FIELDS.scale.default, d.scale);
  assert.equal(MAX_INDEX, engine.info.maxTokens - 1);
  assert.equal(FIELDS.query.max, engine.info.maxTokens - 1);
  assert.equal(DEFAULT_SENTENCE, d.sentence);
});

test('the fast path\'s raw-heap layout is the one the C++ exports, and every mask kind reaches it by its index', () => {
  assert.deepEqual([...engine.info.fastInputs], ['x', 'wQuery', 'wKey', 'wValue', 'wOutput']);
  const C = 4;
  const x = { rows: 3, cols: C, data: Float32Array.from({ length: 3 * C }, (_, i) => Math.sin(i + 1)) };
  const eye = { rows: C, cols: C, data: Float32Array.from({ length: C * C }, (_, i) => (i % (C + 1) === 0 ? 1 : 0)) };
  const weights = { wQuery: eye, wKey: { ...eye, data: eye.data.map((v) => 2 * v) }, wValue: eye, wOutput: eye };
  const causal = [[1, 0, 0], [1, 1, 0], [1, 1, 1]];
  for (const [mask, matrix] of [[null, null], ['causal', causal], [{ kind: 'padding', realTokens: 2 }, [[1, 1, 0], [1, 1, 0], [1, 1, 0]]],
    [{ kind: 'causal+padding', realTokens: 2 }, [[1, 0, 0], [1, 1, 0], [1, 1, 0]]], [[[1, 0, 1], [0, 1, 0], [1, 1, 1]], [[1, 0, 1], [0, 1, 0], [1, 1, 1]]]]) {
    const fast = engine.forward({ x, weights, heads: 2, mask });
    const ref = engine.forwardReference({ x, weights, heads: 2, mask: matrix });
    for (let i = 0; i < fast.data.length; i++) assert.ok(Math.abs(fast.data[i] - ref.data[i]) < 1e-5, `${JSON.stringify(mask)} entry ${i}`);
  }
});

// ---- one trace field table, one naming rule per side ------------------------------------------

const camel = (name) => name.replace(/_([a-z])/g, (_, c) => c.toUpperCase());

test('the JS trace and the CLI JSON have the same fields: snake_case in the CLI, camelCase in JS', () => {
  const settings = { sentence: 'The cat sat.', dModel: 8, heads: 2, mask: 'causal' };
  const trace = engine.run(settings);
  const json = cliTrace(['--sentence', settings.sentence, '--d-model', '8', '--heads', '2', '--mask', 'causal']);
  const jsOnly = new Set(['realTokens', 'sentence', 'patterns']); // patterns: the heads' pattern scores, for the page
  assert.deepEqual(Object.keys(json).map(camel), Object.keys(trace).filter((k) => !jsOnly.has(k)));
  assert.deepEqual(Object.keys(json.config).map(camel), Object.keys(trace.config).slice(0, Object.keys(json.config).length));
  assert.deepEqual(Object.keys(json.heads[0]).map(camel), Object.keys(trace.heads[0]));
  assert.deepEqual(Object.keys(json.tokens[0]).map(camel), Object.keys(trace.tokens[0]).slice(0, 4));
  // the same numbers on both sides
  for (let h = 0; h < 2; h++) {
    assert.deepEqual(json.heads[h].row_max.map(Math.fround), Array.from(trace.heads[h].rowMax));
    for (let i = 0; i < json.heads[h].row_sum.length; i++) {
      assert.ok(Math.abs(json.heads[h].row_sum[i] - trace.heads[h].rowSum[i]) <= 1e-6 * trace.heads[h].rowSum[i]);
    }
  }
});

// ---- the softmax row statistics ---------------------------------------------------------------

/** The row's maximum over allowed keys and its denominator, in double, from scaled and the mask. */
function rowStats(head, mask, q) {
  let max = -Infinity;
  for (let j = 0; j < mask.cols; j++) if (at(mask, q, j)) max = Math.max(max, at(head.scaled, q, j));
  let sum = 0;
  for (let j = 0; j < mask.cols; j++) if (at(mask, q, j)) sum += Math.exp(at(head.scaled, q, j) - max);
  return { max, sum };
}

test('rowMax and rowSum are each row\'s allowed maximum and softmax denominator (checked in double), 0 and 0 for a blocked row', () => {
  const sentence = 'The animal didn\'t cross the street because it was too tired.';
  const T = engine.tokenize(sentence).length;
  const blocked = Array.from({ length: T }, (_, i) => Array.from({ length: T }, (__, j) => (i === 3 || (j > i && i % 2 === 0) ? 0 : 1)));
  for (const settings of [{}, { mask: 'causal' }, { scale: false, dModel: 32, heads: 2 }, { mask: 'custom', customMask: blocked }]) {
    const trace = engine.run({ sentence, ...settings });
    for (const head of trace.heads) {
      assert.ok(head.rowMax instanceof Float32Array && head.rowMax.length === T);
      assert.ok(head.rowSum instanceof Float32Array && head.rowSum.length === T);
      for (let q = 0; q < T; q++) {
        const { max, sum } = rowStats(head, trace.mask, q);
        if (max === -Infinity) {
          assert.equal(head.rowMax[q], 0);
          assert.equal(head.rowSum[q], 0);
          continue;
        }
        assert.equal(head.rowMax[q], max, `row ${q} max`);
        assert.ok(Math.abs(head.rowSum[q] - sum) <= 1e-6 * sum, `row ${q}: ${head.rowSum[q]} vs ${sum}`);
        for (let k = 0; k < T; k++) {
          const expected = at(trace.mask, q, k) ? Math.exp(at(head.scaled, q, k) - max) / sum : 0;
          assert.ok(Math.abs(at(head.weights, q, k) - expected) <= 1e-6, `weight ${q},${k}`);
        }
      }
    }
  }
});

test('a trained model\'s trace carries rowMax and rowSum for every head of every layer', () => {
  const trainer = engine.createTrainer({ task: 'reverse', seed: 1 });
  try {
    const tr = trainer.trace();
    for (const layer of tr.layers) {
      for (const head of layer.heads) {
        const T = head.weights.rows;
        assert.equal(head.rowMax.length, T);
        for (let q = 0; q < T; q++) {
          const { max, sum } = rowStats(head, tr.mask, q);
          if (max === -Infinity) continue;
          assert.equal(head.rowMax[q], max);
          assert.ok(Math.abs(head.rowSum[q] - sum) <= 1e-6 * sum);
        }
      }
    }
  } finally {
    trainer.dispose();
  }
});

// ---- each Engine owns its state ----------------------------------------------------------------

test('two engines with different weights never see each other\'s cache', async () => {
  const a = await createEngine();
  const b = await createEngine();
  try {
    const fresh = (seed) => engine.run({ sentence: 'a b c d', seed, dModel: 8, heads: 2 });
    const a1 = a.run({ sentence: 'a b c d', seed: 1, dModel: 8, heads: 2 });
    const b2 = b.run({ sentence: 'a b c d', seed: 2, dModel: 8, heads: 2 });
    const a1again = a.run({ sentence: 'a b c d', seed: 1, dModel: 8, heads: 2 });
    assert.deepEqual(a1.wQuery.data, fresh(1).wQuery.data);
    assert.deepEqual(b2.wQuery.data, fresh(2).wQuery.data);
    assert.deepEqual(a1again.output.data, a1.output.data);
    // a kept its own set while b computed another: a hit for a, b's only set is seed 2
    assert.deepEqual({ hits: a.stats().weightsCacheHits, misses: a.stats().weightsCacheMisses }, { hits: 1, misses: 1 });
    assert.deepEqual({ hits: b.stats().weightsCacheHits, misses: b.stats().weightsCacheMisses }, { hits: 0, misses: 1 });
    assert.equal(a.stats().cachedWeightsBytes, 4 * 8 * 8 * 4);
    // explicit weights bypass the cache
    a.run({ sentence: 'a b', dModel: 8, heads: 2, weights: { wQuery: a1.wQuery, wKey: a1.wKey, wValue: a1.wValue, wOutput: a1.wOutput } });
    assert.equal(a.stats().weightsCacheMisses, 1);
  } finally {
    a.dispose();
    b.dispose();
  }
});

test('two engines\' fast paths keep separate buffers: interleaved calls of different sizes give each its own result', async () => {
  const a = await createEngine();
  const b = await createEngine();
  try {
    const input = (T, C, s) => ({ rows: T, cols: C, data: Float32Array.from({ length: T * C }, (_, i) => Math.cos(i * s)) });
    const eye = (C) => ({ rows: C, cols: C, data: Float32Array.from({ length: C * C }, (_, i) => (i % (C + 1) === 0 ? 0.5 : 0.01)) });
    const wa = { wQuery: eye(8), wKey: eye(8), wValue: eye(8), wOutput: eye(8) };
    const wb = { wQuery: eye(16), wKey: eye(16), wValue: eye(16), wOutput: eye(16) };
    const ya = a.forward({ x: input(5, 8, 0.3), weights: wa, heads: 2 });
    b.forward({ x: input(9, 16, 0.7), weights: wb, heads: 4 });
    assert.ok(a.stats().fastWorkspaceBytes < b.stats().fastWorkspaceBytes || a.stats().fastBufferBytes < b.stats().fastBufferBytes);
    assert.deepEqual(a.forward({ x: input(5, 8, 0.3), weights: wa, heads: 2 }).data, ya.data);
  } finally {
    a.dispose();
    b.dispose();
  }
});

test('after a 1200-token trace the product workspace drops back to its bound (4 MiB)', () => {
  const e = engine;
  e.run({ sentence: 'a b c', padTo: 1200, mask: 'padding', dModel: 16, heads: 1 });
  assert.ok(e.stats().gemmWorkspaceBytes <= 4 * 1024 * 1024, `${e.stats().gemmWorkspaceBytes} bytes kept`);
});
