// The controller: the one place that wires controls → state → model source →
// views. It owns the state object. A change of a compute field (model,
// sentence, width, heads, seed, …) asks the model's source for a new trace
// (runs.js, which keeps the result on screen and its errors); a pure view
// change (step, query, head, layer, hover, theme) only re-renders, or asks
// for the same run at another layer. What a model is (random weights, a model
// trained here, a pretrained one in a worker) the controller learns only from
// its source (sources/registry.js): its description, whether its traces come
// later, its Learn part and whether it can write the next token.
// The rules a change brings are in rules.js, where the query goes in query.js,
// the wording of errors in errors.js, "Load a model…" in loader.js and "Next
// token" in generate.js; labels.js, keyboard.js, appearance.js and follow.js
// hold the label caches, the keys, the theme, palette and panel width, and the
// scrolling that keeps a step's figure in view.

import { createEngine } from '../../engine.js';
import {
  normalizeState, changedFields, COMPUTE_FIELDS, STEPS, ALL_STEPS, isLearnStep, LEARN_RATES, MAX_SGD_STEPS, splitLines, isLabModel, computedSentences,
  WIDTHS, HEAD_CHOICES, POSITIONALS, MASKS, MODELS, SPEEDS, MAX_SENTENCE_CHARS, MAX_BATCH, MAX_BATCH_CHARS,
} from './state.js';
import { STEP_LIST, EXTRA_STEPS, forwardSteps } from './steps.js';
import { LEARN_LIST } from './learn/steps.js';
import { STEP_REGISTRY } from './step-registry.js';
import { LEARN_REGISTRY } from './learn/step-registry.js';
import { withTarget, sgdStepText } from './learn/learn.js';
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
import { modelLabel } from './models.js';
import { applyPatch, blockedCells, toggleCell } from './rules.js';
import { createQueryKeeper } from './query.js';
import { createLabels } from './labels.js';
import { bindStepKeys } from './keyboard.js';
import { createAppearance, watchWidth } from './appearance.js';
import { createFollower } from './follow.js';
import { DEFAULT_HUB_BASE } from '../hub/hub.js';
import { createSources } from './sources/registry.js';
import { createRuns } from './runs.js';
import { REAL_MODEL } from './experiments.js';
import { fatalText, urlNotice } from './errors.js';
import { createModelLoader } from './loader.js';
import { createGeneration } from './generate.js';

const STEP_MS = 1600;

/** Where the page finds the shipped checkpoints: web/generated/models/ (build_wasm.sh copies models/ there). */
function defaultFetchShipped(name, file) {
  return fetch(new URL(`../../generated/models/${file}`, import.meta.url)).then((r) => {
    if (!r.ok) throw new Error(`the ${name} model (generated/models/${file}) could not be loaded: HTTP ${r.status}; build it with ./build_wasm.sh`);
    return r.arrayBuffer();
  }).then((b) => new Uint8Array(b));
}

// What the views offer and accept, from the state's tables (views import no state).
const CONTROL_CHOICES = Object.freeze({ widths: WIDTHS, heads: HEAD_CHOICES, positionals: POSITIONALS, masks: MASKS, models: MODELS, modelLabel });
const SENTENCE_LIMITS = Object.freeze({ maxChars: MAX_SENTENCE_CHARS, maxBatch: MAX_BATCH, maxBatchChars: MAX_BATCH_CHARS });

/** The playground's views, each wired to the controller's actions. */
function createViews(layout, stepCtx, { set, go, follow, togglePlay, endTour, controls, onBatchText, labModel, onDismiss, onAction, onLoadModel, onTry }) {
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
      onTry,
      visible: controls,
    }),
    controls: createControls(layout.controls, { choices: CONTROL_CHOICES, onChange: (patch) => set(patch), visible: controls, labModel, onLoadModel }),
    stepper: createStepper(layout.stepper, {
      steps: STEP_LIST,
      extraSteps: EXTRA_STEPS,
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
      onTourEnd: () => endTour(),
    }),
    selection: createSelection(layout.selection, { onChange: (patch) => set(patch) }),
    panel: createStepPanel(layout.panel, stepCtx, [...STEP_REGISTRY, ...LEARN_REGISTRY]),
    messages: createMessages(layout.messages, { onDismiss, onAction }),
  };
}

