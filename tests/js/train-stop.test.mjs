// The training lab's "Stop at" rule (web/app/train/stop.js) and its URL key
// (stop=, state.js): a link without it stops at a plateau, as before the key existed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stopReason, GOAL_CHECKS, PLATEAU_CHECKS } from '../../web/app/train/stop.js';
import { parseTrainHash, serializeTrainState, trainerSettings } from '../../web/app/train/state.js';

import { createEngine } from '../../web/engine.js';

// the engine's own task list: each task's defaults are its recipe's (train/state.js taskDefaults reads them)
const TASKS = (await createEngine()).tasks();
const checks = (accs, loss = (i) => 1) => accs.map((a, i) => ({ step: 10 * i, accuracy: a, loss: loss(i) }));

test('stop rule: 100% held-out accuracy for the last 5 checks stops at a plateau and at the goal, never when off', () => {
  const at100 = checks([0.2, 0.6, ...Array(GOAL_CHECKS).fill(1)]);
  assert.equal(stopReason(at100, 'plateau'), 'held-out accuracy 100% for the last 5 checks');
  assert.equal(stopReason(at100, 'goal'), 'held-out accuracy 100% for the last 5 checks');
  assert.equal(stopReason(at100, 'off'), null);
  assert.equal(stopReason(checks([0.2, 1, 1, 1, 1, 0.99]), 'plateau'), null, 'one check below 100% restarts the count');
});

test('stop rule: a plateau is no new best accuracy or loss for the last 30 checks; the goal rule waits for 100%', () => {
  const flat = checks(Array(PLATEAU_CHECKS + 5).fill(0.5), (i) => (i < 5 ? 2 - 0.1 * i : 1.6));
  assert.match(stopReason(flat, 'plateau'), /not improved for the last 30 checks/);
  assert.equal(stopReason(flat, 'goal'), null);
  const stillLearning = checks(Array(PLATEAU_CHECKS + 5).fill(0.5), (i) => 2 - 0.01 * i);
  assert.equal(stopReason(stillLearning, 'plateau'), null, 'a falling loss is progress');
  assert.equal(stopReason(checks(Array(PLATEAU_CHECKS).fill(0.5)), 'plateau'), null, 'too few checks to tell');
});

test('stop= in the link: default plateau is not written; goal and off round-trip; a bad value is reported', () => {
  const old = parseTrainHash('#task=reverse&L=1&step=300', TASKS);
  assert.equal(old.state.stopAt, 'plateau');
  assert.deepEqual(old.problems, []);
  assert.doesNotMatch(serializeTrainState(old.state), /stop=/);
  for (const v of ['goal', 'off']) {
    const p = parseTrainHash(`#task=reverse&stop=${v}`, TASKS);
    assert.equal(p.state.stopAt, v);
    assert.match(serializeTrainState(p.state), new RegExp(`stop=${v}`));
  }
  const bad = parseTrainHash('#task=reverse&stop=soon', TASKS);
  assert.equal(bad.state.stopAt, 'plateau');
  assert.match(bad.problems.join(' '), /stop at .*soon/);
});

test('minimumWords mirrors TextTask::minimum_words: a window of T + 1 words in both the 90% and the 10% split', async () => {
  const { minimumWords } = await import('../../web/app/train/state.js');
  // by hand: T = 7 needs 8 words after floor(0.9 n): 71 (63 + 8); T = 8: 81 (72 + 9); T = 9: 91 (81 + 10)
  assert.equal(minimumWords(7), 71);
  assert.equal(minimumWords(8), 81);
  assert.equal(minimumWords(9), 91);
  assert.equal(minimumWords(32), 321, 'the engine\u2019s own message for an 84-word text says 321');
});

test('overfitting: held-out loss rising while training loss falls over the last 5 checks, and only then', async () => {
  const { overfitNote } = await import('../../web/app/train/stop.js');
  const h = (held, train) => held.map((x, i) => ({ step: 10 * i, held: x, train: train[i] }));
  const note = overfitNote(h([1, 0.9, 1.0, 1.1, 1.2, 1.3], [1, 0.8, 0.6, 0.5, 0.4, 0.3]));
  assert.equal(note, 'Overfitting: held-out loss rose 0.90 \u2192 1.3 over the last 5 checks while training loss fell 0.80 \u2192 0.30.');
  assert.equal(overfitNote(h([1, 0.9, 0.8, 0.7, 0.6], [1, 0.8, 0.6, 0.5, 0.4])), null, 'both falling: learning');
  assert.equal(overfitNote(h([1, 1.1, 1.2, 1.3, 1.4], [1, 1.1, 1.2, 1.3, 1.4])), null, 'both rising: diverging, not overfitting');
  assert.equal(overfitNote(h([1, 1.2, 1.0, 1.3, 1.1], [1, 0.8, 0.6, 0.5, 0.4])), null, 'held-out loss only noisy');
  assert.equal(overfitNote(h([1, 1.1, 1.2, 1.3], [1, 0.8, 0.6, 0.5])), null, 'too few checks');
});

test('speed= in the link: full speed is the default and not written; watch round-trips', () => {
  assert.equal(parseTrainHash('#task=reverse', TASKS).state.speed, 'full');
  assert.doesNotMatch(serializeTrainState(parseTrainHash('#task=reverse', TASKS).state), /speed=/);
  const p = parseTrainHash('#task=reverse&speed=watch', TASKS);
  assert.equal(p.state.speed, 'watch');
  assert.match(serializeTrainState(p.state), /speed=watch/);
});

test('the lab link holds rotary and ALiBi positions (pe=rope, pe=alibi) and hands them to the trainer', () => {
  for (const kind of ['rope', 'alibi']) {
    const { state, problems } = parseTrainHash(`#task=previous-token&pe=${kind}`, TASKS);
    assert.deepEqual(problems, []);
    assert.equal(state.positional, kind);
    assert.match(serializeTrainState(state), new RegExp(`(^|&)pe=${kind}(&|$)`));
    assert.equal(trainerSettings(state).positional, kind);
  }
});
