// The Learn part (learn/learn.js) over a pretrained model's worker (sources/pretrained.js
// workerPort) on a stand-in for the worker's handle that logs
// every request: the steps by hand reach the worker before the backward after them,
// the targets are the trained weights' defaults with the picked ones over them (a step
// does not move them), a link's steps are undone and taken again as the state says,
// "every parameter" is every head of the layer on screen, the weights before the last
// step are traced by undoing it and taking it again, and a refusal is a note.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLearn, learnKey, idTexts } from '../../web/app/playground/learn/learn.js';
import { workerPort } from '../../web/app/playground/sources/pretrained.js';

/** A handle whose answers are made up; `log` lists the requests in the order the worker would get them. */
function fakeHandle({ T = 4, noDefaults = false } = {}) {
  const log = [];
  let steps = 0;
  const h = {
    log,
    info: { config: { layers: 2, heads: 2, vocab: 100, scale: true } },
    async backward({ targets, scale, layer }) {
      log.push(['backward', targets && targets.join(','), scale, layer, steps]);
      if (!targets && noDefaults) throw Object.assign(new RangeError('the sentence has no [MASK]: write [MASK], or give a target (--target POS:TOKEN)'), { code: 'bad_input' });
      // the defaults move with the weights, as BERT's top fill may
      return { loss: 10 - steps, scale: scale ?? true, defaults: Array.from({ length: T }, (_, i) => (i < T - 1 ? 10 + i + steps : -1)), steps };
    },
    async sgd({ targets, lr, layer, head }) {
      log.push(['sgd', targets.join(','), lr, layer, head]);
      steps++;
      return { steps };
    },
    async undo() {
      log.push(['undo']);
      steps--;
      return steps;
    },
    async rawTrace(sentence) {
      log.push(['trace', sentence]);
      return { tokens: new Array(T).fill({}) };
    },
  };
  return h;
}

const base = { model: 'hf:x/y', sentence: 'a b c d', targets: [], layer: 1, sgd: [], learnScale: true };

test('a step is taken on the trained weights\u2019 defaults, before the trace queued after it', async () => {
  const h = fakeHandle();
  const port = workerPort(h);
  const pl = createLearn(port);
  const s = { ...base, targets: ['1:50'], sgd: ['1:1.0'] };
  const synced = pl.sync(s);
  const traced = port.queue(() => h.rawTrace(s.sentence));
  assert.deepEqual(await synced, { applied: 1, problem: null });
  await traced;
  assert.deepEqual(h.log, [
    ['backward', null, null, 0, 0], // the defaults, on the trained weights
    ['sgd', '10,50,12,-1', 1, 1, 0], // the picked answer over them
    ['trace', 'a b c d'],
  ]);
});

test('compute: scale on and off, the weights before the last step by undo and the same step again; the targets stay the trained weights\u2019', async () => {
  const h = fakeHandle();
  const port = workerPort(h);
  const pl = createLearn(port);
  const s = { ...base, sgd: ['0.3:a'] };
  const v = await pl.compute(s);
  assert.equal(v.problem, null);
  assert.deepEqual(v.targets, [10, 11, 12, -1]);
  assert.deepEqual(h.log, [
    ['backward', null, null, 0, 0],
    ['sgd', '10,11,12,-1', 0.3, 1, -1], // "every parameter": every head of layer 1, the layer on screen
    ['backward', '10,11,12,-1', true, 1, 1],
    ['backward', '10,11,12,-1', false, 1, 1],
    ['undo'],
    ['backward', '10,11,12,-1', null, 1, 0],
    ['sgd', '10,11,12,-1', 0.3, 1, -1],
  ]);
  assert.equal(v.before.loss, 10);
  assert.equal(v.on.loss, 9);
  const L = pl.pick(v, s, idTexts(h.info.config.vocab, new Map([[10, ' b']])));
  assert.equal(L.bw, v.on);
  assert.equal(L.now, v.on);
  assert.equal(L.vocabulary[10], ' b');
  assert.equal(L.vocabulary[77], '#77', 'an id the trace did not name');
  assert.equal(pl.pick(v, { ...s, learnScale: false }).bw, v.off);
});

test('after a step computed on screen, the next state\u2019s "before" is the last answer, and an undo is one undo', async () => {
  const h = fakeHandle();
  const port = workerPort(h);
  const pl = createLearn(port);
  const v0 = await pl.compute(base);
  const s1 = { ...base, sgd: ['1:1.1'] };
  h.log.length = 0;
  const v1 = await pl.compute(s1);
  assert.deepEqual(h.log.map((x) => x[0]), ['sgd', 'backward', 'backward']);
  assert.equal(v1.before, v0.on);
  h.log.length = 0;
  const back = await pl.compute(base);
  assert.deepEqual(h.log.map((x) => x[0]), ['undo', 'backward', 'backward']);
  assert.equal(back.on.loss, v0.on.loss);
  assert.equal(back.before, null);
  assert.notEqual(learnKey(base), learnKey(s1));
});

test('another sentence puts the trained weights back before anything else', async () => {
  const h = fakeHandle();
  const port = workerPort(h);
  const pl = createLearn(port);
  await pl.sync({ ...base, sgd: ['1:0.0', '1:0.1'] });
  h.log.length = 0;
  await pl.sync({ ...base, sentence: 'e f g h' });
  assert.deepEqual(h.log, [['undo'], ['undo']]);
});

test('no answer of the model\u2019s own (BERT without [MASK]): a note without the CLI\u2019s flag; a picked answer is enough', async () => {
  const h = fakeHandle({ noDefaults: true });
  const port = workerPort(h);
  const pl = createLearn(port);
  const v = await pl.compute(base);
  assert.match(v.problem, /^the sentence has no \[MASK\]: write \[MASK\]\. Pick a word as the answer/);
  assert.doesNotMatch(v.problem, /--target/);
  assert.deepEqual(v.defaults, [-1, -1, -1, -1]);
  assert.equal(pl.pick(v, base).bw, null);
  const picked = await pl.compute({ ...base, targets: ['2:7'] });
  assert.equal(picked.problem, null);
  assert.deepEqual(picked.targets, [-1, -1, 7, -1]);
});

test('a step the model cannot take: how many were applied and why', async () => {
  const h = fakeHandle();
  const port = workerPort(h);
  const pl = createLearn(port);
  const r = await pl.sync({ ...base, sgd: ['1:0.0', '1:5.0'] });
  assert.deepEqual(r, { applied: 1, problem: 'step 2 names layer 6, head 1, which this model does not have' });
});
