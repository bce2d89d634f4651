// A race inside a concept demo: two models that differ in one setting, trained
// side by side in the race worker while the learner watches their curves and
// attention maps diverge. State (seed, length, variant, the step it is paused
// at, running or not) lives in the demo's URL fields rseed, rsteps, rat, rrun
// (a second race of the same demo has its own prefix: lseed, lsteps, lat, lrun)
// (+ the variant's own); a link replays to exactly the same numbers.
//
//   const race = createRace(frame, 'order', { onState, tooltip, palette });
//   race.update(state);   // from the demo's update
//   race.hide();          // the demo was hidden: pause
//
// Test hooks: [data-testid="race-<name>"] carries data-state (idle | running |
// catching | paused | done | error), data-step, data-steps, data-elapsed (ms of
// wall time in the worker) and data-step-ms (ms inside the training steps);
// every number in the results table carries data-value.

import { el, uniqueId } from '../kit/dom.js';
import { formatValue } from '../kit/format.js';
import { createLineChart } from './chart.js';
import { createNote, createTable } from './common.js';
import { RACES, raceKey, variantOf, armLabel, raceFieldNames } from './races.js';
import { fmt } from './race-parts.js';
import { raceClient } from './race-client.js';
import { createRaceMaps } from './race-maps.js';

const seconds = (ms) => `${formatValue(ms / 1000, 3)} s`;

let generation = 0;

/** A run's page-side record; gen tells its messages from those of a run it replaced. */
function freshHistory(key, arms) {
  generation += 1;
  return { key, gen: generation, rows: Array.from({ length: arms }, () => []), evals: [], live: null, final: null, step: 0, elapsed: 0, stepMs: 0, running: false, until: 0, mode: 'idle', pausing: null, error: null };
}

/** The arms' names and colours for the table's functions (race-parts.js): ctx.label(i, 'short'). */
function armsContext(race, v) {
  return { arms: RACES[race].arms, label: (i, form = 'label') => armLabel(race, i, v, form) };
}

/** A chart's chance line: the race's chance level, when the chart shows accuracy. */
function chanceRefs(def, chart) {
  return chart.chance && def.chance ? [{ y: def.chance.value, label: `chance ${def.chance.label}` }] : [];
}

// ---- the view ---------------------------------------------------------------------------------

