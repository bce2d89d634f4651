// The concept lab's controllers (web/app/concepts/<idea>.js) on the real engine,
// without a page: the numbers they hand their views. The plain average of
// idea 1 now comes from the engine (attention with every weight 1/T); it is
// checked here against the mean of V computed independently in double precision.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../web/engine.js';
import { createCache, uniformAttentionWeights } from '../../web/app/concepts/controller.js';
import { runContext, contextModel } from '../../web/app/concepts/context.js';
import { formatValue } from '../../web/app/kit/format.js';

const engine = await createEngine();

/** (1/T)·Σ_j V[j] of one head, in double precision (the lab's old JS average). */
function meanOfValues(head) {
  const { rows: T, cols: D, data } = head.value;
  const avg = new Float64Array(D);
  for (let j = 0; j < T; j++) for (let d = 0; d < D; d++) avg[d] += data[j * D + d];
  return Array.from(avg, (x) => x / T);
}

const CASES = [
  { a: 'The bank of the river flooded', b: 'The bank raised its interest rates', pe: 'sinusoidal', seed: 42 },
  { a: 'The bank of the river flooded', b: 'A river of cars', pe: 'none', seed: 7 },
  { a: 'one', b: 'one two', pe: 'learned', seed: 1 },
  { a: 'a b c d e f g h i j k l m n o p q r s t u v w x y z a b c', b: 'z', pe: 'sinusoidal', seed: 4294967295 },
];

test('context: with W_Q = 0 every weight is 1/T and every head output row is the mean of V (within 1e-6 of the double-precision mean)', () => {
  for (const c of CASES) {
    const runs = runContext(engine, c);
    const T = runs.a.tokens.length;
    runs.uniform.heads.forEach((h, k) => {
      for (const w of h.weights.data) assert.equal(w, Math.fround(1 / T), `${c.a}: head ${k} weight`);
      // the value vectors are the first run's own: same X′, same W_V
      assert.deepEqual(h.value.data, runs.a.heads[k].value.data);
      const mean = meanOfValues(runs.a.heads[k]);
      for (let i = 0; i < T; i++) {
        for (let d = 0; d < mean.length; d++) {
          const got = h.output.data[i * h.output.cols + d];
          assert.ok(Math.abs(got - mean[d]) < 1e-6, `${c.a}: head ${k}, row ${i}, d ${d}: ${got} vs ${mean[d]}`);
        }
      }
    });
  }
});

test('context: the verdict (largest |output − average|) agrees with the old JS average to 1e-6, for every token and head', () => {
  for (const c of CASES) {
    const runs = runContext(engine, c);
    const T = runs.a.tokens.length;
    for (let head = 0; head < runs.a.heads.length; head++) {
      const mean = meanOfValues(runs.a.heads[head]);
      for (let q = 0; q < T; q++) {
        const m = contextModel(runs, { ...c, q, head });
        const out = runs.a.heads[head].output;
        let old = 0;
        for (let d = 0; d < mean.length; d++) old = Math.max(old, Math.abs(Math.fround(out.data[q * out.cols + d]) - Math.fround(mean[d])));
        assert.ok(Math.abs(m.average.max - old) < 1e-6, `${c.a}: token ${q}, head ${head}: ${m.average.max} vs ${old}`);
      }
    }
  }
});

test('context: the model clamps the token and head to the trace, and finds the word in the second sentence', () => {
  const runs = runContext(engine, CASES[0]);
  const m = contextModel(runs, { ...CASES[0], q: 99, head: 99 });
  assert.equal(m.i, runs.a.tokens.length - 1);
  assert.equal(m.h, runs.a.heads.length - 1);
  const bank = contextModel(runs, { ...CASES[0], q: 1, head: 0 });
  assert.equal(bank.word.j, 1, '“bank” is token 1 of both sentences');
  assert.equal(bank.word.input, 0, 'same word, same position: the same input row');
  assert.ok(bank.word.output > 1e-3, 'different neighbours: a different output row');
  assert.equal(contextModel(runs, { ...CASES[0], q: 4, head: 0 }).word, null, '“river” is not in the second sentence');
});

test('uniformAttentionWeights: W_Q is zero and the other three are the trace\u2019s own', () => {
  const tr = engine.run({ sentence: 'a b c', dModel: 8, heads: 2 });
  const w = uniformAttentionWeights(tr);
  assert.deepEqual([w.wQuery.rows, w.wQuery.cols], [8, 8]);
  assert.ok(w.wQuery.data.every((x) => x === 0));
  assert.equal(w.wKey, tr.wKey);
  assert.equal(w.wValue, tr.wValue);
  assert.equal(w.wOutput, tr.wOutput);
});

