// Errors reach JavaScript as real Error objects (TypeError / RangeError) with
// the C++ core's message — never a WebAssembly.Exception or a bare number —
// and the engine keeps working after every one of them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine, DEFAULT_SETTINGS, ERROR_CODES } from '../../web/engine.js';
import { identityRows, maxRowSumError } from './helpers.mjs';

const engine = await createEngine();

/** Calls fn, expects it to throw an Error of class Type whose message matches. */
function expectError(fn, Type, message) {
  let caught;
  let threw = false;
  try {
    fn();
  } catch (err) {
    threw = true;
    caught = err;
  }
  assert.ok(threw, `expected a ${Type.name}, but nothing was thrown`);
  assert.equal(typeof caught, 'object', `the thrown value is an object, got ${typeof caught} (${String(caught)})`);
  assert.ok(!(typeof WebAssembly.Exception === 'function' && caught instanceof WebAssembly.Exception), 'not a WebAssembly.Exception');
  assert.ok(caught instanceof Error, `an Error instance, got ${Object.prototype.toString.call(caught)}`);
  assert.equal(typeof caught.message, 'string');
  assert.ok(caught.message.length > 0, 'the message is not empty');
  assert.ok(caught instanceof Type, `expected ${Type.name}, got ${caught.constructor?.name}: ${caught.message}`);
  if (typeof message === 'string') assert.equal(caught.message, message);
  else if (message) assert.match(caught.message, message);
  return caught;
}

/** A normal run after an error still gives weights whose rows sum to 1. */
function assertEngineStillWorks() {
  const trace = engine.run({ sentence: 'The cat sat on the mat.', dModel: 8, heads: 2 });
  assert.equal(trace.tokens.length, 7);
  for (const head of trace.heads) {
    assert.ok(maxRowSumError(head.weights) < 1e-5, 'weights rows sum to 1 after an error');
  }
}

const I4 = identityRows(4);
const goodWeights = () => ({ wQuery: I4, wKey: I4, wValue: I4, wOutput: I4 });

