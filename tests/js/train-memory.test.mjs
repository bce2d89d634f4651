// The training engine's limits through the JS API and the CLI: the memory
// estimate checked before anything is allocated (too_large, never a trap or a
// heap overrun), the uniform-attention probe, the weight bound training keeps,
// the text task's max_vocab, and random settings inside the documented ranges.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine, ERROR_CODES, TASKS } from '../../web/engine.js';
import { ENGINE_CONSTANTS } from '../../web/generated/engine_constants.js';
import { cliRun, prng } from './helpers.mjs';
import { setTensorValues } from './checkpoints.mjs';

const engine = await createEngine();

// the lab's link train.html#task=induction&n=256&L=1&H=64&C=64&bs=1024&step=1:
// 1024·64·256² = 2³² attention weights, which wrapped to 0 in wasm's 32-bit size_t
const HUGE = { task: 'induction', length: 256, layers: 1, heads: 64, dModel: 64, batch: 1024 };

/** err is a coded engine error (a RangeError/TypeError with a known err.code), not a trap. */
function coded(err) {
  return (err instanceof RangeError || err instanceof TypeError) && ERROR_CODES.includes(err.code) && err.code !== 'internal';
}

test('createTrainer refuses settings whose step needs 17 GB (too_large, the sizes named), and the engine goes on working', () => {
  assert.throws(() => engine.createTrainer(HUGE).step(1), (e) => {
    assert.ok(e instanceof RangeError, String(e));
    assert.equal(e.code, 'too_large');
    assert.match(e.message, /batch 1024 × 64 heads × 256² tokens × 1 layer needs 17\.2 GB of attention weights/);
    assert.match(e.message, /the limit for training is 805 MB/);
    assert.match(e.message, /lower batch, heads, length or layers/);
    return true;
  });
  const t = engine.createTrainer({ task: 'induction' });
  const r = t.step(3);
  assert.equal(r.step, 3);
  assert.ok(Number.isFinite(r.loss));
  assert.ok(Number.isFinite(t.evaluate({ samples: 16 }).loss));
  t.dispose();
});

test('estimateTrainingMemory gives the bytes by part before allocating, and the message createTrainer throws', () => {
  const huge = engine.estimateTrainingMemory(HUGE);
  assert.equal(huge.parts.attention, 4 * 1 * 1024 * 64 * 256 * 256); // L·B·H·T² floats, computed here
  assert.equal(huge.limitBytes, 768 * 2 ** 20);
  assert.equal(huge.limitBytes, ENGINE_CONSTANTS.maxTrainingBytes);
  assert.equal(huge.fits, false);
  assert.equal(huge.bytes, Object.values(huge.parts).reduce((a, b) => a + b, 0));
  assert.throws(() => engine.createTrainer(HUGE), (e) => e.message === huge.message);

  const small = engine.estimateTrainingMemory({ task: 'reverse' });
  assert.equal(small.fits, true);
  assert.equal(small.message, null);
  const t = engine.createTrainer({ task: 'reverse' });
  assert.equal(small.parts.parameters, 4 * t.parameterCount);
  assert.equal(small.parts.gradients, 4 * t.parameterCount);
  assert.equal(small.parts.optimizer, 5 * 4 * t.parameterCount); // m, v and the update's copy of p, m, v
  t.dispose();
  assert.ok(small.bytes > 0 && small.bytes < 100e6, String(small.bytes));
  // settings wrong in another way are the same error as createTrainer's
  assert.throws(() => engine.estimateTrainingMemory({ task: 'reverse', dModel: 10, heads: 3 }), (e) => e.code === 'bad_input' && /divisible/.test(e.message));
});

test('the uniform-attention probe puts exactly 1/n on each of the n keys a row may see', () => {
  for (const task of ['induction', 'reverse', 'coreference']) {
    const t = engine.createTrainer({ task, layers: 2, heads: 2 });
    t.step(5);
    const plain = t.probe();
    const p = t.probe({ uniformAttention: true });
    const causal = t.config.causal;
    const n = p.length;
    let differs = false;
    for (const [l, layer] of p.layers.entries()) {
      for (const [h, head] of layer.heads.entries()) {
        const w = head.weights;
        for (let i = 0; i < w.rows; i++) {
          const keys = causal ? Math.min(i + 1, n) : n;
          for (let j = 0; j < w.cols; j++) {
            const want = j < keys ? Math.fround(1 / keys) : 0;
            assert.equal(w.data[i * w.cols + j], want, `${task} layer ${l} head ${h} row ${i} key ${j}`);
            if (plain.layers[l].heads[h].weights.data[i * w.cols + j] !== want) differs = true;
          }
        }
      }
    }
    assert.ok(differs, `${task}: the trained probe is not uniform already`);
    t.dispose();
  }
});

test('training stops before a weight leaves ±1e6, the range probe accepts, and keeps the weights', () => {
  const t = engine.createTrainer({ task: 'reverse', lr: 10 });
  t.step(1);
  const near = engine.loadTrainer(setTensorValues(t.save(), 'embed', (k) => (k % 2 ? 999999 : -999999)));
  const before = near.save();
  assert.throws(() => near.step(), (e) => {
    assert.ok(e instanceof RangeError);
    assert.equal(e.code, 'not_finite');
    assert.match(e.message, /step 2: an updated weight is outside the range -1e\+06 to 1e\+06/);
    assert.match(e.message, /learning rate 10/);
    return true;
  });
  assert.equal(near.stepCount, 1);
  assert.deepEqual(near.save(), before);
  assert.equal(near.probe().layers.length, 1); // the kept model can be shown
  for (const x of [t, near]) x.dispose();
});

