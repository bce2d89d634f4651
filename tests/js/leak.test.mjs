// No leaks: thousands of runs, with errors in between, leave the C++ heap at
// its starting allocation and the wasm memory at its starting size.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../web/engine.js';
import { identityRows } from './helpers.mjs';

const engine = await createEngine();
const SENTENCE = 'The cat sat on the mat.';
const I4 = identityRows(4);

// Calls that fail inside the C++ core (an exception caught at the binding
// layer) or in engine.js's validation before reaching wasm.
const FAILING = [
  () => engine.run({ sentence: 'a b', dModel: 10, heads: 3 }),
  () => engine.run({ sentence: '' }),
  () => engine.run({ sentence: 'a b c', padTo: 2 }),
  () => engine.run({ sentence: 'a b c', mask: 'custom', customMask: [[1, 1], [1, 1]] }),
  () => engine.run({ sentence: 'a b', dModel: 4, heads: 2, weights: { wQuery: [[1, 0], [0, 1]], wKey: I4, wValue: I4, wOutput: I4 } }),
  () => engine.run({ sentence: Array(3000).fill('w').join(' ') }),
  () => engine.run({ sentence: 'a\uD800b' }),
  () => engine.run({ mask: 'bogus' }),
  () => engine.runBatch(['a b', '']),
  () => engine.forward({ x: [[1, 2, 3, 4]], weights: { wQuery: I4, wKey: I4, wValue: I4, wOutput: I4 }, heads: 3 }),
  () => engine.scoreStats([[1, 2], [3, 4]], [[1]]),
];

function expectFailure(call) {
  assert.throws(call, (err) => err instanceof Error && err.message.length > 0);
}

test('10,000 runs with failing calls interleaved leave allocatedBytes and memoryBytes unchanged', () => {
  for (let i = 0; i < 10; i++) engine.run({ sentence: SENTENCE });  // warm-up
  for (const call of FAILING) expectFailure(call);                  // warm-up of the error paths
  const allocated = engine.allocatedBytes();
  const memory = engine.memoryBytes();

  let failures = 0;
  for (let i = 0; i < 10000; i++) {
    const trace = engine.run({ sentence: SENTENCE });
    if (i === 0 || i === 9999) assert.equal(trace.tokens.length, 7);
    if (i % 50 === 0) {
      expectFailure(FAILING[(i / 50) % FAILING.length]);
      failures++;
    }
  }
  assert.ok(failures >= 200);
  assert.equal(engine.allocatedBytes(), allocated, `allocatedBytes back at ${allocated} after 10,000 runs and ${failures} errors`);
  assert.equal(engine.memoryBytes(), memory, `memoryBytes still ${memory}`);
});

test('every other API entry point (runBatch, tokenize, forward, analysis) does not leak over 2,000 calls', () => {
  const trace = engine.run({ sentence: SENTENCE });
  const weights = { wQuery: trace.wQuery, wKey: trace.wKey, wValue: trace.wValue, wOutput: trace.wOutput };
  const once = () => {
    engine.runBatch(['a b c', 'a'], {});
    engine.tokenize('naïve 猫 🐈‍⬛ didn\'t');
    engine.forward({ x: trace.input, weights, heads: 4, mask: trace.mask });
    engine.rowEntropy(trace.heads[0].weights);
    engine.softmaxJacobianNorm(trace.heads[0].weights);
    engine.scoreStats(trace.heads[0].scores, trace.mask);
    engine.scaleExperiment({ dK: 8, tokens: 4, samples: 2 });
  };
  for (let i = 0; i < 10; i++) once();
  const allocated = engine.allocatedBytes();
  const memory = engine.memoryBytes();
  for (let i = 0; i < 2000; i++) once();
  assert.equal(engine.allocatedBytes(), allocated);
  assert.equal(engine.memoryBytes(), memory);
});

test('a failing call in a loop of 5,000 does not leak', () => {
  for (const call of FAILING) expectFailure(call);
  const allocated = engine.allocatedBytes();
  const memory = engine.memoryBytes();
  for (let i = 0; i < 5000; i++) expectFailure(FAILING[i % FAILING.length]);
  assert.equal(engine.allocatedBytes(), allocated);
  assert.equal(engine.memoryBytes(), memory);
});

test('runs and errors do not leak Embind value handles (engine internals: count_emval_handles)', () => {
  const m = engine._m;
  assert.equal(typeof m.count_emval_handles, 'function');
  for (let i = 0; i < 10; i++) engine.run({ sentence: SENTENCE });
  const handles = m.count_emval_handles();
  for (let i = 0; i < 1000; i++) {
    engine.run({ sentence: SENTENCE });
    expectFailure(FAILING[i % FAILING.length]);
  }
  assert.equal(m.count_emval_handles(), handles);
});
