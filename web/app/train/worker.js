// The training lab's worker: it owns the engine and the Trainer, trains in
// chunks of about 40 ms and yields to its message queue between chunks, so
// a pause takes effect after at most one chunk and the page never waits for it.
// It posts small messages a few times a second (never a whole trace per step).
// Its state is one object (`worker` below); the model and its training are a
// TrainingRun (training-run.js) that each 'init' or 'load' replaces whole.
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
// (WATCH_CHUNK, EVAL_SHARE, FINAL_SAMPLES: training-run.js.)

import { createEngine } from '../../engine.js';
import { TrainingRun } from './training-run.js';
import { modelMessage } from './probe-messages.js';

const post = (msg, transfer = []) => self.postMessage(msg, transfer);
const errorText = (e) => String(e?.message ?? e);

/** The worker's state. engine: set once started; gen: the model generation the page expects
 * (its last 'init', or its last 'load' that was not refused); pace: the steps per second of
 * free training the page asked for (0 = full speed), kept across models; nextEvalAt: when a
 * live evaluation may run again (the budget is of the worker's time, across models); run: the
 * model and its training (a TrainingRun), null before the first model or after a refused 'init'. */
const worker = { engine: null, gen: 0, pace: 0, nextEvalAt: 0, run: null, post, postError };

/** The 'error' reply: what failed, and the state the worker is in after it. */
function postError(where, e, extra = {}) {
  const { run } = worker;
  post({
    type: 'error', gen: worker.gen, where, message: errorText(e), code: e?.code ?? null,
    step: run?.trainer.stepCount ?? 0, running: run?.running ?? false, hasModel: Boolean(run), ...extra,
  });
}

async function start() {
  try {
    worker.engine = await createEngine();
    if (typeof worker.engine.createTrainer !== 'function') throw new Error('this build of the engine has no training API (createTrainer); rebuild it with ./build_wasm.sh');
    post({ type: 'ready', tasks: worker.engine.tasks() });
  } catch (e) {
    postError('engine', e);
  }
}

// ---- models --------------------------------------------------------------------------

/** What the settings need in memory, or null when they are wrong in another way (createTrainer then says how). */
function memoryEstimate(settings) {
  try {
    return worker.engine.estimateTrainingMemory(settings);
  } catch {
    return null;
  }
}

/** Makes t the worker's model, in a new TrainingRun (its 'model' message already made: t can be shown). */
function adopt(t, described, probeOptions) {
  const old = worker.run;
  old?.stop();
  if (old && old.trainer !== t) old.trainer.dispose();
  worker.run = new TrainingRun(worker, t, { probeOptions, cap: described.message.cap });
  post(described.message, described.transfer);
  worker.run.snapshotIfDue();
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
  const { engine } = worker;
  if (corpus) {
    try {
      return { t: engine.loadTrainer(bytes, { corpus }), textProblem: null };
    } catch (e) {
      return { t: engine.loadTrainer(bytes), textProblem: errorText(e) };
    }
  }
  return { t: engine.loadTrainer(bytes), textProblem: null };
}

// ---- messages ------------------------------------------------------------------------

const handlers = {
  init(m) {
    worker.gen = m.gen;
    worker.run?.stop();
    post({ type: 'memory', gen: worker.gen, memory: memoryEstimate(m.settings) });
    let next = null;
    try {
      next = worker.engine.createTrainer(m.settings);
      adopt(next, modelMessage(next, { gen: worker.gen, name: undefined, options: {} }), {});
    } catch (e) {
      // the settings shown have no model: the old one goes too, nothing may act on it
      if (next && next !== worker.run?.trainer) next.dispose();
      worker.run?.trainer.dispose();
      worker.run = null;
      postError('settings', e);
      return;
    }
    if (m.target > 0) worker.run.play(m.target);
    else worker.run.sendPaused();
  },
  load(m) {
    const kept = worker.gen;
    worker.gen = m.gen;
    let t = null;
    try {
      const loaded = loadCheckpoint(new Uint8Array(m.bytes), m.corpus ?? '');
      t = loaded.t;
      const options = probeOptionsFor(t, m.probeText ?? '');
      const described = modelMessage(t, { gen: worker.gen, name: m.name, options });
      described.message.textProblem = loaded.textProblem;
      adopt(t, described, options);
    } catch (e) {
      // refused: the model the worker had (and its training, if it was running) is unchanged
      if (t && t !== worker.run?.trainer) t.dispose();
      worker.gen = kept;
      postError('load', e, { requestGen: m.gen });
      return;
    }
    worker.run.sendPaused();
  },
  play(m) {
    worker.run?.play(m.target ?? null);
  },
  pause() {
    worker.run?.pause();
  },
  pace(m) {
    const r = Number(m.stepsPerSecond);
    worker.pace = Number.isFinite(r) && r > 0 ? Math.min(r, 1000) : 0;
    worker.run?.restartPace();
  },
  step(m) {
    worker.run?.stepBy(m.n ?? 1);
  },
  ablate(m) {
    const { run } = worker;
    if (!run) return; // no model to ablate (a new model starts with none ablated)
    try {
      run.setAblate(m.heads ?? []);
    } catch (e) {
      postError('ablate', e, { heads: run.ablate }); // refused: the heads ablated before stay (sent back), training goes on
      return;
    }
    if (!run.running && run.trainer.hasTask) run.sendAblation();
  },
  save(m) {
    const { run } = worker;
    if (!run) return;
    const bytes = run.trainer.save();
    post({ type: 'saved', gen: worker.gen, purpose: m.purpose, step: run.trainer.stepCount, settings: run.trainer.settings, bytes }, [bytes.buffer]);
  },
};

self.onmessage = (event) => {
  const m = event.data;
  if (!worker.engine) {
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
    if (worker.run?.running) worker.run.stopOnError(m.type, e);
    else postError(m.type, e);
  }
};

start();
