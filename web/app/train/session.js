// The training lab's session: the one object that owns what the page knows (the
// state from the link, the worker's model and everything it has sent since), passed
// to the modules that read or change it (main.js, views.js, files.js, url.js).
//
//   const session = createSession();
//   session.state = parsed.state;  …  resetRun(session);   // a new model: its curves start empty
//   const { stop, link } = recordProgress(session, message);  // a 'progress' or 'paused' reply

import { createTimeline, createSeries } from './timeline.js';
import { stopReason, overfitNote } from './stop.js';

/**
 * Keeps an ablation report only when it answers the heads ablated now: a reply to an
 * earlier 'ablate' (one head, while the learner has since pressed a second) is dropped,
 * so the text never shows one set of heads beside another set's accuracy.
 */
export function acceptAblation(s, report) {
  const now = s.state?.ablate ?? [];
  const heads = report?.heads ?? [];
  const same = heads.length === now.length && heads.every(([l, h], i) => l === now[i][0] && h === now[i][1]);
  s.run.ablation = report && same ? report : null;
}

export function createSession() {
  return {
    tasks: null, // the engine's tasks (the worker's 'ready'), null before
    state: null, // the lab's state (train/state.js), mirrored to the URL
    gen: 0, // generation of the model asked for; replies of older ones are dropped
    model: null, // the last 'model' message
    modelError: null, // why the settings shown could not build a model, or null
    /** engine.estimateTrainingMemory of the settings shown (the worker's 'memory' message), or null. */
    memory: null,
    catchUp: null, // target step while a link retrains
    scrub: null, // step of the snapshot shown, null = live
    corpusProblem: null, // why the link's text was not used (shown beside the text field), or null
    /** The text is too short for the task size: {text, fit} (shown beside the text field), or null. */
    textShort: null,
    /** Generation of the 'load' that restores the session from this browser's copy (Back from the playground), or 0. */
    restoreGen: 0,
    /** Live held-out checks since ▶ ({step, accuracy, loss}) for the "Stop at" rule; stopping: a stop was asked for. */
    checks: [],
    stopping: false,
    stopNote: '', // "Stopped at step 412: …" after the rule stopped training
    /** Live checks {step, held, train} (held-out loss, mean training-batch loss since the check before) for the overfitting line. */
    lossHistory: [],
    overfit: null,
    run: {
      step: 0,
      running: false,
      stepsPerSecond: 0,
      heldout: null,
      ablation: null,
      headScores: null,
      live: null,
      final: false,
      cap: 200,
      trainLoss: createSeries(),
      trainAcc: createSeries(),
      heldLoss: createSeries(),
      heldAcc: createSeries(),
      timeline: createTimeline(),
    },
  };
}

/** A new model: the run, its curves, its timeline and the stop rule's checks start again. */
export function resetRun(session) {
  const { run } = session;
  run.step = 0;
  run.running = false;
  run.stepsPerSecond = 0;
  run.heldout = null;
  run.ablation = null;
  run.headScores = null;
  run.live = null;
  run.final = false;
  for (const s of [run.trainLoss, run.trainAcc, run.heldLoss, run.heldAcc]) s.clear();
  run.timeline.clear();
  session.scrub = null;
  session.checks = [];
  session.stopping = false;
  session.stopNote = '';
  session.lossHistory = [];
  session.overfit = null;
}

/**
 * A 'progress' or 'paused' reply of the worker into the session: the curves, the timeline,
 * the overfitting note, the stop rule's checks and the step of the link. Returns what the
 * controller does next: stop (the stop rule fired: pause the worker) and link ('now' after a
 * pause, 'throttled' while training, null while a link retrains to its step).
 */
export function recordProgress(session, m) {
  const s = session;
  const { run } = s;
  let stop = false;
  for (const [step, loss, acc] of m.train) {
    run.trainLoss.push(step, loss);
    run.trainAcc.push(step, acc);
  }
  if (m.heldout) {
    run.heldout = m.heldout;
    run.heldLoss.push(m.heldout.step, m.heldout.loss);
    run.heldAcc.push(m.heldout.step, m.heldout.accuracy);
  }
  run.cap = m.cap;
  for (const snap of m.snapshots) run.timeline.add(snap, run.cap);
  run.live = m.live;
  run.step = m.step;
  if (m.ablation !== undefined) acceptAblation(s, m.ablation);
  run.stepsPerSecond = m.type === 'progress' ? m.stepsPerSecond : run.stepsPerSecond;
  run.running = m.type === 'progress' && m.running;
  if (m.type === 'progress' && m.heldout) {
    const losses = m.train.map((t) => t[1]).filter(Number.isFinite);
    const train = losses.length ? losses.reduce((a, b) => a + b, 0) / losses.length : run.trainLoss.last?.[1];
    if (Number.isFinite(train)) {
      s.lossHistory.push({ step: m.heldout.step, held: m.heldout.loss, train });
      if (s.lossHistory.length > 50) s.lossHistory.shift();
      s.overfit = overfitNote(s.lossHistory);
    }
  }
  if (m.type === 'progress' && m.heldout && m.running && s.catchUp == null && !s.stopping) {
    s.checks.push({ step: m.heldout.step, accuracy: m.heldout.accuracy, loss: m.heldout.loss });
    const why = stopReason(s.checks, s.state.stopAt);
    if (why) {
      s.stopping = why;
      stop = true;
    }
  }
  if (m.type === 'paused') {
    if (s.stopping) s.stopNote = `Stopped at step ${m.step.toLocaleString('en')}: ${s.stopping}.`;
    s.stopping = false;
    run.headScores = m.headScores;
    run.final = true;
    s.catchUp = null; // reached, or paused by the learner while catching up
    s.state.step = m.step;
    return { stop, link: 'now' };
  }
  run.final = false;
  run.headScores = null;
  if (s.catchUp != null) return { stop, link: null };
  s.state.step = m.step;
  return { stop, link: 'throttled' };
}
