// The training lab's worker (web/app/train/worker.js) in a Node worker thread,
// spoken to as the page does: it never throws uncaught, and every request that
// fails gets an 'error' reply with the state it left (its step, whether it still
// trains), after which it goes on working. Waits on replies, never on time.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { createEngine } from '../../web/engine.js';
import { poisonedReverse, withoutMetadata } from './checkpoints.mjs';

const WORKER_URL = new URL('../../web/app/train/worker.js', import.meta.url).href;
// the page's side of a dedicated worker: self.postMessage out, self.onmessage in
const shim = `
  const { parentPort } = require('node:worker_threads');
  globalThis.self = { postMessage: (m, transfer) => parentPort.postMessage(m, transfer) };
  parentPort.on('message', (data) => self.onmessage({ data }));
  import(${JSON.stringify(WORKER_URL)});
`;
const thread = new Worker(shim, { eval: true });
const crashes = [];
const replies = [];
const waiting = [];
// an uncaught error ends the thread: every wait fails with it instead of hanging
thread.on('error', (e) => {
  crashes.push(e);
  for (const w of waiting.splice(0)) w.reject(new Error(`the worker threw uncaught: ${e.message}`));
});
thread.on('message', (m) => {
  replies.push(m);
  for (const w of [...waiting]) if (w.match(m)) { waiting.splice(waiting.indexOf(w), 1); w.resolve(m); }
});
after(() => thread.terminate());

/** The next reply (from now on) for which match(reply) is true. */
function next(match) {
  if (crashes.length) return Promise.reject(new Error(`the worker threw uncaught: ${crashes[0].message}`));
  return new Promise((resolve, reject) => waiting.push({ match, resolve, reject }));
}
const send = (m) => thread.postMessage(m);

const engine = await createEngine();
await (replies.some((r) => r.type === 'ready') ? null : next((r) => r.type === 'ready'));
let gen = 0;

async function init(settings, target = 0) {
  gen += 1;
  const paused = next((r) => r.type === 'paused' && r.gen === gen);
  send({ type: 'init', gen, settings, target });
  return paused;
}

test('a request that fails while paused gets an error reply, and the worker goes on', async () => {
  await init({ task: 'reverse', layers: 1, heads: 2, dModel: 16 });
  const error = next((r) => r.type === 'error');
  send({ type: 'ablate', heads: [[99, 0]] });
  const e = await error;
  assert.equal(e.where, 'ablate');
  assert.match(e.message, /head 99-0 is not in this model/);
  assert.equal(e.running, false);
  assert.equal(e.step, 0);
  const unknown = next((r) => r.type === 'error');
  send({ type: 'juggle' });
  assert.equal((await unknown).where, 'protocol');
  const stepped = next((r) => r.type === 'paused');
  send({ type: 'step', n: 3 });
  assert.equal((await stepped).step, 3);
  const ablation = next((r) => r.type === 'ablation');
  send({ type: 'ablate', heads: [[0, 1]] });
  assert.deepEqual((await ablation).ablation.heads, [[0, 1]], 'the heads it was last given that exist');
  assert.deepEqual(crashes, []);
});

test('a request that fails while training is refused and training goes on; pause then stops it', async () => {
  await init({ task: 'reverse', layers: 1, heads: 2, dModel: 16 });
  const progress = next((r) => r.type === 'progress' && r.step >= 20);
  send({ type: 'play' });
  await progress;
  const error = next((r) => r.type === 'error');
  send({ type: 'ablate', heads: [[0, 7]] });
  const e = await error;
  assert.equal(e.running, true, 'still training');
  const later = await next((r) => r.type === 'progress' && r.step > e.step);
  assert.ok(later.running);
  const paused = next((r) => r.type === 'paused');
  send({ type: 'pause' });
  const p = await paused;
  assert.ok(p.step >= later.step && p.heldout.samples > 0);
  assert.deepEqual(crashes, []);
});

