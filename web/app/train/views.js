// The training lab's page: it builds the cards once (transport, settings, the grid of
// heads, the timeline, the curves, the predictions, the files) and then only draws the
// session it is given, once a frame at most. Every control goes out through `actions`
// (main.js), which changes the session and asks for a render.
//
//   const view = createLabView(document, { lab, session, tooltip, actions });
//   view.build();   // once the worker is ready
//   view.render();  // after any change to the session
//
// Test hooks written on <main id="lab"> (see main.js): data-step, data-running,
// data-catching, data-final, data-gen, data-heldout(-samples), data-ablated, data-stopped, …

import { el } from '../kit/dom.js';
import { createThemeToggle } from '../kit/theme.js';
import { readPalette } from '../kit/palette.js';
import { formatValue, formatPercent, formatBytes } from '../kit/format.js';
import { headName, createGridView } from './grid.js';
import { MAX_CORPUS, WATCH_STEPS_PER_SECOND } from './state.js';
import { snapshotInterval } from './timeline.js';
import { createSettingsView } from './controls.js';
import { createChart } from './chart.js';
import { createPredictionsView } from './predictions.js';
import { createTimelineView } from './timeline-view.js';

const pct = (x) => formatPercent(x, 3);

/** The memory line under the transport: the estimate of engine.estimateTrainingMemory, before ▶. */
function memoryText(m) {
  if (!m) return '';
  if (m.fits) return `Training needs about ${formatBytes(m.bytes)} of memory.`;
  return `Training would need about ${formatBytes(m.bytes)} of memory; the lab can use ${formatBytes(m.limitBytes)}.`;
}

