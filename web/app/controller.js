// The controller: the one place that wires controls → state → engine → views.
// It owns the state object, the engine and the latest trace. A change of a
// compute field (model, sentence, width, heads, seed, …) runs the engine once;
// a pure view change (step, query, head, layer, hover, theme) only re-renders.
// A trained model (models.js) is loaded once, on first use; its trace holds
// every layer, and the layer picker only chooses which one the steps show.

import { createEngine } from '../engine.js';
import { normalizeState, changedFields, COMPUTE_FIELDS, STEPS, canonicalCells, computedSentences, splitLines } from './state.js';
import { createAnimation } from './animation.js';
import { readPalette } from './palette.js';
import { createTooltip } from './views/tooltip.js';
import { createThemeToggle } from './views/theme.js';
import { createSentenceView } from './views/sentence.js';
import { createControls } from './views/controls.js';
import { stepFigure } from './export.js';
import { createStepper } from './views/stepper.js';
import { createSelection } from './views/selection.js';
import { createStepPanel } from './views/panel.js';
import { createMessages } from './views/messages.js';
import { isTrainedModel, isLabModel, DEFAULT_SENTENCE } from './state.js';
import { createModelCache, ModelNotFound, modelLabel, SHIPPED_MODELS } from './models.js';
import { layerTrace, randomHeadPatterns } from './model-trace.js';

const STEP_MS = 1600;

/** The sentence a model is best shown with (the shipped ones say; random weights use the default). */
function exampleOf(model) {
  return SHIPPED_MODELS[model]?.example ?? { sentence: DEFAULT_SENTENCE, query: 7 };
}
const RANDOM_ABOUT = 'Weights are random but seeded, so a link reproduces every number. Everything is computed in your browser by a C++ engine compiled to WebAssembly.';

/** "i-j" for every blocked cell of a T×T mask. */
function blockedCells(mask) {
  const out = [];
  for (let i = 0; i < mask.rows; i++) for (let j = 0; j < mask.cols; j++) if (!mask.data[i * mask.cols + j]) out.push(`${i}-${j}`);
  return out;
}

function describeError(e, hasResult) {
  const msg = String(e?.message ?? e);
  const keep = hasResult ? ' The page still shows the last sentence that worked.' : '';
  // the engine's error codes (engine.d.ts ErrorCode), not its wording
  const code = e?.code;
  if (code === 'empty_text') return { title: 'Nothing to show yet:', text: `the sentence is empty. Type a few words to see attention at work.${keep}` };
  if (code === 'too_long_for_model') return { title: 'This model reads short sentences:', text: `${msg}, the longest it was trained on. Shorten the sentence, or pick random weights, which read up to 2,048 tokens.${keep}` };
  if (code === 'unknown_word') return { title: 'This model cannot read that word:', text: `${msg}. Use the words of the task it was trained on.${keep}` };
  if (code === 'too_many_tokens') return { title: 'This is too much for the page:', text: `${msg}. Try a shorter text.${keep}` };
  // a full trace keeps 3·H·T² scores: heads and tokens are what it costs
  if (code === 'too_large') return { title: 'This is too much for the page:', text: `${msg}. Try fewer heads or a shorter text.${keep}` };
  if (code === 'out_of_memory') return { title: 'This is too much for the page:', text: `${msg}. Try fewer heads or a narrower model.${keep}` };
  return { title: 'The engine could not run these settings:', text: `${msg}.${keep}` };
}

/** Where the page finds the shipped checkpoints: web/generated/models/ (build_wasm.sh copies models/ there). */
function defaultFetchShipped(name, file) {
  return fetch(new URL(`../generated/models/${file}`, import.meta.url)).then((r) => {
    if (!r.ok) throw new Error(`the ${name} model (generated/models/${file}) could not be loaded: HTTP ${r.status}; build it with ./build_wasm.sh`);
    return r.arrayBuffer();
  }).then((b) => new Uint8Array(b));
}