test('maxVocab takes up to 49,998 (the model\'s 50,000 less [PAD] and [UNK]), and that vocabulary trains', () => {
  assert.equal(ENGINE_CONSTANTS.maxTextVocab, 49998);
  const words = [];
  for (let w = 0; w < 50000; w++) {
    let s = '';
    for (let i = 0, v = w; i < 4; i++, v = Math.floor(v / 26)) s += String.fromCharCode(97 + (v % 26));
    words.push(s);
  }
  const corpus = words.join(' ');
  const t = engine.createTrainer({ task: 'text', corpus, maxVocab: 49998, length: 4, dModel: 4, heads: 1, mlp: 0, layers: 1, batch: 2 });
  assert.equal(t.config.vocab, 50000);
  assert.ok(Number.isFinite(t.step().loss));
  t.dispose();
  for (const maxVocab of [49999, 50000]) {
    assert.throws(() => engine.createTrainer({ task: 'text', corpus, maxVocab }), (e) => e.code === 'bad_input' && /maxVocab/.test(e.message) && /49998/.test(e.message));
  }
});

test('random settings inside the documented ranges train or fail with a coded error, never a trap', () => {
  const rand = prng(2026);
  const uniform = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
  const logUniform = (lo, hi) => Math.min(hi, Math.floor(Math.exp(Math.log(lo) + rand() * (Math.log(hi + 1) - Math.log(lo)))));
  const coin = (p = 0.5) => rand() < p;
  // each task's length range (docs/training.md), 0 = its default
  const lengths = { copy: [2, 64], reverse: [2, 64], sort: [2, 64], 'previous-token': [2, 256], induction: [8, 256], recall: [1, 8], brackets: [4, 128], coreference: [128, 128], text: [4, 256] };
  const corpus = Array.from({ length: 3000 }, (_, i) => String.fromCharCode(97 + ((i * 7) % 20)) + String.fromCharCode(97 + (i % 2))).join(' ');
  const counts = { trained: 0, refused: 0, invalid: 0, built: 0 };
  for (let trial = 0; trial < 100; trial++) {
    const task = TASKS[uniform(0, TASKS.length - 1)];
    const [lo, hi] = lengths[task];
    let length = coin(0.3) ? 0 : logUniform(lo, hi);
    if (task === 'brackets') length -= length % 2;
    const dModel = logUniform(1, 512);
    let heads = coin(0.1) ? uniform(1, dModel) : logUniform(1, dModel);
    if (!coin(0.1)) while (dModel % heads !== 0) heads -= 1;
    const s = {
      task, length, layers: uniform(1, 12), dModel, heads, mlp: coin() ? 0 : logUniform(1, 2048),
      context: coin(0.8) ? 0 : logUniform(1, 512), layernorm: coin(), causal: coin(), scale: coin(0.8), tied: coin(0.3),
      batch: logUniform(1, 4096), lr: 10 ** (-4 + 5 * rand()), clip: coin() ? 0 : 1,
      ...(task === 'text' ? { corpus, maxVocab: logUniform(2, 49998) } : {}),
    };
    const what = JSON.stringify({ ...s, corpus: undefined });
    let need;
    try {
      need = engine.estimateTrainingMemory(s);
    } catch (e) {
      assert.ok(coded(e), `${what}: ${e}`);
      assert.throws(() => engine.createTrainer(s), (e2) => e2.code === e.code, what);
      counts.invalid++;
      continue;
    }
    if (!need.fits) {
      assert.throws(() => engine.createTrainer(s), (e) => coded(e) && e.code === 'too_large' && e.message === need.message, what);
      counts.refused++;
      continue;
    }
    const t = engine.createTrainer(s);
    counts.built++;
    // one step when it is cheap: about 6 multiply-adds per weight and row, plus the attention's
    const T = t.probe().ids.length, N = s.batch * T, C = dModel;
    const flops = 6 * N * (s.layers * (4 * C * C + 2 * T * C + 2 * C * s.mlp) + C * t.config.vocab);
    if (flops <= 3e8) {
      try {
        assert.ok(Number.isFinite(t.step(1).loss), what);
        counts.trained++;
      } catch (e) {
        assert.ok(coded(e) && e.code === 'not_finite', `${what}: ${e}`);
      }
    }
    t.dispose();
  }
  assert.ok(counts.trained >= 20 && counts.refused >= 5, JSON.stringify(counts));
  // after all of it the engine still trains
  const t = engine.createTrainer({ task: 'reverse' });
  assert.equal(t.step(2).step, 2);
  t.dispose();
});

test('attn train refuses settings above the memory limit with exit code 2 and the sizes, and trains the rest', () => {
  const cases = [
    [['--task', 'induction', '--length', '256', '--layers', '1', '--heads', '64', '--d-model', '64', '--batch', '1024'], /17\.2 GB of attention weights/],
    [['--task', 'previous-token', '--length', '256', '--layers', '12', '--heads', '16', '--d-model', '64', '--batch', '256'], /attention weights.*lower batch, heads, length or layers/],
    [['--task', 'sort', '--length', '64', '--layers', '12', '--d-model', '512', '--heads', '8', '--mlp', '2048', '--batch', '4096'], /of activations.*lower batch, length/],
    [['--task', 'text', '--max-vocab', '49999'], /--max-vocab/],
  ];
  for (const [args, message] of cases) {
    const r = cliRun(['train', ...args, '--steps', '1']);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
  }
  // the first case with 2 sequences, 4 heads and 32 tokens: well within the limit
  const ok = cliRun(['train', '--task', 'induction', '--length', '32', '--layers', '1', '--heads', '4', '--d-model', '64', '--batch', '2', '--steps', '1']);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /trained 1 steps/);
});
