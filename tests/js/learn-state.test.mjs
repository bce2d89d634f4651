// The Learn part's state (issue #23): its URL fields (the answers picked, the scale
// switch on the backward, the learning rate, the scope and the steps by hand) round-trip
// through a link, a bad entry falls back with a notice, and the rules that put the
// trained weights back (another sentence, model or answer clears the steps).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseHash, serializeState, normalizeState, LEARN_RATES, MAX_SGD_STEPS, STEPS, ALL_STEPS } from '../../web/app/playground/state.js';
import { applyPatch } from '../../web/app/playground/rules.js';
import { withTarget, parseSgdStep, sgdStepText } from '../../web/app/playground/learn/learn.js';
import { LEARN_STEPS } from '../../web/app/playground/learn/steps.js';

test('the forward steps stay the twelve; the Learn steps come after them in the URL\'s step choices', () => {
  assert.equal(STEPS.length, 12);
  assert.deepEqual(ALL_STEPS, [...STEPS, ...LEARN_STEPS]);
  assert.equal(parseHash('#model=coreference&step=dscale').state.step, 'dscale');
});

test('a link keeps the answers, the scale switch, the learning rate, the scope and the steps by hand', () => {
  const s = normalizeState({ model: 'coreference', step: 'sgd', targets: ['3:12', '7:-1'], learnScale: false, lr: 0.3, scope: 'all', sgd: ['0.3:a', '1:1.2', '0.01:0.0'] });
  const text = serializeState(s);
  const { state, problems } = parseHash(`#${text}`);
  assert.deepEqual(problems, []);
  for (const k of ['targets', 'learnScale', 'lr', 'scope', 'sgd', 'step']) assert.deepEqual(state[k], s[k], k);
  // defaults are left out of the link
  const plain = serializeState(normalizeState({ model: 'coreference' }));
  for (const p of ['tg=', 'ls=', 'lr=', 'scope=', 'sgd=']) assert.ok(!plain.includes(p), `${p} in ${plain}`);
});

test('a bad Learn field in a link falls back to its default with a notice naming it', () => {
  for (const [hash, label] of [['sgd=2:a', 'steps by hand'], ['sgd=1:x', 'steps by hand'], ['tg=7:street', 'targets'], ['lr=5', 'learning rate'], ['scope=layer', 'what a step moves'],
    [`sgd=${new Array(MAX_SGD_STEPS + 1).fill('1:a').join(',')}`, 'steps by hand']]) {
    const { state, problems } = parseHash(`#model=coreference&${hash}`);
    assert.equal(problems.length, 1, hash);
    assert.match(problems[0], new RegExp(`^${label}`), hash);
    assert.deepEqual(state.sgd, [], hash);
    assert.deepEqual(state.targets, [], hash);
  }
  assert.ok(LEARN_RATES.every((r) => parseHash(`#sgd=${r}:a`).state.sgd[0] === `${r}:a`));
});

test('another sentence, model or answer clears the steps by hand (and another sentence or model the answers); a view change keeps them', () => {
  const s = normalizeState({ model: 'coreference', sgd: ['1:1.0'], targets: ['7:5'] });
  const moved = applyPatch(s, { sentence: 'the dog slept .' }, null);
  assert.deepEqual([moved.sgd, moved.targets], [[], []]);
  assert.deepEqual(applyPatch(s, { targets: ['7:6'] }, null).sgd, []);
  const other = applyPatch(s, { model: 'language' }, null);
  assert.deepEqual([other.sgd, other.targets], [[], []]);
  const view = applyPatch(s, { step: 'dscale', query: 2, learnScale: false, lr: 0.1 }, null);
  assert.deepEqual([view.sgd, view.targets], [['1:1.0'], ['7:5']]);
  assert.deepEqual(applyPatch(s, { sgd: [] }, null).sgd, []);
});

test('withTarget sets, replaces and removes one position\'s answer; step texts round-trip', () => {
  assert.deepEqual(withTarget([], 7, 5), ['7:5']);
  assert.deepEqual(withTarget(['7:5', '2:1'], 7, -1), ['2:1', '7:-1']);
  assert.deepEqual(withTarget(['7:5', '2:1'], 7, null), ['2:1']);
  assert.deepEqual(parseSgdStep(sgdStepText(0.3, 'head', 1, 2)), { lr: 0.3, scope: 'head', layer: 1, head: 2 });
  assert.deepEqual(parseSgdStep(sgdStepText(10, 'all', 1, 2)), { lr: 10, scope: 'all' });
});
