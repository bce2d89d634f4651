// The documented API of web/engine.js (see engine.d.ts) behaves as documented.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at, createEngine, DEFAULT_SETTINGS, MASKS, POSITIONALS } from '../../web/engine.js';
import { identityRows, maxRowSumError } from './helpers.mjs';

const engine = await createEngine();
const SENTENCE = 'The cat sat on the mat because it was tired.';

/** Every float matrix of a trace with its name. */
function floatMatrices(trace) {
  const out = [
    ['embeddings', trace.embeddings], ['positional', trace.positional], ['input', trace.input],
    ['wQuery', trace.wQuery], ['wKey', trace.wKey], ['wValue', trace.wValue], ['wOutput', trace.wOutput],
    ['concat', trace.concat], ['output', trace.output],
  ];
  trace.heads.forEach((h, i) => {
    for (const key of ['query', 'key', 'value', 'scores', 'scaled', 'weights', 'output']) out.push([`heads[${i}].${key}`, h[key]]);
  });
  return out;
}

/** The wasm memory's buffer (engine internals; only used to prove copies are not views). */
function wasmBuffer() {
  return engine._m.HEAP8.buffer;
}

function maxAbsDiff(a, b) {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

test('every matrix of a trace is a Float32Array copy that owns its buffer, not a view of wasm memory', () => {
  const trace = engine.run({ sentence: SENTENCE, dModel: 16, heads: 4 });
  for (const [name, m] of floatMatrices(trace)) {
    assert.ok(m.data instanceof Float32Array, `${name}.data is a Float32Array`);
    assert.notEqual(m.data.buffer, wasmBuffer(), `${name}.data is not in the wasm memory`);
    assert.equal(m.data.byteOffset, 0, `${name}.data starts its own buffer`);
    assert.equal(m.data.buffer.byteLength, m.data.byteLength, `${name}.data has a buffer of exactly its size`);
    assert.equal(m.data.length, m.rows * m.cols, `${name}.data has rows×cols values`);
  }
  assert.ok(trace.mask.data instanceof Uint8Array, 'the mask is a Uint8Array');
  assert.notEqual(trace.mask.data.buffer, wasmBuffer(), 'the mask is not in the wasm memory');
  assert.equal(trace.mask.data.buffer.byteLength, trace.mask.data.byteLength);
});

test('mutating a returned matrix does not change the result of a second run', () => {
  const settings = { sentence: SENTENCE, dModel: 16, heads: 4, mask: 'causal' };
  const first = engine.run(settings);
  const snapshot = floatMatrices(first).map(([name, m]) => [name, m.data.slice()]);
  const maskSnapshot = first.mask.data.slice();
  for (const [, m] of floatMatrices(first)) m.data.fill(Number.NaN);
  first.mask.data.fill(0);
  const second = engine.run(settings);
  const secondMatrices = new Map(floatMatrices(second));
  for (const [name, data] of snapshot) assert.deepEqual(secondMatrices.get(name).data, data, `${name} unchanged`);
  assert.deepEqual(second.mask.data, maskSnapshot);
});

test('mutating the weights passed in does not change a trace already returned', () => {
  const w = identityRows(4);
  const trace = engine.run({ sentence: 'a b', dModel: 4, heads: 2, weights: { wQuery: w, wKey: w, wValue: w, wOutput: w } });
  w[0][0] = 99;
  assert.equal(at(trace.wQuery, 0, 0), 1);
});

test('matrices returned earlier stay valid after the wasm memory grows', () => {
  const small = engine.run({ sentence: SENTENCE });
  const copy = small.output.data.slice();
  const before = engine.memoryBytes();
  // 700 tokens × 16 heads: about 94 MB of score matrices, more than any earlier run
  const big = engine.run({ sentence: Array.from({ length: 700 }, (_, i) => `w${i}`).join(' '), dModel: 64, heads: 16 });
  assert.equal(big.heads[15].weights.rows, 700);
  assert.ok(engine.memoryBytes() > before, `memory grew (${before} → ${engine.memoryBytes()})`);
  assert.equal(small.output.data.length, copy.length, 'the old data is not detached');
  assert.deepEqual(small.output.data, copy, 'the old data is unchanged');
  assert.ok(maxRowSumError(big.heads[15].weights) < 1e-5);
});

test('trace matrices have the documented shapes (T×C, C×C, T×D, T×T)', () => {
  const trace = engine.run({ sentence: SENTENCE, dModel: 24, heads: 3 });
  const T = trace.tokens.length;
  const C = 24;
  const D = 8;
  assert.equal(T, 11);
  assert.equal(trace.config.dHead, D);
  const shape = (m) => [m.rows, m.cols];
  for (const key of ['embeddings', 'positional', 'input', 'concat', 'output']) assert.deepEqual(shape(trace[key]), [T, C], key);
  for (const key of ['wQuery', 'wKey', 'wValue', 'wOutput']) assert.deepEqual(shape(trace[key]), [C, C], key);
  assert.deepEqual(shape(trace.mask), [T, T], 'mask');
  assert.equal(trace.heads.length, 3);
  for (const h of trace.heads) {
    for (const key of ['query', 'key', 'value', 'output']) assert.deepEqual(shape(h[key]), [T, D], key);
    for (const key of ['scores', 'scaled', 'weights']) assert.deepEqual(shape(h[key]), [T, T], key);
  }
});

test('input equals embeddings plus positional encoding', () => {
  const trace = engine.run({ sentence: SENTENCE, positional: 'learned' });
  for (let i = 0; i < trace.input.data.length; i++) {
    assert.equal(trace.input.data[i], Math.fround(trace.embeddings.data[i] + trace.positional.data[i]));
  }
  const none = engine.run({ sentence: SENTENCE, positional: 'none' });
  assert.ok(none.positional.data.every((v) => v === 0), 'positional "none" is all zeros');
});

test('attention weights are non-negative and every row sums to 1', () => {
  for (const mask of ['none', 'causal', 'padding', 'causal+padding']) {
    const trace = engine.run({ sentence: SENTENCE, mask, padTo: 14 });
    for (const [i, h] of trace.heads.entries()) {
      assert.ok(h.weights.data.every((v) => v >= 0 && v <= 1), `head ${i} weights in [0, 1] (${mask})`);
      assert.ok(maxRowSumError(h.weights) < 1e-5, `head ${i} rows sum to 1 (${mask})`);
    }
  }
});

test('a causal mask gives weights of exactly 0 above the diagonal', () => {
  const trace = engine.run({ sentence: SENTENCE, mask: 'causal' });
  const T = trace.tokens.length;
  for (let i = 0; i < T; i++) {
    for (let j = 0; j < T; j++) assert.equal(at(trace.mask, i, j), j <= i ? 1 : 0, `mask[${i}][${j}]`);
  }
  for (const h of trace.heads) {
    for (let i = 0; i < T; i++) {
      for (let j = i + 1; j < T; j++) assert.equal(at(h.weights, i, j), 0, `weights[${i}][${j}]`);
    }
    assert.equal(at(h.weights, 0, 0), 1, 'the first token attends only to itself');
  }
});

test('padTo appends [PAD] tokens with id 0 at the end of the sentence, and realTokens counts the others', () => {
  const sentence = 'naïve 猫 sat';
  const trace = engine.run({ sentence, padTo: 6, mask: 'padding' });
  assert.equal(trace.tokens.length, 6);
  assert.equal(trace.realTokens, 3);
  assert.equal(trace.config.padTo, 6);
  const bytes = new TextEncoder().encode(sentence).length;
  for (const t of trace.tokens.slice(3)) {
    assert.deepEqual(t, { text: '[PAD]', id: 0, start: bytes, end: bytes, startChar: sentence.length, endChar: sentence.length });
  }
  assert.ok(trace.tokens.slice(0, 3).every((t) => t.id !== 0));
  // a [PAD] token's embedding is zero
  for (let i = 3; i < 6; i++) {
    for (let j = 0; j < trace.embeddings.cols; j++) assert.equal(at(trace.embeddings, i, j), 0);
  }
  const unpadded = engine.run({ sentence });
  assert.equal(unpadded.realTokens, 3);
  assert.equal(unpadded.tokens.length, 3);
});

test('a padding mask gives padded keys exactly 0 weight', () => {
  const trace = engine.run({ sentence: 'a b c', padTo: 5, mask: 'padding' });
  for (const h of trace.heads) {
    for (let i = 0; i < 5; i++) {
      for (let j = 3; j < 5; j++) assert.equal(at(h.weights, i, j), 0);
    }
    assert.ok(maxRowSumError(h.weights) < 1e-5);
  }
});

test("runBatch(['a b c d', 'a'], {}) pads both to 4 tokens with a padding mask, and padded keys get weight exactly 0", () => {
  const [long, short] = engine.runBatch(['a b c d', 'a'], {});
  for (const t of [long, short]) {
    assert.equal(t.tokens.length, 4);
    assert.equal(t.config.mask, 'padding');
    assert.equal(t.mask.rows, 4);
  }
  assert.equal(long.realTokens, 4);
  assert.equal(short.realTokens, 1);
  assert.equal(long.sentence, 'a b c d');
  assert.equal(short.sentence, 'a');
  assert.deepEqual(short.tokens.map((t) => [t.text, t.id]), [['a', short.tokens[0].id], ['[PAD]', 0], ['[PAD]', 0], ['[PAD]', 0]]);
  assert.ok(long.mask.data.every((v) => v === 1), 'the longest sentence has nothing masked');
  for (const h of short.heads) {
    for (let i = 0; i < 4; i++) {
      assert.equal(at(h.weights, i, 0), 1, `row ${i} attends only to the real token`);
      for (let j = 1; j < 4; j++) assert.equal(at(h.weights, i, j), 0, `weights[${i}][${j}]`);
    }
  }
  // the same as running each alone with padTo 4 and a padding mask
  const alone = engine.run({ sentence: 'a', padTo: 4, mask: 'padding' });
  assert.deepEqual(short.output.data, alone.output.data);
});

test('scale false makes scaled equal to scores; scale true divides them by √D', () => {
  const off = engine.run({ sentence: SENTENCE, scale: false, dModel: 16, heads: 4 });
  for (const h of off.heads) assert.deepEqual(h.scaled.data, h.scores.data);
  const on = engine.run({ sentence: SENTENCE, scale: true, dModel: 16, heads: 4 });
  for (const h of on.heads) {
    for (let i = 0; i < h.scores.data.length; i++) {
      assert.ok(Math.abs(h.scaled.data[i] - h.scores.data[i] / 2) <= 1e-6 * Math.max(1, Math.abs(h.scores.data[i])));
    }
  }
});

test('shareHeads gives every head identical weights', () => {
  const trace = engine.run({ sentence: SENTENCE, dModel: 32, heads: 4, shareHeads: true });
  assert.equal(trace.config.shareHeads, true);
  for (let h = 1; h < 4; h++) assert.deepEqual(trace.heads[h].weights.data, trace.heads[0].weights.data, `head ${h}`);
  const separate = engine.run({ sentence: SENTENCE, dModel: 32, heads: 4 });
  assert.notDeepEqual(separate.heads[1].weights.data, separate.heads[0].weights.data, 'without shareHeads heads differ');
});

test('a custom mask given as an array of rows is used, and its zeros give weight exactly 0', () => {
  const customMask = [
    [1, 0, 1, 0],
    [0, 1, 0, 0],
    [1, 1, 1, 1],
    [0, 0, 0, 1],
  ];
  const trace = engine.run({ sentence: 'one two three four', mask: 'custom', customMask });
  assert.equal(trace.config.mask, 'custom');
  assert.deepEqual(Array.from(trace.mask.data), customMask.flat());
  for (const h of trace.heads) {
    for (let i = 0; i < 4; i++) {
      for (let j = 0; j < 4; j++) {
        if (customMask[i][j] === 0) assert.equal(at(h.weights, i, j), 0, `weights[${i}][${j}]`);
        else assert.ok(at(h.weights, i, j) > 0, `weights[${i}][${j}] > 0`);
      }
    }
    assert.equal(at(h.weights, 1, 1), 1);
    assert.equal(at(h.weights, 3, 3), 1);
    assert.ok(maxRowSumError(h.weights) < 1e-5);
  }
  // the same mask as {rows, cols, data}
  const flat = engine.run({ sentence: 'one two three four', mask: 'custom', customMask: { rows: 4, cols: 4, data: customMask.flat() } });
  assert.deepEqual(flat.output.data, trace.output.data);
});

test('a custom mask treats every nonzero entry (0.5, 256, -1, true) as "may attend", as documented', () => {
  const reference = engine.run({ sentence: 'a b c', mask: 'custom', customMask: [[1, 1, 0], [1, 1, 0], [1, 1, 1]] });
  for (const v of [0.5, 256, -1, true]) {
    const trace = engine.run({ sentence: 'a b c', mask: 'custom', customMask: [[1, v, 0], [1, 1, 0], [1, 1, 1]] });
    assert.deepEqual(Array.from(trace.mask.data), [1, 1, 0, 1, 1, 0, 1, 1, 1], `mask entry ${v} is "may attend"`);
    assert.deepEqual(trace.heads[0].weights.data, reference.heads[0].weights.data, `weights with mask entry ${v}`);
  }
});

test('scoreStats with a mask counts every nonzero mask entry as allowed', () => {
  assert.deepEqual(engine.scoreStats([[1, 2], [3, 4]], [[0.5, 0], [0, 1]]), { mean: 2.5, variance: 2.25, min: 1, max: 4, count: 2 });
});

test('custom weights given as arrays of rows are used: trace.wQuery equals them and Q = X\' for identities', () => {
  const I = identityRows(4);
  const trace = engine.run({ sentence: 'one two three', dModel: 4, heads: 2, weights: { wQuery: I, wKey: I, wValue: I, wOutput: I } });
  for (const key of ['wQuery', 'wKey', 'wValue', 'wOutput']) {
    assert.deepEqual({ rows: trace[key].rows, cols: trace[key].cols }, { rows: 4, cols: 4 });
    assert.deepEqual(Array.from(trace[key].data), I.flat(), key);
  }
  // identity projections: head h's query is columns 2h, 2h+1 of the input; output = concat
  for (let h = 0; h < 2; h++) {
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 2; j++) assert.equal(at(trace.heads[h].query, i, j), at(trace.input, i, 2 * h + j));
    }
  }
  assert.deepEqual(trace.output.data, trace.concat.data);
  // and the weights are not the seeded ones
  const seeded = engine.run({ sentence: 'one two three', dModel: 4, heads: 2 });
  assert.notDeepEqual(Array.from(seeded.wQuery.data), I.flat());
});

