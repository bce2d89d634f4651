// The training lab's worker: it owns the engine and the Trainer, trains in
// chunks of about CHUNK_MS and yields to its message queue between chunks, so
// a pause takes effect after at most one chunk and the page never waits for it.
// It posts small messages a few times a second (never a whole trace per step).
//
// Page → worker (every message may carry gen, the model generation the page expects):
//   {type: 'init', gen, settings, target}  new Trainer from settings (engine.createTrainer);
//                                          target > 0: train to that step, then pause (a link catching up)
//   {type: 'load', gen, bytes, name, corpus, probeText} new Trainer from a .safetensors checkpoint
//                                          (engine.loadTrainer; corpus: the text a text model goes on training on;
//                                          probeText: what a text model without its text is probed on)
//   {type: 'play', target?}  {type: 'pause'}  {type: 'step', n}
//   {type: 'ablate', heads: [[layer, head]]}  heads whose output the evaluations and predictions zero
//   {type: 'pace', stepsPerSecond}         free training (no target) at about that many steps/s, at most
//                                          WATCH_CHUNK steps a report (0: full speed; a link's catch-up is always full speed)
//   {type: 'save', purpose}                → {type: 'saved', purpose, bytes, step}
// Worker → page:
//   {type: 'ready', tasks}                 the engine started (tasks: engine.tasks())
//   {type: 'memory', gen, memory}          before each 'init' builds its model: engine.estimateTrainingMemory
//                                          ({bytes, limitBytes, fits, parts, message}), null for settings it cannot read
//   {type: 'model', gen, settings, config, vocabulary, parameterCount, hasTask, step, probe, keys, cap, name?,
//                      textProblem?}  (textProblem: why a text model could not take the lab's text)
//   {type: 'progress', gen, step, target, running, stepsPerSecond, train: [[step, loss, accuracy]],
//                      heldout?: {step, loss, accuracy, samples}, ablation?, live, snapshots, cap}
//                      (heldout/ablation only when a live evaluation was due: at most 1/EVAL_SHARE of the time)
//   {type: 'paused', gen, step, heldout, ablation, headScores, live}   after the bigger final evaluation
//   {type: 'ablation', gen, step, ablation, heldout}   reply to 'ablate' while paused (FINAL_SAMPLES sequences)
//   {type: 'saved', gen, purpose, step, settings, bytes}
//   {type: 'error', gen, where, message, code, step, running, hasModel, requestGen?}
//                                          where: 'engine' | 'settings' | 'train' | 'load' | 'save' | 'ablate' | …;
//                                          step, running: the worker's state after the error (training has
//                                          stopped unless running says otherwise); a refused 'load' keeps the
//                                          model it had (gen: its generation, requestGen: the load's)
// The worker never throws uncaught: every message and the training loop are wrapped, and
// any error becomes an 'error' reply.
// A probe message ("live", each snapshot) is {step, maps: [Float32Array T×T per layer·head],
// scores: [{key: score}], predictions: Int32Array, correct: [true|false|null]}.

import { createEngine } from '../../engine.js';
import { snapshotCap, isSnapshotStep, nextSnapshotStep } from './timeline.js';

const CHUNK_MS = 40;
const TICK_MS = 300;
const EARLY_STEPS = 300;
const RENDER_PAUSE_MS = 25;
const EARLY_EVERY = 10;
const LIVE_SAMPLES = 64;
/** Live evaluations take at most about 1/EVAL_SHARE of the worker's time. */
const EVAL_SHARE = 6;
const FINAL_SAMPLES = 1024;
const SCORE_SAMPLES = 256;
/** Most steps between two reports when the pace is set ("watchable"): the maps change a little each frame. */
const WATCH_CHUNK = 3;

let engine = null;
let trainer = null;
/** Probe options for a model without its task (a text model loaded without its text): {text}. */
let probeOptions = {};
let gen = 0;
let running = false;
let target = null;
let ablate = [];
let cap = 200;
let perStepMs = 1;
let loopId = 0;
let rate = [];
/** Steps per second of free training; 0 = full speed. */
let pace = 0;
let paceStart = null; // [time, step] the pace counts from

const post = (msg, transfer = []) => self.postMessage(msg, transfer);
const errorText = (e) => String(e?.message ?? e);

/** The 'error' reply: what failed, and the state the worker is in after it. */
function postError(where, e, extra = {}) {
  post({
    type: 'error', gen, where, message: errorText(e), code: e?.code ?? null,
    step: trainer?.stepCount ?? 0, running, hasModel: Boolean(trainer), ...extra,
  });
}

// A macrotask without the 4 ms clamp of nested timers: lets queued messages (pause) run.
const channel = new MessageChannel();
const waiting = [];
channel.port1.onmessage = () => waiting.shift()?.();
const yieldToQueue = () => new Promise((resolve) => {
  waiting.push(resolve);
  channel.port2.postMessage(0);
});

