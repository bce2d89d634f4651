// The pure parts of the modern decoders' steps (Llama, Qwen): RoPE's turn and the
// same-distance property, the grouped-query words, the KV cache's size and the attention sink.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rotate, ropeScore } from '../../web/app/playground/steps/step-rope.js';
import { kvHeadOf, sharedWith, kvCacheText } from '../../web/app/playground/steps/step-projections.js';
import { attentionSink, kvGroupsText } from '../../web/app/playground/steps/step-heads.js';
import { forwardSteps, STEPS } from '../../web/app/playground/steps.js';

const theta = (D, base = 10000) => Array.from({ length: D / 2 }, (_, i) => base ** (-2 * i / D));

test('rotate turns each (i, i + D/2) pair by m·θᵢ and keeps its length; position 0 leaves it as it is', () => {
  const x = [1, 0, 0, 0, 0, 1, 2, 0]; // D = 8: pairs (0,4) (1,5) (2,6) (3,7)
  const th = theta(8);
  assert.deepEqual(rotate(x, 0, th), x);
  const y = rotate(x, 3, th);
  assert.ok(Math.abs(y[0] - Math.cos(3)) < 1e-12 && Math.abs(y[4] - Math.sin(3)) < 1e-12, 'pair 0 turned by 3 rad');
  for (let i = 0; i < 4; i++) assert.ok(Math.abs(Math.hypot(y[i], y[i + 4]) - Math.hypot(x[i], x[i + 4])) < 1e-12);
});

test('RoPE scores depend on the distance only: the same two vectors moved together score the same, another distance differs', () => {
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
  for (const D of [8, 12, 64]) {
    const th = theta(D);
    const q = Array.from({ length: D }, rnd);
    const k = Array.from({ length: D }, rnd);
    const s = ropeScore(q, k, 9, 4, th);
    for (const shift of [1, 17, 500]) assert.ok(Math.abs(ropeScore(q, k, 9 + shift, 4 + shift, th) - s) < 1e-9, `D = ${D}, moved by ${shift}`);
    assert.ok(Math.abs(ropeScore(q, k, 9, 5, th) - s) > 1e-6, `D = ${D}: distance 4 scores differently from 5`);
  }
});

test('grouped-query words: which K/V head a query head reads, who shares it, the KV cache per token', () => {
  const config = { heads: 6, kvHeads: 2 };
  assert.deepEqual([0, 1, 2, 3, 4, 5].map((h) => kvHeadOf(config, h)), [0, 0, 0, 1, 1, 1]);
  assert.equal(sharedWith(config, 3), 'shared with heads 5 and 6');
  assert.equal(sharedWith({ heads: 4, kvHeads: 2 }, 1), 'shared with head 1');
  assert.equal(sharedWith({ heads: 4, kvHeads: 4 }, 1), 'read by this head only');
  assert.equal(sharedWith({ heads: 8, kvHeads: 2 }, 2), 'shared with heads 1, 2 and 4');
  const text = kvCacheText({ model: { layers: 30 }, config: { kvHeads: 3 } }, 9, 64);
  assert.match(text, /2 \u00d7 30 layers \u00d7 3 K\/V heads \u00d7 64 = 11,520 numbers per token \(45 KB in float32\)/);
  assert.match(text, /2 \u00d7 30 \u00d7 9 \u00d7 64 = 34,560 \(135 KB\), 3 times more/);
  assert.equal(kvGroupsText({ heads: 4, kvHeads: 4 }), '');
  assert.match(kvGroupsText({ heads: 4, kvHeads: 2 }), /heads 1 and 2 share K\/V head 1; heads 3 and 4 share K\/V head 2/);
});

test('attention sink: named when most heads put most of each row on the first token, with their mean share', () => {
  const T = 4;
  const head = (first) => {
    const data = new Float32Array(T * T);
    for (let i = 0; i < T; i++) {
      data[i * T] = i === 0 ? 1 : first;
      for (let j = 1; j <= i; j++) data[i * T + j] = (1 - first) / i;
    }
    return { weights: { rows: T, cols: T, data } };
  };
  const found = attentionSink([head(0.9), head(0.7), head(0.1)], T);
  assert.deepEqual([found.heads, found.of], [2, 3]);
  assert.ok(Math.abs(found.share - 0.8) < 1e-6, `${found.share}`);
  assert.equal(attentionSink([head(0.9), head(0.1)], T), null, 'one head of two is not most');
  assert.equal(attentionSink([head(0.9)], 2), null, 'two tokens say nothing');
});

test('the RoPE step is shown only for rotary models, after Q, K, V; the twelve stay twelve', () => {
  assert.equal(STEPS.length, 12);
  assert.deepEqual(forwardSteps({ config: { positional: 'sinusoidal' } }), [...STEPS]);
  const rope = forwardSteps({ config: { positional: 'rope' } });
  assert.equal(rope.length, 13);
  assert.equal(rope.indexOf('rope'), rope.indexOf('projections') + 1);
  assert.deepEqual(forwardSteps(null), [...STEPS]);
});
