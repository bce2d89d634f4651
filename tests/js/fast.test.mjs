// The fast path in the real wasm module: engine.forward (hand-written SIMD128
// kernels) against engine.forwardReference (the Eigen path) on random inputs.
// The Catch2 tests check the same kernels natively (their SSE2 form, and their plain C++
// form bit for bit against it: test_scalar_kernels.cpp); these are the ones that run the
// wasm_simd128.h code.
// ATTN_TEST_FLAVOUR=relaxed runs them on the relaxed-SIMD flavour (fused products;
// tests/js/relaxed.test.mjs does, in a Node that runs relaxed SIMD).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createEngine } from '../../web/engine.js';
import { REPO_ROOT, prng, relativeError as relativeErrorOf } from './helpers.mjs';

const RELAXED = process.env.ATTN_TEST_FLAVOUR === 'relaxed';
const RELAXED_DIR = path.join(REPO_ROOT, 'web/generated/relaxed');
/** A module instance of the flavour under test: the exact SIMD build, or the relaxed one
 * (its Node glue with the rewritten .wasm, as bench/run.mjs loads it). */
async function flavourFactory() {
  if (!RELAXED) return (await import('../../web/generated/attention_core.node.cjs')).default;
  const { default: factory } = await import(path.join(RELAXED_DIR, 'attention_core.node.cjs'));
  const wasmBinary = fs.readFileSync(path.join(RELAXED_DIR, 'attention_core.wasm'));
  return (options) => factory({ ...options, wasmBinary });
}
const FACTORY = await flavourFactory();
const newEngine = () => createEngine({ moduleFactory: FACTORY });
const engine = await newEngine();

function randomMatrix(rand, rows, cols, scale = 1) {
  const data = new Float32Array(rows * cols);
  for (let i = 0; i < data.length; i++) data[i] = (2 * rand() - 1) * scale;
  return { rows, cols, data };
}

function randomWeights(rand, c) {
  const limit = Math.sqrt(6 / (2 * c));
  return { wQuery: randomMatrix(rand, c, c, limit), wKey: randomMatrix(rand, c, c, limit), wValue: randomMatrix(rand, c, c, limit), wOutput: randomMatrix(rand, c, c, limit) };
}

/** T×T 0/1 mask, 1 = may attend. */
function maskMatrix(t, allowed) {
  const data = new Uint8Array(t * t);
  for (let i = 0; i < t; i++) for (let j = 0; j < t; j++) data[i * t + j] = allowed(i, j) ? 1 : 0;
  return { rows: t, cols: t, data };
}

/** max |a − b| / max(1, max |b|) of two matrices of one shape (bench/numeric.mjs). */
function relativeError(a, b) {
  assert.equal(a.rows, b.rows);
  assert.equal(a.cols, b.cols);
  return relativeErrorOf(a.data, b.data);
}

/** A random case: the fast path's mask and the equivalent matrix for the reference. */
function randomCase(rand, t, heads, d) {
  const c = heads * d;
  const real = Math.floor(rand() * (t + 1));
  const kinds = ['none', 'causal', 'padding', 'causal+padding', 'custom'];
  const kind = kinds[Math.floor(rand() * kinds.length)];
  let mask;
  let matrix;
  if (kind === 'none') {
    mask = 'none';
    matrix = maskMatrix(t, () => true);
  } else if (kind === 'causal') {
    mask = 'causal';
    matrix = maskMatrix(t, (i, j) => j <= i);
  } else if (kind === 'custom') {
    matrix = maskMatrix(t, () => rand() < 0.6);  // fully masked rows happen
    mask = matrix;
  } else {
    mask = { kind, realTokens: real };
    matrix = maskMatrix(t, (i, j) => j < real && (kind === 'padding' || j <= i));
  }
  return { x: randomMatrix(rand, t, c, 2), weights: randomWeights(rand, c), heads, mask, matrix, scale: rand() < 0.7, describe: `T=${t} H=${heads} D=${d} mask=${kind} real=${real}` };
}

function checkAgainstReference(eng, k) {
  const fast = eng.forward({ x: k.x, weights: k.weights, heads: k.heads, mask: k.mask, scale: k.scale });
  const reference = eng.forwardReference({ x: k.x, weights: k.weights, heads: k.heads, mask: k.matrix, scale: k.scale });
  const err = relativeError(fast, reference);
  assert.ok(err <= 1e-5, `${k.describe} scale=${k.scale}: relative error ${err}`);
}

test('the module under test is the SIMD build, so forward runs the wasm_simd128 kernels (fused only in the relaxed flavour)', () => {
  assert.equal(engine.info.simd, true);
  assert.equal(engine.info.fusedMultiplyAdd, RELAXED);
});

