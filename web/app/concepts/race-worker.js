// The concept lab's race worker: owns the engine and the races' trainers. It
// steps the two arms of a race alternately in small chunks (so their curves
// advance together), evaluates at the race's fixed steps (so a replay gives
// the same numbers), yields to its message queue between chunks (so a pause
// takes effect within one chunk) and posts small messages a few times a second.
//
// Page → worker:
//   {type: 'run', key, gen, race, options: {seed, variant}, until, finish}
//        train to `until` (creating the run, or continuing it), then stop; at
//        `finish` the bigger final evaluation is added. A run of another
//        generation (the page restarted it) or already past `until` is dropped
//        and replayed from step 0. Every message back carries the run's gen.
//   {type: 'pause', key}     stop after the current chunk
//   {type: 'drop', key}      free the run's trainers
// Worker → page:
//   {type: 'ready'}
//   {type: 'progress', key, gen, step, running, rows: [[row…] per arm], evals: [eval…], live, elapsed, stepMs}
//        rows and evals are the ones since the previous message; live is the probe now
//   {type: 'stopped', key, gen, step, finished, final, rows, evals, live, elapsed, stepMs}
//   {type: 'error', key, message}

import { createEngine } from '../../engine.js';
import { createRaceRun, RACES } from './races.js';

const CHUNK_MS = 50; // per arm, per round
const TICK_MS = 250;
const RENDER_PAUSE_MS = 15;

let engine = null;
const queue = []; // messages that arrived before the engine started
const runs = new Map(); // key → {run, rows, evals, elapsed, perStep, final}
let active = null; // {key, until, finish, stop}
let loopId = 0;

const post = (m) => self.postMessage(m);
const errorText = (e) => String(e?.message ?? e);

// A macrotask without the 4 ms clamp of nested timers: lets queued messages (pause) run.
const channel = new MessageChannel();
const waiting = [];
channel.port1.onmessage = () => waiting.shift()?.();
const yieldToQueue = () => new Promise((resolve) => {
  waiting.push(resolve);
  channel.port2.postMessage(0);
});
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function entryFor(key, gen, race, options) {
  let e = runs.get(key);
  if (e) return e;
  const run = createRaceRun(engine, race, options);
  e = { key, gen, race, run, rows: Array.from({ length: run.trainers }, () => []), evals: [run.evaluate()], elapsed: 0, perStep: 1, final: null };
  runs.set(key, e);
  return e;
}

function drop(key) {
  const e = runs.get(key);
  if (!e) return;
  if (active?.key === key) {
    active = null;
    loopId += 1;
  }
  e.run.dispose();
  runs.delete(key);
}

/** What has not been posted yet (and forget it). */
function take(e) {
  const rows = e.rows;
  const evals = e.evals;
  e.rows = rows.map(() => []);
  e.evals = [];
  return { rows, evals };
}

function message(type, e, extra = {}) {
  let live = null;
  try {
    live = e.run.live();
  } catch (err) {
    live = null;
  }
  return { type, key: e.key, gen: e.gen, step: e.run.step, ...take(e), live, elapsed: e.elapsed, stepMs: e.run.stepMs, ...extra };
}

async function loop(e, until, finish) {
  const id = ++loopId;
  const def = RACES[e.race];
  active = { key: e.key, until, finish };
  let lastTick = performance.now();
  let started = performance.now();
  let failed = false;
  while (id === loopId && e.run.step < until) {
    const s = e.run.step;
    const mark = (Math.floor(s / def.evalEvery) + 1) * def.evalEvery;
    const want = Math.max(1, Math.round(CHUNK_MS / Math.max(e.perStep, 0.05)));
    const k = Math.min(want, mark - s, until - s);
    try {
      const t0 = performance.now();
      for (let i = 0; i < e.run.trainers; i++) e.rows[i].push(...e.run.advance(i, k));
      e.perStep = 0.7 * e.perStep + 0.3 * ((performance.now() - t0) / (k * e.run.trainers));
      if (e.run.step % def.evalEvery === 0) e.evals.push(e.run.evaluate());
    } catch (err) {
      failed = true;
      post({ type: 'error', key: e.key, gen: e.gen, message: errorText(err) });
      break;
    }
    const now = performance.now();
    e.elapsed += now - started;
    started = now;
    if (now - lastTick >= TICK_MS) {
      lastTick = now;
      post(message('progress', e, { running: true }));
      // leave the core to the page while it draws (on a 2-core machine the frame otherwise waits)
      await sleep(RENDER_PAUSE_MS);
      started = performance.now();
    }
    await yieldToQueue();
    started = performance.now();
  }
  if (id !== loopId) return; // dropped, or replaced by another run
  active = null;
  if (failed) return;
  const t0 = performance.now();
  if (e.run.step >= finish && e.final?.step !== e.run.step) {
    try {
      e.final = e.run.final();
    } catch (err) {
      post({ type: 'error', key: e.key, gen: e.gen, message: errorText(err) });
    }
  }
  e.elapsed += performance.now() - t0;
  post(message('stopped', e, { finished: e.run.step >= finish, final: e.run.step >= finish ? e.final : null }));
}

function handle(m) {
  switch (m.type) {
    case 'run': {
      let e = runs.get(m.key);
      if (e && (e.gen !== m.gen || e.run.step > m.until)) {
        drop(m.key);
        e = null;
      }
      try {
        e = entryFor(m.key, m.gen, m.race, m.options);
      } catch (err) {
        post({ type: 'error', key: m.key, gen: m.gen, message: errorText(err) });
        return;
      }
      if (active && active.key !== m.key) {
        const other = runs.get(active.key);
        loopId += 1; // stops the other loop at its next chunk
        active = null;
        if (other) post(message('stopped', other, { finished: false, final: null }));
      }
      loop(e, m.until, m.finish); // replaces a loop of the same run that is still going
      break;
    }
    case 'pause':
      if (active?.key === m.key) {
        loopId += 1;
        active = null;
        const e = runs.get(m.key);
        if (e) post(message('stopped', e, { finished: false, final: null }));
      }
      break;
    case 'drop':
      drop(m.key);
      break;
    default:
      post({ type: 'error', key: m.key ?? null, message: `unknown message ${m.type}` });
  }
}

self.onmessage = (event) => {
  if (!engine) queue.push(event.data);
  else handle(event.data);
};

createEngine().then((e) => {
  if (typeof e.createTrainer !== 'function') throw new Error('this build of the engine has no training API (createTrainer)');
  engine = e;
  post({ type: 'ready' });
  while (queue.length) handle(queue.shift());
}).catch((e) => post({ type: 'error', key: null, message: errorText(e) }));