export function createController(layout, { initialState = {}, notices = [], controls = null, onStateChange = null, keyboardTarget = null, loadEngine = createEngine, fetchShipped = defaultFetchShipped, loadLab = null, freshStart = false } = {}) {
  let state = normalizeState(initialState);
  const models = createModelCache({ fetchShipped, loadLab });
  let modelError = null; // {model, title, text} when the picked model could not be loaded
  let opened = !freshStart; // a fresh page opens on the model's featured head (once)
  let engine = null;
  let fatal = null;
  let result = null; // {trace, traces}
  let runError = null;
  let runCount = 0;
  let palette = null;
  let paletteStale = true;
  let messagesExtra = notices.length
    ? [{ id: 'url', kind: 'notice', title: 'Some settings in the link could not be used,', text: 'so defaults were used for them:', details: notices, dismissible: true }]
    : [];
  const root = layout.root;
  const doc = root.ownerDocument;
  const win = doc.defaultView;

  // ---- views ------------------------------------------------------------------------
  const tooltip = createTooltip(layout.tipLayer);
  let panelWidth = 0;
  const stepCtx = {
    tooltip,
    /** The step panel's width, tracked by a ResizeObserver (reading it would force a layout). */
    width: () => panelWidth || layout.panel.clientWidth,
    select: (patch) => set(patch),
    toggleMask,
  };
  const views = {
    theme: createThemeToggle(layout.theme, { onChange: (theme) => set({ theme }) }),
    sentence: createSentenceView(layout.sentence, {
      onSentence: (sentence) => set({ sentence }),
      onBatchText: (text) => {
        const lines = splitLines(text);
        if (!lines.length) {
          runError = { title: 'Batch mode needs a sentence:', text: 'write at least one sentence, one per line.' };
          render();
          return;
        }
        set({ sentences: lines });
      },
      onBatch: (batch) => set({ batch }),
      onShown: (shown) => set({ shown }),
      onSelectQuery: (query) => set({ query }),
      visible: controls,
    }),
    controls: createControls(layout.controls, { onChange: (patch) => set(patch), visible: controls, labModel: () => (isLabModel(state.model) ? state.model : null) }),
    stepper: createStepper(layout.stepper, {
      onStep: (step) => set({ step }),
      onPrev: () => go(-1),
      onNext: () => go(1),
      onTogglePlay: togglePlay,
      onSpeed: (speed) => set({ speed }),
    }),
    selection: createSelection(layout.selection, { onChange: (patch) => set(patch) }),
    panel: createStepPanel(layout.panel, stepCtx),
    messages: createMessages(layout.messages, {
      onDismiss: (id) => {
        messagesExtra = messagesExtra.filter((m) => m.id !== id);
        render();
      },
    }),
  };

  const clock = createAnimation({
    doc,
    durationMs: () => {
      // the score step fills its row key by key, so it gets more time for more keys
      if (state.step === 'scores' && result) return Math.min(9000, Math.max(STEP_MS, result.trace.tokens.length * 450));
      return STEP_MS;
    },
    onFrame: () => renderFrame(),
    onStepDone: () => {
      const i = STEPS.indexOf(state.step);
      if (i >= STEPS.length - 1) return false;
      set({ step: STEPS[i + 1] });
      return true;
    },
    onPlayingChange: () => render(),
  });
  clock.setSpeed(state.speed);

  // ---- state changes ---------------------------------------------------------------------
  function set(patch) {
    const prev = state;
    let next = { ...state, ...patch };
    if (patch.batch === true && !prev.batch && next.mask === 'none') next.mask = 'padding';
    if (patch.mask === 'custom' && prev.mask !== 'custom' && !patch.customMask && result?.trace && !result.trace.model) next.customMask = blockedCells(result.trace.mask);
    // a model picked while its predecessor's example sentence is shown brings its own example
    if (patch.model && patch.model !== prev.model && patch.sentence === undefined) {
      const before = exampleOf(prev.model);
      const after = exampleOf(patch.model);
      if (prev.sentence === before.sentence && before.sentence !== after.sentence) {
        next.sentence = after.sentence;
        next.query = after.query;
      }
    }
    // picking a shipped model opens it on its learned pattern (unless the patch says where)
    const featured = SHIPPED_MODELS[patch.model]?.featured;
    if (featured && patch.model !== prev.model && patch.layer === undefined && patch.head === undefined) {
      next.layer = featured.layer;
      next.head = featured.head;
    }
    next = normalizeState(next);
    const changed = changedFields(prev, next);
    if (!changed.length) return;
    state = next;
    if (changed.includes('theme')) applyTheme();
    if (changed.includes('speed')) clock.setSpeed(state.speed);
    if (changed.includes('step')) clock.restartStep();
    const compute = changed.filter((k) => COMPUTE_FIELDS.includes(k));
    const customOnly = compute.length === 1 && compute[0] === 'customMask' && state.mask !== 'custom';
    if (compute.length && !customOnly) run();
    else if (changed.includes('shown') && result?.traces) result = { ...result, trace: result.traces[Math.min(state.shown, result.traces.length - 1)] };
    else if (changed.includes('layer') && result?.modelTrace) result = sliceLayer(result);
    clampSelection();
    persist();
    render();
  }

  function go(delta) {
    const i = STEPS.indexOf(state.step);
    const j = Math.max(0, Math.min(STEPS.length - 1, i + delta));
    if (j !== i) set({ step: STEPS[j] });
  }

  function togglePlay() {
    if (clock.playing) {
      const p = clock.progress;
      clock.pause();
      if (state.step === 'scores' && result && p < 1) set({ key: Math.min(result.trace.tokens.length - 1, Math.floor(p * result.trace.tokens.length)) });
    } else {
      if (state.step === STEPS[STEPS.length - 1]) set({ step: STEPS[0] });
      clock.play();
    }
  }

  function toggleMask(i, j) {
    const tr = result?.trace;
    if (!tr || tr.model) return; // a trained model's mask is the one it was trained with
    const cells = state.mask === 'custom' ? state.customMask : blockedCells(tr.mask);
    const id = `${i}-${j}`;
    const next = cells.includes(id) ? cells.filter((c) => c !== id) : canonicalCells([...cells, id]);
    set({ mask: 'custom', customMask: next, query: i, key: j });
  }

  function clampSelection() {
    const tr = currentTrace(); // none while a picked model loads: nothing to clamp against yet
    if (!tr) return;
    const T = tr.tokens.length;
    const fix = {};
    if (state.query >= T) fix.query = T - 1;
    if (state.key >= T) fix.key = T - 1;
    if (state.head >= tr.heads.length) fix.head = tr.heads.length - 1;
    if (tr.model && state.layer >= tr.model.layers) fix.layer = tr.model.layers - 1;
    if (state.dim >= tr.config.dModel) fix.dim = tr.config.dModel - 1;
    if (Object.keys(fix).length) state = { ...state, ...fix };
  }

  function persist() {
    onStateChange?.({ ...state });
  }

  // ---- the engine ----------------------------------------------------------------------
  function customMaskFor(T) {
    const data = new Uint8Array(T * T).fill(1);
    for (const c of state.customMask) {
      const [i, j] = c.split('-').map(Number);
      if (i < T && j < T) data[i * T + j] = 0;
    }
    return { rows: T, cols: T, data };
  }

  /** The current layer of a trained model's trace, as the steps read it. */
  function sliceLayer(r) {
    return { ...r, trace: layerTrace(r.modelTrace, state.layer, r.entry, { antecedent: r.antecedent }) };
  }

  /** A trained model: its trace for the sentence (loads the model first, once). */
  function runTrained() {
    const name = state.model;
    const entry = models.get(name);
    if (!entry) {
      models.load(engine, name).then(() => {
        modelError = null;
        if (state.model !== name) return;
        if (!opened) {
          // a fresh page opens where the model's learned pattern is
          opened = true;
          const f = SHIPPED_MODELS[name]?.featured;
          if (f) state = normalizeState({ ...state, layer: f.layer, head: f.head });
        }
        run();
        clampSelection();
        persist();
        render();
      }, (e) => {
        if (state.model !== name) return;
        modelError = e instanceof ModelNotFound
          ? { model: name, title: 'This model is not in this browser:', text: `${e.message}. Meanwhile, pick another model.`, link: state.from ? { href: `train.html#${state.from}`, text: 'Open the training lab with its settings \u2192' } : null }
          : { model: name, title: `The ${modelLabel(name)} model could not be loaded:`, text: String(e?.message ?? e) };
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
      const text = state.sentence;
      const modelTrace = entry.trainer.trace({ text });
      let antecedent = null;
      if (entry.task === 'coreference') {
        try {
          antecedent = entry.trainer.probe({ text }).keys.find((k) => k.name === 'antecedent')?.key ?? null;
        } catch {
          antecedent = null;
        }
      }
      result = sliceLayer({ traces: null, trace: null, modelTrace, entry, antecedent });
      runError = null;
      runCount += 1;
      root.dataset.run = String(runCount);
    } catch (e) {
      runError = describeError(e, !!result && result.entry === entry);
      if (result && result.entry !== entry) result = null;
    }
  }

  function run() {
    if (!engine) return;
    if (isTrainedModel(state.model)) {
      runTrained();
      return;
    }
    modelError = null;
    const settings = { dModel: state.dModel, heads: state.heads, seed: state.seed, positional: state.positional, mask: state.mask, scale: state.scale };
    try {
      if (state.batch) {
        // the first MAX_BATCH lines; the rest stay in the box and the link (the box says so)
        const sentences = computedSentences(state);
        let traces;
        if (state.mask === 'custom') {
          // runBatch takes no custom mask; padding every sentence to the longest is the same batch
          const T = Math.max(...sentences.map((s) => engine.tokenize(s).length));
          settings.customMask = customMaskFor(T);
          traces = sentences.map((sentence) => engine.run({ ...settings, sentence, padTo: T }));
        } else {
          traces = engine.runBatch(sentences, settings);
        }
        result = { traces, trace: traces[Math.min(state.shown, traces.length - 1)] };
      } else {
        if (state.mask === 'custom') settings.customMask = customMaskFor(engine.tokenize(state.sentence).length);
        result = { traces: null, trace: engine.run({ ...settings, sentence: state.sentence }) };
      }
      for (const t of result.traces ?? [result.trace]) t.headPatterns = randomHeadPatterns(t);
      runError = null;
      runCount += 1;
      root.dataset.run = String(runCount);
    } catch (e) {
      runError = describeError(e, !!result);
    }
  }

  // ---- rendering ---------------------------------------------------------------------------
  function applyTheme() {
    if (state.theme === 'system') delete root.dataset.theme;
    else root.dataset.theme = state.theme;
    paletteStale = true;
  }

  function currentPalette() {
    if (paletteStale || !palette) {
      palette = readPalette(root);
      paletteStale = false;
    }
    return palette;
  }

  // token labels stay the same array while the tokens are the same, so views
  // keyed on them (label measuring, select options) skip work after a seed change
  let lastLabels = [];
  const labelCache = new WeakMap();
  function labelsOf(tr) {
    if (!labelCache.has(tr)) {
      const texts = tr.tokens.map((t) => t.text);
      const same = texts.length === lastLabels.length && texts.every((x, i) => x === lastLabels[i]);
      if (!same) lastLabels = texts;
      labelCache.set(tr, lastLabels);
    }
    return labelCache.get(tr);
  }
  let lastPositionLabels = [];

  const dimLabelCache = new Map();
  function dimLabels(n) {
    if (!dimLabelCache.has(n)) dimLabelCache.set(n, Array.from({ length: n }, (_, i) => String(i)));
    return dimLabelCache.get(n);
  }
  const positionLabelCache = new WeakMap();
  function positionLabels(tr) {
    if (!positionLabelCache.has(tr)) {
      const texts = tr.tokens.map((t, i) => `${i} \u00b7 ${t.text}`);
      const same = texts.length === lastPositionLabels.length && texts.every((x, i) => x === lastPositionLabels[i]);
      if (!same) lastPositionLabels = texts;
      positionLabelCache.set(tr, lastPositionLabels);
    }
    return positionLabelCache.get(tr);
  }

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
      labels: tr ? labelsOf(tr) : [],
      positionLabels: tr ? positionLabels(tr) : [],
      dimLabels: dimLabels(C),
      progress: clock.progress,
      playing: clock.playing,
      palette: currentPalette(),
      trained: Boolean(tr?.model),
    };
  }

  function aboutLine(tr) {
    if (!isTrainedModel(state.model)) return RANDOM_ABOUT;
    return 'These weights were learned: the model was trained on a task, saved as a checkpoint and loaded here. Everything is computed in your browser by a C++ engine compiled to WebAssembly.';
  }

  function messageList() {
    const list = [...messagesExtra];
    if (fatal) list.unshift({ id: 'fatal', kind: 'error', title: 'The attention engine could not start.', text: fatal });
    else if (modelError && modelError.model === state.model) list.unshift({ id: 'model', kind: 'error', title: modelError.title, text: modelError.text, link: modelError.link });
    else if (runError) list.unshift({ id: 'run', kind: 'error', ...runError });
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
    views.controls.update(tr, state, { entry: isTrainedModel(state.model) ? models.get(state.model) : null });
    if (layout.about) layout.about.textContent = aboutLine(tr);
    views.stepper.update(tr, v);
    views.selection.update(tr, v);
    views.messages.update(messageList());
    if (fatal) views.panel.status('error', `The attention engine could not start: ${fatal}`);
    else if (!engine) views.panel.status('loading', 'Starting the attention engine\u2026');
    else if (modelError && modelError.model === state.model) views.panel.status('error', `${modelError.title} ${modelError.text}`);
    else if (isTrainedModel(state.model) && !models.get(state.model)) views.panel.status('loading', `Loading the ${modelLabel(state.model)} model\u2026`);
    else if (!tr) views.panel.status('empty', runError ? `${runError.title} ${runError.text}` : 'Type a sentence to begin.');
    views.panel.update(tr, v);
    root.dataset.state = fatal ? 'error' : engine ? 'ready' : 'loading';
  }

  /** One animation frame: only the transport bar and the current step. */
  function renderFrame() {
    const tr = currentTrace();
    const v = viewState();
    views.stepper.update(tr, v);
    if (tr) views.panel.update(tr, v);
  }

  // re-layout when the panel's width changes (rotation, window resize)
  let lastWidth = 0;
  let resizeRaf = 0;
  const resizer = new win.ResizeObserver((entries) => {
    const w = Math.round(entries[0].contentRect.width);
    if (w === lastWidth) return;
    lastWidth = w;
    panelWidth = w;
    if (!resizeRaf) {
      resizeRaf = win.requestAnimationFrame(() => {
        resizeRaf = 0;
        renderFrame();
      });
    }
  });
  resizer.observe(layout.panel);

  const media = win.matchMedia('(prefers-color-scheme: dark)');
  const onMedia = () => {
    paletteStale = true;
    render();
  };
  media.addEventListener('change', onMedia);

  // ---- keyboard ------------------------------------------------------------------------------
  function isTyping(t) {
    if (!t || t.nodeType !== 1) return false;
    if (t.isContentEditable) return true;
    const tag = t.tagName;
    if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
    if (tag === 'INPUT') return !['checkbox', 'radio', 'button', 'submit', 'reset'].includes(t.type);
    return false;
  }
  function onKey(e) {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.composedPath()[0];
    if (isTyping(t)) return;
    if (e.key === 'ArrowRight') {
      e.preventDefault();
      go(1);
    } else if (e.key === 'ArrowLeft') {
      e.preventDefault();
      go(-1);
    } else if (e.key === ' ' || e.key === 'Spacebar') {
      if (t?.closest?.('button, a, summary, [role="button"], input')) return; // Space presses the focused control
      e.preventDefault();
      togglePlay();
    }
  }
  const keyTarget = keyboardTarget ?? root;
  keyTarget.addEventListener('keydown', onKey);

  // ---- start ------------------------------------------------------------------------------------
  applyTheme();
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
      fatal = String(e?.message ?? e);
      if (/WebAssembly/.test(fatal) && !/Chrome/.test(fatal)) fatal += ' Any current Chrome, Edge, Firefox or Safari can run it.';
      else if (!/WebAssembly/.test(fatal)) fatal += ' (If you are running it from a checkout: build the module with ./build_wasm.sh and serve web/ over http.)';
      render();
      return false;
    });

  return {
    getState: () => ({ ...state }),
    get playing() { return clock.playing; },
    play() { if (!clock.playing) togglePlay(); },
    pause() { if (clock.playing) togglePlay(); },
    /** Resolves once the engine has started (or failed to: then with false). */
    ready: () => readyPromise,
    /** The figure the current step is about (for export), or null before the first run. */
    figure: () => (currentTrace() ? stepFigure(currentTrace(), { ...state, head: viewState().head }) : null),
    palette: () => currentPalette(),
    setState(patch, extraNotices = []) {
      if (extraNotices.length) {
        messagesExtra = [...messagesExtra.filter((m) => m.id !== 'url'), { id: 'url', kind: 'notice', title: 'Some settings in the link could not be used,', text: 'so defaults were used for them:', details: extraNotices, dismissible: true }];
      }
      set(patch);
      render();
    },
    destroy() {
      clock.destroy();
      resizer.disconnect();
      media.removeEventListener('change', onMedia);
      keyTarget.removeEventListener('keydown', onKey);
      root.replaceChildren();
    },
  };
}