test('createCache: recomputes only for new inputs, keeps the last good value through a failure, and clears the error after', () => {
  let calls = 0;
  const get = createCache(({ sentence }) => {
    calls++;
    return engine.run({ sentence });
  });
  const first = get({ sentence: 'one two' });
  assert.equal(first.error, null);
  assert.equal(first.value.tokens.length, 2);
  assert.equal(get({ sentence: 'one two' }).value, first.value);
  assert.equal(calls, 1, 'the same inputs: no second run');
  const bad = get({ sentence: '' });
  assert.match(bad.error, /no tokens/);
  assert.equal(bad.value, first.value, 'the last good value stays');
  const back = get({ sentence: 'one two' });
  assert.equal(back.error, null, 'back to inputs that work: no error');
  assert.equal(back.value, first.value);
});

// ---- idea 6: order and distance (web/app/concepts/order-distance.js) -------------------

test('order and distance: moved right, rope and ALiBi give the pair the same score (float rounding), sinusoidal and learned do not; the page says which from those numbers', async () => {
  const { distanceModel, distanceSentences, KINDS, FILLER } = await import('../../web/app/concepts/order-distance.js');
  for (const [sentence, shift, seed] of [['cat chases dog', 3, 42], ['the quick brown fox jumps', 7, 1], ['dog bites man', 12, 4294967295]]) {
    // the engine's own numbers, read here without the module: S′ of the last word → the first word, head 1
    const score = (kind, text, i, j) => {
      const tr = engine.run({ sentence: text, positional: kind, seed });
      const s = tr.heads[0].scaled;
      const raw = s.data[i * s.cols + j];
      if (kind !== 'alibi') return { s: raw, tr };
      // ALiBi's slope for head 1 of H = 2^k heads is 2^(−8/H) (Press et al.): checked, then subtracted by hand
      const n = 2 ** Math.floor(Math.log2(tr.config.heads));
      assert.equal(tr.alibiSlopes[0], Math.fround(2 ** (-8 / n)));
      return { s: raw - tr.alibiSlopes[0] * Math.abs(i - j), tr };
    };
    const T = engine.run({ sentence }).tokens.length;
    const moved = [...FILLER.slice(0, shift), sentence].join(' ');
    const k = engine.run({ sentence: moved }).tokens.length - T;
    assert.equal(k, shift, 'one token per filler word');
    const change = {};
    for (const kind of KINDS) {
      const a = score(kind, sentence, T - 1, 0).s;
      const b = score(kind, moved, T - 1 + k, k).s;
      change[kind] = Math.abs(a - b) / Math.max(1, Math.abs(a));
    }
    for (const kind of ['none', 'rope', 'alibi']) assert.ok(change[kind] < 1e-5, `${sentence}, ${kind}: relative change ${change[kind]}`);
    for (const kind of ['sinusoidal', 'learned']) assert.ok(change[kind] > 1e-4, `${sentence}, ${kind}: relative change ${change[kind]}`);
    // the module's table agrees, and its sentences are read from it
    const m = distanceModel(engine, { sentence, shift, seed });
    assert.deepEqual(m.rows.filter((r) => r.same).map((r) => r.kind), ['none', 'rope', 'alibi']);
    assert.deepEqual(m.rows.filter((r) => r.inputChange > 0).map((r) => r.kind), ['sinusoidal', 'learned'], 'only absolute kinds change the word\u2019s input vector');
    const text = distanceSentences(m).join(' ');
    assert.match(text, new RegExp(`keeps its score with none, rotary \\(RoPE\\) and ALiBi`));
    assert.match(text, /With sinusoidal and learned the same pair at the same distance scores differently/);
    assert.match(text, /Sinusoidal and learned give .* a different input vector/);
    for (const r of m.rows.filter((x) => !x.same)) assert.ok(text.includes(formatValue(r.at, 4)) && text.includes(formatValue(r.moved, 4)), `${r.kind}'s numbers in: ${text}`);
  }
});

test('order and distance: no shift and a one-word sentence get a plain instruction, not a claim', async () => {
  const { distanceModel, distanceSentences } = await import('../../web/app/concepts/order-distance.js');
  assert.match(distanceSentences(distanceModel(engine, { sentence: 'cat chases dog', shift: 0, seed: 1 }))[0], /^Move the sentence right/);
  assert.match(distanceSentences(distanceModel(engine, { sentence: 'cat', shift: 2, seed: 1 }))[0], /^Write at least two words/);
});
