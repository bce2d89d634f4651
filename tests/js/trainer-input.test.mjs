// The JS Trainer API's bookkeeping and input rules (web/trainer.js over
// src/bindings/train_bindings.cpp, sharing web/validate.js with engine.js):
// the step count after a failed call, ragged batches, and one text rule for
// every entry point that takes text.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../web/engine.js';
import { poisonedReverse } from './checkpoints.mjs';

const engine = await createEngine();

/** The step the engine itself records (the checkpoint's "step"), read back through a fresh trainer. */
function engineStep(trainer) {
  const copy = engine.loadTrainer(trainer.save());
  const step = copy.stepCount;
  copy.dispose();
  return step;
}

/**
 * A trainer whose training stops part-way through a call: the first step goes
 * through and a later one is refused. w_key at 1e36 overflows a gradient at step 2;
 * an engine that refuses weights beyond its bound (±1e6) refuses that file, and
 * then w_key just inside the bound stops when an update (lr 10) crosses it.
 */
function stopsPartWay(run) {
  for (const value of [1e36, 1e6 - 25]) {
    let t;
    try {
      t = engine.loadTrainer(poisonedReverse(engine, value));
    } catch {
      continue;
    }
    let error = null;
    try {
      run(t);
    } catch (e) {
      error = e;
    }
    if (error && engineStep(t) > 0) return { t, error };
    t.dispose();
  }
  throw new Error('no poisoned checkpoint stopped training part-way: the test needs a new one');
}

test('step(n) that stops part-way on a non-finite value leaves stepCount at the engine\'s step', () => {
  const { t, error } = stopsPartWay((x) => x.step(50));
  assert.equal(error.code, 'not_finite');
  const step = engineStep(t);
  assert.ok(step > 0 && step < 50, `the engine stopped part-way, at step ${step}`);
  assert.equal(t.stepCount, step);
  // and the next call goes on from there
  assert.throws(() => t.step(1), (e) => new RegExp(`step ${step + 1}`).test(e.message));
  assert.equal(t.stepCount, engineStep(t));
  t.dispose();
});

test('stepBatch(batch, n) that stops part-way leaves stepCount at the engine\'s step', () => {
  const batch = { ids: [[2, 3, 4, 5, 6, 7, 8, 9]], targets: [[9, 8, 7, 6, 5, 4, 3, 2]] };
  const { t } = stopsPartWay((x) => x.stepBatch(batch, 50));
  const step = engineStep(t);
  assert.ok(step > 0 && step < 50, `the engine stopped part-way, at step ${step}`);
  assert.equal(t.stepCount, step);
  t.dispose();
});

test('a successful step(n) and a refused call before any step keep stepCount at the engine\'s step', () => {
  const t = engine.createTrainer({ task: 'reverse' });
  t.step(3);
  assert.throws(() => t.step(0), (e) => e.code === 'bad_input');
  assert.throws(() => t.stepBatch({ ids: [[1, 2], [3]], targets: [[1, 2], [3]] }), (e) => e.code === 'bad_shape');
  assert.equal(t.stepCount, 3);
  assert.equal(engineStep(t), 3);
  t.dispose();
});

test('stepBatch refuses ragged rows (lengths 2, 1, 3) with bad_shape naming the row and the lengths, never re-cutting them', () => {
  const t = engine.createTrainer({ task: 'reverse' });
  const before = t.save();
  const ragged = { ids: [[2, 3], [4], [5, 6, 7]], targets: [[3, 2], [4], [7, 6, 5]] };
  assert.throws(() => t.stepBatch(ragged), (e) => e instanceof RangeError && e.code === 'bad_shape' &&
    /ids row 1 has 1 tokens but row 0 has 2/.test(e.message) && /2, 1, 3/.test(e.message));
  // targets ragged where ids are not, and targets of another shape
  assert.throws(() => t.stepBatch({ ids: [[2, 3], [4, 5]], targets: [[3, 2], [5]] }), (e) => e.code === 'bad_shape' && /targets row 1 has 1/.test(e.message));
  assert.throws(() => t.stepBatch({ ids: [[2, 3], [4, 5]], targets: [[3, 2, 1], [5, 4, 1]] }), (e) => e.code === 'bad_shape');
  assert.throws(() => t.stepBatch({ ids: [[2, 3], 4], targets: [[3, 2], [5]] }), (e) => e instanceof TypeError && /ids row 1 is number/.test(e.message));
  assert.deepEqual(t.save(), before, 'no step was taken');
  assert.equal(t.stepCount, 0);
  // equal rows still train, padded with their real lengths given
  const r = t.stepBatch({ ids: [[2, 3, 0], [4, 5, 6]], targets: [[3, 2, -1], [6, 5, 4]], lengths: [2, 3] });
  assert.equal(r.step, 1);
  t.dispose();
});

