// The training lab's session: the one object that owns what the page knows (the
// state from the link, the worker's model and everything it has sent since), passed
// to the modules that read or change it (main.js, views.js, files.js, url.js).
//
//   const session = createSession();
//   session.state = parsed.state;  …  resetRun(session);   // a new model: its curves start empty

import { createTimeline, createSeries } from './timeline.js';

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