async function start() {
  try {
    engine = await createEngine();
    if (typeof engine.createTrainer !== 'function') throw new Error('this build of the engine has no training API (createTrainer); rebuild it with ./build_wasm.sh');
    post({ type: 'ready', tasks: engine.tasks() });
  } catch (e) {
    postError('engine', e);
  }
}

// ---- probes and snapshots ----------------------------------------------------------

/** The top-left n×n block of a T×T row-major matrix (the probe's real tokens; padding dropped). */
function crop(m, n) {
  if (m.rows === n && m.cols === n) return m.data.slice();
  const out = new Float32Array(n * n);
  for (let i = 0; i < n; i++) out.set(m.data.subarray(i * m.cols, i * m.cols + n), i * n);
  return out;
}

/** The probe at the current step as a small message (+ the buffers to transfer). */
function probeMessage(options = {}, t = trainer, base = probeOptions) {
  const p = t.probe({ ...base, ...options });
  const n = p.length;
  const maps = [];
  const scores = [];
  for (const layer of p.layers) {
    for (const head of layer.heads) {
      maps.push(crop(head.weights, n));
      scores.push(head.scores);
    }
  }
  return {
    probe: p,
    msg: { step: t.stepCount, maps, scores, predictions: Int32Array.from(p.predictions.subarray(0, n)), correct: Array.from(p.correct).slice(0, n) },
  };
}

const buffersOf = (m) => [...m.maps.map((x) => x.buffer), m.predictions.buffer];

/** The 'model' message of trainer t probed with options (throws when t cannot be probed: then it is not adopted). */
function modelMessage(t, name, options = {}) {
  const { probe, msg } = probeMessage({}, t, options);
  const n = probe.length;
  return {
    message: {
      type: 'model',
      gen,
      name,
      settings: t.settings,
      config: t.config,
      vocabulary: t.vocabulary,
      parameterCount: t.parameterCount,
      hasTask: t.hasTask !== false,
      step: t.stepCount,
      cap: snapshotCap(msg.maps.length * n * n * 4 + n * 4),
      probe: {
        tokens: Array.from(probe.tokens).slice(0, n),
        ids: Array.from(probe.ids).slice(0, n),
        targets: Array.from(probe.targets).slice(0, n),
        length: n,
        rows: n,
      },
      keys: probe.keys.map((k) => ({ name: k.name, data: crop(k.key, n) })),
      live: msg,
    },
    transfer: buffersOf(msg),
  };
}

function evaluate(samples, heads = []) {
  const r = trainer.evaluate(heads.length ? { samples, ablate: heads } : { samples });
  return { step: trainer.stepCount, loss: r.loss, accuracy: r.accuracy, targets: r.targets, samples };
}

function ablationReport(samples) {
  if (!ablate.length || !trainer.hasTask) return null;
  const r = evaluate(samples, ablate);
  const { msg } = probeMessage({ ablate });
  return { step: r.step, heads: ablate, accuracy: r.accuracy, loss: r.loss, samples, predictions: Array.from(msg.predictions), correct: msg.correct };
}

function stepsPerSecond() {
  if (rate.length < 2) return 0;
  const [t0, s0] = rate[0];
  const [t1, s1] = rate[rate.length - 1];
  return t1 > t0 ? ((s1 - s0) * 1000) / (t1 - t0) : 0;
}

function noteRate(now, step) {
  rate.push([now, step]);
  while (rate.length > 2 && now - rate[0][0] > 1500) rate.shift();
}

let nextEvalAt = 0;

/** The live held-out evaluation, when it is due (its cost is bounded by EVAL_SHARE). */
function liveEvaluation() {
  const now = performance.now();
  if (now < nextEvalAt || !trainer.hasTask) return null;
  const heldout = evaluate(LIVE_SAMPLES);
  const ablation = ablationReport(LIVE_SAMPLES);
  const spent = performance.now() - now;
  nextEvalAt = performance.now() + Math.max(TICK_MS, EVAL_SHARE * spent) - TICK_MS / 2;
  return { heldout, ablation };
}

let pendingTrain = [];
let pendingSnapshots = [];

function sendProgress() {
  const { msg } = probeMessage();
  const snapshots = pendingSnapshots;
  pendingSnapshots = [];
  const train = pendingTrain;
  pendingTrain = [];
  post({
    type: 'progress',
    gen,
    step: trainer.stepCount,
    target,
    running,
    stepsPerSecond: stepsPerSecond(),
    train,
    ...liveEvaluation(),
    live: msg,
    snapshots,
    cap,
  }, [...buffersOf(msg), ...snapshots.flatMap(buffersOf)]);
}