test('custom weights given as {rows, cols, data} Float32Arrays are used', () => {
  const seeded = engine.run({ sentence: SENTENCE, dModel: 8, heads: 2, seed: 1 });
  const weights = { wQuery: seeded.wQuery, wKey: seeded.wKey, wValue: seeded.wValue, wOutput: seeded.wOutput };
  const reused = engine.run({ sentence: SENTENCE, dModel: 8, heads: 2, seed: 1, weights });
  assert.deepEqual(reused.output.data, seeded.output.data);
});

test('rowEntropy of a uniform 1×4 row is ln 4', () => {
  const h = engine.rowEntropy([[0.25, 0.25, 0.25, 0.25]]);
  assert.ok(h instanceof Float32Array);
  assert.equal(h.length, 1);
  assert.ok(Math.abs(h[0] - Math.log(4)) < 1e-6, `entropy ${h[0]}`);
  const oneHot = engine.rowEntropy({ rows: 2, cols: 2, data: new Float32Array([1, 0, 0, 1]) });
  assert.deepEqual(Array.from(oneHot), [0, 0]);
});

test('softmaxJacobianNorm of [[0.5, 0.5]] is 0.5 and of a one-hot row is 0', () => {
  const n = engine.softmaxJacobianNorm([[0.5, 0.5]]);
  assert.ok(n instanceof Float32Array);
  assert.ok(Math.abs(n[0] - 0.5) < 1e-6, `norm ${n[0]}`);
  assert.ok(Math.abs(engine.softmaxJacobianNorm([[1, 0, 0]])[0]) < 1e-7);
});

