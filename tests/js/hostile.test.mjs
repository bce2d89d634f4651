// Hostile JavaScript inputs: getters that answer differently on every read,
// Proxies, lying typed arrays, holes, non-finite and huge numbers, very long
// text. None of them may corrupt the engine's wasm memory, grow it past what
// the limits imply, or come back as NaN / Infinity: each call either returns
// finite numbers or throws a TypeError / RangeError naming the problem, and
// every later call (on this engine and on a new one) works as before.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine, MAX_SENTENCE_BYTES } from '../../web/engine.js';
import { identityRows, prng } from './helpers.mjs';

const engine = await createEngine();
const { default: factory } = await import('../../web/generated/attention_core.node.cjs');

/** A new engine on a module of its own: a fresh wasm memory to measure. */
const freshEngine = () => createEngine({ moduleFactory: factory });

const I4 = identityRows(4);
const goodWeights = () => ({ wQuery: I4, wKey: I4, wValue: I4, wOutput: I4 });
const X = [[1, 2, 3, 4], [4, 3, 2, 1], [0, 1, 0, 1]];

/** Results of ordinary calls, to compare with after each hostile one. */
function canary(eng) {
  return {
    run: eng.run({ sentence: 'The cat sat on the mat.', dModel: 8, heads: 2 }).output.data,
    tokenize: eng.tokenize('didn\u2019t \u{1F408}\u200D\u2B1B').map((t) => t.text),
    forward: eng.forward({ x: X, weights: goodWeights(), heads: 2, mask: 'causal' }).data,
    reference: eng.forwardReference({ x: X, weights: goodWeights(), heads: 2 }).data,
    entropy: eng.rowEntropy([[0.5, 0.5], [1, 0]]),
  };
}
const expected = canary(engine);

async function assertHealthy(what) {
  assert.deepEqual(canary(engine), expected, `${what}: this engine still computes what it did`);
  assert.deepEqual(canary(await freshEngine()), expected, `${what}: a new engine works too`);
}

/** Calls fn; returns the error it threw (null if none). Only TypeError and RangeError are allowed. */
function outcome(fn) {
  try {
    fn();
    return null;
  } catch (e) {
    assert.ok(e instanceof TypeError || e instanceof RangeError, `a TypeError or RangeError, got ${e?.constructor?.name}: ${e?.message}`);
    return e;
  }
}

// ---- 1. a matrix is read once -------------------------------------------------------------

/** {rows, cols, data} whose `rows` getter answers answers[0], answers[1], … (then the last), counting reads. */
function shiftingRows(answers, cols, data) {
  const m = { reads: 0, cols, data };
  Object.defineProperty(m, 'rows', { enumerable: true, get() { return answers[Math.min(m.reads++, answers.length - 1)]; } });
  return m;
}

test('forward() with an x whose rows getter says 4096, 4096, then 1 reads it once and leaves the engine intact', async () => {
  // Before: the shape was read three times, a 1×4 buffer was sized and 4096×4
  // floats copied into it; every later call failed with "memory access out of bounds".
  const x = shiftingRows([4096, 4096, 1], 4, new Float32Array(4096 * 4).fill(0.5));
  const err = outcome(() => {
    const y = engine.forward({ x, weights: goodWeights(), heads: 2 });
    assert.equal(y.rows, 4096, 'the shape read once is the shape used');
    assert.equal(y.data.length, 4096 * 4);
  });
  assert.equal(err, null);
  assert.equal(x.reads, 1, 'rows was read exactly once');
  await assertHealthy('after the shifting getter');
});

test('every API that takes a matrix reads each of its properties exactly once', async () => {
  // Each matrix argument in turn is an object counting its property reads;
  // its getters answer a plausible shape first, an absurd one after.
  const reads = {};
  function counted(name, rows, cols, fill) {
    const data = new Float32Array(rows * cols).fill(fill);
    const first = { rows, cols, data };
    const later = { rows: 1, cols: 1 << 16, data: new Float32Array(1) };
    reads[name] = { rows: 0, cols: 0, data: 0 };
    const m = {};
    for (const key of ['rows', 'cols', 'data']) {
      Object.defineProperty(m, key, { enumerable: true, get() { return reads[name][key]++ === 0 ? first[key] : later[key]; } });
    }
    return m;
  }
  const w = (tag) => ({ wQuery: counted(`${tag}.wQuery`, 4, 4, 0.1), wKey: counted(`${tag}.wKey`, 4, 4, 0.2), wValue: counted(`${tag}.wValue`, 4, 4, 0.3), wOutput: counted(`${tag}.wOutput`, 4, 4, 0.4) });
  const calls = [
    ['forward', () => engine.forward({ x: counted('forward.x', 3, 4, 1), weights: w('forward'), heads: 2, mask: counted('forward.mask', 3, 3, 1) })],
    ['forwardReference', () => engine.forwardReference({ x: counted('reference.x', 3, 4, 1), weights: w('reference'), heads: 2, mask: counted('reference.mask', 3, 3, 1) })],
    ['run', () => engine.run({ sentence: 'a b c', dModel: 4, heads: 2, mask: 'custom', customMask: counted('run.customMask', 3, 3, 1), weights: w('run') })],
    ['rowEntropy', () => engine.rowEntropy(counted('rowEntropy', 2, 2, 0.5))],
    ['softmaxJacobianNorm', () => engine.softmaxJacobianNorm(counted('softmaxJacobianNorm', 2, 2, 0.5))],
    ['scoreStats', () => engine.scoreStats(counted('scoreStats.scores', 2, 2, 3), counted('scoreStats.mask', 2, 2, 1))],
  ];
  for (const [name, call] of calls) assert.equal(outcome(call), null, `${name} works on the shapes read first`);
  for (const [name, counts] of Object.entries(reads)) assert.deepEqual(counts, { rows: 1, cols: 1, data: 1 }, `${name}: each property read once`);
  await assertHealthy('after the counting matrices');
});

