// The concept lab's races: two models that differ in one setting, trained on
// the same data from the same seed, side by side. This module is pure (no DOM):
// the race worker (race-worker.js) runs it, the page (race-view.js) reads its
// definitions, and Node can run it for measurements.
//
// A race is a pure function of (name, seed, variant): every batch is fixed by
// the seed and the step, evaluations happen at fixed steps (every evalEvery),
// so a link replays to exactly the same numbers however the steps are chunked.
//
//   const run = createRaceRun(engine, 'order', { seed: 1, variant: 'sinusoidal' });
//   run.advance(0, 25); run.advance(1, 25);   // arm 0, then arm 1, 25 steps each
//   run.evaluate();                           // the held-out numbers at run.step
//   run.live();                               // attention maps of the probe, now
//   run.final();                              // the bigger evaluation at the finish
//   run.dispose();
//
// Each race is one table (defineRace): what the worker trains and measures, and
// what the page shows of it (its text, chance level, results rows, charts, check
// columns, verdict and maps), read by the view (race-view.js), the demo's state
// (state.js: its URL fields) and the worker alike. The shared parts of those
// tables are in race-parts.js, what the races measure of their trainers in
// race-measures.js, the heads race's own task in race-diff-task.js.

import { ROW, fmt, pct, meanOver, recentMean, perArm, evalSeries, sinceLastCheck, RESULT, CHART, COLUMN, finalOr } from './race-parts.js';
import { formatValue, formatPercent } from '../kit/format.js';
import { DIFF, diffBatch, DIFF_PROBE, diffLetters } from './race-diff-task.js';
import { COREFERENCE_SENTENCES, probeMaps, diffMeasures, peekScores, coreferenceLook } from './race-measures.js';
import { LONG_RACE } from './race-long.js';

export { ROW, meanOver, recentMean, COREFERENCE_SENTENCES };

// ---- the races ------------------------------------------------------------------


/** One line of a race: its label in the table, its short name on the charts, its colour. */
const arm = (label, short, className) => ({ label, short, className });
const ON = 'cx-s-on';
const OFF = 'cx-s-off';

/** The held-out accuracy of each trainer on `samples` fixed sequences. */
const heldOut = (trainers, samples) => trainers.map((t) => ({ accuracy: t.evaluate({ samples }).accuracy }));

/**
 * A race: its demo, title, the two arms (label and the one setting they differ
 * in) and settings({seed, variant}) → the trainer settings of each arm, with
 * what most races share as defaults: seed 1, 300 steps (finish lines at half,
 * the default and double), a check every 25 steps on 128 held-out sequences,
 * 512 at the finish. Optional:
 *   variant      a second choice for the second arm: {param, choices, default, label}
 *   single       one model; its two lines are two ways of evaluating it
 *   custom       the heads race's own task: batches from batch(seed, step, size), no
 *                held-out check while it runs (live accuracy comes from the step rows)
 *   evaluate(trainers, samples) → per line {accuracy, …}   (default: held-out accuracy)
 *   probe        the sequence whose maps are shown ({ids, targets}; default the task's)
 *   live(trainers) → {…}            what the page draws instead of the arms' maps
 *   peek         add each head's weight on the next position to the live maps
 *   final(trainers, out, {seed, samples}) → more numbers at the finish line
 *   spread       a finish-line number of each arm over race seeds 1–5, measured, as the
 *                page states it: {seeds, steps, measure (a field of final().arms, default
 *                'accuracy'), arms: [[low, high], …]} (tests/js/race-seeds.mjs measures it)
 * What the page shows (race-parts.js has the shared rows, charts and columns):
 *   text         {setup(v), watch(v), condition(v)}: the words beside the race (v: the variant)
 *   chance       {value, label} of the accuracy charts' chance line, or null
 *   results      rows of the results table (default: held-out accuracy, training loss)
 *   charts       the charts (default: training loss, held-out accuracy)
 *   checks       columns of the numbers-behind-the-curves table (default: loss, held-out)
 *   verdict(h, v, ctx) → the line at the finish
 *   maps         'arms' (every head's map of the probe, per arm; default) or 'sentences'
 *                (the context race: where "it" looks in two sentences); mapsTitle, mapsNote(v)
 *   headKeys     the heads race's table of each head's weight on the two letters
 */
