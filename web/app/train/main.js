// The training lab's controller (train.html): state from the URL hash →
// the worker (which owns the engine and trains) → the views, and every change
// back into the hash. The page never touches wasm itself; it keeps what it is
// sent: the curves and the timeline (both bounded, see timeline.js).
//
// Test hooks on <main id="lab">: data-state (loading | ready | error),
// data-step, data-running (1 | 0), data-catching (1 while a link retrains to
// its step), data-heldout (held-out accuracy of the last report),
// data-heldout-samples, data-final (1 once the bigger evaluation after a pause
// has arrived), data-ablated (held-out accuracy with the ablated heads).

import { el } from '../views/dom.js';
import { createTooltip } from '../views/tooltip.js';
import { createThemeToggle } from '../views/theme.js';
import { createMessages } from '../views/messages.js';
import { createNotation } from '../views/notation.js';
import { readPalette } from '../palette.js';
import { formatValue, formatPercent, formatBytes } from '../format.js';
import { headName } from './grid.js';
import {
  parseTrainHash, serializeTrainState, defaultTrainState, normalizeTrainState, trainerSettings,
  modelChanged, packText, unpackText, taskDefaults, canonicalHeads, minimumWords, MODEL_FIELDS, MAX_CORPUS, WATCH_STEPS_PER_SECOND,
} from './state.js';
import { createTimeline, createSeries, snapshotInterval } from './timeline.js';
import { createSettingsView, taskTitle } from './controls.js';
import { createGridView } from './grid.js';
import { createChart } from './chart.js';
import { createPredictionsView } from './predictions.js';
import { createTimelineView } from './timeline-view.js';
import { storeModel, findModelByLink } from './storage.js';
import { SAMPLE_TEXT } from './sample-text.js';
import { stopReason, overfitNote } from './stop.js';

const doc = document;
doc.getElementById('tr-notation')?.append(createNotation());
const lab = doc.getElementById('lab');
const tooltip = createTooltip(doc.getElementById('tr-tips'));
const MAX_FILE_BYTES = 64 * 1024 * 1024;

// ---- messages ------------------------------------------------------------------------
const notices = new Map(); // id → message
const messages = createMessages(doc.getElementById('tr-messages'), {
  onDismiss(id) {
    notices.delete(id);
    showMessages();
  },
});
function showMessages() {
  messages.update([...notices.values()]);
}
function notify(id, kind, title, text, extra = {}) {
  notices.set(id, { id, kind, title, text, dismissible: kind !== 'error' || extra.dismissible !== false, ...extra });
  showMessages();
}
function clearNotice(id) {
  if (notices.delete(id)) showMessages();
}

// ---- state ------------------------------------------------------------------------------
let tasks = null;
let state = null;
let packed = ''; // the corpus packed for the link
let gen = 0;
let model = null; // the last 'model' message
let modelError = null;
/** engine.estimateTrainingMemory of the settings shown (the worker's 'memory' message), or null. */
let memory = null;
let catchUp = null; // target step while a link retrains
let scrub = null; // step of the snapshot shown, null = live
let corpusProblem = null; // why the link's text was not used (shown beside the text field), or null
/** The text is too short for the task size: {text, fit} (shown beside the text field), or null. */
let textShort = null;
/** Generation of the 'load' that restores the session from this browser's copy (Back from the playground), or 0. */
let restoreGen = 0;
/** Live held-out checks since ▶ ({step, accuracy, loss}) for the "Stop at" rule; stopping: a stop was asked for. */
let checks = [];
let stopping = false;
let stopNote = ''; // "Stopped at step 412: …" after the rule stopped training
/** Live checks {step, held, train} (held-out loss, mean training-batch loss since the check before) for the overfitting line. */
let lossHistory = [];
let overfit = null;
const run = {
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
};

function resetRun() {
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
  scrub = null;
  checks = [];
  stopping = false;
  stopNote = '';
  lossHistory = [];
  overfit = null;
}

// ---- the worker ---------------------------------------------------------------------------
const workerUrl = new URL('./worker.js', import.meta.url);
const worker = new Worker(workerUrl, { type: 'module' });
worker.onerror = (e) => {
  // before 'ready' the worker could not start; later an uncaught error (the worker wraps every
  // handler, so this is a backstop) is one more error the lab recovers from
  if (!tasks) fatal(`the training worker failed to start (${e.message || 'no details'})`);
  else {
    e.preventDefault();
    onWorkerError({ where: 'worker', message: e.message || 'an unexpected error', running: false });
  }
};
worker.onmessage = (e) => handle(e.data);
const send = (msg, transfer) => worker.postMessage(msg, transfer ?? []);

function fatal(text) {
  lab.dataset.state = 'error';
  notify('fatal', 'error', 'The training lab could not start:', `${text}. The rest of the playground still works without it.`, { dismissible: false });
  bootText.textContent = 'The training engine could not start.';
}

function init(target = 0) {
  gen += 1;
  modelError = null;
  textShort = null;
  memory = null;
  clearNotice('settings');
  clearNotice('train');
  clearNotice('restore');
  delete lab.dataset.restored;
  catchUp = target > 0 ? target : null;
  send({ type: 'init', gen, settings: trainerSettings(state, tasks.find((t) => t.name === state.task)), target });
  if (state.ablate.length) send({ type: 'ablate', heads: state.ablate });
  lab.dataset.final = '0';
  render();
}