test('scoreStats of [[1, 2], [3, 4]] has mean 2.5 and variance 1.25', () => {
  const st = engine.scoreStats([[1, 2], [3, 4]]);
  assert.ok(Math.abs(st.mean - 2.5) < 1e-9);
  assert.ok(Math.abs(st.variance - 1.25) < 1e-9);
  assert.equal(st.min, 1);
  assert.equal(st.max, 4);
  assert.equal(st.count, 4);
  const masked = engine.scoreStats([[1, 2], [3, 4]], [[1, 0], [0, 1]]);
  assert.deepEqual(masked, { mean: 2.5, variance: 2.25, min: 1, max: 4, count: 2 });
});

test('scaleExperiment: unscaled scores of width 256 have variance > 100, scaled ones about 1', () => {
  const unscaled = engine.scaleExperiment({ dK: 256, scale: false });
  const scaled = engine.scaleExperiment({ dK: 256, scale: true });
  assert.ok(unscaled.scoreVariance > 100, `unscaled variance ${unscaled.scoreVariance}`);
  assert.ok(scaled.scoreVariance >= 0.7 && scaled.scoreVariance <= 1.3, `scaled variance ${scaled.scoreVariance}`);
  assert.ok(Math.abs(scaled.maxEntropy - Math.log(16)) < 1e-9, 'maxEntropy is ln(tokens)');
  assert.ok(unscaled.meanEntropy < scaled.meanEntropy, 'unscaled softmax is more peaked');
  assert.ok(unscaled.meanJacobianNorm < scaled.meanJacobianNorm, 'unscaled softmax has smaller gradients');
  assert.deepEqual(engine.scaleExperiment({ dK: 256, scale: true }), scaled, 'deterministic for a seed');
});