// [behaviour, call, error class, message (exact string or RegExp)]
const CASES = [
  ['a number as sentence is a TypeError', () => engine.run({ sentence: 42 }), TypeError, /sentence.*string/],
  ['an object as sentence is a TypeError', () => engine.run({ sentence: {} }), TypeError, /sentence.*string/],
  ['null as sentence is a TypeError', () => engine.run({ sentence: null }), TypeError, /sentence.*string/],
  ['heads 0 is a RangeError naming heads', () => engine.run({ heads: 0 }), RangeError, /heads/],
  ['negative heads is a RangeError naming heads', () => engine.run({ heads: -2 }), RangeError, /heads/],
  ['more heads than dimensions is a RangeError naming heads', () => engine.run({ dModel: 4, heads: 8 }), RangeError, /heads/],
  ['dModel 10 with 3 heads is a RangeError with the core\'s message', () => engine.run({ dModel: 10, heads: 3 }), RangeError,
    'd_model 10 is not divisible by 3 heads'],
  ['dModel 0 is a RangeError naming d_model', () => engine.run({ dModel: 0, heads: 1 }), RangeError, /d_model/],
  ['dModel 1e9 is a RangeError naming the limit 1024', () => engine.run({ dModel: 1e9, heads: 1 }), RangeError, /limit of 1024/],
  ['dModel 4096 is a RangeError naming the limit 1024', () => engine.run({ dModel: 4096, heads: 4 }), RangeError, /limit of 1024/],
  ['padTo 100000 is a RangeError naming the limit 2048', () => engine.run({ padTo: 100000 }), RangeError, /limit of 2048/],
  ['a negative padTo is a RangeError naming pad_to', () => engine.run({ padTo: -1 }), RangeError, /pad_to/],
  ['padTo shorter than the sentence is a RangeError naming both lengths', () => engine.run({ sentence: 'a b c', padTo: 2 }), RangeError,
    /pad_to 2 .*3 tokens/],
  ['a sentence of 3000 words is a RangeError naming the limit 2048', () => engine.run({ sentence: Array(3000).fill('word').join(' ') }),
    RangeError, /3000 tokens.*limit of 2048/],
  ['a trace too large for memory is a RangeError naming the MB limit', () => engine.run({ sentence: Array(1000).fill('w').join(' '), dModel: 16, heads: 16 }),
    RangeError, /limit of \d+ MB/],
  ['an unpaired high surrogate is a TypeError mentioning surrogate', () => engine.run({ sentence: 'a\uD800b' }), TypeError, /surrogate/],
  ['an unpaired low surrogate is a TypeError mentioning surrogate', () => engine.run({ sentence: '\uDC00' }), TypeError, /surrogate/],
  ['a trailing high surrogate is a TypeError mentioning surrogate', () => engine.run({ sentence: 'cat\uD83D' }), TypeError, /surrogate/],
  ['tokenize of an unpaired surrogate is a TypeError mentioning surrogate', () => engine.tokenize('x\uDFFFy'), TypeError, /surrogate/],
  ['an empty sentence is a RangeError', () => engine.run({ sentence: '' }), RangeError, /no tokens/],
  ['a whitespace-only sentence is a RangeError', () => engine.run({ sentence: ' \t\n\u00A0\u3000 ' }), RangeError, /no tokens/],
  ['an unknown positional name is a RangeError', () => engine.run({ positional: 'rotary' }), RangeError, /positional.*rotary/],
  ['an unknown mask name is a RangeError', () => engine.run({ mask: 'bogus' }), RangeError, /mask.*bogus/],
  ['a custom mask of the wrong shape is a RangeError naming both shapes', () => engine.run({ sentence: 'a b c', mask: 'custom', customMask: [[1, 1], [1, 1]] }),
    RangeError, /2x2.*3x3/],
  ['a custom mask with ragged rows is a RangeError', () => engine.run({ sentence: 'a b', mask: 'custom', customMask: [[1, 1], [1]] }), RangeError, /customMask/],
  ['a custom mask whose data does not fill its shape is a RangeError', () => engine.run({ sentence: 'a b', mask: 'custom', customMask: { rows: 2, cols: 2, data: [1, 1, 1] } }),
    RangeError, /customMask/],
  ['mask "custom" without customMask is a TypeError', () => engine.run({ mask: 'custom' }), TypeError, /customMask/],
  ['weights with a wrong-shaped query matrix are a RangeError naming w_query', () => engine.run({ sentence: 'a b', dModel: 4, heads: 2, weights: { ...goodWeights(), wQuery: [[1, 0], [0, 1]] } }),
    RangeError, /w_query|weights\.wQuery/],
  ['weights with a wrong-shaped output matrix are a RangeError naming w_output', () => engine.run({ sentence: 'a b', dModel: 4, heads: 2, weights: { ...goodWeights(), wOutput: identityRows(8) } }),
    RangeError, /w_output|weights\.wOutput/],
  ['weights with a ragged row are a RangeError naming weights.wKey', () => engine.run({ sentence: 'a b', dModel: 4, heads: 2, weights: { ...goodWeights(), wKey: [[1, 0, 0, 0], [0, 1, 0]] } }),
    RangeError, /weights\.wKey/],
  ['weights containing NaN are a RangeError naming the matrix', () => engine.run({ sentence: 'a b', dModel: 4, heads: 2, weights: { ...goodWeights(), wValue: [[NaN, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]] } }),
    RangeError, /w_value/],
  ['missing weights.wKey is a TypeError', () => engine.run({ sentence: 'a b', dModel: 4, heads: 2, weights: { wQuery: I4, wValue: I4, wOutput: I4 } }), TypeError, /wKey/],
  ['a non-integer dModel is a RangeError', () => engine.run({ dModel: 7.5 }), RangeError, /dModel/],
  ['a string dModel is a TypeError', () => engine.run({ dModel: '16' }), TypeError, /dModel/],
  ['a seed above 2^32 - 1 is a RangeError', () => engine.run({ seed: 4294967296 }), RangeError, /seed/],
  ['a non-boolean scale is a TypeError', () => engine.run({ scale: 1 }), TypeError, /scale/],
  ['null settings are a TypeError', () => engine.run(null), TypeError, /settings/],
  ['runBatch of an empty list is a RangeError', () => engine.runBatch([]), RangeError, /no sentences/],
  ['runBatch with an empty sentence is a RangeError naming that sentence', () => engine.runBatch(['a b', '']), RangeError, /sentence 2/],
  ['runBatch of 65 sentences is a RangeError naming the limit 64', () => engine.runBatch(Array(65).fill('a')), RangeError, /limit of 64/],
  ['runBatch with a surrogate is a TypeError naming the sentence', () => engine.runBatch(['ok', 'bad\uD800']), TypeError, /sentence 2.*surrogate/],
  ['runBatch of a non-array is a TypeError', () => engine.runBatch('a b'), TypeError, /array/],
  ['forward with heads not dividing the width is a RangeError with the core\'s message', () => engine.forward({ x: [[1, 2, 3, 4]], weights: goodWeights(), heads: 3 }),
    RangeError, 'd_model 4 is not divisible by 3 heads'],
  ['forward with weights not matching x is a RangeError naming w_query', () => engine.forward({ x: [[1, 2, 3, 4, 5, 6]], weights: goodWeights(), heads: 2 }),
    RangeError, /w_query/],
  ['forward with a mask of the wrong shape is a RangeError naming the shape', () => engine.forward({ x: [[1, 2, 3, 4], [4, 3, 2, 1]], weights: goodWeights(), heads: 2, mask: [[1]] }),
    RangeError, /mask is 1x1, expected 2x2/],
  ['scoreStats with a mask of the wrong shape is a RangeError', () => engine.scoreStats([[1, 2], [3, 4]], [[1]]), RangeError, /mask is 1x1/],
  ['scaleExperiment with dK 0 is a RangeError naming dK', () => engine.scaleExperiment({ dK: 0 }), RangeError, /dK/],
  ['rowEntropy of a non-matrix is a TypeError', () => engine.rowEntropy(5), TypeError, /weights/],
  ['finite but huge weights (1e19) are a RangeError naming the entry and the accepted range', () => engine.run({ sentence: 'a b', dModel: 4, heads: 2, weights: { ...goodWeights(), wKey: identityRows(4).map((r) => r.map((v) => v * 1e19)) } }),
    RangeError, /w_key\[0\]\[0\] = 1e\+19 is outside the accepted range -1e\+06 to 1e\+06/],
  ['weights of 3e38 are a RangeError naming the entry', () => engine.forward({ x: [[1, 2, 3, 4]], weights: { ...goodWeights(), wOutput: [[0, 0, 0, 0], [0, 3e38, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]] }, heads: 2 }),
    RangeError, /w_output\[1\]\[1\] = 3e\+38 is outside/],
  ['forward with NaN in x is a RangeError naming the entry', () => engine.forward({ x: [[1, NaN, 3, 4]], weights: goodWeights(), heads: 2 }), RangeError, 'x[0][1] is NaN, not a finite number'],
  ['forwardReference with Infinity in x is a RangeError naming the entry', () => engine.forwardReference({ x: [[1, 2, 3, 4], [0, 0, -Infinity, 0]], weights: goodWeights(), heads: 2 }),
    RangeError, 'x[1][2] is -Infinity, not a finite number'],
  ['rowEntropy of [[Infinity, 0]] is a RangeError (it was -Infinity)', () => engine.rowEntropy([[Infinity, 0], [0.5, 0.5]]), RangeError, 'weights[0][0] is Infinity, not a finite number'],
  ['softmaxJacobianNorm of [[1e30, 1e30]] is a RangeError (it was Infinity)', () => engine.softmaxJacobianNorm([[1e30, 1e30], [1, 0]]), RangeError, /weights\[0\]\[0\] = 1e\+30 is outside/],
  ['scoreStats with NaN is a RangeError (it was NaN)', () => engine.scoreStats([[1, 2], [NaN, 4]]), RangeError, 'scores[1][0] is NaN, not a finite number'],
];