export function createRace(frame, race, { onState, tooltip, palette }) {
  const def = RACES[race];
  const F = raceFieldNames(race);
  const { text } = def;
  const variantField = def.variant ?? null;
  const card = frame.card(def.title, 'cx-race');
  card.dataset.testid = `race-${race}`;
  card.id = `race-${race}`;
  // a way down to the race from the top of the demo
  const head = frame.root.querySelector('.cx-demo-head');
  if (head) {
    const jump = el('button', 'btn btn-small btn-quiet cx-race-jump', { type: 'button', testid: def.prefix ? `race-jump-${race}` : 'race-jump', text: def.jump ?? 'See it in training: a race of two models \u2193' });
    jump.addEventListener('click', () => {
      card.scrollIntoView({ behavior: 'smooth', block: 'start' });
      play.focus({ preventScroll: true });
    });
    head.append(jump);
  }
  const setup = createNote(card, 'cx-note cx-race-setup');
  const watch = createNote(card, 'cx-note cx-race-watch');
  const condition = createNote(card, 'cx-note cx-race-condition');

  // controls
  const controls = el('div', 'cx-controls cx-inline-controls cx-race-controls', { attrs: { role: 'group', 'aria-label': 'Race controls' } });
  card.append(controls);
  const play = el('button', 'btn btn-primary cx-race-play', { type: 'button', testid: 'race-play' });
  const reset = el('button', 'btn cx-race-reset', { type: 'button', testid: 'race-reset', text: 'Reset' });
  controls.append(el('div', 'cx-race-buttons', {}, play, reset));
  const seedInput = el('input', 'control cx-seed', { type: 'number', min: '0', max: '4294967295', step: '1', inputMode: 'numeric', testid: 'race-seed' });
  const seedId = uniqueId('rs');
  seedInput.id = seedId;
  controls.append(el('div', 'field cx-field', {}, el('label', 'field-label', { text: 'Race seed (weights and batches)', htmlFor: seedId }), seedInput));
  const stepsSelect = el('select', 'control', { testid: 'race-steps' });
  for (const n of def.stepChoices) stepsSelect.append(el('option', null, { value: String(n), text: `${n} steps` }));
  const stepsId = uniqueId('rn');
  stepsSelect.id = stepsId;
  controls.append(el('div', 'field cx-field', {}, el('label', 'field-label', { text: 'Finish line', htmlFor: stepsId }), stepsSelect));
  let variantSelect = null;
  if (variantField) {
    variantSelect = el('select', 'control', { testid: 'race-variant' });
    for (const c of variantField.choices) variantSelect.append(el('option', null, { value: String(c), text: String(c) }));
    const vid = uniqueId('rv');
    variantSelect.id = vid;
    controls.append(el('div', 'field cx-field', {}, el('label', 'field-label', { text: variantField.label[0].toUpperCase() + variantField.label.slice(1), htmlFor: vid }), variantSelect));
  }

  // progress
  const progress = el('progress', 'cx-race-progress', { max: 1, value: 0, testid: 'race-progress' });
  const status = el('p', 'cx-race-status', { testid: 'race-status', attrs: { role: 'status', 'aria-live': 'polite' } });
  card.append(el('div', 'cx-race-progress-row', {}, progress, status));

  // results
  const models = def.arms.length === 2 ? 'the two models' : `the ${def.arms.length} models`;
  const results = createTable(card, { caption: def.single ? 'The model, evaluated two ways' : `Where ${models} stand`, headers: ['', '', ''], testid: `race-${race}-results`, className: 'cx-race-results' });
  const verdict = createNote(card, 'cx-note cx-strong-note cx-race-verdict');

  // charts
  const chartBox = el('div', 'cx-charts cx-race-charts');
  card.append(chartBox);
  const charts = def.charts.map((c) => ({ ...c, view: createLineChart(chartBox, { title: c.title, xLabel: c.xLabel ?? 'training step', yLabel: c.yLabel, yLog: Boolean(c.yLog), xLog: Boolean(c.xLog), testid: `race-${race}-chart-${c.id}`, description: c.title }) }));

  // attention maps (and the tables that go with them)
  const maps = createRaceMaps(card, race, { tooltip });

  // the numbers behind the curves
  const details = el('details', 'cx-details cx-race-details');
  details.append(el('summary', null, { text: 'The numbers behind the curves, at every check' }));
  card.append(details);
  const cols = def.checks;
  const checkTable = createTable(details, { caption: 'Loss is the mean over the steps since the previous check', headers: ['step'], testid: `race-${race}-checks` });
  let checkHeadersFor = null;

  // ---- state -------------------------------------------------------------------------------
  let state = null;
  let h = freshHistory(null, def.single ? 1 : def.arms.length);
  let unlisten = () => {};
  let visible = true;
  let frameId = 0;
  let lastSig = null;
  let lastPalette = null;

  const armsCount = def.single ? 1 : def.arms.length;
  const variantNow = () => variantOf(race, state);

  function onMessage(m) {
    if (m.key !== null && (m.key !== h.key || m.gen !== h.gen)) return; // a dropped or replaced run
    if (m.type === 'error') {
      h.error = m.message;
      h.running = false;
      h.mode = 'error';
      schedule();
      return;
    }
    if (m.rows) m.rows.forEach((rows, i) => h.rows[i].push(...rows));
    if (m.evals) h.evals.push(...m.evals);
    if (m.live) h.live = m.live;
    h.step = m.step;
    h.elapsed = m.elapsed;
    h.stepMs = m.stepMs;
    if (m.type === 'stopped') {
      h.running = false;
      const reason = h.pausing;
      h.pausing = null;
      if (m.finished) {
        h.final = m.final;
        h.mode = 'done';
        if (state?.[F.run] || state?.[F.at] !== h.step) onState({ [F.run]: false, [F.at]: h.step });
      } else if (reason === 'user' || (reason === 'hide' && h.mode === 'running')) {
        h.mode = 'paused';
        onState({ [F.run]: false, [F.at]: h.step });
      } else if (!reason && h.mode === 'running' && state?.[F.run]) {
        // the worker trains one race at a time: another race on the page started, so this one pauses
        h.mode = 'paused';
        onState({ [F.run]: false, [F.at]: h.step });
      } else {
        h.mode = h.step > 0 ? 'paused' : 'idle';
      }
    }
    schedule();
  }

  function setKey(key) {
    if (key === h.key) return;
    if (h.key) raceClient.drop(h.key);
    unlisten();
    h = freshHistory(key, armsCount);
    unlisten = raceClient.listen(key, onMessage);
    maps.clear();
  }

  function restart() {
    raceClient.drop(h.key);
    const key = h.key;
    h = freshHistory(key, armsCount);
    maps.clear();
  }

  function start(target) {
    h.running = true;
    h.until = target;
    h.mode = state[F.run] ? 'running' : 'catching';
    h.error = null;
    raceClient.run(h.key, h.gen, race, { seed: state[F.seed], variant: variantNow() }, target, state[F.steps]);
  }

  function reconcile() {
    const finish = state[F.steps];
    const target = state[F.run] ? finish : Math.min(state[F.at], finish);
    if (h.running) {
      if (h.pausing) return;
      if (target !== h.until) {
        if (target > h.step) start(target);
        else {
          h.pausing = 'user';
          raceClient.pause(h.key);
        }
      }
      return;
    }
    if (h.mode === 'error') return;
    if (h.step > target) restart();
    if (h.step < target) start(target);
    else h.mode = h.step >= finish && h.step > 0 ? 'done' : h.step > 0 ? 'paused' : 'idle';
  }

  // ---- controls ----------------------------------------------------------------------------
  play.addEventListener('click', () => {
    if (h.running) {
      h.pausing = 'user';
      h.mode = h.mode === 'catching' ? 'running' : h.mode; // a stop during a replay keeps that step
      raceClient.pause(h.key);
      schedule();
      return;
    }
    if (h.mode === 'done') {
      restart();
      onState({ [F.run]: true, [F.at]: 0 });
      reconcile();
      schedule();
      return;
    }
    if (h.mode === 'error') {
      restart();
      onState({ [F.run]: true });
      reconcile(); // the state may already say "running"
      schedule();
      return;
    }
    onState({ [F.run]: true });
  });
  reset.addEventListener('click', () => {
    restart();
    onState({ [F.run]: false, [F.at]: 0 });
    schedule();
  });
  let seedTimer = 0;
  const commitSeed = () => {
    clearTimeout(seedTimer);
    const n = Number(seedInput.value);
    if (seedInput.value !== '' && Number.isInteger(n) && n >= 0 && n <= 4294967295) {
      seedInput.removeAttribute('aria-invalid');
      if (n !== state?.[F.seed]) onState({ [F.seed]: n, [F.at]: 0 });
    } else seedInput.setAttribute('aria-invalid', 'true');
  };
  seedInput.addEventListener('input', () => {
    clearTimeout(seedTimer);
    seedTimer = setTimeout(commitSeed, 400);
  });
  seedInput.addEventListener('change', commitSeed);
  stepsSelect.addEventListener('change', () => onState({ [F.steps]: Number(stepsSelect.value) }));
  variantSelect?.addEventListener('change', () => {
    const raw = variantSelect.value;
    const v = variantField.choices.find((c) => String(c) === raw);
    onState({ [variantField.param]: v, [F.at]: 0 });
  });

  // ---- drawing -----------------------------------------------------------------------------
  function schedule() {
    if (!visible) {
      if (state) renderStatus(); // the hooks stay true while the demo is hidden
      return;
    }
    if (frameId) return;
    frameId = requestAnimationFrame(() => {
      frameId = 0;
      render();
    });
  }

  function renderStatus() {
    const finish = state[F.steps];

    // status
    const mode = h.mode;
    const runningNow = h.running && !h.pausing;
    play.textContent = runningNow ? 'Pause' : mode === 'done' ? 'Run again' : mode === 'paused' ? 'Resume' : mode === 'error' ? 'Try again' : 'Start the race';
    play.setAttribute('aria-pressed', runningNow ? 'true' : 'false');
    reset.disabled = h.step === 0 && !h.running;
    progress.max = finish;
    progress.value = Math.min(h.step, finish);
    let line;
    const both = def.single ? 'the model' : def.arms.length === 2 ? 'both models' : `all ${def.arms.length} models`;
    if (mode === 'error') line = `The race stopped: ${h.error}`;
    else if (mode === 'idle' && !h.running) line = `Not started. Start trains ${both} side by side in the background, ${finish} steps${def.single ? '' : ' each'}; pause any time.`;
    else if (mode === 'catching') line = `Replaying the link: step ${h.step} of ${Math.min(state[F.at], finish)} (same seed, same numbers)\u2026`;
    else if (h.pausing) line = `Pausing at step ${h.step}\u2026`;
    else if (h.running) line = `Training ${both}: step ${h.step} of ${finish} \u00b7 ${seconds(h.elapsed)}`;
    else if (mode === 'done') line = `Finished: ${finish} steps${def.single ? '' : ' for each model'} in ${seconds(h.elapsed)} (${seconds(h.stepMs)} of it inside the training steps).`;
    else line = `Paused at step ${h.step} of ${finish} \u00b7 ${seconds(h.elapsed)} of training so far.`;
    status.textContent = line;
    card.dataset.state = h.pausing ? 'running' : mode;
    card.dataset.step = String(h.step);
    card.dataset.steps = String(finish);
    card.dataset.elapsed = String(Math.round(h.elapsed));
    card.dataset.stepMs = String(Math.round(h.stepMs));
    card.dataset.key = h.key ?? '';
  }

  function render() {
    if (!state) return;
    const v = variantNow();
    const ctx = armsContext(race, v);
    const finish = state[F.steps];
    renderStatus();
    setup.set(text.setup(v));
    watch.set(text.watch(v));
    condition.set(text.condition(v));
    if (document.activeElement !== seedInput) seedInput.value = String(state[F.seed]);
    stepsSelect.value = String(finish);
    if (variantSelect) variantSelect.value = String(v);

    // results
    const heads = ['', ...def.arms.map((_, i) => armLabel(race, i, v))];
    const thead = results.element.querySelector('thead tr');
    if (thead.dataset.key !== heads.join('|')) {
      thead.dataset.key = heads.join('|');
      thead.replaceChildren(...heads.map((x) => el('th', null, { text: x, attrs: { scope: 'col' } })));
    }
    results.set(def.results.map((r) => ({
      testid: `race-${race}-${r.id}`,
      cells: [r.label(h), ...def.arms.map((_, i) => {
        const x = def.single && r.id !== 'acc' ? NaN : r.value(h, i);
        // a cell the arm cannot have (learned positions past their table) says why instead
        const note = r.note?.(h, i) ?? null;
        return { text: note ?? (r.format ?? fmt)(x), value: x, testid: `race-${race}-${r.id}-${i}`, className: note ? 'cx-race-note-cell' : '' };
      })],
    })));
    verdict.set(verdictText(h, v, ctx));

    // charts
    for (const c of charts) {
      const series = c.series(h, v, ctx);
      const empty = !series.some((x) => x.points.some(([, y]) => Number.isFinite(y) && (!c.yLog || y > 0)));
      c.view.update({ series, refs: chanceRefs(def, c), xDomain: c.xDomain ?? [0, finish], yDomain: c.yDomain ?? (empty ? (c.yLog ? [1e-3, 1] : [0, 1]) : null) });
    }
    maps.draw(h, v, palette());

    // checks
    const armsShown = def.single ? [0, 1] : def.arms.map((_, i) => i);
    const colsNow = cols;
    const hk = `${v}`;
    if (checkHeadersFor !== hk) {
      checkHeadersFor = hk;
      const tr = checkTable.element.querySelector('thead tr');
      tr.replaceChildren(el('th', null, { text: 'step', attrs: { scope: 'col' } }), ...armsShown.flatMap((i) => colsNow.map((c) => el('th', null, { text: `${armLabel(race, i, v, 'short')}: ${c.header}`, attrs: { scope: 'col' } }))));
    }
    const evalRows = def.custom
      ? Array.from({ length: Math.floor(h.step / def.evalEvery) }, (_, k) => ({ step: (k + 1) * def.evalEvery, arms: [{}, {}] }))
      : h.evals.filter((e) => e.step > 0);
    checkTable.set(evalRows.map((e) => ({
      cells: [String(e.step), ...armsShown.flatMap((i) => colsNow.map((c) => {
        const x = c.value(h, e, i, def.evalEvery);
        return { text: (c.format ?? fmt)(x), value: x };
      }))],
    })));
  }

  function verdictText(hist, v, ctx) {
    if (hist.mode !== 'done' || !hist.final) return hist.step > 0 ? 'The verdict comes at the finish line, from a bigger held-out check.' : '';
    return def.verdict?.(hist, v, ctx) ?? '';
  }

  return {
    element: card,
    update(s) {
      // the demo calls this on every change of its own settings too: redraw only for the race's
      const sig = JSON.stringify([s[F.seed], s[F.steps], s[F.at], s[F.run], variantOf(race, s)]);
      const pal = palette();
      const same = visible && sig === lastSig && pal === lastPalette;
      visible = true;
      state = s;
      lastSig = sig;
      lastPalette = pal;
      if (same) return;
      setKey(raceKey(race, { seed: s[F.seed], variant: variantOf(race, s) }));
      reconcile();
      schedule();
    },
    /** The demo is no longer shown: stop training (a running race pauses where it is). */
    hide() {
      visible = false;
      if (h.running && !h.pausing) {
        h.pausing = 'hide';
        raceClient.pause(h.key);
      }
    },
  };
}