export function createController(layout, { initialState = {}, notices = [], controls = null, onStateChange = null, keyboardTarget = null, loadEngine = createEngine, fetchShipped = defaultFetchShipped, loadLab = null, freshStart = false, freshStep = null, hubBase = DEFAULT_HUB_BASE, pretrainedInPage = false, allowedModels = [], tourable = true, lessonsHref = null } = {}) {
  let state = normalizeState(initialState);
  let fresh = freshStart; // a fresh page opens on the model's featured head (once)
  const hubNow = () => state.hub || hubBase; // hf: models come from the link's or the panel's mirror, else the page's
  let engine = null;
  let fatal = null;
  let runCount = 0;
  let messagesExtra = notices.length ? [urlNotice(notices)] : [];
  let touring = false; // the guided tour is on: the stepper shows its row, Next moves it on
  const root = layout.root;
  const doc = root.ownerDocument;
  const win = doc.defaultView;

  // ---- views ------------------------------------------------------------------------
  const tooltip = createTooltip(layout.tipLayer);
  const appearance = createAppearance(root, win, () => render());
  // a new layout when the panel's width changes (rotation, window resize)
  const panelWidth = watchWidth(win, layout.panel, () => renderFrame());
  const labels = createLabels();
  const query = createQueryKeeper();
  const stepCtx = {
    tooltip,
    /** The step panel's width, tracked by a ResizeObserver (reading it would force a layout). */
    width: () => panelWidth.width() || layout.panel.clientWidth,
    select: (patch) => set(patch),
    toggleMask,
    /** The Learn part's actions (learn/learn-*.js): an answer picked at a position, a step by hand, its undo. */
    learn: {
      setTarget: (q, id) => set({ targets: withTarget(state.targets, q, id) }),
      step: () => set({ sgd: [...state.sgd, sgdStepText(state.lr, state.scope, state.layer, viewState().head)].slice(0, MAX_SGD_STEPS) }),
      undo: () => set({ sgd: state.sgd.slice(0, -1) }),
    },
    learnChoices: Object.freeze({ rates: LEARN_RATES, maxSteps: MAX_SGD_STEPS }),
    /** The guided tour: from step 1, one step per Next (the learner's pace; ← → work too, Escape or End tour stops it). */
    tour: tourable ? () => startTour() : null,
    /** Where the lessons are (lessons.html beside the playground), or null where they are not known to be. */
    lessonsHref,
  };
  const follow = createFollower(win, { panel: layout.panel, stepper: layout.stepper, offset: (o) => views.panel.revealOffset(o) });
  const views = createViews(layout, stepCtx, {
    set, go, follow, togglePlay, endTour, controls,
    onBatchText(text) {
      const lines = splitLines(text);
      if (lines.length) return set({ sentences: lines });
      runs.fail({ title: 'Batch mode needs a sentence:', text: 'write at least one sentence, one per line.' });
      render();
    },
    labModel: () => (isLabModel(state.model) ? state.model : null),
    onLoadModel() {
      loader.show();
      render();
    },
    onDismiss(id) {
      messagesExtra = messagesExtra.filter((m) => m.id !== id);
      render();
    },
    onAction(id, action) {
      if (id === 'ask-model') loader.act(action);
      else if (id === 'model' && action === 'retry') runs.retry();
      else if (id === 'run') tryThis({ model: action === 'real' ? REAL_MODEL : 'random' });
    },
    onTry: (patch) => tryThis(patch),
  });

  // "Load a model…" (pretrained models, each in its own worker; a link's waits for the reader), the sources of every model and their runs
  const loader = createModelLoader(views.controls.loaderSlot, {
    hubBase: hubNow, setHub: (b) => set({ hub: b === hubBase ? '' : b }), inPage: pretrainedInPage, loadEngine, render, engine: () => engine, allowed: allowedModels,
    current: () => state.model,
    label: modelLabel,
    onAsk: (from, name) => runs.open(name, from),
  });
  const sources = createSources({ fetchShipped, loadLab, hubBase: hubNow, loadPretrained: loader.load });
  const runs = createRuns(sources, {
    state: () => state,
    replace: (s) => { state = s; },
    ran() {
      runCount += 1;
      root.dataset.run = String(runCount);
    },
    later: () => { keepQuery(); persist(); render(); },
    opened,
    pick: (name) => set({ model: name }),
    feature(f) {
      set({ layer: f.layer, head: f.head, query: f.query, step: 'heads' });
      follow();
    },
    notice(problems) {
      const before = messagesExtra.find((m) => m.id === 'url')?.details ?? [];
      messagesExtra = [...messagesExtra.filter((m) => m.id !== 'url'), urlNotice([...before, ...problems])];
    },
    persist,
    render,
  });
  const currentTrace = () => runs.trace();

  // "Next token" (a model that writes, GPT-2): its own module, under the sentence
  const generation = createGeneration(layout.generation ?? null, { source: runs.source, state: () => state, trace: currentTrace, set, render });

  const clock = createAnimation({
    doc,
    durationMs: () => {
      // the score step fills its row key by key, so it gets more time for more keys
      if (state.step === 'scores' && runs.result) return Math.min(9000, Math.max(STEP_MS, runs.result.trace.tokens.length * 450));
      return STEP_MS;
    },
    onFrame: () => renderFrame(),
    onStepDone: () => {
      if (isLearnStep(state.step)) return false; // Play walks the forward steps; the Learn part is stepped by hand
      const steps = forwardSteps(currentTrace());
      const i = steps.indexOf(state.step);
      if (i >= steps.length - 1) return false;
      set({ step: steps[i + 1] });
      follow({ watching: true });
      return true;
    },
    onPlayingChange: () => render(),
  });
  clock.setSpeed(state.speed);

  // ---- state changes ---------------------------------------------------------------------
  function set(patch) {
    const prev = state;
    const next = applyPatch(prev, patch, runs.result?.trace ?? null);
    const changed = changedFields(prev, next);
    if (!changed.length) return;
    state = next;
    if (changed.includes('theme')) appearance.apply(state.theme);
    if (changed.includes('speed')) clock.setSpeed(state.speed);
    if (changed.includes('step')) clock.restartStep();
    if (touring && isLearnStep(state.step)) touring = false; // the tour walks the twelve forward steps
    // another model: a load of the last one ends, and so does a worker still computing for it
    if (changed.includes('model')) {
      loader.leave(state.model);
      sources.leave(prev.model);
    }
    // the query follows its word into the new sentence (placed once the new trace is there)
    if (changed.includes('sentence') && patch.sentence !== undefined && patch.query === undefined) query.typed(prev.query, currentTrace());
    const compute = changed.filter((k) => COMPUTE_FIELDS.includes(k));
    const customOnly = compute.length === 1 && compute[0] === 'customMask' && state.mask !== 'custom';
    if (compute.length && !customOnly) runs.run();
    // steps by hand are taken on the picked targets: new ones put the trained weights back (a new forward)
    else if (changed.includes('targets') && state.sgd.length && runs.source()?.learned) runs.run();
    else if (changed.includes('shown') || changed.includes('layer')) runs.reselect();
    keepQuery();
    state = query.changed(state, patch, changed, currentTrace());
    persist();
    render();
  }

  function startTour() {
    touring = true;
    if (clock.playing) clock.pause();
    set({ step: STEPS[0] });
    render();
    views.stepper.focusTour();
    follow();
  }

  function endTour() {
    if (!touring) return;
    touring = false;
    render();
  }

  function go(delta) {
    // inside the part of the current step: the twelve forward steps, or the Learn part's
    const part = isLearnStep(state.step) ? ALL_STEPS.filter(isLearnStep) : forwardSteps(currentTrace());
    const i = part.indexOf(state.step);
    const j = Math.max(0, Math.min(part.length - 1, i + delta));
    if (j === i) return;
    set({ step: part[j] });
    follow();
  }

  /** A suggestion under the sentence box or a refusal's way forward; a real model asks its size first (#40, 4). */
  function tryThis(patch) {
    if (patch.model) {
      loader.offer(patch.model);
      runs.feature(patch.model);
    }
    set(patch);
  }

  /** Play or pause; a user's Play brings the figure into view (a host's play() does not scroll its page). */
  function togglePlay({ followFigure = true } = {}) {
    if (touring) return; // the tour moves only on Next
    if (clock.playing) {
      const p = clock.progress;
      const tr = runs.result?.trace;
      clock.pause();
      if (state.step === 'scores' && tr && p < 1) set({ key: Math.min(tr.tokens.length - 1, Math.floor(p * tr.tokens.length)) });
    } else {
      if (isLearnStep(state.step)) return; // the Learn part is stepped by hand
      if (state.step === STEPS[STEPS.length - 1]) set({ step: STEPS[0] });
      clock.play();
      if (followFigure) follow();
    }
  }

  function toggleMask(i, j) {
    const tr = runs.result?.trace;
    if (!tr || tr.model) return; // a trained model's mask is the one it was trained with
    const cells = state.mask === 'custom' ? state.customMask : blockedCells(tr.mask);
    set({ mask: 'custom', customMask: toggleCell(cells, i, j), query: i, key: j });
  }

  /** The query on its word in the trace on screen (a trace that comes later is of the sentence before until then). */
  function keepQuery() {
    state = query.keep(state, currentTrace(), { ready: runs.current() });
  }

  function persist() {
    onStateChange?.({ ...state });
  }

  /** The model on screen has loaded: a fresh page opens where its learned pattern is (the page: on the heads step). */
  function opened(name) {
    const first = fresh;
    if (first) {
      fresh = false;
      const f = sources.get(name)?.featured;
      if (f) state = normalizeState({ ...state, layer: f.layer, head: f.head, ...(freshStep ? { step: freshStep } : {}) });
    }
    runs.run();
    keepQuery();
    persist();
    render();
  }

  // ---- rendering ---------------------------------------------------------------------------
  function viewState() {
    const tr = currentTrace();
    const T = tr ? tr.tokens.length : 0;
    const C = tr ? tr.config.dModel : state.dModel;
    const H = tr ? tr.heads.length : state.heads;
    const D = tr ? tr.config.dHead : C / H;
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
      tour: touring,
      palette: appearance.palette(),
      trained: Boolean(tr?.model),
      queryMoved: query.moved,
      learn: tr && isLearnStep(state.step) ? runs.learn() : null,
    };
  }

  function messageList() {
    const first = fatal ? [{ id: 'fatal', kind: 'error', title: 'The attention engine could not start.', text: fatal }] : runs.errors();
    const question = loader.message();
    return [...(question ? [question] : []), ...first, ...messagesExtra, ...runs.notices()];
  }

  /** The note that stands for the step panel while there is no trace to show (or null). */
  function panelStatus(tr) {
    if (fatal) return ['error', `The attention engine could not start: ${fatal}`];
    if (!engine) return ['loading', 'Starting the attention engine\u2026'];
    return loader.status(state.model) ?? runs.status(tr);
  }

  function render() {
    const tr = currentTrace();
    const v = viewState();
    const described = sources.describe(state.model);
    views.theme.update(tr, state);
    views.sentence.update(tr, state, v);
    generation.update(tr);
    views.controls.update(tr, state, { model: described, listed: sources.listed(state.model) });
    loader.update();
    if (layout.about) layout.about.textContent = described.about;
    views.stepper.update(tr, v);
    views.selection.update(tr, v);
    views.messages.update(messageList());
    const status = panelStatus(tr)
      ?? (v.learn?.unavailable ? [v.learn.pending ? 'loading' : 'empty', v.learn.unavailable] : null);
    if (status) views.panel.status(...status);
    if (!v.learn?.unavailable) views.panel.update(tr, v);
    else views.panel.update(null, v);
    root.dataset.state = fatal ? 'error' : engine ? 'ready' : 'loading';
  }

  /** One animation frame: only the transport bar and the current step. */
  function renderFrame() {
    const tr = currentTrace();
    const v = viewState();
    views.stepper.update(tr, v);
    if (tr && !v.learn?.unavailable) views.panel.update(tr, v);
  }

  const unbindKeys = bindStepKeys(keyboardTarget ?? root, { go, togglePlay, escape: () => endTour() });

  // ---- start ------------------------------------------------------------------------------------
  appearance.apply(state.theme);
  render();
  const readyPromise = Promise.resolve()
    .then(() => loadEngine())
    .then((e) => {
      engine = e;
      runs.start(e);
      runs.run();
      keepQuery();
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
      return stepFigure(tr, { ...state, head: v.head, query: v.q }, { scale: views.panel.figureScale(), learn: v.learn, model: modelLabel(state.model) });
    },
    palette: () => appearance.palette(),
    setState(patch, extraNotices = []) {
      if (extraNotices.length) {
        messagesExtra = [...messagesExtra.filter((m) => m.id !== 'url'), urlNotice(extraNotices)];
      }
      set(patch);
      render();
    },
    destroy() {
      loader.destroy();
      sources.dispose();
      clock.destroy();
      panelWidth.destroy();
      appearance.destroy();
      unbindKeys();
      root.replaceChildren();
    },
  };
}