function defineRace(def) {
  const steps = def.steps ?? 300;
  return Object.freeze({
    seed: 1,
    stepChoices: [steps / 2, steps, steps * 2],
    evalEvery: 25,
    samples: 128,
    finalSamples: 512,
    evaluate: heldOut,
    chance: null,
    results: [RESULT.accuracy, RESULT.loss],
    charts: [CHART.loss, CHART.heldout],
    checks: [COLUMN.loss, COLUMN.heldout],
    maps: 'arms',
    mapsTitle: 'Attention maps of both models on the same example',
    ...def,
    steps,
  });
}

export const RACES = Object.freeze({
  scale: defineRace({
    demo: 'scale',
    title: 'Race: the same wide head trained with and without \u00f7\u221ad_k',
    arms: [arm('scaled: S\u2032 = q\u00b7k / \u221ad_k', 'scaled', ON), arm('not scaled: S\u2032 = S = q\u00b7k', 'not scaled', OFF)],
    settings: ({ seed }) => {
      const base = { task: 'recall', layers: 2, heads: 1, dModel: 64, mlp: 64, seed };
      return [{ ...base, scale: true }, { ...base, scale: false }];
    },
    text: {
      setup: () => 'Two copies of one model (2 layers, one attention head of width d_k = 64, an MLP, LayerNorm, Adam at learning rate 0.003) learn the recall task: read pairs such as \u201ce 0 b 4 a 4\u201d, then a letter, and answer with the digit that went with it. Same starting weights, same batches; one divides the scores by \u221a64 = 8, the other does not.',
      watch: () => 'Without the scale the scores start about 64 times as spread out, so every softmax row is already close to one-hot on whichever key the random start favoured: the row entropy falls towards 0 and the maps turn into single dots. Little gradient then reaches the scores while it matters most (compare the two curves over the first 100 steps), and that copy stays on its plateau; the scaled copy finds the matching digit in about 100 steps.',
      condition: () => 'When it shows: with a wide head (here 64) on a task where the model must learn by content which key to look at. Adam rescales small gradients, so on a task that position alone solves, such as reversing digits, both copies learn just as fast even at width 128 (we checked). Late in the race the scaled copy\u2019s gradient drops too, for another reason: its loss is close to 0, so there is little left to correct.',
    },
    chance: { value: 0.1, label: '1/10' },
    results: [
      RESULT.accuracy,
      RESULT.loss,
      { id: 'grad', label: () => 'gradient reaching the scores, mean over steps 1\u2013100', value: (h, a) => meanOver(h.rows[a], ROW.scoreGradNorm, 0, 100) },
      { id: 'entropy', label: () => 'row entropy in nats (mean of the last 25 steps)', value: (h, a) => recentMean(h.rows[a], ROW.rowEntropy, 25) },
      { id: 'variance', label: () => 'variance of the scores (mean of the last 25 steps)', value: (h, a) => recentMean(h.rows[a], ROW.scoreVariance, 25) },
    ],
    charts: [
      CHART.loss,
      CHART.heldout,
      { id: 'variance', title: 'Variance of the scores S', yLabel: 'variance (log)', yLog: true, series: (h, v, ctx) => perArm(h, ctx, ROW.scoreVariance, 5) },
      { id: 'entropy', title: 'Row entropy of the softmax', yLabel: 'nats', series: (h, v, ctx) => perArm(h, ctx, ROW.rowEntropy, 5) },
      { id: 'grad', title: 'Gradient reaching the scores, \u2016\u2202loss/\u2202S\u2016', yLabel: 'norm (log)', yLog: true, series: (h, v, ctx) => perArm(h, ctx, ROW.scoreGradNorm) },
    ],
    checks: [COLUMN.loss, COLUMN.heldout, { header: 'variance', value: sinceLastCheck(ROW.scoreVariance) }, { header: 'entropy', value: sinceLastCheck(ROW.rowEntropy) }, { header: '\u2016\u2202S\u2016', value: sinceLastCheck(ROW.scoreGradNorm) }],
    verdict: (hist, v, ctx) => {
      const f = hist.final.arms;
      const g0 = meanOver(hist.rows[0], ROW.scoreGradNorm, 0, 100);
      const g1 = meanOver(hist.rows[1], ROW.scoreGradNorm, 0, 100);
      return `At the finish: ${ctx.label(0, 'short')} ${pct(f[0].accuracy)}, ${ctx.label(1, 'short')} ${pct(f[1].accuracy)} held-out. Over the first 100 steps the gradient reaching the unscaled scores was ${fmt(g0 / g1)}\u00d7 smaller on average.`;
    },
    mapsNote: () => 'The recall example \u201ce 0 b 4 a 4 g 4 ? g\u201d (answer 4): rows are queries, columns keys, darker = more weight. The unscaled maps turn into single dots early: saturated rows.',
  }),
  order: defineRace({
    demo: 'order',
    title: 'Race: reverse 12 digits, with and without positions',
    finalSamples: 1024,
    variant: { param: 'rpe', choices: ['sinusoidal', 'learned'], default: 'sinusoidal', label: 'positions of the second model' },
    arms: [arm('no positions', 'no positions', OFF), arm((v) => `${v} positions`, (v) => v, ON)],
    settings: ({ seed, variant }) => {
      const base = { task: 'reverse', length: 12, seed };
      return [{ ...base, positional: 'none' }, { ...base, positional: variant }];
    },
    final: (trainers, out) => trainers.forEach((t, i) => {
      const scores = t.headScores(256);
      out.arms[i].antiDiagonal = Math.max(...scores.map((h) => h.scores['anti-diagonal'] ?? 0));
    }),
    text: {
      setup: (v) => `Two copies of one small model (1 layer, 2 heads, width 32) learn to write 12 digits backwards. Same starting weights, same batches; one adds ${v} position vectors to its inputs, the other adds nothing.`,
      watch: () => 'Without positions the model sees the digits as a set: it cannot tell which digit is last, so the best it can do is guess a digit that occurs often, about 1 time in 4 here (pure chance would be 1 in 10). With positions each output looks at its mirror position, an anti-diagonal line in the maps, and the accuracy goes to 100%.',
      condition: () => 'The accuracy is measured on sequences the models never trained on.',
    },
    chance: { value: 0.1, label: '1/10' },
    results: [
      RESULT.accuracy,
      RESULT.loss,
      {
        id: 'anti',
        label: (h) => (h.final ? 'best head on the anti-diagonal (256 held-out sequences)' : 'best head on the anti-diagonal (the example below)'),
        value: (h, a) => (h.final ? h.final.arms[a].antiDiagonal : h.live?.arms?.[a] ? Math.max(...h.live.arms[a].maps.map((m) => m.scores['anti-diagonal'] ?? 0)) : NaN),
      },
    ],
    verdict: (hist, v, ctx) => `At the finish: ${ctx.label(1, 'short')} positions ${pct(hist.final.arms[1].accuracy)}, no positions ${pct(hist.final.arms[0].accuracy)} held-out.`,
    mapsNote: () => 'One 12-digit example: rows are output positions, columns input positions. With positions, the heads draw the anti-diagonal between them; without, they cannot.',
  }),
  long: defineRace(LONG_RACE),
  masks: defineRace({
    demo: 'masks',
    title: 'Race: next-letter prediction trained with and without the causal mask',
    steps: 600,
    stepChoices: [300, 600, 1000],
    evalEvery: 50,
    arms: [arm('causal mask', 'masked', ON), arm('no mask (sees the future)', 'no mask', OFF)],
    settings: ({ seed }) => {
      const base = { task: 'induction', seed };
      return [{ ...base, causal: true }, { ...base, causal: false }];
    },
    // as trained, and with the causal mask switched on ("without the future")
    evaluate: (trainers, samples) => trainers.map((t) => ({ accuracy: t.evaluate({ samples }).accuracy, causal: t.evaluate({ samples, causal: true }).accuracy })),
    peek: true,
    // without the future, measured at 600 steps: at seed 4 the masked copy is still on its
    // plateau (also at 1000 steps: 18.3%); the unmasked copy is at chance at every seed
    spread: { seeds: [1, 5], steps: 600, measure: 'causal', arms: [[0.134, 0.987], [0.0324, 0.0543]] },
    text: {
      setup: () => 'Two copies of a 2-layer attention-only model learn the induction task: a run of letters appears twice, and on its second appearance each next letter must be predicted. The target at each position is the next letter, which is also the next input. One copy trains with the causal mask, the other without it.',
      watch: () => 'Without the mask the answer is in plain view: that copy learns to look one position ahead (the line just right of the diagonal in its maps) and its training loss falls to almost 0 within 150 steps. Run the way a model must be used, predicting without the future, it is right about 1 time in 26, which is chance. The masked copy has to learn the real rule (find the earlier copy, take the letter after it): it sits on a plateau, then (at most seeds around step 400) its heads fall into place, and it passes the same test about 98% of the time.',
      condition: () => `\u201cWithout the future\u201d means the trained model evaluated with the causal mask switched on, on held-out sequences; \u201cwith the future\u201d is the same held-out set as it was trained. Without the future, at the finish, over ${spreadText('masks')}. How long the masked copy stays on its plateau depends on the seed: at seed 4 it has not left it by step 600, nor by step 1000 (18.3% then).`,
    },
    chance: { value: 1 / 26, label: '1/26' },
    results: [
      RESULT.loss,
      { id: 'future', label: (h) => `held-out accuracy as trained${h.final ? ` (${h.final.samples} sequences)` : ''}`, value: (h, a) => finalOr(h, a, 'accuracy'), format: pct },
      { id: 'causal', label: (h) => `held-out accuracy predicting without the future${h.final ? ` (${h.final.samples} sequences)` : ''}`, value: (h, a) => finalOr(h, a, 'causal'), format: pct },
      { id: 'peek', label: () => 'weight on the next letter (the answer), best head, example below', value: (h, a) => (h.live?.arms?.[a] ? Math.max(...h.live.arms[a].peek) : NaN) },
    ],
    charts: [
      CHART.loss,
      {
        id: 'accuracy',
        title: 'Held-out accuracy, without the future (solid) and as trained (dashed)',
        yLabel: 'accuracy',
        yDomain: [0, 1],
        chance: true,
        series: (h, v, ctx) => [...evalSeries(h, ctx, 'accuracy', { arm: 1, dashed: true, suffix: ', seeing the future' }), ...evalSeries(h, ctx, 'causal', { suffix: ', without the future' })],
      },
    ],
    checks: [COLUMN.loss, { header: 'as trained', value: (h, e, a) => e.arms[a]?.accuracy, format: pct }, { header: 'no future', value: (h, e, a) => e.arms[a]?.causal, format: pct }],
    verdict: (hist) => {
      const f = hist.final.arms;
      return `Without the mask the training loss fell to ${fmt(recentMean(hist.rows[1], ROW.loss, 25))}, yet predicting without the future it is right ${pct(f[1].causal)} of the time (chance: ${pct(RACES.masks.chance.value)}). With the mask: ${pct(f[0].causal)}.`;
    },
    mapsNote: () => 'One held-out example, every head of both layers: rows are positions, columns the positions they look at. The unmasked model draws a line just right of the diagonal: it reads the next letter, the answer itself.',
  }),
  heads: defineRace({
    demo: 'heads',
    title: 'Race: one head of width 32 against several narrower heads',
    steps: 800,
    evalEvery: 50,
    samples: 0, // live accuracy: each step's fresh batch, seen before its update
    finalSamples: 256,
    custom: true,
    variant: { param: 'rh', choices: [2, 4], default: 2, label: 'heads of the second model' },
    arms: [arm('1 head (d_k = 32)', '1 head', OFF), arm((v) => `${v} heads (d_k = ${32 / v} each)`, (v) => `${v} heads`, ON)],
    settings: ({ seed, variant }) => {
      const base = { task: 'previous-token', length: DIFF.T, layers: 1, dModel: 32, mlp: 64, causal: true, batch: 64, seed };
      return [{ ...base, heads: 1 }, { ...base, heads: variant }];
    },
    batch: diffBatch,
    evaluate: (trainers) => trainers.map(() => ({})),
    probe: DIFF_PROBE,
    // one head learns it too, by weighting the two letters unequally, but later, and
    // how much later depends on the seed; measured at 800 steps, default variant
    spread: { seeds: [1, 5], steps: 800, arms: [[0.234, 0.751], [0.936, 1]] },
    final: (trainers, out, { seed, samples }) => {
      out.arms = trainers.map((t) => diffMeasures(t, seed, samples));
    },
    text: {
      setup: (v) => `Letters a\u2013h stand for 0\u20137. At each position the answer is how many steps forward it is from the letter two back to the previous letter, round a clock of eight: after \u201cc f\u201d it is \u201cd\u201d (3 steps). It needs both letters and which one came first. Two copies of a 1-layer model (width 32, an MLP of 64, causal) learn it from the same batches: one has a single head of width 32, the other ${v} heads of width ${32 / v}.`,
      watch: () => 'A softmax row has one unit of weight to share. A single head must split it between the two letters, and their values then add up, so \u201cc then f\u201d looks almost like \u201cf then c\u201d: the order the answer needs is lost, and it learns far more slowly. With several heads a row can send one head to each letter: watch the heads\u2019 maps pick different cells in the same row, and the coverage (the best head\u2019s weight on each of the two letters) rise towards 1.',
      condition: () => `How they specialise: in most rows one head takes the previous letter and another the letter before it, but which head takes which can depend on the letters, so on average each head leans towards one letter rather than owning it. Either way they do not repeat one calculation. The accuracy is measured on new sequences. At the finish, over ${spreadText('heads')}. One head can learn it too, by weighting the two letters unequally, but later, and how much later depends on the seed.`,
    },
    chance: { value: 1 / 8, label: '1/8' },
    results: [
      {
        id: 'acc',
        label: (h) => (h.final ? `accuracy on ${h.final.samples} new sequences (at the finish)` : 'accuracy on new batches (mean of the last 25 steps)'),
        value: (h, a) => (h.final ? h.final.arms[a].accuracy : recentMean(h.rows[a], ROW.accuracy, 25)),
        format: pct,
      },
      RESULT.loss,
      { id: 'cover', label: () => 'coverage: best head\u2019s weight on each of the two letters (1 = both fully seen)', value: (h, a) => (h.final ? h.final.arms[a].cover : NaN) },
    ],
    charts: [
      CHART.loss,
      { id: 'accuracy', title: 'Accuracy on each new batch (mean over 25 steps)', yLabel: 'accuracy', yDomain: [0, 1], chance: true, series: (h, v, ctx) => perArm(h, ctx, ROW.accuracy, 25) },
    ],
    checks: [COLUMN.loss, { header: 'batch acc.', value: sinceLastCheck(ROW.accuracy), format: pct }],
    verdict: (hist, v, ctx) => `At the finish: ${ctx.label(1, 'short')} ${pct(hist.final.arms[1].accuracy)}, ${ctx.label(0, 'short')} ${pct(hist.final.arms[0].accuracy)} on new sequences.`,
    mapsNote: () => `The example \u201c${diffLetters(DIFF_PROBE.ids)}\u201d: rows are positions (from the third on, each has an answer), columns the letters they look at. The previous letter is the cell left of the diagonal, the letter two back the one left of that.`,
    headKeys: true,
  }),
  context: defineRace({
    demo: 'context',
    title: 'Race: a trained model against its own weights with the attention replaced by the plain average',
    seed: 2,
    single: true,
    arms: [arm('with its attention', 'attention', ON), arm('with the plain average instead', 'plain average', OFF)],
    settings: ({ seed }) => [{ task: 'coreference', seed }],
    // measured with the uniform-attention probe (node tests/js/race-seeds.mjs context): 7.2, 11.5, 9.8, 10.7, 18.8%
    spread: { seeds: [1, 5], steps: 300, arms: [[1, 1], [0.0723, 0.188]] },
    evaluate: ([t], samples) => [{ accuracy: t.evaluate({ samples }).accuracy }, { accuracy: t.evaluate({ samples, uniformAttention: true }).accuracy }],
    live: ([t]) => ({ sentences: coreferenceLook(t) }),
    final: ([t], out) => {
      out.sentences = coreferenceLook(t);
    },
    text: {
      setup: () => 'The coreference model (2 layers, 2 heads each, an MLP) learns which noun \u201cit\u201d means in sentences such as \u201cthe animal didn\u2019t cross the street because it was too tired\u201d. The \u201cplain average\u201d line is the very same model at every step, with each head\u2019s attention replaced by the uniform average over the sentence.',
      watch: () => 'With its attention the model gets the held-out sentences (new combinations of noun, obstacle and adjective) right. With the same weights averaging instead, it is right only about 1 time in 10: an average gives \u201cit\u201d the same mix whatever the last word says. Below, where \u201cit\u201d looks in each head: when the sentence ends \u201ctired\u201d some head looks at \u201canimal\u201d, when it ends \u201cwide\u201d at \u201cstreet\u201d.',
      condition: () => `Which head does it, and how sharply, changes with the seed (seed 2 shows it cleanly; try others); at the finish, over ${spreadText('context')}. The average replaces the attention of a model trained with attention; the engine cannot yet train a model that averages from the start.`,
    },
    results: [RESULT.accuracy],
    charts: [
      { id: 'loss', title: 'Training loss (mean over 10 steps)', yLabel: 'cross-entropy', series: (h, v, ctx) => perArm(h, ctx, ROW.loss).slice(0, 1).map((x) => ({ ...x, name: 'training loss' })) },
      CHART.heldout,
    ],
    checks: [COLUMN.heldout],
    verdict: (hist) => `At the finish: ${pct(hist.final.arms[0].accuracy)} with its attention, ${pct(hist.final.arms[1].accuracy)} with the same weights averaging.`,
    maps: 'sentences',
    mapsTitle: 'Where \u201cit\u201d looks, head by head',
    mapsNote: () => 'Each row is one head: the weights of the word \u201cit\u201d over the sentence. Left the sentence ends \u201ctired\u201d, right \u201cwide\u201d. Only the last word differs.',
  }),
});