for (const [behaviour, call, Type, message] of CASES) {
  test(`${behaviour}, and the engine still works afterwards`, () => {
    expectError(call, Type, message);
    assertEngineStillWorks();
  });
}

test('an undefined sentence falls back to the default sentence', () => {
  const trace = engine.run({ sentence: undefined });
  assert.equal(trace.sentence, DEFAULT_SETTINGS.sentence);
  assert.deepEqual(trace.tokens.map((t) => t.text), engine.tokenize(DEFAULT_SETTINGS.sentence).map((t) => t.text));
  assertEngineStillWorks();
});

test('settings given as undefined (optional fields) fall back to their defaults like absent ones', () => {
  const explicit = engine.run({ sentence: 'a b c', dModel: undefined, heads: undefined, seed: undefined, mask: undefined, padTo: undefined });
  const absent = engine.run({ sentence: 'a b c' });
  assert.deepEqual(explicit.config, absent.config);
  assert.deepEqual(explicit.output.data, absent.output.data);
});

test('every error from every case is an Error with a non-empty string message (never a number or WebAssembly.Exception)', () => {
  for (const [behaviour, call] of CASES) {
    let caught = null;
    try {
      call();
    } catch (err) {
      caught = err;
    }
    assert.notEqual(caught, null, `${behaviour}: something was thrown`);
    assert.notEqual(typeof caught, 'number', `${behaviour}: not a number`);
    assert.ok(!(caught instanceof WebAssembly.Exception), `${behaviour}: not a WebAssembly.Exception`);
    assert.ok(caught instanceof Error, `${behaviour}: an Error`);
    assert.ok(typeof caught.message === 'string' && caught.message.length > 0, `${behaviour}: message non-empty`);
    assert.ok(!/internal error/.test(caught.message), `${behaviour}: not an internal error: ${caught.message}`);
  }
  assertEngineStillWorks();
});