test('training that leaves the weights the lab can show stops with an error reply naming the step, and the worker goes on', async () => {
  // w_key just inside ±1e6 (the range probe and trace accept) with lr 10: the first updates
  // carry it out; the engine stops there (or the probe refuses the weights): either way
  // the reply says where training stopped and the worker is not left "running"
  const bytes = poisonedReverse(engine, 1e6 - 5);
  gen += 1;
  const loaded = next((r) => (r.type === 'paused' || r.type === 'error') && (r.gen === gen || r.requestGen === gen));
  send({ type: 'load', gen, bytes: bytes.buffer, name: 'edge.safetensors', corpus: '', probeText: '' }, [bytes.buffer]);
  assert.equal((await loaded).type, 'paused', 'the file loads and is shown');
  const error = next((r) => r.type === 'error');
  send({ type: 'play' });
  const e = await error;
  assert.equal(e.where, 'train');
  assert.equal(e.running, false);
  assert.ok(Number.isInteger(e.step) && e.step >= 0);
  assert.ok(e.message.length > 20 && e.code, `a coded message: ${e.code}: ${e.message}`);
  // pause and step are answered (not ignored as if still running)
  const answered = next((r) => r.type === 'paused' || r.type === 'error');
  send({ type: 'step', n: 1 });
  await answered;
  // and the worker goes on: a fresh model trains
  const fresh = await init({ task: 'reverse', layers: 1, heads: 2, dModel: 16 });
  assert.equal(fresh.step, 0);
  const stepped = next((r) => r.type === 'paused');
  send({ type: 'step', n: 1 });
  assert.equal((await stepped).step, 1);
  assert.deepEqual(crashes, []);
});

test('a text model without its text is shown on the probe text; a file naming no task is refused and the model kept', async () => {
  const corpus = 'the cat sat on the mat . the dog sat on the log . '.repeat(40);
  const lm = engine.createTrainer({ task: 'text', corpus, length: 8, maxVocab: 20 });
  lm.step(2);
  const bytes = lm.save();
  lm.dispose();
  gen += 1;
  const model = next((r) => r.type === 'model' && r.gen === gen);
  const paused = next((r) => r.type === 'paused' && r.gen === gen);
  send({ type: 'load', gen, bytes: bytes.buffer, name: 'lm.safetensors', corpus: '', probeText: 'the dog sat on the mat . '.repeat(10) }, [bytes.buffer]);
  const m = await model;
  assert.equal(m.hasTask, false);
  assert.ok(m.probe.length > 0 && m.probe.length <= m.config.context);
  assert.deepEqual(m.probe.tokens.slice(0, 3), ['the', 'dog', 'sat']);
  assert.ok(m.keys.some((k) => k.name === 'previous-token'));
  assert.equal((await paused).heldout, null, 'no held-out set without the text');
  send({ type: 'play' }); // nothing to train on: play does nothing
  const refusedStep = next((r) => r.type === 'error');
  send({ type: 'step', n: 1 });
  const stepError = await refusedStep;
  assert.equal(stepError.where, 'train');
  assert.match(stepError.message, /text that is not loaded/);
  assert.equal(stepError.step, 2);
  send({ type: 'ablate', heads: [[0, 0]] });
  const saved = next((r) => r.type === 'saved' || r.type === 'error');
  send({ type: 'save', purpose: 'download' });
  assert.equal((await saved).type, 'saved');

  // without a task, not text: refused, and the text model stays
  const t = engine.createTrainer({ task: 'copy' });
  const raw = t.save();
  t.dispose();
  const file = withoutMetadata(raw, 'task');
  const kept = gen;
  gen += 1;
  const refused = next((r) => r.type === 'error');
  send({ type: 'load', gen, bytes: file.buffer, name: 'no-task.safetensors', corpus: '', probeText: 'a b c' }, [file.buffer]);
  const e = await refused;
  assert.equal(e.where, 'load');
  assert.match(e.message, /names no task/);
  assert.equal(e.gen, kept, 'the worker keeps the generation of the model it kept');
  assert.equal(e.requestGen, gen);
  gen = kept;
  const again = next((r) => r.type === 'saved');
  send({ type: 'save', purpose: 'download' });
  const s = await again;
  assert.equal(s.settings.task, 'text', 'the text model is still the worker\'s');
  assert.deepEqual(crashes, []);
});