export const RACE_NAMES = Object.freeze(Object.keys(RACES));

/** "race seeds 1–5 at 800 steps: 1 head 23.4–75.1%, 2 heads 93.6–100%": a race's measured spread (default variant). */
export function spreadText(race) {
  if (RACES[race].spreadText) return RACES[race].spreadText(RACES[race].spread);
  const { seeds, steps, arms } = RACES[race].spread;
  const v = RACES[race].variant?.default;
  const range = ([low, high]) => (low === high ? formatPercent(high, 3) : `${formatValue(100 * low, 3)}\u2013${formatPercent(high, 3)}`);
  return `race seeds ${seeds[0]}\u2013${seeds[1]} at ${steps} steps: ${arms.map((a, i) => `${armLabel(race, i, v, 'short')} ${range(a)}`).join(', ')}`;
}

/** Every race of a demo, in the table's order (a demo may hold more than one). */
export function racesOfDemo(demo) {
  return RACE_NAMES.filter((n) => RACES[n].demo === demo);
}

/** The URL fields of a race's state: {seed, steps, at, run} → "rseed", … (or with the race's own prefix). */
export function raceFieldNames(race) {
  const p = RACES[race].prefix ?? 'r';
  return { seed: `${p}seed`, steps: `${p}steps`, at: `${p}at`, run: `${p}run` };
}