test('forward (fast) equals forwardReference (Eigen) within 1e-5 on random shapes and masks, T = 1, 3, 17 and D % 4 != 0 included', () => {
  const rand = prng(2024);
  for (let i = 0; i < 150; i++) {
    const t = i < 30 ? [1, 3, 17][i % 3] : 1 + Math.floor(rand() * 60);
    const heads = 1 + Math.floor(rand() * 4);
    const d = 1 + Math.floor(rand() * 13);
    checkAgainstReference(engine, randomCase(rand, t, heads, d));
  }
});

test('forward equals forwardReference across row blocks and key panels (T = 65, 130, 257, 600)', () => {
  const rand = prng(7);
  for (const [t, heads, d] of [[65, 2, 8], [130, 3, 5], [257, 8, 4], [600, 2, 12]]) {
    for (let rep = 0; rep < 3; rep++) checkAgainstReference(engine, randomCase(rand, t, heads, d));
  }
});

test('forward equals forwardReference at the model widths C = 768 (12 heads) and 1024 (16 heads), odd T', () => {
  const rand = prng(768);
  for (const [t, heads, d] of [[37, 12, 64], [5, 16, 64]]) checkAgainstReference(engine, randomCase(rand, t, heads, d));
});

test('the kept weight panels follow a change of one weight: each result equals a fresh engine\'s', async () => {
  const rand = prng(25);
  const k = randomCase(rand, 9, 4, 24);
  const fresh = await newEngine();
  try {
    const run = (eng) => eng.forward({ x: k.x, weights: k.weights, heads: k.heads, mask: k.mask, scale: k.scale }).data;
    assert.deepEqual(run(engine), run(fresh));
    assert.deepEqual(run(engine), run(fresh));  // the same weights again: panels reused
    for (const name of ['wQuery', 'wKey', 'wValue', 'wOutput']) {
      const w = k.weights[name].data;
      w[w.length - 1] = Math.fround(w[w.length - 1] * 1.5 + 1e-3);
      const kept = run(engine);
      const fresh2 = await newEngine();
      try {
        assert.deepEqual(kept, run(fresh2), name);
      } finally {
        fresh2.dispose();
      }
      checkAgainstReference(engine, k);
    }
  } finally {
    fresh.dispose();
  }
});

test('weights kept in the engine (keepWeights) give forward()\'s output bit for bit, and within 1e-5 of forwardReference', () => {
  const rand = prng(2522);
  for (const c of [16, 96, 768]) {
    const heads = c === 768 ? 12 : 4;
    const base = randomCase(rand, 5, heads, c / heads);
    const kept = engine.keepWeights(base.weights);
    assert.equal(kept.c, c);
    for (let round = 0; round < (c === 768 ? 3 : 12); round++) {
      const k = randomCase(rand, 1 + Math.floor(rand() * 40), heads, c / heads);
      const withKept = engine.forward({ x: k.x, weights: kept, heads, mask: k.mask, scale: k.scale });
      const passed = engine.forward({ x: k.x, weights: base.weights, heads, mask: k.mask, scale: k.scale });
      assert.deepEqual(withKept.data, passed.data, k.describe);
      const reference = engine.forwardReference({ x: k.x, weights: base.weights, heads, mask: k.matrix, scale: k.scale });
      assert.ok(relativeError(withKept, reference) <= 1e-5, k.describe);
      if (round % 3 === 0) checkAgainstReference(engine, randomCase(rand, 7, heads, c / heads));  // other weights in between
    }
  }
});

test('kept weights: a replaced handle, another engine\'s handle, another width and bad weights are refused by code', async () => {
  const rand = prng(2523);
  const first = engine.keepWeights(randomWeights(rand, 8));
  const second = engine.keepWeights(randomWeights(rand, 8));
  const x = randomMatrix(rand, 3, 8);
  assert.throws(() => engine.forward({ x, weights: first, heads: 2 }), (e) => e.code === 'bad_state' && /replaced/.test(e.message));
  assert.equal(engine.forward({ x, weights: second, heads: 2 }).rows, 3);
  const other = await newEngine();
  try {
    assert.throws(() => other.forward({ x, weights: second, heads: 2 }), (e) => e.code === 'bad_state');
  } finally {
    other.dispose();
  }
  assert.throws(() => engine.forward({ x: randomMatrix(rand, 3, 12), weights: second, heads: 2 }), (e) => e.code === 'bad_shape' && /x has 12 columns; the kept weights are 8x8/.test(e.message));
  const bad = randomWeights(rand, 8);
  bad.wKey.data[9] = NaN;
  assert.throws(() => engine.keepWeights(bad), (e) => e.code === 'not_finite' && /w_key\[1\]\[1\]/.test(e.message));
  assert.throws(() => engine.forward({ x, weights: second, heads: 2 }), (e) => e.code === 'bad_state', 'a failed keepWeights replaces the kept weights too');
  assert.throws(() => engine.keepWeights({ ...randomWeights(rand, 8), wOutput: randomMatrix(rand, 8, 4) }), (e) => e.code === 'bad_shape');
});

