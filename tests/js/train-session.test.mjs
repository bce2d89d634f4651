// The training lab's session (web/app/train/session.js): a worker's 'progress' and
// 'paused' replies go into the session by recordProgress, which says whether the
// stop rule fired and when the link takes the step; the controller (controller.js)
// only acts on that answer.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSession, recordProgress } from '../../web/app/train/session.js';
import { GOAL_CHECKS } from '../../web/app/train/stop.js';

function session(stopAt = 'goal') {
  const s = createSession();
  s.state = { step: 0, stopAt };
  return s;
}

/** A 'progress' reply at `step` with one training point and a held-out check of `accuracy`. */
const progress = (step, accuracy, extra = {}) => ({
  type: 'progress', step, running: true, stepsPerSecond: 50, cap: 200, live: null, snapshots: [],
  train: [[step, 1 / step, accuracy]], heldout: { step, loss: 1 - accuracy / 2, accuracy }, ...extra,
});

test('progress: the curves, the step and the link follow the replies; a pause takes the head scores', () => {
  const s = session();
  assert.deepEqual(recordProgress(s, progress(10, 0.5)), { stop: false, link: 'throttled' });
  assert.deepEqual(recordProgress(s, progress(20, 0.6)), { stop: false, link: 'throttled' });
  assert.equal(s.run.step, 20);
  assert.equal(s.state.step, 20);
  assert.equal(s.run.running, true);
  assert.equal(s.run.stepsPerSecond, 50);
  assert.deepEqual(s.run.trainLoss.last, [20, 1 / 20]);
  assert.deepEqual(s.run.heldAcc.last, [20, 0.6]);
  assert.deepEqual(s.checks.map((c) => c.step), [10, 20]);
  assert.deepEqual(s.lossHistory.map((c) => [c.step, c.train]), [[10, 0.1], [20, 0.05]]);
  const paused = { ...progress(25, 0.6), type: 'paused', heldout: null, train: [], headScores: [[0.4]] };
  assert.deepEqual(recordProgress(s, paused), { stop: false, link: 'now' });
  assert.equal(s.run.running, false);
  assert.equal(s.run.final, true);
  assert.deepEqual(s.run.headScores, [[0.4]]);
  assert.equal(s.run.stepsPerSecond, 50, 'a pause keeps the last speed');
  assert.equal(s.state.step, 25);
});

test('progress: the stop rule fires once at the goal, and the pause says why', () => {
  const s = session('goal');
  const answers = [];
  for (let i = 1; i <= GOAL_CHECKS + 2; i++) answers.push(recordProgress(s, progress(10 * i, 1)).stop);
  assert.deepEqual(answers, [false, false, false, false, true, false, false], 'stops at the 5th check at 100%, then waits for the pause');
  recordProgress(s, { ...progress(75, 1), type: 'paused', heldout: null, train: [], headScores: null });
  assert.equal(s.stopNote, 'Stopped at step 75: held-out accuracy 100% for the last 5 checks.');
  assert.equal(s.stopping, false);
  const off = session('off');
  for (let i = 1; i <= GOAL_CHECKS + 2; i++) assert.equal(recordProgress(off, progress(10 * i, 1)).stop, false);
});

test('progress: while a link retrains to its step, neither the link nor the stop rule moves', () => {
  const s = session('goal');
  s.catchUp = 500;
  s.state.step = 500;
  for (let i = 1; i <= GOAL_CHECKS + 1; i++) assert.deepEqual(recordProgress(s, progress(10 * i, 1)), { stop: false, link: null });
  assert.equal(s.state.step, 500);
  assert.equal(s.checks.length, 0);
  assert.deepEqual(recordProgress(s, { ...progress(500, 1), type: 'paused', heldout: null, train: [], headScores: null }), { stop: false, link: 'now' });
  assert.equal(s.catchUp, null);
  assert.equal(s.state.step, 500);
});

test('ablation: only a report for exactly the heads ablated now is kept; a late reply to an earlier set is dropped', () => {
  const s = session();
  s.state.ablate = [[1, 0], [1, 1]];
  const report = (heads) => ({ step: 30, heads, accuracy: 0.1, loss: 2, samples: 64 });
  recordProgress(s, progress(30, 0.9, { ablation: report([[1, 0]]) }));
  assert.equal(s.run.ablation, null, 'one head\'s accuracy is not shown beside two heads\' names');
  recordProgress(s, progress(40, 0.9, { ablation: report([[1, 0], [1, 1]]) }));
  assert.deepEqual(s.run.ablation.heads, [[1, 0], [1, 1]]);
  recordProgress(s, progress(50, 0.9, { ablation: report([[1, 1], [1, 0]]) }));
  assert.equal(s.run.ablation, null, 'the same heads in another order are another list (both sides are canonical)');
  s.state.ablate = [];
  recordProgress(s, progress(60, 0.9, { ablation: report([[1, 0]]) }));
  assert.equal(s.run.ablation, null, 'no heads ablated: no report');
  recordProgress(s, progress(70, 0.9, { ablation: null }));
  assert.equal(s.run.ablation, null);
});