export function armLabel(race, i, variant, field = 'label') {
  const x = RACES[race].arms[i][field];
  return typeof x === 'function' ? x(variant) : x;
}

/** The variant of a state (or the default). */
export function variantOf(race, state) {
  const v = RACES[race].variant;
  return v ? state?.[v.param] ?? v.default : null;
}

/** The key of a run: the race and everything its numbers depend on. */
export function raceKey(race, { seed, variant }) {
  return `${race}|${seed}|${variant ?? ''}`;
}

// ---- a run ------------------------------------------------------------------------

/** Two trainers (or one, for a single-model race) and the measurements of the race. */
export function createRaceRun(engine, race, { seed, variant }) {
  const def = RACES[race];
  if (!def) throw new RangeError(`race "${race}" is not one of ${RACE_NAMES.join(', ')}`);
  const trainers = [];
  try {
    for (const s of def.settings({ seed, variant })) trainers.push(engine.createTrainer(s));
  } catch (e) {
    for (const t of trainers) t.dispose();
    throw e;
  }
  const lines = def.arms.length;
  let stepMs = 0;

  /** k steps of arm i; returns its rows. */
  function advance(i, k) {
    const t = trainers[i];
    const rows = [];
    for (let n = 0; n < k; n++) {
      const r = def.batch ? t.stepBatch(def.batch(seed, t.stepCount, t.settings.batch), 1) : t.step(1);
      stepMs += r.ms;
      rows.push([r.step, r.loss, r.accuracy, r.scoreVariance, r.rowEntropy, r.scoreGradNorm]);
    }
    return rows;
  }

  /** The held-out numbers at the current step (fixed sets: the same numbers on every replay). */
  function evaluate(samples = def.samples) {
    return { step: trainers[0].stepCount, arms: def.evaluate(trainers, samples) };
  }

  /** What the page draws now: attention maps of the probe (small). */
  function live() {
    const step = trainers[0].stepCount;
    if (def.live) return { step, ...def.live(trainers) };
    return {
      step,
      arms: trainers.map((t) => {
        const p = def.probe ? t.probe({ ids: def.probe.ids }) : t.probe();
        const out = probeMaps(p);
        if (def.peek) out.peek = peekScores(p);
        out.targets = def.probe ? def.probe.targets.slice() : Array.from(p.targets).slice(0, p.length);
        return out;
      }),
    };
  }

  /** The bigger evaluation at the finish line. */
  function final() {
    const n = def.finalSamples;
    const out = { step: trainers[0].stepCount, samples: n, arms: def.custom ? [] : evaluate(n).arms };
    def.final?.(trainers, out, { seed, samples: n });
    return out;
  }

  return {
    race,
    lines,
    trainers: trainers.length,
    get step() { return trainers[0].stepCount; },
    get stepMs() { return stepMs; },
    advance,
    evaluate,
    live,
    final,
    dispose() {
      for (const t of trainers) t.dispose();
      trainers.length = 0;
    },
  };
}
