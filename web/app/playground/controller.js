// The controller: the one place that wires controls → state → engine → views.
// It owns the state object, the engine and the latest trace. A change of a
// compute field (model, sentence, width, heads, seed, …) runs the engine once;
// a pure view change (step, query, head, layer, hover, theme) only re-renders.
// A trained model (models.js) is loaded once, on first use; its trace holds
// every layer, and the layer picker only chooses which one the steps show.
// The rules a change brings are in rules.js, the runs in runs.js, the wording
// of errors in errors.js; labels.js, keyboard.js, appearance.js and follow.js
// hold the label caches, the keys, the theme, palette and panel width, and the
// scrolling that keeps a step's figure in view.

import { createEngine } from '../../engine.js';
import {
  normalizeState, changedFields, COMPUTE_FIELDS, STEPS, ALL_STEPS, isLearnStep, LEARN_RATES, MAX_SGD_STEPS, splitLines, isTrainedModel, isLabModel, computedSentences,
  WIDTHS, HEAD_CHOICES, POSITIONALS, MASKS, MODELS, SPEEDS, MAX_SENTENCE_CHARS, MAX_BATCH, MAX_BATCH_CHARS,
} from './state.js';
import { STEP_LIST } from './steps.js';
import { LEARN_LIST } from './learn/steps.js';
import { STEP_REGISTRY } from './step-registry.js';
import { LEARN_REGISTRY } from './learn/step-registry.js';
import { createLearn, withTarget, sgdStepText } from './learn/learn.js';
import { createPretrainedLearn, pretrainedLearnKey } from './learn/pretrained.js';
import { createAnimation } from './animation.js';
import { createTooltip } from '../kit/tooltip.js';
import { createThemeToggle } from '../kit/theme.js';
import { createSentenceView } from './views/sentence.js';
import { createControls } from './views/controls.js';
import { stepFigure } from './export.js';
import { createStepper } from './views/stepper.js';
import { createSelection } from './views/selection.js';
import { createStepPanel } from './views/panel.js';
import { createMessages } from '../kit/messages.js';
import { createModelCache, ModelNotFound, modelLabel, SHIPPED_MODELS } from './models.js';
import { describeError } from './errors.js';
import { applyPatch, blockedCells, toggleCell, clampToTrace, queryOffPadding, followQuery, queryText } from './rules.js';
import { runRandom, runTrained as traceTrained, sliceLayer } from './runs.js';
import { createLabels } from './labels.js';
import { bindStepKeys } from './keyboard.js';
import { createAppearance, watchWidth } from './appearance.js';
import { createFollower } from './follow.js';
import { isPretrainedName, isLocalName, openPretrained, sourceOf, pretrainedLayerTrace, pretrainedLabel, pretrainedAbout, DEFAULT_HUB_BASE, ALL_LAYERS_MAX_CHARS } from '../hub/hub.js';
import { createHubLoaderView } from './views/hub-loader.js';
import { createGeneration } from './generate.js';

const STEP_MS = 1600;
const RANDOM_ABOUT = 'Weights are random but seeded, so a link reproduces every number. Everything is computed in your browser by a C++ engine compiled to WebAssembly.';
const TRAINED_ABOUT = 'These weights were learned: the model was trained on a task, saved as a checkpoint and loaded here. Everything is computed in your browser by a C++ engine compiled to WebAssembly.';
const PRETRAINED_ABOUT = 'These weights were learned by others, on large amounts of text, and read here from the model\u2019s own files. Everything is computed in your browser by a C++ engine compiled to WebAssembly.';

/** Where the page finds the shipped checkpoints: web/generated/models/ (build_wasm.sh copies models/ there). */
function defaultFetchShipped(name, file) {
  return fetch(new URL(`../../generated/models/${file}`, import.meta.url)).then((r) => {
    if (!r.ok) throw new Error(`the ${name} model (generated/models/${file}) could not be loaded: HTTP ${r.status}; build it with ./build_wasm.sh`);
    return r.arrayBuffer();
  }).then((b) => new Uint8Array(b));
}