test('a Float32Array whose length getter lies, or a Proxy of one, cannot overrun the buffer the shape sized', async () => {
  class Liar extends Float32Array {
    get length() { return 4; }
  }
  const liar = new Liar(4096 * 4).fill(1);
  const proxy = new Proxy(new Float32Array(4096 * 4).fill(1), { get: (t, k) => (k === 'length' ? 4 : Reflect.get(t, k)) });
  for (const [name, data] of [['subclass', liar], ['proxy', proxy]]) {
    for (const call of [
      () => engine.forward({ x: { rows: 1, cols: 4, data }, weights: goodWeights(), heads: 2 }),
      () => engine.forward({ x: X, weights: { ...goodWeights(), wKey: { rows: 4, cols: 1, data } }, heads: 2 }),
      () => engine.forwardReference({ x: { rows: 1, cols: 4, data }, weights: goodWeights(), heads: 2 }),
      () => engine.rowEntropy({ rows: 1, cols: 4, data }),
    ]) {
      const err = outcome(call);
      // the subclass is measured by its true length; the Proxy is read as the 4 values it claims
      if (name === 'subclass') assert.match(err?.message ?? '', /data has 16384 values, expected/, `${name}: ${err?.message}`);
    }
  }
  await assertHealthy('after lying typed arrays');
});

test('arrays of rows whose rows change between reads are read once', async () => {
  let reads = 0;
  const rows = new Proxy([[1, 2, 3, 4], [4, 3, 2, 1]], {
    get(target, key) {
      if (key === '0') return reads++ === 0 ? target[0] : Array(5000).fill(7);
      return Reflect.get(target, key);
    },
  });
  const y = engine.forward({ x: rows, weights: goodWeights(), heads: 2 });
  assert.equal(reads, 1);
  assert.deepEqual([y.rows, y.cols], [2, 4]);
  await assertHealthy('after a shifting array of rows');
});

// ---- 8. holes and Proxies in runBatch ---------------------------------------------------------

test('runBatch with a hole is a TypeError naming the sentence, not a BindingError', () => {
  // eslint-disable-next-line no-sparse-arrays
  const err = outcome(() => engine.runBatch([, 'a b']));
  assert.ok(err instanceof TypeError, `got ${err?.constructor?.name}`);
  assert.match(err.message, /sentence 1 must be a string, got undefined/);
  assert.doesNotMatch(err.message, /BindingError|std::string/);
  // eslint-disable-next-line no-sparse-arrays
  assert.throws(() => engine.runBatch(['a', , 'b']), { name: 'TypeError', message: /sentence 2 must be a string/ });
});

test('runBatch reads each sentence of a Proxy once and computes on what it read', () => {
  let reads = 0;
  const list = new Proxy(['a b', 'c'], {
    get(target, key) {
      if (key === '0') return reads++ === 0 ? 'a b' : 42;
      return Reflect.get(target, key);
    },
  });
  const traces = engine.runBatch(list);
  assert.equal(reads, 1);
  assert.deepEqual(traces.map((t) => t.sentence), ['a b', 'c']);
  assert.deepEqual(traces[0].tokens.slice(0, 2).map((t) => t.text), ['a', 'b']);
});

// ---- 5. non-finite and huge numbers -----------------------------------------------------------

/** Every number returned by an engine call, flattened. */
function numbersOf(value, out = []) {
  if (typeof value === 'number') out.push(value);
  else if (ArrayBuffer.isView(value)) for (const v of value) out.push(v);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) numbersOf(v, out);
  return out;
}