test('forward(...) with a trace\'s input, weights, heads, mask and scale equals trace.output within 1e-6', () => {
  const cases = [
    { sentence: SENTENCE },
    { sentence: SENTENCE, dModel: 24, heads: 3, mask: 'causal', scale: false, positional: 'learned' },
    { sentence: 'café 猫 👍🏽', padTo: 6, mask: 'causal+padding', dModel: 8, heads: 8 },
  ];
  for (const settings of cases) {
    const trace = engine.run(settings);
    const y = engine.forward({
      x: trace.input,
      weights: { wQuery: trace.wQuery, wKey: trace.wKey, wValue: trace.wValue, wOutput: trace.wOutput },
      heads: trace.config.heads,
      mask: trace.mask,
      scale: trace.config.scale,
    });
    assert.equal(y.rows, trace.output.rows);
    assert.equal(y.cols, trace.output.cols);
    assert.ok(y.data instanceof Float32Array);
    const d = maxAbsDiff(y.data, trace.output.data);
    assert.ok(d <= 1e-6, `max difference ${d} for ${JSON.stringify(settings)}`);
  }
});

test('forward without a mask equals a trace with mask "none"', () => {
  const trace = engine.run({ sentence: SENTENCE, mask: 'none' });
  const y = engine.forward({ x: trace.input, weights: { wQuery: trace.wQuery, wKey: trace.wKey, wValue: trace.wValue, wOutput: trace.wOutput }, heads: 4 });
  assert.ok(maxAbsDiff(y.data, trace.output.data) <= 1e-6);
});