function sendPaused() {
  const { msg } = probeMessage();
  let headScores = null;
  try {
    if (trainer.hasTask) headScores = trainer.headScores(SCORE_SAMPLES);
  } catch {
    headScores = null;
  }
  const snapshots = pendingSnapshots;
  pendingSnapshots = [];
  const train = pendingTrain;
  pendingTrain = [];
  post({
    type: 'paused',
    gen,
    step: trainer.stepCount,
    target,
    train,
    snapshots,
    heldout: trainer.hasTask ? evaluate(FINAL_SAMPLES) : null,
    ablation: ablationReport(FINAL_SAMPLES),
    headScores,
    live: msg,
    cap,
  }, [...buffersOf(msg), ...snapshots.flatMap(buffersOf)]);
}

function snapshotIfDue() {
  if (isSnapshotStep(trainer.stepCount, cap)) pendingSnapshots.push(probeMessage().msg);
}

/** n steps, cut at the next snapshot step (so every snapshot step is visited). */
function chunk(n) {
  const s = trainer.stepCount;
  let k = Math.min(n, nextSnapshotStep(s, cap) - s);
  if (target != null) k = Math.min(k, target - s);
  if (k <= 0) return null;
  const t0 = performance.now();
  const report = trainer.step(k);
  const dt = performance.now() - t0;
  perStepMs = 0.7 * perStepMs + 0.3 * (dt / k);
  pendingTrain.push([report.step, report.loss, report.accuracy]);
  snapshotIfDue();
  return report;
}

/** After a failure: training stops, the page hears what failed and, when the model can
 * still be probed, gets the 'paused' report of where it stopped. */
function stopOnError(where, e) {
  running = false;
  target = null;
  postError(where, e);
  try {
    if (trainer) sendPaused();
  } catch {
    // the error reply has said what happened; the page stays usable without this report
  }
}

async function loop() {
  const id = ++loopId;
  try {
    let lastTick = performance.now();
    let lastTickStep = trainer.stepCount;
    rate = [[lastTick, trainer.stepCount]];
    paceStart = null;
    while (running && id === loopId) {
      if (target != null && trainer.stepCount >= target) break;
      let want = Math.max(1, Math.min(5000, Math.round(CHUNK_MS / Math.max(perStepMs, 1e-3))));
      const paced = pace > 0 && target == null;
      if (paced) {
        // watchable: the steps due at `pace` steps/s since the pace started, WATCH_CHUNK at most, then a report
        const t = performance.now();
        if (!paceStart) paceStart = [t, trainer.stepCount];
        const due = Math.floor(((t - paceStart[0]) * pace) / 1000) - (trainer.stepCount - paceStart[1]);
        if (due <= 0) {
          await new Promise((resolve) => setTimeout(resolve, 1000 / pace));
          continue;
        }
        want = Math.min(due, WATCH_CHUNK);
      } else paceStart = null;
      chunk(want);
      const now = performance.now();
      noteRate(now, trainer.stepCount);
      // early in a run the curves change fastest: report at least every EARLY_EVERY steps there
      const s = trainer.stepCount;
      if (paced || now - lastTick >= TICK_MS || (s < EARLY_STEPS && s - lastTickStep >= EARLY_EVERY)) {
        lastTick = now;
        lastTickStep = s;
        sendProgress();
        // leave the core to the page while it draws this report (on a 2-core machine the
        // page's frame otherwise waits for the CPU): costs RENDER_PAUSE_MS per TICK_MS
        await new Promise((resolve) => setTimeout(resolve, RENDER_PAUSE_MS));
      }
      await yieldToQueue();
    }
    if (id !== loopId) return;
    running = false;
    if (target != null && trainer.stepCount >= target) target = null;
    sendPaused();
  } catch (e) {
    if (id === loopId) stopOnError('train', e);
  }
}

function play(newTarget = null) {
  if (!trainer || !trainer.hasTask) return;
  target = newTarget;
  if (running) return;
  running = true;
  loop();
}

// ---- messages ------------------------------------------------------------------------

/** What the settings need in memory, or null when they are wrong in another way (createTrainer then says how). */
function memoryEstimate(settings) {
  try {
    return engine.estimateTrainingMemory(settings);
  } catch {
    return null;
  }
}

function stopTraining() {
  running = false;
  loopId += 1;
  target = null;
  pendingTrain = [];
  pendingSnapshots = [];
}

/** Makes t the worker's trainer (its 'model' message already made: t can be shown). */
function adopt(t, described, options) {
  stopTraining();
  if (trainer && trainer !== t) trainer.dispose();
  trainer = t;
  probeOptions = options;
  ablate = [];
  perStepMs = 1;
  cap = described.message.cap;
  post(described.message, described.transfer);
  snapshotIfDue();
}

/** Probe options for a model loaded without its task: a text model reads the
 * first words of `text` that fit its context; any other such model cannot be shown. */