test('errors from the C++ core and from validation interleaved with runs give identical results to runs without errors', () => {
  const settings = { sentence: 'naïve 猫 sat', dModel: 8, heads: 2, seed: 7 };
  const before = engine.run(settings);
  for (const [, call] of CASES) {
    try { call(); } catch { /* expected */ }
  }
  const after = engine.run(settings);
  assert.deepEqual(after.output.data, before.output.data);
  assert.deepEqual(after.heads[1].weights.data, before.heads[1].weights.data);
});

// ---- machine-readable codes (err.code, attn::Error::Code) ---------------------------------

// [behaviour, call, code]: the code says why, whatever the wording of the message
const CODES = [
  ['a number as sentence', () => engine.run({ sentence: 42 }), 'bad_input'],
  ['heads 0', () => engine.run({ heads: 0 }), 'bad_input'],
  ['dModel 10 with 3 heads', () => engine.run({ dModel: 10, heads: 3 }), 'bad_input'],
  ['dModel above the limit of 1024', () => engine.run({ dModel: 4096, heads: 4 }), 'too_large'],
  ['a trace above the MB limit', () => engine.run({ sentence: Array(1000).fill('w').join(' '), dModel: 16, heads: 16 }), 'too_large'],
  ['3000 tokens, above the limit of 2048', () => engine.run({ sentence: Array(3000).fill('word').join(' ') }), 'too_many_tokens'],
  ['padTo above the limit of 2048', () => engine.run({ padTo: 100000 }), 'too_many_tokens'],
  ['a sentence above 65536 bytes (checked in JS)', () => engine.run({ sentence: 'a'.repeat(65537) }), 'too_many_tokens'],
  ['runBatch of 65 sentences', () => engine.runBatch(Array(65).fill('a')), 'too_many_tokens'],
  ['an empty sentence', () => engine.run({ sentence: '' }), 'empty_text'],
  ['runBatch with an empty second sentence', () => engine.runBatch(['a b', '']), 'empty_text'],
  ['an unpaired surrogate', () => engine.run({ sentence: 'a\uD800b' }), 'bad_text'],
  ['an unknown mask name', () => engine.run({ mask: 'bogus' }), 'bad_mask'],
  ['a custom mask of the wrong shape', () => engine.run({ sentence: 'a b c', mask: 'custom', customMask: [[1, 1], [1, 1]] }), 'bad_mask'],
  ['mask "custom" without customMask', () => engine.run({ mask: 'custom' }), 'bad_mask'],
  ['forward with a mask of the wrong shape', () => engine.forward({ x: [[1, 2, 3, 4], [4, 3, 2, 1]], weights: goodWeights(), heads: 2, mask: [[1]] }), 'bad_mask'],
  ['weights of the wrong shape', () => engine.run({ sentence: 'a b', dModel: 4, heads: 2, weights: { ...goodWeights(), wOutput: identityRows(8) } }), 'bad_shape'],
  ['a ragged matrix', () => engine.run({ sentence: 'a b', dModel: 4, heads: 2, weights: { ...goodWeights(), wKey: [[1, 0, 0, 0], [0, 1, 0]] } }), 'bad_shape'],
  ['NaN in x', () => engine.forward({ x: [[1, NaN, 3, 4]], weights: goodWeights(), heads: 2 }), 'not_finite'],
  ['weights of 1e19', () => engine.run({ sentence: 'a b', dModel: 4, heads: 2, weights: { ...goodWeights(), wKey: identityRows(4).map((r) => r.map((v) => v * 1e19)) } }), 'not_finite'],
  ['a checkpoint that is not a .safetensors file', () => engine.loadTrainer(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9])), 'bad_checkpoint'],
];