export function createLabView(doc, { lab, session, tooltip, actions }) {
  let settingsView;
  let gridView;
  let predictionsView;
  let timelineView;
  let lossChart;
  let accChart;
  let ui = null;
  let palette = null;
  let frame = 0;
  let settingsKey = '';
  let settingsCorpus = '';
  const bootText = doc.getElementById('tr-boot-text');

  function currentPalette() {
    if (!palette) palette = readPalette(doc.documentElement);
    return palette;
  }

  function render() {
    if (!frame) frame = requestAnimationFrame(draw);
  }

  function build() {
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
    stopAt.addEventListener('change', () => actions.setView({ stopAt: stopAt.value }));
    const speedSel = el('select', 'control', { testid: 'speed', id: 'tr-speed-choice', title: `Watchable: about ${WATCH_STEPS_PER_SECOND} training steps a second, so the maps change in front of you.` });
    for (const [v, t] of [['full', 'full'], ['watch', `watchable, ${WATCH_STEPS_PER_SECOND}/s`]]) speedSel.append(el('option', null, { value: v, text: t }));
    speedSel.addEventListener('change', () => actions.setView({ speed: speedSel.value }));
    const stopNoteEl = el('p', 'tr-stop-note', { testid: 'stop-note', attrs: { role: 'status' } });
    const transport = el('section', 'card tr-transport', { attrs: { 'aria-label': 'Training' } },
      el('div', 'tr-row tr-buttons', {}, play, stepBtn, reset),
      el('div', 'tr-row tr-counts', {}, el('span', 'tr-counter-label', { text: 'step' }), counter, speed),
      el('div', 'tr-row tr-pace', {},
        el('div', 'tr-row tr-stop', {}, el('label', 'field-label', { text: 'Speed', htmlFor: 'tr-speed-choice' }), speedSel),
        el('div', 'tr-row tr-stop', {}, el('label', 'field-label', { text: 'Stop', htmlFor: 'tr-stop-at' }), stopAt)),
      stopNoteEl, progressBox, metrics, overfitEl, memoryNote);
    play.addEventListener('click', actions.togglePlay);
    stepBtn.addEventListener('click', actions.stepOnce);
    reset.addEventListener('click', actions.reset);

    // settings
    settingsView = createSettingsView(side, {
      onChange: (patch) => actions.changeSettings(patch),
      onTask: (name) => actions.changeTask(name),
      onDefaults: () => actions.taskDefaults(),
      onCorpus: (text) => actions.applyCorpus(text.slice(0, MAX_CORPUS)),
      onCorpusFile: (file) => actions.loadText(file),
    });

    // grid
    const gridCard = el('section', 'card tr-grid-card', { attrs: { 'aria-label': 'Attention of every head' } });
    const keySelect = el('select', 'control', { testid: 'key-select' });
    keySelect.addEventListener('change', () => actions.setView({ key: keySelect.value }));
    const keyView = el('select', 'control', { testid: 'key-view' });
    for (const [v, t] of [['overlay', 'outlined'], ['beside', 'own map'], ['off', 'hidden']]) keyView.append(el('option', null, { value: v, text: t }));
    keyView.addEventListener('change', () => actions.setView({ keyView: keyView.value }));
    const ablation = el('div', 'tr-ablation', { testid: 'ablation', attrs: { 'aria-live': 'polite' } });
    const restore = el('button', 'btn btn-quiet', { type: 'button', text: 'Restore all heads', testid: 'restore-all' });
    restore.addEventListener('click', () => actions.setAblate([]));
    const gridTop = el('div', 'tr-grid-controls', {},
      el('label', 'field-label', { text: 'Answer key', htmlFor: 'tr-key' }), keySelect,
      el('label', 'field-label', { text: 'drawn', htmlFor: 'tr-key-view' }), keyView);
    keySelect.id = 'tr-key';
    keyView.id = 'tr-key-view';
    center.append(transport, gridCard);
    gridView = createGridView(gridCard, { tooltip, onToggleHead: actions.toggleHead });
    gridCard.insertBefore(gridTop, gridCard.children[1]);
    gridCard.append(el('div', 'tr-row tr-ablation-row', {}, ablation, restore),
      el('p', 'field-hint', { text: 'Ablate a head to zero its output and compare the held-out accuracy with and without it. Hover, tap or use the arrow keys on a map for the exact weight.' }));

    // timeline
    const timelineCard = el('section', 'card tr-timeline-card', { attrs: { 'aria-label': 'Timeline' } });
    center.append(timelineCard);
    timelineView = createTimelineView(timelineCard, {
      onScrub: actions.scrub,
    });

    // curves
    const curves = el('section', 'card tr-curves', { attrs: { 'aria-label': 'Loss and accuracy' } });
    const logBox = el('input', null, { type: 'checkbox', id: 'tr-log', testid: 'log-scale' });
    logBox.addEventListener('change', () => actions.setView({ logScale: logBox.checked }));
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
    downloadBtn.addEventListener('click', actions.download);
    loadBtn.addEventListener('click', () => loadInput.click());
    loadInput.addEventListener('change', () => {
      if (loadInput.files?.[0]) actions.loadModel(loadInput.files[0]);
      loadInput.value = '';
    });
    playground.addEventListener('click', actions.openPlayground);
    files.append(el('h2', 'card-title', { text: 'This model' }),
      el('div', 'tr-row', {}, playground, downloadBtn, loadBtn, loadInput),
      el('p', 'field-hint', { text: 'Open in playground shows all twelve steps with this model\u2019s real weights. Drop a .safetensors file anywhere on the page to load it, or a .txt file to train on its text.' }));
    right.append(curves, predCard, files);
    app.append(side, center, right);
    const empty = el('p', 'tr-empty', { testid: 'no-model' });
    gridCard.append(empty);
    ui = { app, empty, play, stepBtn, reset, counter, speed, stopAt, speedSel, stopNote: stopNoteEl, overfit: overfitEl, memoryNote, progressBox, progress, progressText, metrics, keySelect, keyView, ablation, restore, logBox, downloadBtn, playground };
  }

  function draw() {
    frame = 0;
    if (!ui || !session.state) return;
    const { state, run, model, modelError, memory, catchUp, scrub, corpusProblem, textShort, gen, stopNote, overfit, tasks } = session;
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

  const themeToggle = createThemeToggle(doc.getElementById('tr-theme'), { onChange: (theme) => actions.setTheme(theme) });
  /** The state's theme on the page (and a fresh palette for the maps). */
  function applyTheme() {
    const theme = session.state?.theme ?? 'system';
    if (theme === 'system') delete doc.documentElement.dataset.theme;
    else doc.documentElement.dataset.theme = theme;
    palette = null;
    themeToggle.update(null, { theme });
    render();
  }
  doc.defaultView.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    palette = null;
    render();
  });
  doc.defaultView.addEventListener('resize', render);

  // keyboard: space or k plays and pauses, "." takes one step (not while typing in a control)
  doc.addEventListener('keydown', (e) => {
    if (!ui || e.altKey || e.ctrlKey || e.metaKey) return;
    const t = e.target;
    if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement || t instanceof HTMLButtonElement || t instanceof HTMLCanvasElement) return;
    if (e.key === ' ' || e.key === 'k') {
      e.preventDefault();
      actions.togglePlay();
    } else if (e.key === '.') {
      ui.stepBtn.click();
    }
  });

  return {
    build,
    render,
    applyTheme,
    /** The line under the spinner, when the lab could not start. */
    bootFailed(text) {
      bootText.textContent = text;
    },
  };
}