function probeOptionsFor(t, text) {
  if (t.hasTask) return {};
  if (t.settings.task !== 'text') {
    throw new Error('the file names no task, so the lab cannot tell what to show the model on (files saved by the lab or by attn train name theirs)');
  }
  const words = text.split(/\s+/).filter(Boolean);
  for (let k = Math.min(words.length, t.config.context); k >= 1; k = Math.floor(k * 0.75)) {
    const options = { text: words.slice(0, k).join(' ') };
    try {
      t.probe(options);
      return options;
    } catch (e) {
      if (e.code !== 'too_long_for_model') throw e;
    }
  }
  throw new Error('no word of the text fits this model\'s context');
}

/** A trainer from a checkpoint: with the lab's text when the model trains on it, else
 * without (a text model whose words differ from the text is shown, not trained). */
function loadCheckpoint(bytes, corpus) {
  if (corpus) {
    try {
      return { t: engine.loadTrainer(bytes, { corpus }), textProblem: null };
    } catch (e) {
      return { t: engine.loadTrainer(bytes), textProblem: errorText(e) };
    }
  }
  return { t: engine.loadTrainer(bytes), textProblem: null };
}

/** The previous list back when a new one cannot be evaluated (a head the model lacks). */
function setAblate(heads) {
  const { layers, heads: perLayer } = trainer.config;
  for (const [l, h] of heads) {
    if (!(Number.isInteger(l) && Number.isInteger(h) && l >= 0 && h >= 0 && l < layers && h < perLayer)) {
      throw new RangeError(`head ${l}-${h} is not in this model of ${layers} layers \u00d7 ${perLayer} heads`);
    }
  }
  ablate = heads;
}

const handlers = {
  init(m) {
    gen = m.gen;
    stopTraining();
    post({ type: 'memory', gen, memory: memoryEstimate(m.settings) });
    let next = null;
    try {
      next = engine.createTrainer(m.settings);
      adopt(next, modelMessage(next, undefined), {});
    } catch (e) {
      // the settings shown have no model: the old one goes too, nothing may act on it
      if (next && next !== trainer) next.dispose();
      trainer?.dispose();
      trainer = null;
      postError('settings', e);
      return;
    }
    if (m.target > 0) play(m.target);
    else sendPaused();
  },
  load(m) {
    const kept = gen;
    gen = m.gen;
    let t = null;
    try {
      const loaded = loadCheckpoint(new Uint8Array(m.bytes), m.corpus ?? '');
      t = loaded.t;
      const options = probeOptionsFor(t, m.probeText ?? '');
      const described = modelMessage(t, m.name, options);
      described.message.textProblem = loaded.textProblem;
      adopt(t, described, options);
    } catch (e) {
      // refused: the model the worker had (and its training, if it was running) is unchanged
      if (t && t !== trainer) t.dispose();
      gen = kept;
      postError('load', e, { requestGen: m.gen });
      return;
    }
    sendPaused();
  },
  play(m) {
    play(m.target ?? null);
  },
  pause() {
    running = false;
  },
  pace(m) {
    const r = Number(m.stepsPerSecond);
    pace = Number.isFinite(r) && r > 0 ? Math.min(r, 1000) : 0;
    paceStart = null;
  },
  step(m) {
    if (!trainer || running) return;
    target = null;
    try {
      const goal = trainer.stepCount + (m.n ?? 1);
      while (trainer.stepCount < goal) chunk(goal - trainer.stepCount);
    } catch (e) {
      stopOnError('train', e);
      return;
    }
    sendPaused();
  },
  ablate(m) {
    if (!trainer) {
      ablate = m.heads ?? [];
      return;
    }
    try {
      setAblate(m.heads ?? []);
    } catch (e) {
      postError('ablate', e, { heads: ablate }); // refused: the heads ablated before stay (sent back), training goes on
      return;
    }
    if (!running && trainer.hasTask) {
      const report = ablationReport(FINAL_SAMPLES);
      post({ type: 'ablation', gen, step: trainer.stepCount, ablation: report, heldout: evaluate(FINAL_SAMPLES) });
    }
  },
  save(m) {
    if (!trainer) return;
    const bytes = trainer.save();
    post({ type: 'saved', gen, purpose: m.purpose, step: trainer.stepCount, settings: trainer.settings, bytes }, [bytes.buffer]);
  },
};

self.onmessage = (event) => {
  const m = event.data;
  if (!engine) {
    postError('engine', new Error('the engine has not started yet'));
    return;
  }
  const handler = Object.hasOwn(handlers, m?.type) ? handlers[m.type] : null;
  if (!handler) {
    postError('protocol', new Error(`unknown message ${m?.type}`));
    return;
  }
  try {
    handler(m);
  } catch (e) {
    // an unexpected failure: training stops, and the page hears what happened
    if (running) stopOnError(m.type, e);
    else postError(m.type, e);
  }
};

start();
