// The training lab's controller (train.html): what happens on each message of the
// worker, each action of the controls and each change of the link. It changes the
// session (session.js), sends the worker its requests, keeps the link (url.js) and
// the messages (notices.js) up to date and asks the page (views.js) to render;
// main.js creates the pieces and wires them to it.
//
//   const lab = createLabController({ session, lab: element, notices, url, send, page });
//   lab.handle(message)   lab.actions.togglePlay()   lab.onHashChange()
//
// page: {render(), applyTheme(), build(), bootFailed(text), saved(message)}, the view's
// and the files' side, created after the controller (their methods are called later).

import {
  parseTrainHash, defaultTrainState, normalizeTrainState, trainerSettings,
  modelChanged, taskDefaults, canonicalHeads, minimumWords, MODEL_FIELDS, WATCH_STEPS_PER_SECOND,
} from './state.js';
import { taskTitle } from './controls.js';
import { findModelByLink } from '../kit/model-store.js';
import { SAMPLE_TEXT } from './sample-text.js';
import { resetRun, recordProgress, acceptAblation } from './session.js';

export function createLabController({ session, lab, notices, url, send, page }) {
  const render = () => page.render();

  function fatal(text) {
    lab.dataset.state = 'error';
    notices.notify('fatal', 'error', 'The training lab could not start:', `${text}. The rest of the playground still works without it.`, { dismissible: false });
    page.bootFailed('The training engine could not start.');
  }

  function init(target = 0) {
    const s = session;
    s.gen += 1;
    s.modelError = null;
    s.textShort = null;
    s.memory = null;
    notices.clear('settings');
    notices.clear('train');
    notices.clear('restore');
    delete lab.dataset.restored;
    s.catchUp = target > 0 ? target : null;
    send({ type: 'init', gen: s.gen, settings: trainerSettings(s.state, s.tasks.find((t) => t.name === s.state.task)), target });
    if (s.state.ablate.length) send({ type: 'ablate', heads: s.state.ablate });
    lab.dataset.final = '0';
    render();
  }

  // ---- messages from the worker -------------------------------------------------------------------
  function keyData(k) {
    return { name: k.name, data: k.data };
  }

  /** A 'progress' or 'paused' reply: the session records it (session.js); the stop rule may pause, the step goes into the link. */
  function onProgress(m) {
    const { stop, link } = recordProgress(session, m);
    if (stop) pause();
    if (link === 'now') url.schedule();
    else if (link === 'throttled') url.scheduleAtMostEvery(4000);
  }

  function handle(m) {
    const s = session;
    switch (m.type) {
      case 'ready':
        start(m.tasks);
        break;
      case 'model':
        if (m.gen !== s.gen) return;
        resetRun(s);
        s.model = {
          ...m,
          keys: m.keys.map(keyData),
          probe: { ...m.probe, targetTokens: m.probe.targets.map((t) => (t < 0 ? null : m.vocabulary[t] ?? `#${t}`)) },
        };
        s.run.cap = m.cap;
        s.run.step = m.step;
        s.run.live = m.live;
        if (m.gen === s.restoreGen) adoptRestored(m);
        else if (m.name) adoptLoaded(m);
        if (!s.model.keys.some((k) => k.name === s.state.key)) s.state.key = '';
        render();
        break;
      case 'progress':
      case 'paused':
        if (m.gen !== s.gen || !s.model) return;
        onProgress(m);
        render();
        break;
      case 'ablation':
        if (m.gen !== s.gen) return;
        acceptAblation(s, m.ablation);
        if (m.heldout) s.run.heldout = m.heldout;
        s.run.final = true;
        render();
        break;
      case 'saved':
        if (m.gen !== s.gen) return;
        page.saved(m);
        break;
      case 'memory':
        if (m.gen !== s.gen) return;
        s.memory = m.memory;
        render();
        break;
      case 'error':
        onWorkerError(m);
        break;
      default:
    }
  }

  /** The engine's "corpus has 84 words; length 32 needs at least 321" in the form's words, with the
   * largest task size the text fits (0 when none), or null for any other message. */
  function shortTextProblem(message, isDefault) {
    const m = /corpus has (\d+) words; length (\d+) needs at least (\d+)/.exec(message);
    if (!m) return null;
    const [words, T, needed] = [Number(m[1]), Number(m[2]), Number(m[3])];
    let fit = T - 1;
    while (fit >= 1 && minimumWords(fit) > words) fit -= 1;
    const size = `Task size ${T}${isDefault ? ' (the default)' : ''}`;
    const text = `${size} needs at least ${needed.toLocaleString('en')} words; this text has ${words.toLocaleString('en')}: ${fit >= 1 ? 'paste more text or choose a smaller task size.' : 'paste more text.'}`;
    return { text, fit: Math.max(0, fit) };
  }

  /** Every error reply leaves the lab usable: the transport shows the worker's real state
   * (training has stopped unless it says otherwise) and a message says what happened and
   * what to change. */
  function onWorkerError(m) {
    const s = session;
    if (m.where === 'engine') {
      fatal(m.message);
      return;
    }
    if (m.where === 'load' && s.restoreGen && m.requestGen === s.restoreGen) {
      // this browser's copy could not be used: the link retrains, as without a copy
      s.restoreGen = 0;
      init(s.state.step);
      return;
    }
    if (m.where === 'load') {
      // refused: the worker kept the model it had (and its generation)
      if (m.requestGen === s.gen) s.gen = m.gen;
      notices.notify('file', 'error', 'That file could not be loaded as a model:', `${m.message}. The model you had is unchanged.`, { dismissible: true });
      lab.dataset.fileError = '1';
      render();
      return;
    }
    if (m.gen !== undefined && m.gen !== s.gen) return;
    if (!m.running) {
      s.run.running = false;
      s.catchUp = null;
    }
    if (s.model && Number.isInteger(m.step)) s.run.step = m.step;
    switch (m.where) {
      case 'settings':
        s.modelError = m.message;
        s.model = null; // the settings shown have no model: nothing may show or act on the previous one
        resetRun(s);
        s.textShort = s.state.task === 'text' ? shortTextProblem(m.message, s.state.length === 0) : null;
        if (s.textShort) break; // said beside the text field, with its fix
        notices.notify('settings', 'error', 'These settings cannot train:', `${m.message}. Change a setting or press \u201cTask defaults\u201d.`, { dismissible: true });
        break;
      case 'train':
        notices.notify('train', 'error', `Training stopped at step ${s.run.step.toLocaleString('en')}:`, `${m.message}. A lower learning rate usually helps; \u21ba Reset starts again from step 0.`, { dismissible: true });
        break;
      case 'ablate':
        if (Array.isArray(m.heads)) {
          s.state.ablate = canonicalHeads(m.heads); // the buttons and the link show the heads really ablated
          url.schedule();
        }
        notices.notify('worker', 'error', 'Those heads could not be ablated:', `${m.message}. All heads stay as they were.`, { dismissible: true });
        break;
      case 'save':
        notices.notify('worker', 'error', 'The model could not be saved:', `${m.message}. Train on, or press \u21ba Reset, and try again.`, { dismissible: true });
        break;
      default:
        notices.notify('worker', 'error', 'The training worker reported a problem:', `${m.message}. The lab goes on from where it was; \u21ba Reset starts again from step 0.`, { dismissible: true });
    }
    render();
  }

  // ---- loading a checkpoint -----------------------------------------------------------------------
  /** The session back from the checkpoint "Open in playground" stored for this very link (state is the link's). */
  function adoptRestored(m) {
    session.catchUp = null;
    lab.dataset.restored = String(m.step);
    notices.notify('restore', 'notice', `Back at step ${m.step.toLocaleString('en')}:`, 'the model is the copy this browser kept when you opened the playground, so nothing was retrained. The curves and the timeline start here, and training on uses a fresh optimizer state; \u21ba Reset starts again from step 0.', { dismissible: true });
  }

  /** Restores the link's session from this browser's stored copy when there is one; else retrains to the link's step. */
  async function openSession() {
    const s = session;
    const record = s.state.step > 0 ? await findModelByLink(url.trainLink(s.state.step)) : null;
    if (!record || record.step !== s.state.step) {
      init(s.state.step);
      return;
    }
    s.gen += 1;
    s.restoreGen = s.gen;
    s.modelError = null;
    const bytes = new Uint8Array(record.bytes);
    const text = s.state.task === 'text' ? s.state.corpus : '';
    send({ type: 'load', gen: s.gen, bytes: bytes.buffer, name: 'this browser\u2019s copy', corpus: text, probeText: text || SAMPLE_TEXT }, [bytes.buffer]);
    if (s.state.ablate.length) send({ type: 'ablate', heads: s.state.ablate });
    render();
  }

  /** The view settings a new model keeps: theme, key drawing, log scale, the stop rule, the speed. */
  function keepViewSettings(next, state) {
    for (const name of ['theme', 'keyView', 'logScale', 'stopAt', 'speed']) next[name] = state[name];
    return next;
  }

  function adoptLoaded(m) {
    const s = m.settings;
    const { state } = session;
    session.catchUp = null;
    const next = defaultTrainState(s.task, session.tasks);
    for (const name of Object.keys(MODEL_FIELDS)) if (s[name] !== undefined) next[name] = s[name];
    next.lr = Number(next.lr.toPrecision(6)); // the engine reports float32 values (0.003000000026…), as taskDefaults rounds them
    // a text model trains on with the text the lab had open (engine.loadTrainer's corpus)
    next.corpus = s.task === 'text' && m.hasTask && state.task === 'text' ? state.corpus : '';
    const noText = s.task === 'text' && !next.corpus;
    next.step = m.step;
    session.state = normalizeTrainState(keepViewSettings(next, state));
    session.corpusProblem = null;
    url.setCorpus(session.state.corpus).then(() => url.schedule());
    const why = m.textProblem ? `It does not fit the text the lab had open (${m.textProblem}), so it is shown on that text but cannot be trained on, and a link cannot retrain it.` : 'The file does not carry the text it was trained on, so it can be probed but not trained on, and a link cannot retrain it: open its text with \u201cYour own text\u201d first, then load the file again.';
    const kind = s.task === 'text' ? 'word-level text' : taskTitle(s.task).toLowerCase();
    notices.notify('file', 'notice', `Loaded \u201c${m.name}\u201d:`, `a ${kind} model at step ${m.step}. ${noText ? why : 'The link of this page retrains it from its seed; that gives these exact weights when the file was trained here with these settings (training is deterministic). Training on from here uses a fresh optimizer state.'}`, { dismissible: true });
    delete lab.dataset.fileError;
  }

  async function applyCorpus(text) {
    const { state } = session;
    session.corpusProblem = null;
    const next = { ...state, task: 'text' };
    if (state.task !== 'text') Object.assign(next, taskDefaults(session.tasks.find((t) => t.name === 'text')));
    session.state = normalizeTrainState({ ...next, corpus: text, step: 0, ablate: [] });
    session.state.corpus = text;
    await url.setCorpus(text);
    url.schedule();
    init(0);
  }

  // ---- the controls' actions ---------------------------------------------------------------------
  function togglePlay() {
    const s = session;
    if (s.modelError) return;
    if (s.run.running || s.catchUp != null) pause();
    else {
      s.scrub = null;
      s.run.running = true;
      s.checks = [];
      s.stopping = false;
      s.stopNote = '';
      send({ type: 'play' });
      render();
    }
  }

  function stepOnce() {
    if (session.run.running || session.modelError) return;
    session.catchUp = null;
    send({ type: 'step', n: 1 });
  }

  function reset() {
    session.stopNote = '';
    session.state.step = 0;
    url.schedule();
    init(0);
  }

  /** A setting of the view (stop rule, speed, answer key, key drawing, log scale): the link, and the worker's pace. */
  function setView(patch) {
    Object.assign(session.state, patch);
    if ('speed' in patch) sendPace();
    url.schedule();
    render();
  }

  function setTheme(theme) {
    if (!session.state) return;
    session.state.theme = theme;
    page.applyTheme();
    url.schedule();
  }

  /** The worker's pace for free training: the speed choice of the state. */
  function sendPace() {
    send({ type: 'pace', stepsPerSecond: session.state.speed === 'watch' ? WATCH_STEPS_PER_SECOND : 0 });
  }

  function pause() {
    send({ type: 'pause' });
  }

  function changeSettings(patch) {
    const { state } = session;
    const next = { ...state, ...patch };
    if (patch.mlp === -1) next.mlp = 4 * next.dModel;
    if (patch.dModel && state.mlp > 0) next.mlp = 4 * next.dModel;
    next.step = 0;
    next.ablate = [];
    const normal = normalizeTrainState(next);
    if (!modelChanged(state, normal)) return;
    const wasRunning = session.run.running;
    session.state = normal;
    url.schedule();
    init(0);
    if (wasRunning) send({ type: 'play' });
  }

  function changeTask(name, force = false) {
    const { state } = session;
    if (name === state.task && !force) return;
    session.corpusProblem = null;
    const corpus = name === 'text' ? (state.corpus || SAMPLE_TEXT) : '';
    const next = keepViewSettings(defaultTrainState(name, session.tasks, corpus), state);
    session.state = normalizeTrainState({ ...next, corpus });
    session.state.corpus = corpus;
    url.setCorpus(corpus).then(() => url.schedule());
    init(0);
  }

  function toggleHead(layer, head) {
    const { ablate } = session.state;
    const has = ablate.some(([l, h]) => l === layer && h === head);
    setAblate(has ? ablate.filter(([l, h]) => !(l === layer && h === head)) : [...ablate, [layer, head]]);
  }

  function setAblate(list) {
    session.state.ablate = canonicalHeads(list);
    session.run.ablation = null; // the page's data-ablated follows in the same frame as its text (views.draw)
    send({ type: 'ablate', heads: session.state.ablate });
    url.schedule();
    render();
  }

  // ---- start, and a link pasted into the address bar of an open lab --------------------------------
  /** The link's state, its text (the sample text when it carries none) and a notice of what it could not use. */
  async function readLink() {
    const parsed = parseTrainHash(location.hash, session.tasks);
    session.state = parsed.state;
    if (session.state.task === 'text') await url.setCorpus(await url.linkCorpus(parsed.textParam));
    return parsed;
  }

  function noticeLinkProblems(parsed) {
    if (parsed.problems.length) notices.notify('url', 'notice', 'Some settings in the link could not be used,', 'so defaults were used for them:', { details: parsed.problems, dismissible: true });
  }

  async function start(list) {
    session.tasks = list;
    const parsed = await readLink();
    noticeLinkProblems(parsed);
    page.applyTheme();
    page.build();
    lab.dataset.state = 'ready';
    sendPace();
    await openSession();
    if (!parsed.empty) url.schedule();
  }

  /** A link pasted into the address bar of an open lab. */
  async function onHashChange() {
    if (!session.tasks) return;
    if (!url.takeHash()) return;
    const before = session.state;
    const parsed = await readLink();
    if (session.state.task !== 'text') session.corpusProblem = null;
    noticeLinkProblems(parsed);
    page.applyTheme();
    sendPace();
    if (modelChanged(before, session.state) || session.state.step !== session.run.step) init(session.state.step);
    else {
      send({ type: 'ablate', heads: session.state.ablate });
      render();
    }
  }

  return {
    handle,
    onWorkerError,
    fatal,
    onHashChange,
    applyCorpus,
    actions: {
      togglePlay,
      stepOnce,
      reset,
      setView,
      setTheme,
      changeSettings,
      changeTask,
      taskDefaults: () => changeTask(session.state.task, true),
      applyCorpus,
      toggleHead,
      setAblate,
      scrub(step) {
        session.scrub = step;
        render();
      },
      download: () => send({ type: 'save', purpose: 'download' }),
      openPlayground() {
        if (session.run.running) pause();
        send({ type: 'save', purpose: 'playground' });
      },
    },
  };
}