// What the views offer and accept, from the state's tables (views import no state).
const CONTROL_CHOICES = Object.freeze({ widths: WIDTHS, heads: HEAD_CHOICES, positionals: POSITIONALS, masks: MASKS, models: MODELS, isTrainedModel, modelLabel });
const SENTENCE_LIMITS = Object.freeze({ maxChars: MAX_SENTENCE_CHARS, maxBatch: MAX_BATCH, maxBatchChars: MAX_BATCH_CHARS });

/** The playground's views, each wired to the controller's actions. */
function createViews(layout, stepCtx, { set, go, follow, togglePlay, controls, onBatchText, labModel, onDismiss, onLoadModel }) {
  return {
    theme: createThemeToggle(layout.theme, { onChange: (theme) => set({ theme }) }),
    sentence: createSentenceView(layout.sentence, {
      limits: SENTENCE_LIMITS,
      computedSentences,
      onSentence: (sentence) => set({ sentence }),
      onBatchText,
      onBatch: (batch) => set({ batch }),
      onShown: (shown) => set({ shown }),
      onSelectQuery: (query) => set({ query }),
      visible: controls,
    }),
    controls: createControls(layout.controls, { choices: CONTROL_CHOICES, onChange: (patch) => set(patch), visible: controls, labModel, onLoadModel }),
    stepper: createStepper(layout.stepper, {
      steps: STEP_LIST,
      learnSteps: LEARN_LIST,
      speeds: SPEEDS,
      onStep: (step) => {
        set({ step });
        follow();
      },
      onPrev: () => go(-1),
      onNext: () => go(1),
      onTogglePlay: () => togglePlay(),
      onSpeed: (speed) => set({ speed }),
    }),
    selection: createSelection(layout.selection, { onChange: (patch) => set(patch) }),
    panel: createStepPanel(layout.panel, stepCtx, [...STEP_REGISTRY, ...LEARN_REGISTRY]),
    messages: createMessages(layout.messages, { onDismiss }),
  };
}

/** What a picked model that could not be loaded says: {model, title, text, link}. */
function modelLoadError(e, name, from) {
  return e instanceof ModelNotFound
    ? { model: name, title: 'This model is not in this browser:', text: `${e.message}. Meanwhile, pick another model.`, link: from ? { href: `train.html#${from}`, text: 'Open the training lab with its settings \u2192' } : null }
    : { model: name, title: `The ${modelLabel(name)} model could not be loaded:`, text: String(e?.message ?? e) };
}

/** The engine's start-up failure, with what to do about it. */
function fatalText(e) {
  let fatal = String(e?.message ?? e);
  if (/WebAssembly/.test(fatal) && !/Chrome/.test(fatal)) fatal += ' Any current Chrome, Edge, Firefox or Safari can run it.';
  else if (!/WebAssembly/.test(fatal)) fatal += ' (If you are running it from a checkout: build the module with ./build_wasm.sh and serve web/ over http.)';
  return fatal;
}

/** The note that stands for the step panel while there is no trace to show (or null). */
function panelStatus({ fatal, engine, modelError, state, modelLoaded, trace, runError }) {
  if (fatal) return ['error', `The attention engine could not start: ${fatal}`];
  if (!engine) return ['loading', 'Starting the attention engine\u2026'];
  if (modelError && modelError.model === state.model) return ['error', `${modelError.title} ${modelError.text}`];
  if (isTrainedModel(state.model) && !modelLoaded) return ['loading', `Loading the ${modelLabel(state.model)} model\u2026`];
  if (isPretrainedName(state.model) && !trace && !runError) return ['loading', `Running ${modelLabel(state.model)} on the sentence\u2026`];
  if (!trace) return ['empty', runError ? `${runError.title} ${runError.text}` : 'Type a sentence to begin.'];
  return null;
}