for (const [behaviour, call, code] of CODES) {
  test(`${behaviour}: err.code is "${code}"`, () => {
    let caught = null;
    try {
      call();
    } catch (err) {
      caught = err;
    }
    assert.ok(caught instanceof Error, `${behaviour}: an Error was thrown`);
    assert.equal(caught.code, code, `${behaviour}: ${caught.message}`);
  });
}

test('every error of every case carries a code from the C++ list (ERROR_CODES = engine.info.errorCodes)', () => {
  assert.deepEqual([...ERROR_CODES], [...engine.info.errorCodes]);
  for (const [behaviour, call] of [...CASES, ...CODES]) {
    let caught = null;
    try {
      call();
    } catch (err) {
      caught = err;
    }
    assert.ok(ERROR_CODES.includes(caught?.code), `${behaviour}: code ${caught?.code} is one of ERROR_CODES`);
    assert.notEqual(caught.code, 'internal', `${behaviour}: not an internal error`);
  }
});

test('a trained model: more tokens than its context is too_long_for_model, a word outside a task vocabulary unknown_word, a disposed trainer bad_state', () => {
  const corpus = 'the cat sat on the mat . the dog sat on the log . '.repeat(40);
  const lm = engine.createTrainer({ task: 'text', corpus, length: 8, maxVocab: 20 });
  const task = engine.createTrainer({ task: 'reverse' });  // digits only, no [UNK]
  try {
    assert.throws(() => lm.trace({ text: 'the cat '.repeat(5000) }), (e) => e.code === 'too_long_for_model');
    assert.throws(() => task.trace({ text: 'xyzzy' }), (e) => e.code === 'unknown_word');
  } finally {
    lm.dispose();
    task.dispose();
  }
  assert.throws(() => lm.step(1), (e) => e instanceof TypeError && e.code === 'bad_state');
});

test('a disposed engine throws a TypeError with code bad_state, and other engines keep working', async () => {
  const other = await createEngine();
  other.dispose();
  assert.throws(() => other.run({ sentence: 'a b' }), (e) => e instanceof TypeError && e.code === 'bad_state');
  assert.throws(() => other.forward({ x: [[1, 2, 3, 4]], weights: goodWeights(), heads: 2 }), (e) => e.code === 'bad_state');
  other.dispose();  // twice is harmless
  assertEngineStillWorks();
});