// ---- one text rule for every entry point ----------------------------------------------

const LONE = ['\udc00was', 'a\ud800b', 'end\ud83d'];

test('every entry point that takes text refuses a lone surrogate with bad_text (none swallows the next character)', () => {
  const corpus = 'the cat sat on the mat . the dog sat on the log . '.repeat(40);
  const lm = engine.createTrainer({ task: 'text', corpus, length: 8, maxVocab: 20 });
  const bytes = lm.save();
  const entries = {
    'engine.run': (text) => engine.run({ sentence: text }),
    'engine.runBatch': (text) => engine.runBatch(['fine', text]),
    'engine.tokenize': (text) => engine.tokenize(text),
    'trainer.probe({text})': (text) => lm.probe({ text }),
    'trainer.trace({text})': (text) => lm.trace({ text }),
    'createTrainer corpus': (text) => engine.createTrainer({ task: 'text', corpus: `${corpus}${text}` }),
    'loadTrainer corpus': (text) => engine.loadTrainer(bytes, { corpus: `${corpus}${text}` }),
  };
  for (const [name, call] of Object.entries(entries)) {
    for (const text of LONE) {
      assert.throws(() => call(text), (e) => e instanceof TypeError && e.code === 'bad_text' && /unpaired UTF-16 surrogate at index \d+/.test(e.message),
        `${name} of ${JSON.stringify(text)}`);
    }
  }
  // a paired surrogate (an emoji) is fine everywhere it is fine for the engine
  const cat = 'the cat \ud83d\udc08 sat';
  assert.equal(engine.tokenize(cat).some((t) => t.text === '\ud83d\udc08'), true);
  const tokens = lm.trace({ text: cat }).tokens;
  assert.deepEqual(tokens.map((t) => t.text), ['the', 'cat', '\ud83d\udc08', 'sat']);
  assert.equal(lm.vocabulary[tokens[2].id], '[UNK]');
  lm.dispose();
});

test('trace({text}) keeps the character after a valid astral one (the conversion is exact)', () => {
  const corpus = 'the cat sat on the mat . the dog sat on the log . '.repeat(40);
  const lm = engine.createTrainer({ task: 'text', corpus, length: 8, maxVocab: 20 });
  const tr = lm.trace({ text: '\ud83d\udc08 was the cat' });
  assert.equal(tr.tokens.length, 4);
  assert.deepEqual(tr.tokens.map((t) => t.text), ['\ud83d\udc08', 'was', 'the', 'cat']);
  assert.equal(tr.sentence.slice(tr.tokens[1].startChar, tr.tokens[1].endChar), 'was');
  lm.dispose();
});

test('text limits are checked by the same rule: probe text above 100,000 characters, a sentence above the byte limit', () => {
  const t = engine.createTrainer({ task: 'reverse' });
  assert.throws(() => t.probe({ text: 'a '.repeat(50001) }), (e) => e instanceof RangeError && e.code === 'too_many_tokens' && /100,000/.test(e.message));
  assert.throws(() => t.trace({ text: 42 }), (e) => e instanceof TypeError && e.code === 'bad_input' && /text must be a string/.test(e.message));
  assert.throws(() => engine.run({ sentence: 'a'.repeat(65537) }), (e) => e.code === 'too_many_tokens' && /bytes of UTF-8/.test(e.message));
  t.dispose();
});