test('engine.info reports a SIMD build and the documented limits', () => {
  assert.equal(engine.info.simd, true);
  assert.equal(engine.info.maxTokens, 2048);
  assert.equal(engine.info.maxDModel, 1024);
  assert.equal(engine.info.vocabSize, 32768);
  assert.ok(Object.isFrozen(engine.info));
});

test('createEngine() twice shares one module and both engines work', async () => {
  const a = await createEngine();
  const b = await createEngine();
  assert.notEqual(a, b);
  assert.equal(a._m, b._m, 'the compiled module is shared');
  assert.equal(a._m, engine._m);
  const ta = a.run({ sentence: SENTENCE });
  const tb = b.run({ sentence: SENTENCE });
  assert.deepEqual(ta.output.data, tb.output.data);
  assert.equal(a.memoryBytes(), b.memoryBytes());
});

test('run() with no settings uses DEFAULT_SETTINGS, the CLI\'s defaults', () => {
  const trace = engine.run();
  assert.equal(trace.sentence, DEFAULT_SETTINGS.sentence);
  assert.deepEqual(
    { ...trace.config },
    { dModel: 16, heads: 4, dHead: 4, seed: 42, positional: 'sinusoidal', mask: 'none', scale: true, padTo: 0, lowercase: false, shareHeads: false },
  );
  assert.ok(Object.isFrozen(DEFAULT_SETTINGS));
  assert.deepEqual([...POSITIONALS], ['none', 'sinusoidal', 'learned', 'rope', 'alibi']);
  assert.deepEqual([...MASKS], ['none', 'causal', 'padding', 'causal+padding', 'custom']);
});