export function createController(layout, { initialState = {}, notices = [], controls = null, onStateChange = null, keyboardTarget = null, loadEngine = createEngine, fetchShipped = defaultFetchShipped, loadLab = null, freshStart = false, freshStep = null, hubBase = DEFAULT_HUB_BASE, pretrainedInPage = false } = {}) {
  let state = normalizeState(initialState);
  const models = createModelCache({ fetchShipped, loadLab });
  const learn = createLearn();
  let learnProblem = null; // why a step by hand in the link could not be taken
  // the Learn part of a pretrained model: asked of its worker (learn-pretrained.js), the newest request wins
  const plearn = createPretrainedLearn();
  let plearnAsked = null; // the key (pretrainedLearnKey) of the backward asked last
  let plearnValue = null; // {key, value}: the last answer, for that key
  // pretrained models (hub.js): each in its own worker, loaded when the user asks (or a link names one)
  const pretrained = new Map(); // name → handle
  let hubLoad = null; // {name, abort: AbortController, progress} while one loads
  let loaderOpen = false;
  let loaderError = null; // {title, text}: why the last load failed
  let traceSeq = 0; // the newest trace a pretrained model was asked for
  let modelError = null; // {model, title, text} when the picked model could not be loaded
  let opened = !freshStart; // a fresh page opens on the model's featured head (once)
  let engine = null;
  let fatal = null;
  let result = null; // {trace, traces}
  let runError = null;
  let runCount = 0;
  let queryMoved = null; // {from, to} when batch mode moved the query off a [PAD] token
  let queryWord = null; // the word the query is meant to be on (rules.js followQuery), kept across edits
  let pendingFollow = null; // {word, query, last}: a new sentence waits for its trace to place the query
  let messagesExtra = notices.length
    ? [{ id: 'url', kind: 'notice', title: 'Some settings in the link could not be used,', text: 'so defaults were used for them:', details: notices, dismissible: true }]
    : [];
  const root = layout.root;
  const doc = root.ownerDocument;
  const win = doc.defaultView;

  // ---- views ------------------------------------------------------------------------
  const tooltip = createTooltip(layout.tipLayer);
  const appearance = createAppearance(root, win, () => render());
  // a new layout when the panel's width changes (rotation, window resize)
  const panelWidth = watchWidth(win, layout.panel, () => renderFrame());
  const labels = createLabels();
  const stepCtx = {
    tooltip,
    /** The step panel's width, tracked by a ResizeObserver (reading it would force a layout). */
    width: () => panelWidth.width() || layout.panel.clientWidth,
    select: (patch) => set(patch),
    toggleMask,
    /** The Learn part's actions (views/learn-*.js): an answer picked at a position, a step by hand, its undo. */
    learn: {
      setTarget: (q, id) => set({ targets: withTarget(state.targets, q, id) }),
      step: () => set({ sgd: [...state.sgd, sgdStepText(state.lr, state.scope, state.layer, viewState().head)].slice(0, MAX_SGD_STEPS) }),
      undo: () => set({ sgd: state.sgd.slice(0, -1) }),
    },
    learnChoices: Object.freeze({ rates: LEARN_RATES, maxSteps: MAX_SGD_STEPS }),
    /** The guided tour: step 1, playing (Pause, ← → and Next work as always). */
    tour: () => {
      set({ step: STEPS[0] });
      if (!clock.playing) clock.play();
      follow();
    },
  };
  const follow = createFollower(win, { panel: layout.panel, stepper: layout.stepper, offset: (o) => views.panel.revealOffset(o) });
  const views = createViews(layout, stepCtx, {
    set, go, follow, togglePlay, controls,
    onBatchText(text) {
      const lines = splitLines(text);
      if (!lines.length) {
        runError = { title: 'Batch mode needs a sentence:', text: 'write at least one sentence, one per line.' };
        render();
        return;
      }
      set({ sentences: lines });
    },
    labModel: () => (isLabModel(state.model) ? state.model : null),
    onLoadModel() {
      loaderOpen = true;
      render();
    },
    onDismiss(id) {
      messagesExtra = messagesExtra.filter((m) => m.id !== id);
      render();
    },
  });

  const hubLoader = createHubLoaderView(views.controls.loaderSlot, {
    onHub: (id) => startLoad({ kind: 'hub', base: hubBase, id }, `hf:${id}`),
    onFiles: (files, folder) => startLoad({ kind: 'files', files }, `local:${folder || 'your model'}`),
    onCancel: () => hubLoad?.abort.abort(),
    onClose() {
      loaderOpen = false;
      render();
    },
  });

  // "Next token" (pretrained GPT-2): its own module, under the sentence
  const generation = createGeneration(layout.generation ?? null, { handle: () => pretrained.get(state.model) ?? null, state: () => state, trace: () => currentTrace(), set, render });

  const clock = createAnimation({
    doc,
    durationMs: () => {
      // the score step fills its row key by key, so it gets more time for more keys
      if (state.step === 'scores' && result) return Math.min(9000, Math.max(STEP_MS, result.trace.tokens.length * 450));
      return STEP_MS;
    },
    onFrame: () => renderFrame(),
    onStepDone: () => {
      if (isLearnStep(state.step)) return false; // Play walks the forward steps; the Learn part is stepped by hand
      const i = STEPS.indexOf(state.step);
      if (i >= STEPS.length - 1) return false;
      set({ step: STEPS[i + 1] });
      follow({ watching: true });
      return true;
    },
    onPlayingChange: () => render(),
  });
  clock.setSpeed(state.speed);

  // ---- state changes ---------------------------------------------------------------------
  function set(patch) {
    const prev = state;
    const next = applyPatch(prev, patch, result?.trace ?? null);
    const changed = changedFields(prev, next);
    if (!changed.length) return;
    state = next;
    if (changed.includes('theme')) appearance.apply(state.theme);
    if (changed.includes('speed')) clock.setSpeed(state.speed);
    if (changed.includes('step')) clock.restartStep();
    if (changed.includes('sentence') && patch.sentence !== undefined && patch.query === undefined) {
      // the query follows its word into the new sentence (placed once the new trace is there)
      const tr = currentTrace();
      pendingFollow = { word: queryWord ?? (tr ? queryText(tr, prev.query) : null), query: prev.query, last: tr ? prev.query >= tr.tokens.length - 1 : false };
    }
    const compute = changed.filter((k) => COMPUTE_FIELDS.includes(k));
    const customOnly = compute.length === 1 && compute[0] === 'customMask' && state.mask !== 'custom';
    if (compute.length && !customOnly) run();
    else if (changed.includes('shown') && result?.traces) result = { ...result, trace: result.traces[Math.min(state.shown, result.traces.length - 1)] };
    else if (changed.includes('layer') && isPretrainedName(state.model)) run();
    // a pretrained model's steps by hand are taken on the picked targets: new ones put the trained weights back (a new forward)
    else if (changed.includes('targets') && isPretrainedName(state.model) && state.sgd.length) run();
    else if (changed.includes('layer') && result?.modelTrace) result = sliceLayer(result, state.layer);
    placeQuery();
    clampSelection();
    if (changed.includes('query')) queryMoved = null;
    if (patch.query !== undefined || changed.includes('model')) queryWord = null;
    if (patch.query === undefined && (changed.includes('shown') || changed.includes('batch') || changed.includes('sentences'))) {
      const off = queryOffPadding(state, currentTrace());
      state = off.state;
      queryMoved = off.moved;
    }
    persist();
    render();
  }

  function go(delta) {
    // inside the part of the current step: the twelve forward steps, or the Learn part's
    const part = isLearnStep(state.step) ? ALL_STEPS.filter(isLearnStep) : STEPS;
    const i = part.indexOf(state.step);
    const j = Math.max(0, Math.min(part.length - 1, i + delta));
    if (j === i) return;
    set({ step: part[j] });
    follow();
  }

  /** Play or pause; a user's Play brings the figure into view (a host's play() does not scroll its page). */
  function togglePlay({ followFigure = true } = {}) {
    if (clock.playing) {
      const p = clock.progress;
      clock.pause();
      if (state.step === 'scores' && result && p < 1) set({ key: Math.min(result.trace.tokens.length - 1, Math.floor(p * result.trace.tokens.length)) });
    } else {
      if (isLearnStep(state.step)) return; // the Learn part is stepped by hand
      if (state.step === STEPS[STEPS.length - 1]) set({ step: STEPS[0] });
      clock.play();
      if (followFigure) follow();
    }
  }

  function toggleMask(i, j) {
    const tr = result?.trace;
    if (!tr || tr.model) return; // a trained model's mask is the one it was trained with
    const cells = state.mask === 'custom' ? state.customMask : blockedCells(tr.mask);
    set({ mask: 'custom', customMask: toggleCell(cells, i, j), query: i, key: j });
  }

  function clampSelection() {
    state = clampToTrace(state, currentTrace());
    const tr = currentTrace();
    if (tr && !pendingFollow && queryWord === null) queryWord = queryText(tr, state.query);
  }

  /** A new sentence's trace is on screen: put the query on its word, else on the model's natural query. */
  function placeQuery() {
    const tr = currentTrace();
    if (!pendingFollow || !tr) return;
    // a pretrained model's trace comes later (its worker): the query is placed on the new one
    if (isPretrainedName(state.model) && tr.sentence !== state.sentence) return;
    const q = followQuery(tr, pendingFollow);
    pendingFollow = null;
    if (q !== state.query) state = { ...state, query: q };
  }

  function persist() {
    onStateChange?.({ ...state });
  }

  // ---- the engine ----------------------------------------------------------------------
  /** A trained model: its trace for the sentence (loads the model first, once). */
  function runTrained() {
    const name = state.model;
    const entry = models.get(name);
    if (!entry) {
      models.load(engine, name).then(() => {
        modelError = null;
        if (state.model !== name) return;
        if (!opened) {
          // a fresh page opens where the model's learned pattern is (the page: on the heads step)
          const f = SHIPPED_MODELS[name]?.featured;
          if (f) state = normalizeState({ ...state, layer: f.layer, head: f.head, ...(freshStep ? { step: freshStep } : {}) });
        }
        const fresh = !opened;
        if (fresh) opened = true;
        run();
        placeQuery();
        clampSelection();
        persist();
        render();
        // a fresh page shows its first figure when it starts low on the screen (a phone: below the sentence)
        if (fresh && freshStep) {
          win.requestAnimationFrame(() => {
            const fig = layout.panel.querySelector('section:not([hidden]) .figures > .figure-row:not([hidden])');
            if (fig && fig.getBoundingClientRect().top > win.innerHeight * 0.7) follow();
          });
        }
      }, (e) => {
        if (state.model !== name) return;
        modelError = modelLoadError(e, name, state.from);
        result = null;
        render();
      });
      return;
    }
    modelError = null;
    if (state.batch) {
      // batch mode pads several sentences for random weights; a trained model reads one
      state = { ...state, batch: false };
    }
    try {
      // the weights: the trained ones plus the link's steps by hand (learn.js)
      const synced = learn.sync(entry, state);
      learnProblem = synced.problem;
      if (synced.applied < state.sgd.length) state = { ...state, sgd: state.sgd.slice(0, synced.applied) };
      result = sliceLayer(traceTrained(entry, state.sentence), state.layer);
      runError = null;
      runCount += 1;
      root.dataset.run = String(runCount);
    } catch (e) {
      runError = describeError(e, !!result && result.entry === entry);
      if (result && result.entry !== entry) result = null;
    }
  }

  // ---- pretrained models -----------------------------------------------------------------
  /** Loads a pretrained model in its worker; the page keeps the model it shows until this one works. */
  function startLoad(source, name) {
    hubLoad?.abort.abort();
    const load = { name, abort: new AbortController(), progress: null, file: null, since: 0 };
    hubLoad = load;
    loaderError = null;
    render();
    openPretrained(source, {
      signal: load.abort.signal,
      inPage: pretrainedInPage,
      loadEngine,
      onProgress(p) {
        if (hubLoad !== load) return;
        const now = performance.now();
        if (p.file !== load.file || p.phase !== load.progress?.phase) {
          load.file = p.file;
          load.since = now;
        }
        const seconds = (now - load.since) / 1000;
        load.progress = { ...p, rate: seconds > 0.5 ? p.loaded / seconds : 0 };
        renderLoader();
      },
    }).then((handle) => {
      if (hubLoad !== load) {
        handle.dispose();
        return;
      }
      hubLoad = null;
      pretrained.get(name)?.dispose();
      pretrained.set(name, handle);
      loaderOpen = false;
      if (modelError?.model === name) modelError = null;
      if (state.model === name) {
        run();
        persist();
        render();
      } else {
        set({ model: name });
      }
    }, (e) => {
      if (hubLoad !== load) return;
      hubLoad = null;
      loaderError = e?.code === 'cancelled' ? null : { title: `${pretrainedLabel(name)} could not be loaded:`, text: `${String(e?.message ?? e)}.${state.model !== name ? ` The page still shows ${modelLabel(state.model)}.` : ''}` };
      if (state.model === name) {
        // the page opened on this model (a link): the message bar and the panel say why
        modelError = { model: name, title: `${pretrainedLabel(name)} could not be loaded:`, text: e?.code === 'cancelled' ? 'the download was cancelled. Pick a model, or Load a model\u2026 again.' : String(e?.message ?? e) };
        loaderError = null;
      }
      render();
    });
  }

  /** Frees the pretrained models that are not on screen (each holds its weights in its worker). */
  function dropOtherPretrained() {
    for (const [name, handle] of pretrained) {
      if (name === state.model) continue;
      plearn.forget(name);
      handle.dispose();
      pretrained.delete(name);
    }
  }

  /** A pretrained model's trace of the sentence (asked of its worker; the newest request wins). */
  function runPretrained() {
    const name = state.model;
    const handle = pretrained.get(name);
    if (!handle) {
      const source = sourceOf(name, hubBase);
      if (source && hubLoad?.name !== name && modelError?.model !== name) startLoad(source, name);
      else if (isLocalName(name) && hubLoad?.name !== name) modelError = { model: name, title: 'This model came from files on your computer:', text: 'a link cannot bring them back. Load them again with \u201cLoad a model\u2026\u201d.' };
      return;
    }
    dropOtherPretrained();
    modelError = null;
    if (state.batch) state = { ...state, batch: false };
    const seq = ++traceSeq;
    const { sentence } = state;
    const layer = Math.min(state.layer, handle.info.config.layers - 1);
    // the steps by hand first (the worker's weights), then the trace on them: one queue (learn-pretrained.js)
    const asked = { ...state };
    plearn.sync(handle, asked).then((synced) => {
      if (seq !== traceSeq || state.model !== name) return;
      learnProblem = synced.problem;
      if (synced.applied < state.sgd.length) state = { ...state, sgd: state.sgd.slice(0, synced.applied) };
    }, () => {});
    plearn.enqueue(() => handle.rawTrace(sentence, layer, { allWeights: sentence.length <= ALL_LAYERS_MAX_CHARS, generated: state.gen })).then((raw) => {
      if (seq !== traceSeq || state.model !== name) return;
      result = { traces: null, trace: pretrainedLayerTrace(raw, layer, name, handle.info, sentence), entry: { name }, modelTrace: null, learnKey: traceLearnKey(asked) };
      runError = null;
      runCount += 1;
      root.dataset.run = String(runCount);
      placeQuery();
      clampSelection();
      persist();
      render();
    }, (e) => {
      if (seq !== traceSeq || state.model !== name) return;
      runError = describeError(e, result?.entry?.name === name);
      if (result?.entry?.name !== name) result = null;
      render();
    });
  }

  function run() {
    if (!engine) return;
    if (isPretrainedName(state.model)) {
      runPretrained();
      return;
    }
    if (isTrainedModel(state.model)) {
      runTrained();
      return;
    }
    modelError = null;
    try {
      result = runRandom(engine, state);
      runError = null;
      runCount += 1;
      root.dataset.run = String(runCount);
    } catch (e) {
      runError = describeError(e, !!result);
    }
  }

  // ---- rendering ---------------------------------------------------------------------------
  function viewState() {
    const tr = currentTrace();
    const T = tr ? tr.tokens.length : 0;
    const C = tr ? tr.config.dModel : state.dModel;
    const H = tr ? tr.heads.length : state.heads;
    const D = C / H;
    const clamp = (x, n) => Math.max(0, Math.min(n - 1, x));
    return {
      state,
      T, C, H, D,
      q: clamp(state.query, T),
      k: clamp(state.key, T),
      d: clamp(state.dim, C),
      head: clamp(state.head, H),
      labels: tr ? labels.tokens(tr) : [],
      positionLabels: tr ? labels.positions(tr) : [],
      dimLabels: labels.dims(C),
      progress: clock.progress,
      playing: clock.playing,
      palette: appearance.palette(),
      trained: Boolean(tr?.model),
      queryMoved,
      learn: tr && isLearnStep(state.step) ? learnData(tr) : null,
    };
  }

  /** Which weights and sentence a pretrained trace is of (its Learn steps need the same). */
  function traceLearnKey(s) {
    return JSON.stringify([s.model, s.sentence, s.layer, s.sgd, s.sgd.length ? s.targets : null]);
  }

  /**
   * A pretrained model's backward (learn-pretrained.js): the worker's answer for this state, or
   * {unavailable, pending} while it computes (asked once per state; an older state's answer is dropped).
   */
  function pretrainedLearnData(tr) {
    const handle = pretrained.get(state.model);
    const computing = { unavailable: `Computing the backward of layer ${state.layer + 1} of ${modelLabel(state.model)}\u2026`, pending: true };
    // the forward on screen must be of these weights and this sentence (a step by hand asks a new one)
    if (!handle || result?.learnKey !== traceLearnKey(state)) return computing;
    const key = pretrainedLearnKey(state);
    if (plearnValue?.key === key) {
      // the backward reads the text again; the forward may carry generated ids that read differently
      const n = plearnValue.value.targets?.length ?? 0;
      if (n && n !== tr.tokens.length) return { unavailable: `The backward reads this text as ${n} tokens and the forward shows ${tr.tokens.length} (tokens written by \u201cNext token\u201d can read differently as text): edit the sentence to follow the backward.` };
      return plearn.pick(plearnValue.value, state, handle, tr.model.tokenTexts);
    }
    if (plearnAsked !== key) {
      plearnAsked = key;
      const answer = (value) => {
        if (plearnAsked !== key) return; // asked for an older state: dropped
        plearnValue = { key, value };
        if (value.synced && value.synced.applied < state.sgd.length) {
          learnProblem = value.synced.problem;
          state = { ...state, sgd: state.sgd.slice(0, value.synced.applied) };
          persist();
          run();
        }
        render();
      };
      plearn.compute(handle, { ...state }).then(answer, (e) => answer({ defaults: [], targets: [], problem: `The backward could not be computed: ${String(e?.message ?? e)}` }));
    }
    return computing;
  }

  /** The backward the Learn steps show (learn.js), or {unavailable: why} for a model without one. */
  function learnData(tr) {
    if (isPretrainedName(state.model)) return pretrainedLearnData(tr);
    if (!tr.model) return { unavailable: 'Random weights were never trained on anything, so there is no loss to learn from: pick the coreference or the language model to follow the backward pass.' };
    try {
      return learn.compute(result.entry, state);
    } catch (e) {
      return { unavailable: `The backward could not be computed: ${String(e?.message ?? e)}` };
    }
  }

  function messageList() {
    const list = [...messagesExtra];
    if (fatal) list.unshift({ id: 'fatal', kind: 'error', title: 'The attention engine could not start.', text: fatal });
    else if (modelError && modelError.model === state.model) list.unshift({ id: 'model', kind: 'error', title: modelError.title, text: modelError.text, link: modelError.link });
    else if (runError) list.unshift({ id: 'run', kind: 'error', ...runError });
    if (learnProblem) list.push({ id: 'learn', kind: 'notice', title: 'A step by hand in the link could not be taken:', text: `${learnProblem}; the steps before it were.` });
    return list;
  }

  /** The trace on screen: only one of the model that is picked. */
  function currentTrace() {
    const tr = result?.trace ?? null;
    if (!tr) return null;
    if (isTrainedModel(state.model)) return result.entry?.name === state.model ? tr : null;
    return tr.model ? null : tr;
  }

  function render() {
    const tr = currentTrace();
    const v = viewState();
    views.theme.update(tr, state);
    views.sentence.update(tr, state, v);
    generation.update(tr);
    views.controls.update(tr, state, { entry: controlsEntry(), pretrained: [...new Set([...pretrained.keys(), ...(isPretrainedName(state.model) ? [state.model] : [])])] });
    renderLoader();
    if (layout.about) layout.about.textContent = isPretrainedName(state.model) ? PRETRAINED_ABOUT : isTrainedModel(state.model) ? TRAINED_ABOUT : RANDOM_ABOUT;
    views.stepper.update(tr, v);
    views.selection.update(tr, v);
    views.messages.update(messageList());
    const status = panelStatus({ fatal, engine, modelError, state, modelLoaded: isPretrainedName(state.model) ? pretrained.has(state.model) : Boolean(models.get(state.model)), trace: tr, runError })
      ?? (v.learn?.unavailable ? [v.learn.pending ? 'loading' : 'empty', v.learn.unavailable] : null);
    if (status) views.panel.status(...status);
    if (!v.learn?.unavailable) views.panel.update(tr, v);
    else views.panel.update(null, v);
    root.dataset.state = fatal ? 'error' : engine ? 'ready' : 'loading';
  }

  /** What the model controls show of the model on screen: a trained model's entry, or a pretrained model's config. */
  function controlsEntry() {
    if (isPretrainedName(state.model)) {
      const h = pretrained.get(state.model);
      if (!h) return null;
      return { pretrained: true, about: pretrainedAbout(state.model, h.info), trainer: { config: h.info.config, settings: null } };
    }
    return isTrainedModel(state.model) ? models.get(state.model) : null;
  }

  function renderLoader() {
    hubLoader.update({ open: loaderOpen || Boolean(hubLoad), busy: Boolean(hubLoad), label: hubLoad ? pretrainedLabel(hubLoad.name) : '', progress: hubLoad?.progress ?? null, error: hubLoad ? null : loaderError });
  }

  /** One animation frame: only the transport bar and the current step. */
  function renderFrame() {
    const tr = currentTrace();
    const v = viewState();
    views.stepper.update(tr, v);
    if (tr && !v.learn?.unavailable) views.panel.update(tr, v);
  }

  const unbindKeys = bindStepKeys(keyboardTarget ?? root, { go, togglePlay });

  // ---- start ------------------------------------------------------------------------------------
  appearance.apply(state.theme);
  render();
  const readyPromise = Promise.resolve()
    .then(() => loadEngine())
    .then((e) => {
      engine = e;
      run();
      clampSelection();
      persist();
      render();
      return true;
    }, (e) => {
      fatal = fatalText(e);
      render();
      return false;
    });

  return {
    getState: () => ({ ...state }),
    get playing() { return clock.playing; },
    play() { if (!clock.playing) togglePlay({ followFigure: false }); },
    pause() { if (clock.playing) togglePlay(); },
    /** Resolves once the engine has started (or failed to: then with false). */
    ready: () => readyPromise,
    /** The figure the current step is about (for export), or null before the first run and on a Learn step without a backward. */
    figure() {
      const tr = currentTrace();
      if (!tr) return null;
      const v = viewState();
      return stepFigure(tr, { ...state, head: v.head, query: v.q }, { scale: views.panel.figureScale(), learn: v.learn });
    },
    palette: () => appearance.palette(),
    setState(patch, extraNotices = []) {
      if (extraNotices.length) {
        messagesExtra = [...messagesExtra.filter((m) => m.id !== 'url'), { id: 'url', kind: 'notice', title: 'Some settings in the link could not be used,', text: 'so defaults were used for them:', details: extraNotices, dismissible: true }];
      }
      set(patch);
      render();
    },
    destroy() {
      hubLoad?.abort.abort();
      for (const h of pretrained.values()) h.dispose();
      clock.destroy();
      panelWidth.destroy();
      appearance.destroy();
      unbindKeys();
      root.replaceChildren();
    },
  };
}
