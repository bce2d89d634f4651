// The relative positions through the JS API (issue #38): a Trainer trains with rope (and its
// base) and alibi, its trace and backward trace carry the rotation's inputs and constants, a
// checkpoint keeps them; the single-layer engine runs them too. (The numbers themselves are
// checked natively: tests/core/test_layer_kinds.cpp, test_multi_head.cpp, test_architecture.cpp.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../web/engine.js';

const engine = await createEngine();

test('a Trainer trains with rope (its base a setting) and alibi; traces carry the rotation and the slopes', () => {
  const rope = engine.createTrainer({ task: 'previous-token', positional: 'rope', ropeBase: 500, dModel: 16, heads: 2, batch: 8 });
  const alibi = engine.createTrainer({ task: 'previous-token', positional: 'alibi', dModel: 16, heads: 4, batch: 8 });
  try {
    for (const t of [rope, alibi]) {
      const first = t.step(5);
      assert.ok(Number.isFinite(first.loss));
    }
    assert.equal(rope.config.positional, 'rope');
    assert.equal(rope.config.ropeBase, 500);
    const ids = [1, 2, 3, 4, 5];
    const tr = rope.trace({ ids });
    assert.equal(tr.ropeFrequencies.length, 4);  // D/2 of D = 8
    assert.ok(Math.abs(tr.ropeFrequencies[1] - 500 ** (-2 / 8)) < 1e-6);
    const head = tr.layers[0].heads[0];
    assert.equal(head.queryBeforeRope.rows, 5);
    assert.equal(head.keyBeforeRope.cols, 8);
    // row 0 is not turned
    assert.deepEqual([...head.query.data.subarray(0, 8)], [...head.queryBeforeRope.data.subarray(0, 8)]);
    const back = rope.backwardTrace({ ids, targets: [-1, 1, 2, 3, 4] });
    assert.equal(back.layers[0].heads[1].dQueryBeforeRope.rows, 5);
    const ta = alibi.trace({ ids });
    assert.deepEqual([...ta.alibiSlopes], [0.25, 0.0625, 0.015625, 0.00390625]);
    assert.equal(ta.ropeFrequencies, undefined);
    // a checkpoint keeps the positions and the base
    const again = engine.loadTrainer(rope.save());
    try {
      assert.equal(again.config.positional, 'rope');
      assert.equal(again.config.ropeBase, 500);
      assert.deepEqual([...again.parameters()], [...rope.parameters()]);
    } finally {
      again.dispose();
    }
  } finally {
    rope.dispose();
    alibi.dispose();
  }
});

test('the single-layer engine runs rope and alibi: frequencies, slopes and each head before its rotation', () => {
  const e = engine;
  const tr = e.run({ sentence: 'the cat sat on the mat', dModel: 8, heads: 2, positional: 'rope' });
  assert.equal(tr.ropeFrequencies.length, 2);
  assert.equal(tr.heads[0].queryBeforeRope.cols, 4);
  for (const v of tr.positional.data) assert.equal(v, 0);  // rope adds nothing to x
  const ta = e.run({ sentence: 'the cat sat on the mat', dModel: 8, heads: 2, positional: 'alibi' });
  assert.deepEqual([...ta.alibiSlopes], [0.0625, 0.00390625]);
  assert.equal(ta.heads[0].queryBeforeRope, undefined);
});