// ---- URL --------------------------------------------------------------------------------
let written = location.hash.replace(/^#/, '');
let urlTimer = 0;
let lastUrlWrite = 0;
function writeUrl() {
  urlTimer = 0;
  delete lab.dataset.urlPending;
  if (location.hash.replace(/^#/, '') !== written) return; // a pasted link is waiting: it wins
  const hash = serializeTrainState(state, packed);
  if (hash !== written) {
    written = hash;
    history.replaceState(null, '', `#${hash}`);
  }
  lastUrlWrite = performance.now();
}
function scheduleUrl(delay = 60) {
  if (urlTimer) return;
  lab.dataset.urlPending = '1';
  urlTimer = setTimeout(writeUrl, delay);
}

/** The text a link carries, or the sample text with a sentence beside the text field
 * when the link's text cannot be used (damaged, or longer than the lab takes). */
async function linkCorpus(textParam) {
  corpusProblem = null;
  if (!textParam) return SAMPLE_TEXT;
  try {
    return await unpackText(textParam);
  } catch (e) {
    corpusProblem = `${e.message.charAt(0).toUpperCase()}${e.message.slice(1)}, so the sample text is shown instead. The link's other settings are used; paste your text and press \u201cTrain on this text\u201d.`;
    return SAMPLE_TEXT;
  }
}

async function setCorpus(text) {
  state.corpus = text;
  packed = text && text !== SAMPLE_TEXT ? await packText(text) : '';
}

// ---- messages from the worker -------------------------------------------------------------------
function keyData(k) {
  return { name: k.name, data: k.data };
}

function handle(m) {
  switch (m.type) {
    case 'ready':
      start(m.tasks);
      break;
    case 'model':
      if (m.gen !== gen) return;
      resetRun();
      model = {
        ...m,
        keys: m.keys.map(keyData),
        probe: { ...m.probe, targetTokens: m.probe.targets.map((t) => (t < 0 ? null : m.vocabulary[t] ?? `#${t}`)) },
      };
      run.cap = m.cap;
      run.step = m.step;
      run.live = m.live;
      if (m.gen === restoreGen) adoptRestored(m);
      else if (m.name) adoptLoaded(m);
      if (!model.keys.some((k) => k.name === state.key)) state.key = '';
      render();
      break;
    case 'progress':
    case 'paused':
      if (m.gen !== gen || !model) return;
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
      for (const s of m.snapshots) run.timeline.add(s, run.cap);
      run.live = m.live;
      run.step = m.step;
      if (m.ablation !== undefined) run.ablation = m.ablation;
      run.stepsPerSecond = m.type === 'progress' ? m.stepsPerSecond : run.stepsPerSecond;
      run.running = m.type === 'progress' && m.running;
      if (m.type === 'progress' && m.heldout) {
        const losses = m.train.map((t) => t[1]).filter(Number.isFinite);
        const train = losses.length ? losses.reduce((a, b) => a + b, 0) / losses.length : run.trainLoss.last?.[1];
        if (Number.isFinite(train)) {
          lossHistory.push({ step: m.heldout.step, held: m.heldout.loss, train });
          if (lossHistory.length > 50) lossHistory.shift();
          overfit = overfitNote(lossHistory);
        }
      }
      if (m.type === 'progress' && m.heldout && m.running && catchUp == null && !stopping) {
        checks.push({ step: m.heldout.step, accuracy: m.heldout.accuracy, loss: m.heldout.loss });
        const why = stopReason(checks, state.stopAt);
        if (why) {
          stopping = why;
          pause();
        }
      }
      if (m.type === 'paused') {
        if (stopping) stopNote = `Stopped at step ${m.step.toLocaleString('en')}: ${stopping}.`;
        stopping = false;
        run.headScores = m.headScores;
        run.final = true;
        catchUp = null; // reached, or paused by the learner while catching up
        state.step = m.step;
        scheduleUrl();
      } else {
        run.final = false;
        run.headScores = null;
        if (catchUp == null) {
          state.step = m.step;
          // replaceState costs a few ms: while training, write the step every few seconds
          if (performance.now() - lastUrlWrite > 4000) scheduleUrl();
        }
      }
      render();
      break;
    case 'ablation':
      if (m.gen !== gen) return;
      run.ablation = m.ablation;
      if (m.heldout) run.heldout = m.heldout;
      run.final = true;
      render();
      break;
    case 'saved':
      if (m.gen !== gen) return;
      if (m.purpose === 'download') download(m.bytes, m);
      else if (m.purpose === 'playground') toPlayground(m.bytes, m);
      break;
    case 'memory':
      if (m.gen !== gen) return;
      memory = m.memory;
      render();
      break;
    case 'error':
      onWorkerError(m);
      break;
    default:
  }
}

/** The memory line under the transport: the estimate of engine.estimateTrainingMemory, before ▶. */
function memoryText(m) {
  if (!m) return '';
  if (m.fits) return `Training needs about ${formatBytes(m.bytes)} of memory.`;
  return `Training would need about ${formatBytes(m.bytes)} of memory; the lab can use ${formatBytes(m.limitBytes)}.`;
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
  if (m.where === 'engine') {
    fatal(m.message);
    return;
  }
  if (m.where === 'load' && restoreGen && m.requestGen === restoreGen) {
    // this browser's copy could not be used: the link retrains, as without a copy
    restoreGen = 0;
    init(state.step);
    return;
  }
  if (m.where === 'load') {
    // refused: the worker kept the model it had (and its generation)
    if (m.requestGen === gen) gen = m.gen;
    notify('file', 'error', 'That file could not be loaded as a model:', `${m.message}. The model you had is unchanged.`, { dismissible: true });
    lab.dataset.fileError = '1';
    render();
    return;
  }
  if (m.gen !== undefined && m.gen !== gen) return;
  if (!m.running) {
    run.running = false;
    catchUp = null;
  }
  if (model && Number.isInteger(m.step)) run.step = m.step;
  switch (m.where) {
    case 'settings':
      modelError = m.message;
      model = null; // the settings shown have no model: nothing may show or act on the previous one
      resetRun();
      textShort = state.task === 'text' ? shortTextProblem(m.message, state.length === 0) : null;
      if (textShort) break; // said beside the text field, with its fix
      notify('settings', 'error', 'These settings cannot train:', `${m.message}. Change a setting or press \u201cTask defaults\u201d.`, { dismissible: true });
      break;
    case 'train':
      notify('train', 'error', `Training stopped at step ${run.step.toLocaleString('en')}:`, `${m.message}. A lower learning rate usually helps; \u21ba Reset starts again from step 0.`, { dismissible: true });
      break;
    case 'ablate':
      notify('worker', 'error', 'Those heads could not be ablated:', `${m.message}. All heads stay as they were.`, { dismissible: true });
      break;
    case 'save':
      notify('worker', 'error', 'The model could not be saved:', `${m.message}. Train on, or press \u21ba Reset, and try again.`, { dismissible: true });
      break;
    default:
      notify('worker', 'error', 'The training worker reported a problem:', `${m.message}. The lab goes on from where it was; \u21ba Reset starts again from step 0.`, { dismissible: true });
  }
  render();
}

// ---- loading a checkpoint -----------------------------------------------------------------------
/** The session back from the checkpoint "Open in playground" stored for this very link (state is the link's). */
function adoptRestored(m) {
  catchUp = null;
  lab.dataset.restored = String(m.step);
  notify('restore', 'notice', `Back at step ${m.step.toLocaleString('en')}:`, 'the model is the copy this browser kept when you opened the playground, so nothing was retrained. The curves and the timeline start here, and training on uses a fresh optimizer state; \u21ba Reset starts again from step 0.', { dismissible: true });
}

/** Restores the link's session from this browser's stored copy when there is one; else retrains to the link's step. */
async function openSession() {
  const record = state.step > 0 ? await findModelByLink(trainLink(state.step)) : null;
  if (!record || record.step !== state.step) {
    init(state.step);
    return;
  }
  gen += 1;
  restoreGen = gen;
  modelError = null;
  const bytes = new Uint8Array(record.bytes);
  const text = state.task === 'text' ? state.corpus : '';
  send({ type: 'load', gen, bytes: bytes.buffer, name: 'this browser\u2019s copy', corpus: text, probeText: text || SAMPLE_TEXT }, [bytes.buffer]);
  if (state.ablate.length) send({ type: 'ablate', heads: state.ablate });
  render();
}

function adoptLoaded(m) {
  const s = m.settings;
  catchUp = null;
  const next = defaultTrainState(s.task, tasks);
  for (const name of Object.keys(MODEL_FIELDS)) if (s[name] !== undefined) next[name] = s[name];
  next.lr = Number(next.lr.toPrecision(6)); // the engine reports float32 values (0.003000000026…), as taskDefaults rounds them
  // a text model trains on with the text the lab had open (engine.loadTrainer's corpus)
  next.corpus = s.task === 'text' && m.hasTask && state.task === 'text' ? state.corpus : '';
  const noText = s.task === 'text' && !next.corpus;
  next.step = m.step;
  next.theme = state.theme;
  next.keyView = state.keyView;
  next.logScale = state.logScale;
  next.stopAt = state.stopAt;
  next.speed = state.speed;
  state = normalizeTrainState(next);
  corpusProblem = null;
  setCorpus(state.corpus).then(() => scheduleUrl());
  const why = m.textProblem ? `It does not fit the text the lab had open (${m.textProblem}), so it is shown on that text but cannot be trained on, and a link cannot retrain it.` : 'The file does not carry the text it was trained on, so it can be probed but not trained on, and a link cannot retrain it: open its text with \u201cYour own text\u201d first, then load the file again.';
  const kind = s.task === 'text' ? 'word-level text' : taskTitle(s.task).toLowerCase();
  notify('file', 'notice', `Loaded \u201c${m.name}\u201d:`, `a ${kind} model at step ${m.step}. ${noText ? why : 'The link of this page retrains it from its seed; that gives these exact weights when the file was trained here with these settings (training is deterministic). Training on from here uses a fresh optimizer state.'}`, { dismissible: true });
  delete lab.dataset.fileError;
}

async function readFile(file) {
  if (file.size > MAX_FILE_BYTES) throw new Error(`the file has ${formatValue(file.size / 1048576, 3)} MB, more than the ${MAX_FILE_BYTES / 1048576} MB this page reads`);
  return new Uint8Array(await file.arrayBuffer());
}

async function loadModelFile(file) {
  clearNotice('file');
  try {
    const bytes = await readFile(file);
    gen += 1;
    const text = state.task === 'text' ? state.corpus : '';
    send({ type: 'load', gen, bytes: bytes.buffer, name: file.name, corpus: text, probeText: text || SAMPLE_TEXT }, [bytes.buffer]);
  } catch (e) {
    notify('file', 'error', 'That file could not be loaded as a model:', `${e.message}. The model you had is unchanged.`, { dismissible: true });
    lab.dataset.fileError = '1';
  }
}

async function loadTextFile(file) {
  clearNotice('file');
  try {
    const bytes = await readFile(file);
    let text;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new Error('it is not UTF-8 text');
    }
    if (text.length > MAX_CORPUS) {
      text = text.slice(0, MAX_CORPUS);
      notify('file', 'notice', 'The text was cut:', `only its first ${MAX_CORPUS.toLocaleString('en')} characters are used.`);
    }
    await applyCorpus(text);
  } catch (e) {
    notify('file', 'error', 'That text file could not be read:', `${e.message}.`, { dismissible: true });
  }
}

async function applyCorpus(text) {
  corpusProblem = null;
  const next = { ...state, task: 'text' };
  if (state.task !== 'text') Object.assign(next, taskDefaults(tasks.find((t) => t.name === 'text')));
  state = normalizeTrainState({ ...next, corpus: text, step: 0, ablate: [] });
  state.corpus = text;
  await setCorpus(text);
  scheduleUrl();
  init(0);
}

// ---- files and the playground -------------------------------------------------------------------
function fileName(m) {
  const s = m.settings ?? state;
  return `${s.task}-L${s.layers}H${s.heads}C${s.dModel}-seed${s.seed}-step${m.step}.safetensors`;
}

function download(bytes, m) {
  const url = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
  const a = el('a', null, { href: url, download: fileName(m) });
  doc.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** The lab's link (hash) that retrains this model: its settings, seed and step. */
function trainLink(step) {
  return serializeTrainState({ ...state, step, ablate: [] }, packed);
}

async function toPlayground(bytes, m) {
  try {
    const key = await storeModel(bytes, { settings: m.settings, step: m.step, trainLink: trainLink(m.step) });
    // the lab's own URL holds this step before it leaves, so Back finds the copy just stored
    state.step = m.step;
    if (urlTimer) clearTimeout(urlTimer);
    writeUrl();
    const params = new URLSearchParams();
    params.set('model', `lab:${key}`);
    params.set('from', trainLink(m.step));
    if (model?.probe?.tokens?.length) params.set('s', model.probe.tokens.slice(0, model.probe.length).join(' '));
    const href = `index.html#${params.toString()}`;
    lab.dataset.playgroundLink = href;
    location.assign(href);
  } catch (e) {
    notify('playground', 'error', 'The model could not be handed to the playground:', `${e.message}. Download it instead and load the file there.`, { dismissible: true });
  }
}

// ---- the page ---------------------------------------------------------------------------------------
const bootText = doc.getElementById('tr-boot-text');
let settingsView;
let gridView;
let predictionsView;
let timelineView;
let lossChart;
let accChart;
let ui = null;
let palette = null;

function currentPalette() {
  if (!palette) palette = readPalette(doc.documentElement);
  return palette;
}

function buildPage() {
  const app = doc.getElementById('tr-app');
  app.replaceChildren();
  const side = el('div', 'tr-side');
  const center = el('div', 'tr-center');
  const right = el('div', 'tr-right');

  // transport
  const play = el('button', 'btn btn-primary tr-play', { type: 'button', testid: 'play' });
  const stepBtn = el('button', 'btn', { type: 'button', testid: 'step', text: 'Step +1', attrs: { 'aria-label': 'One training step' } });
  const reset = el('button', 'btn', { type: 'button', testid: 'reset', text: '\u21ba Reset', attrs: { 'aria-label': 'Reset the model to step 0' } });
  const counter = el('output', 'tr-counter num', { testid: 'step-count' });
  const speed = el('output', 'tr-speed num', { testid: 'steps-per-second' });
  const progress = el('progress', 'tr-progress', { max: 1, value: 0, testid: 'catchup-progress' });
  const progressText = el('span', 'tr-progress-text', { testid: 'catchup-text' });
  const progressBox = el('div', 'tr-progress-box', { hidden: true, attrs: { role: 'status' } }, progress, progressText);
  const metrics = el('p', 'tr-metrics', { testid: 'metrics', attrs: { 'aria-live': 'off' } });
  const memoryNote = el('p', 'field-hint tr-memory', { testid: 'memory' });
  const overfitEl = el('p', 'tr-overfit', { testid: 'overfit', hidden: true });
  const stopAt = el('select', 'control', { testid: 'stop-at', id: 'tr-stop-at', title: 'At a plateau: when held-out accuracy is 100% for 5 checks, or neither it nor the loss improved for 30.' });
  for (const [v, t] of [['plateau', 'at a plateau'], ['goal', 'at 100% held-out'], ['off', 'never']]) stopAt.append(el('option', null, { value: v, text: t }));
  stopAt.addEventListener('change', () => {
    state.stopAt = stopAt.value;
    scheduleUrl();
    render();
  });
  const speedSel = el('select', 'control', { testid: 'speed', id: 'tr-speed-choice', title: `Watchable: about ${WATCH_STEPS_PER_SECOND} training steps a second, so the maps change in front of you.` });
  for (const [v, t] of [['full', 'full'], ['watch', `watchable, ${WATCH_STEPS_PER_SECOND}/s`]]) speedSel.append(el('option', null, { value: v, text: t }));
  speedSel.addEventListener('change', () => {
    state.speed = speedSel.value;
    sendPace();
    scheduleUrl();
    render();
  });
  const stopNoteEl = el('p', 'tr-stop-note', { testid: 'stop-note', attrs: { role: 'status' } });
  const transport = el('section', 'card tr-transport', { attrs: { 'aria-label': 'Training' } },
    el('div', 'tr-row tr-buttons', {}, play, stepBtn, reset),
    el('div', 'tr-row tr-counts', {}, el('span', 'tr-counter-label', { text: 'step' }), counter, speed),
    el('div', 'tr-row tr-pace', {},
      el('div', 'tr-row tr-stop', {}, el('label', 'field-label', { text: 'Speed', htmlFor: 'tr-speed-choice' }), speedSel),
      el('div', 'tr-row tr-stop', {}, el('label', 'field-label', { text: 'Stop', htmlFor: 'tr-stop-at' }), stopAt)),
    stopNoteEl, progressBox, metrics, overfitEl, memoryNote);
  play.addEventListener('click', togglePlay);
  stepBtn.addEventListener('click', () => {
    if (run.running || modelError) return;
    catchUp = null;
    send({ type: 'step', n: 1 });
  });
  reset.addEventListener('click', () => {
    stopNote = '';
    state.step = 0;
    scheduleUrl();
    init(0);
  });

  // settings
  settingsView = createSettingsView(side, {
    onChange: (patch) => changeSettings(patch),
    onTask: (name) => changeTask(name),
    onDefaults: () => changeTask(state.task, true),
    onCorpus: (text) => applyCorpus(text.slice(0, MAX_CORPUS)),
    onCorpusFile: (file) => loadTextFile(file),
  });

  // grid
  const gridCard = el('section', 'card tr-grid-card', { attrs: { 'aria-label': 'Attention of every head' } });
  const keySelect = el('select', 'control', { testid: 'key-select' });
  keySelect.addEventListener('change', () => {
    state.key = keySelect.value;
    scheduleUrl();
    render();
  });
  const keyView = el('select', 'control', { testid: 'key-view' });
  for (const [v, t] of [['overlay', 'outlined'], ['beside', 'own map'], ['off', 'hidden']]) keyView.append(el('option', null, { value: v, text: t }));
  keyView.addEventListener('change', () => {
    state.keyView = keyView.value;
    scheduleUrl();
    render();
  });
  const ablation = el('div', 'tr-ablation', { testid: 'ablation', attrs: { 'aria-live': 'polite' } });
  const restore = el('button', 'btn btn-quiet', { type: 'button', text: 'Restore all heads', testid: 'restore-all' });
  restore.addEventListener('click', () => setAblate([]));
  const gridTop = el('div', 'tr-grid-controls', {},
    el('label', 'field-label', { text: 'Answer key', htmlFor: 'tr-key' }), keySelect,
    el('label', 'field-label', { text: 'drawn', htmlFor: 'tr-key-view' }), keyView);
  keySelect.id = 'tr-key';
  keyView.id = 'tr-key-view';
  center.append(transport, gridCard);
  gridView = createGridView(gridCard, { tooltip, onToggleHead: toggleHead });
  gridCard.insertBefore(gridTop, gridCard.children[1]);
  gridCard.append(el('div', 'tr-row tr-ablation-row', {}, ablation, restore),
    el('p', 'field-hint', { text: 'Ablate a head to zero its output and compare the held-out accuracy with and without it. Hover, tap or use the arrow keys on a map for the exact weight.' }));

  // timeline
  const timelineCard = el('section', 'card tr-timeline-card', { attrs: { 'aria-label': 'Timeline' } });
  center.append(timelineCard);
  timelineView = createTimelineView(timelineCard, {
    onScrub(step) {
      scrub = step;
      render();
    },
  });

  // curves
  const curves = el('section', 'card tr-curves', { attrs: { 'aria-label': 'Loss and accuracy' } });
  const logBox = el('input', null, { type: 'checkbox', id: 'tr-log', testid: 'log-scale' });
  logBox.addEventListener('change', () => {
    state.logScale = logBox.checked;
    scheduleUrl();
    render();
  });
  curves.append(el('h2', 'card-title', { text: 'Loss and accuracy' }), el('div', 'field field-check', {}, logBox, el('label', 'field-label', { text: 'Log-scale loss', htmlFor: 'tr-log' })));
  lossChart = createChart(curves, { title: 'Loss (cross-entropy)', yLabel: 'loss', testid: 'loss-chart' });
  accChart = createChart(curves, { title: 'Accuracy', yLabel: 'accuracy', testid: 'accuracy-chart' });

  const predCard = el('section', 'card tr-pred-card', { attrs: { 'aria-label': 'Predictions' } });
  predictionsView = createPredictionsView(predCard);

  // files
  const files = el('section', 'card tr-files', { attrs: { 'aria-label': 'Model files' } });
  const downloadBtn = el('button', 'btn', { type: 'button', text: 'Download .safetensors', testid: 'download' });
  const loadInput = el('input', 'sr-only', { type: 'file', accept: '.safetensors,application/octet-stream', testid: 'model-file', id: 'tr-model-file' });
  const loadBtn = el('button', 'btn', { type: 'button', text: 'Load a model\u2026', testid: 'load' });
  const playground = el('button', 'btn btn-primary', { type: 'button', text: 'Open in playground', testid: 'open-playground' });
  downloadBtn.addEventListener('click', () => send({ type: 'save', purpose: 'download' }));
  loadBtn.addEventListener('click', () => loadInput.click());
  loadInput.addEventListener('change', () => {
    if (loadInput.files?.[0]) loadModelFile(loadInput.files[0]);
    loadInput.value = '';
  });
  playground.addEventListener('click', () => {
    if (run.running) pause();
    send({ type: 'save', purpose: 'playground' });
  });
  files.append(el('h2', 'card-title', { text: 'This model' }),
    el('div', 'tr-row', {}, playground, downloadBtn, loadBtn, loadInput),
    el('p', 'field-hint', { text: 'Open in playground shows all twelve steps with this model\u2019s real weights. Drop a .safetensors file anywhere on the page to load it, or a .txt file to train on its text.' }));
  right.append(curves, predCard, files);
  app.append(side, center, right);
  const empty = el('p', 'tr-empty', { testid: 'no-model' });
  gridCard.append(empty);
  ui = { app, empty, play, stepBtn, reset, counter, speed, stopAt, speedSel, stopNote: stopNoteEl, overfit: overfitEl, memoryNote, progressBox, progress, progressText, metrics, keySelect, keyView, ablation, restore, logBox, downloadBtn, playground };
}

function togglePlay() {
  if (modelError) return;
  if (run.running || catchUp != null) pause();
  else {
    scrub = null;
    run.running = true;
    checks = [];
    stopping = false;
    stopNote = '';
    send({ type: 'play' });
    render();
  }
}

/** The worker's pace for free training: the speed choice of the state. */
function sendPace() {
  send({ type: 'pace', stepsPerSecond: state.speed === 'watch' ? WATCH_STEPS_PER_SECOND : 0 });
}

function pause() {
  send({ type: 'pause' });
}

function changeSettings(patch) {
  const next = { ...state, ...patch };
  if (patch.mlp === -1) next.mlp = 4 * next.dModel;
  if (patch.dModel && state.mlp > 0) next.mlp = 4 * next.dModel;
  next.step = 0;
  next.ablate = [];
  const normal = normalizeTrainState(next);
  if (!modelChanged(state, normal)) return;
  const wasRunning = run.running;
  state = normal;
  scheduleUrl();
  init(0);
  if (wasRunning) send({ type: 'play' });
}

function changeTask(name, force = false) {
  if (name === state.task && !force) return;
  corpusProblem = null;
  const corpus = name === 'text' ? (state.corpus || SAMPLE_TEXT) : '';
  const next = defaultTrainState(name, tasks, corpus);
  next.theme = state.theme;
  next.keyView = state.keyView;
  next.logScale = state.logScale;
  next.stopAt = state.stopAt;
  next.speed = state.speed;
  state = normalizeTrainState({ ...next, corpus });
  state.corpus = corpus;
  setCorpus(corpus).then(() => scheduleUrl());
  init(0);
}

function toggleHead(layer, head) {
  const has = state.ablate.some(([l, h]) => l === layer && h === head);
  setAblate(has ? state.ablate.filter(([l, h]) => !(l === layer && h === head)) : [...state.ablate, [layer, head]]);
}

function setAblate(list) {
  state.ablate = canonicalHeads(list);
  run.ablation = null;
  lab.dataset.ablated = '';
  send({ type: 'ablate', heads: state.ablate });
  scheduleUrl();
  render();
}

// ---- render ------------------------------------------------------------------------------------------
let frame = 0;
let settingsKey = '';
let settingsCorpus = '';
function render() {
  if (!frame) frame = requestAnimationFrame(draw);
}

const pct = (x) => formatPercent(x, 3);

function draw() {
  frame = 0;
  if (!ui || !state) return;
  const pal = currentPalette();
  const busy = catchUp != null;
  lab.dataset.step = String(run.step);
  lab.dataset.running = run.running || busy ? '1' : '0';
  lab.dataset.catching = busy ? '1' : '0';
  lab.dataset.final = run.final ? '1' : '0';
  lab.dataset.gen = String(gen);
  lab.dataset.stepsPerSecond = String(run.stepsPerSecond);
  lab.dataset.timelineBytes = String(run.timeline.bytes);
  if (run.heldout) {
    lab.dataset.heldout = String(run.heldout.accuracy);
    lab.dataset.heldoutSamples = String(run.heldout.samples);
  }
  lab.dataset.ablated = run.ablation ? String(run.ablation.accuracy) : '';
  lab.dataset.ablationStep = run.ablation ? String(run.ablation.step) : '';

  const sk = JSON.stringify({ ...state, corpus: state.corpus.length, step: 0, gen: model?.gen, corpusProblem, textShort });
  if (sk !== settingsKey || state.corpus !== settingsCorpus) {
    settingsKey = sk;
    settingsCorpus = state.corpus;
    settingsView.update(state, tasks, { model, corpusProblem, textShort });
  }
  // transport
  ui.play.textContent = run.running || busy ? '\u275a\u275a Pause' : '\u25b6 Play';
  ui.play.setAttribute('aria-label', run.running || busy ? 'Pause training' : 'Train (play)');
  const cannotTrain = Boolean(modelError) || !model || model.hasTask === false;
  ui.play.disabled = cannotTrain;
  ui.stepBtn.disabled = run.running || busy || cannotTrain;
  ui.counter.textContent = run.step.toLocaleString('en');
  ui.counter.dataset.value = String(run.step);
  ui.speed.textContent = run.running && run.stepsPerSecond > 0 ? `${Math.round(run.stepsPerSecond).toLocaleString('en')} steps/s` : '';
  ui.stopAt.value = state.stopAt;
  ui.speedSel.value = state.speed;
  ui.stopNote.textContent = stopNote;
  ui.stopNote.hidden = !stopNote;
  lab.dataset.stopped = stopNote ? '1' : '0';
  ui.progressBox.hidden = !busy;
  if (busy) {
    ui.progress.max = catchUp;
    ui.progress.value = run.step;
    ui.progressText.textContent = `Retraining to step ${catchUp.toLocaleString('en')} from the link (training is deterministic): ${run.step.toLocaleString('en')} done.`;
  }
  const h = run.heldout;
  ui.metrics.textContent = h
    ? `Held-out accuracy ${pct(h.accuracy)}, loss ${formatValue(h.loss, 3)} (${h.samples} sequences${run.final ? ', after the pause' : ', live'})${run.trainAcc.last ? ` \u00b7 training batch ${pct(run.trainAcc.last[1])}` : ''}`
    : modelError ? 'No model: the settings above could not build one.'
      : model?.hasTask === false ? 'This model is shown on the probe; training it needs the text it was trained on.' : 'Press \u25b6 to train.';
  ui.overfit.textContent = overfit ?? '';
  ui.overfit.hidden = !overfit || !model;
  ui.memoryNote.textContent = memoryText(memory);
  ui.memoryNote.dataset.bytes = memory ? String(memory.bytes) : '';
  ui.memoryNote.dataset.fits = memory ? String(memory.fits) : '';
  ui.app.classList.toggle('tr-no-model', !model);
  ui.empty.textContent = textShort ? 'No model yet: the text is too short for this task size (see beside the text field).' : 'No model yet: these settings could not build one. Change a setting or press \u201cTask defaults\u201d.';
  ui.downloadBtn.disabled = !model;
  ui.playground.disabled = !model;
  ui.restore.hidden = !state.ablate.length;
  ui.logBox.checked = state.logScale;
  if (!model) return;

  // grid
  const keys = model.keys;
  const keyName = state.key || keys[0]?.name || '';
  const keyOptions = keys.map((k) => ({ value: k.name, text: k.name }));
  if (ui.keySelect.options.length !== keyOptions.length || [...ui.keySelect.options].some((o, i) => o.value !== keyOptions[i].value)) {
    ui.keySelect.replaceChildren(...keyOptions.map((o) => el('option', null, { value: o.value, text: o.text })));
  }
  ui.keySelect.value = keyName;
  ui.keyView.value = state.keyView;
  const snap = scrub != null ? run.timeline.atStep(scrub) : null;
  const shown = snap ?? run.live;
  const cfg = model.config;
  if (shown) {
    gridView.update({
      layers: cfg.layers,
      heads: cfg.heads,
      tokens: model.probe.tokens,
      T: model.probe.rows,
      maps: shown.maps,
      scores: shown.scores,
      keys,
      keyName,
      keyView: state.keyView,
      ablate: state.ablate,
      heldoutScores: snap ? null : run.headScores,
      causal: cfg.causal,
      step: shown.step,
      live: !snap,
      palette: pal,
    });
  }
  // ablation
  if (state.ablate.length) {
    const names = state.ablate.map(([l, hh]) => headName(l, hh)).join(', ');
    if (model.hasTask === false) ui.ablation.textContent = `${names} ablated: comparing held-out accuracy needs the text this model was trained on.`;
    else {
      ui.ablation.textContent = run.ablation && h
        ? `Held-out accuracy with all heads ${pct(h.accuracy)}; with ${names} ablated ${pct(run.ablation.accuracy)} (${run.ablation.samples} sequences).`
        : `Evaluating without ${names}\u2026`;
    }
  } else ui.ablation.textContent = 'All heads active.';
  ui.restore.hidden = !state.ablate.length;

  // curves
  const xMax = Math.max(10, run.step);
  ui.logBox.checked = state.logScale;
  lossChart.update({
    series: [
      { name: 'training batch', className: 'tr-s-train', points: run.trainLoss.points },
      { name: 'held-out', className: 'tr-s-held', points: run.heldLoss.points },
    ],
    xMax,
    log: state.logScale,
    marker: snap?.step ?? null,
  });
  accChart.update({
    series: [
      { name: 'training batch', className: 'tr-s-train', points: run.trainAcc.points },
      { name: 'held-out', className: 'tr-s-held', points: run.heldAcc.points },
    ],
    xMax,
    yDomain: [0, 1],
    marker: snap?.step ?? null,
  });
  timelineView.update({
    timeline: run.timeline,
    keys,
    scrub: snap ? snap.step : null,
    step: run.step,
    heldout: run.heldAcc.points,
    xMax,
    cap: run.cap,
    interval: snapshotInterval(run.step, run.cap),
  });
  // predictions
  const p = snap ?? run.live;
  if (p) {
    predictionsView.update({
      tokens: model.probe.tokens.slice(0, model.probe.length),
      targets: model.probe.targets.slice(0, model.probe.length),
      predictions: p.predictions,
      correct: p.correct,
      ablated: !snap && state.ablate.length && run.ablation ? run.ablation : null,
      vocabulary: model.vocabulary,
    });
  }
}

// ---- start ---------------------------------------------------------------------------------------------
async function start(list) {
  tasks = list;
  const parsed = parseTrainHash(location.hash, tasks);
  state = parsed.state;
  if (parsed.problems.length) {
    notify('url', 'notice', 'Some settings in the link could not be used,', 'so defaults were used for them:', { details: parsed.problems, dismissible: true });
  }
  if (state.task === 'text') {
    const text = await linkCorpus(parsed.textParam);
    state.corpus = text;
    await setCorpus(text);
  }
  applyTheme();
  buildPage();
  lab.dataset.state = 'ready';
  sendPace();
  await openSession();
  if (!parsed.empty) scheduleUrl();
}

// ---- theme, keyboard, drag and drop ------------------------------------------------------------------------------------
const themeToggle = createThemeToggle(doc.getElementById('tr-theme'), {
  onChange(next) {
    if (!state) return;
    state.theme = next;
    applyTheme();
    scheduleUrl();
  },
});
function applyTheme() {
  const theme = state?.theme ?? 'system';
  if (theme === 'system') delete doc.documentElement.dataset.theme;
  else doc.documentElement.dataset.theme = theme;
  palette = null;
  themeToggle.update(null, { theme });
  render();
}
window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
  palette = null;
  render();
});
window.addEventListener('resize', render);

doc.addEventListener('keydown', (e) => {
  if (!ui || e.altKey || e.ctrlKey || e.metaKey) return;
  const t = e.target;
  if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement || t instanceof HTMLButtonElement || t instanceof HTMLCanvasElement) return;
  if (e.key === ' ' || e.key === 'k') {
    e.preventDefault();
    togglePlay();
  } else if (e.key === '.') {
    ui.stepBtn.click();
  }
});