test('a causal matrix and the string "causal" give the same output bit for bit', () => {
  const rand = prng(3);
  const k = randomCase(rand, 29, 4, 6);
  const a = engine.forward({ x: k.x, weights: k.weights, heads: 4, mask: 'causal' });
  const b = engine.forward({ x: k.x, weights: k.weights, heads: 4, mask: maskMatrix(29, (i, j) => j <= i) });
  assert.deepEqual(a.data, b.data);
});

test('a causal mask hides future tokens exactly: changing them leaves earlier rows bit-identical', () => {
  const rand = prng(4);
  const k = randomCase(rand, 40, 2, 8);
  const changed = { ...k.x, data: k.x.data.slice() };
  for (let i = 25 * 16; i < changed.data.length; i++) changed.data[i] = 100 * (rand() - 0.5);
  const a = engine.forward({ x: k.x, weights: k.weights, heads: 2, mask: 'causal' });
  const b = engine.forward({ x: changed, weights: k.weights, heads: 2, mask: 'causal' });
  assert.deepEqual(a.data.subarray(0, 25 * 16), b.data.subarray(0, 25 * 16));
});

test('a fully masked row gives an all-zero output row, never NaN', () => {
  const rand = prng(5);
  const k = randomCase(rand, 9, 3, 3);
  const mask = maskMatrix(9, (i, j) => i !== 4 && j <= i);
  const y = engine.forward({ x: k.x, weights: k.weights, heads: 3, mask });
  assert.ok(y.data.every(Number.isFinite));
  assert.ok(y.data.subarray(4 * 9, 5 * 9).every((v) => v === 0));
});

test('arrays of rows and Float32Array matrices give the same output', () => {
  const rand = prng(6);
  const k = randomCase(rand, 5, 2, 2);
  const rows = (m) => Array.from({ length: m.rows }, (_, i) => Array.from(m.data.subarray(i * m.cols, (i + 1) * m.cols)));
  const a = engine.forward({ x: k.x, weights: k.weights, heads: 2, mask: 'causal' });
  const b = engine.forward({ x: rows(k.x), weights: Object.fromEntries(Object.entries(k.weights).map(([n, m]) => [n, rows(m)])), heads: 2, mask: 'causal' });
  assert.deepEqual(a.data, b.data);
});

test('forward rejects bad masks with a clear error', () => {
  const rand = prng(8);
  const k = randomCase(rand, 3, 1, 4);
  assert.throws(() => engine.forward({ x: k.x, weights: k.weights, heads: 1, mask: 'diagonal' }), RangeError);
  assert.throws(() => engine.forward({ x: k.x, weights: k.weights, heads: 1, mask: { kind: 'padding' } }), TypeError);
  assert.throws(() => engine.forward({ x: k.x, weights: k.weights, heads: 1, mask: [[1]] }), { name: 'RangeError', message: /mask is 1x1, expected 3x3/ });
});

test('repeated forward calls of one size allocate nothing (the workspace is reused)', () => {
  const rand = prng(9);
  const k = randomCase(rand, 33, 4, 8);
  const call = () => engine.forward({ x: k.x, weights: k.weights, heads: 4, mask: 'causal' });
  for (let i = 0; i < 5; i++) call();
  const allocated = engine.allocatedBytes();
  const memory = engine.memoryBytes();
  for (let i = 0; i < 500; i++) call();
  assert.equal(engine.allocatedBytes(), allocated);
  assert.equal(engine.memoryBytes(), memory);
});

test('(T, C, H) = (2048, 512, 8) runs in a fresh module within a 64 MB wasm heap', async () => {
  const fresh = await newEngine();
  const rand = prng(10);
  const x = randomMatrix(rand, 2048, 512, 1);
  const weights = randomWeights(rand, 512);
  const y = fresh.forward({ x, weights, heads: 8, mask: 'causal' });
  assert.equal(y.rows, 2048);
  assert.ok(y.data.every(Number.isFinite));
  assert.ok(fresh.memoryBytes() < 64 * 1024 * 1024, `wasm heap ${fresh.memoryBytes()} bytes`);
});

test('forward equals forwardReference within 1e-5 at T = 2048 with repeated tokens (near-equal scores)', () => {
  // every row of x the same up to a small position signal: each row's exp()
  // terms are all of similar size, the case where the denominator drifted most
  const rand = prng(12);
  const t = 2048;
  const c = 32;
  const base = randomMatrix(rand, 1, c, 1).data;
  const x = { rows: t, cols: c, data: new Float32Array(t * c) };
  for (let i = 0; i < t; i++) for (let j = 0; j < c; j++) x.data[i * c + j] = base[j] + 0.05 * Math.sin(i / (1 + j));
  const weights = randomWeights(rand, c);
  for (const mask of [null, 'causal']) {
    const fast = engine.forward({ x, weights, heads: 2, mask, scale: false });
    const reference = engine.forwardReference({ x, weights, heads: 2, mask: mask && maskMatrix(t, (i, j) => j <= i), scale: false });
    const err = relativeError(fast, reference);
    assert.ok(err <= 1e-5, `mask ${mask}: relative error ${err}`);
  }
});