test('the same settings give bit-identical traces, and a different seed gives different weights', () => {
  const a = engine.run({ sentence: SENTENCE, seed: 3 });
  const b = engine.run({ sentence: SENTENCE, seed: 3 });
  const c = engine.run({ sentence: SENTENCE, seed: 4 });
  assert.deepEqual(a.output.data, b.output.data);
  assert.notDeepEqual(a.wQuery.data, c.wQuery.data);
});

test('at(matrix, i, j) reads row-major element (i, j)', () => {
  const m = { rows: 2, cols: 3, data: new Float32Array([1, 2, 3, 4, 5, 6]) };
  assert.equal(at(m, 0, 2), 3);
  assert.equal(at(m, 1, 0), 4);
});

test('tokenize returns tokens with text, id, byte and UTF-16 offsets', () => {
  const tokens = engine.tokenize('Hello, 猫!');
  assert.deepEqual(tokens.map((t) => t.text), ['Hello', ',', '猫', '!']);
  assert.deepEqual(tokens.map((t) => [t.start, t.end, t.startChar, t.endChar]), [[0, 5, 0, 5], [5, 6, 5, 6], [7, 10, 7, 8], [10, 11, 8, 9]]);
  const lower = engine.tokenize('Hello', { lowercase: true });
  assert.equal(lower[0].text, 'hello');
  assert.equal(lower[0].id, engine.tokenize('hello')[0].id, 'the id is the lower-cased text\'s id');
});

test('weights rows sum to 1 within 1e-6 at T = 2048 with repeated tokens, in wasm as natively', () => {
  // 2048 copies of one word: every exp() term of a row is of similar size, the
  // case where a float running sum of the denominator drifted most (7e-6).
  const sentence = Array(2048).fill('the').join(' ');
  for (const [positional, scale, dModel] of [['sinusoidal', false, 64], ['learned', false, 64], ['sinusoidal', true, 16]]) {
    const trace = engine.run({ sentence, dModel, heads: 1, positional, scale });
    assert.equal(trace.tokens.length, 2048);
    const err = maxRowSumError(trace.heads[0].weights);
    assert.ok(err <= 1e-6, `${positional}, scale ${scale}, C = ${dModel}: worst |row sum − 1| = ${err}`);
  }
});