// a link pasted into the address bar of an open lab
window.addEventListener('hashchange', async () => {
  if (!tasks) return;
  if (urlTimer) {
    clearTimeout(urlTimer);
    urlTimer = 0;
    delete lab.dataset.urlPending;
  }
  const hash = location.hash.replace(/^#/, '');
  if (hash === written) return;
  written = hash;
  const parsed = parseTrainHash(location.hash, tasks);
  const before = state;
  state = parsed.state;
  if (state.task === 'text') {
    const text = await linkCorpus(parsed.textParam);
    state.corpus = text;
    await setCorpus(text);
  } else corpusProblem = null;
  if (parsed.problems.length) notify('url', 'notice', 'Some settings in the link could not be used,', 'so defaults were used for them:', { details: parsed.problems, dismissible: true });
  applyTheme();
  sendPace();
  if (modelChanged(before, state) || state.step !== run.step) init(state.step);
  else {
    send({ type: 'ablate', heads: state.ablate });
    render();
  }
});

const dropZone = doc.body;
dropZone.addEventListener('dragover', (e) => {
  if (!e.dataTransfer?.types.includes('Files')) return;
  e.preventDefault();
  doc.body.classList.add('is-dragging');
});
dropZone.addEventListener('dragleave', (e) => {
  if (e.target === doc.body || !doc.body.contains(e.relatedTarget)) doc.body.classList.remove('is-dragging');
});
dropZone.addEventListener('drop', (e) => {
  doc.body.classList.remove('is-dragging');
  const file = e.dataTransfer?.files?.[0];
  if (!file || !tasks) return;
  e.preventDefault();
  if (/\.(txt|text|md)$/i.test(file.name) || file.type.startsWith('text/')) loadTextFile(file);
  else loadModelFile(file);
});