test('property: every entry point returns only finite numbers or throws a RangeError naming the problem (300 hostile inputs)', async () => {
  const rand = prng(511);
  const hostile = [NaN, Infinity, -Infinity, 1e19, -1e19, 3e38, 1e20, 1e30, 1e6, -1e6, 999999, 1e-40, 0];
  const value = (scale) => (rand() < 0.15 ? hostile[Math.floor(rand() * hostile.length)] : (2 * rand() - 1) * scale);
  const matrix = (rows, cols, scale) => ({ rows, cols, data: Float64Array.from({ length: rows * cols }, () => value(scale)) });
  const asRows = (m) => Array.from({ length: m.rows }, (_, i) => Array.from(m.data.subarray(i * m.cols, (i + 1) * m.cols)));
  let finite = 0;
  let rejected = 0;
  for (let i = 0; i < 300; i++) {
    const t = 1 + Math.floor(rand() * 6);
    const c = 4;
    const w = { wQuery: matrix(c, c, 1e3), wKey: matrix(c, c, 1e3), wValue: matrix(c, c, 1), wOutput: matrix(c, c, 1) };
    const calls = [
      () => engine.forward({ x: matrix(t, c, 1e3), weights: w, heads: 2, mask: rand() < 0.5 ? 'causal' : null, scale: rand() < 0.5 }),
      () => engine.forwardReference({ x: matrix(t, c, 1e3), weights: w, heads: 2, scale: rand() < 0.5 }),
      () => engine.run({ sentence: 'a b c', dModel: c, heads: 2, weights: Object.fromEntries(Object.entries(w).map(([k, m]) => [k, asRows(m)])) }),
      () => engine.rowEntropy(matrix(t, t, 1)),
      () => engine.softmaxJacobianNorm(matrix(t, t, 1)),
      () => engine.scoreStats(matrix(t, t, 1e3)),
    ];
    for (const call of calls) {
      let result;
      const err = outcome(() => { result = call(); });
      if (err) {
        assert.ok(err instanceof RangeError, `a RangeError, got ${err.name}: ${err.message}`);
        assert.match(err.message, /(x|w_\w+|weights|scores)\[\d+\]\[\d+\] (is (NaN|-?Infinity), not a finite number|= \S+ is outside the accepted range)/);
        rejected++;
      } else {
        const bad = numbersOf(result).find((v) => !Number.isFinite(v));
        assert.equal(bad, undefined, `a non-finite result: ${bad}`);
        finite++;
      }
    }
  }
  assert.ok(finite > 100 && rejected > 100, `both outcomes exercised (${finite} finite, ${rejected} rejected)`);
  await assertHealthy('after hostile numbers');
});

test('x = 1e20 is rejected by both paths alike (they used to disagree: finite vs NaN)', () => {
  const x = [[1e20, 0, 0, 0], [0, 1, 0, 0]];
  for (const call of [() => engine.forward({ x, weights: goodWeights(), heads: 2 }), () => engine.forwardReference({ x, weights: goodWeights(), heads: 2 })]) {
    assert.throws(call, { name: 'RangeError', message: /x\[0\]\[0\] = 1e\+20 is outside the accepted range -1e\+06 to 1e\+06/ });
  }
});

// ---- 9. long text is rejected before the work -------------------------------------------------

test('the sentence byte limit is the core\'s', () => {
  assert.equal(MAX_SENTENCE_BYTES, engine.info.maxSentenceBytes);
  assert.equal(MAX_SENTENCE_BYTES, 65536);
});

test('a 10 MB sentence is rejected before it reaches wasm: memory does not grow at all', async () => {
  // Before: a 10 MB word grew the wasm memory to 555 MB, a 10 MB "a a a …" to
  // 756 MB (rejected only after tokenizing), and wasm memory never shrinks.
  const eng = await freshEngine();
  const before = eng.memoryBytes();
  const word = 'a'.repeat(10 * 1024 * 1024);
  const words = 'a '.repeat(5 * 1024 * 1024);
  for (const call of [() => eng.run({ sentence: word }), () => eng.run({ sentence: words }), () => eng.tokenize(word), () => eng.runBatch(['ok', words])]) {
    assert.throws(call, { name: 'RangeError', message: /is 10485760 bytes of UTF-8, above the limit of 65536 bytes/ });
  }
  assert.equal(eng.memoryBytes(), before, `wasm memory stays at ${before} bytes`);
});

test('the largest accepted sentences keep the wasm memory within what the limits imply', async () => {
  // 64 KiB of one-letter words is 32768 tokens: too many (2048), found while
  // tokenizing; a 64 KiB word is one token. Either way the work is bounded
  // by the byte limit, so the memory is too.
  const eng = await freshEngine();
  const before = eng.memoryBytes();
  const words = 'a '.repeat(MAX_SENTENCE_BYTES / 2);
  assert.throws(() => eng.run({ sentence: words }), { name: 'RangeError', message: /32768 tokens, above the limit of 2048/ });
  assert.equal(eng.tokenize(words).length, 32768);
  const word = '\u00e9'.repeat(MAX_SENTENCE_BYTES / 2);  // 2 bytes each: exactly the limit
  assert.equal(eng.run({ sentence: word, dModel: 16, heads: 2 }).tokens.length, 1);
  assert.throws(() => eng.run({ sentence: `${word}x` }), { name: 'RangeError', message: /65537 bytes/ });
  assert.throws(() => eng.run({ sentence: `${word.slice(1)}\u{1F408}` }), { name: 'RangeError', message: /65538 bytes/ });
  assert.ok(eng.memoryBytes() - before <= 16 * 1024 * 1024, `wasm memory grew by ${(eng.memoryBytes() - before) / 2 ** 20} MB`);
});
