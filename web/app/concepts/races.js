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
// Step rows: [step, loss, accuracy, scoreVariance, rowEntropy, scoreGradNorm]
// (the training batch of that step, before its update).

export const ROW = Object.freeze({ step: 0, loss: 1, accuracy: 2, scoreVariance: 3, rowEntropy: 4, scoreGradNorm: 5 });

// ---- the custom task of the heads race --------------------------------------------
// Letters a–h stand for 0–7. At every position p ≥ 2 the answer is the number of
// steps forward from the letter two back to the previous letter, round the
// clock of eight: (x[p−1] − x[p−2]) mod 8, written as a letter. It needs both
// letters, and which one is which: the sum of the two would lose the order.
// Sequences live in the vocabulary of the engine's previous-token task
// ([PAD], a … p: letter k has id k + 1); only a … h are used.

export const DIFF = Object.freeze({ T: 8, K: 8, first: 2 });

function mix32(h) {
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A counter-based random integer for (seed, stream, index, k): the same everywhere. */
function draw(seed, stream, index, k) {
  return mix32((mix32((mix32((seed ^ mix32(stream + 0x9e3779b9)) >>> 0) + index) >>> 0) + k) >>> 0);
}

/** One sequence of the difference task: {ids, targets} (targets −1 before position 2). */
export function diffSequence(seed, stream, index, b) {
  const { T, K, first } = DIFF;
  const ids = new Array(T);
  const targets = new Array(T).fill(-1);
  for (let i = 0; i < T; i++) ids[i] = 1 + (draw(seed, stream, index, b * T + i) % K);
  for (let i = first; i < T; i++) targets[i] = 1 + ((((ids[i - 1] - ids[i - 2]) % K) + K) % K);
  return { ids, targets };
}

/** The training batch of step `index` (0-based): B sequences, flat. */
export function diffBatch(seed, index, B = 64) {
  const { T } = DIFF;
  const ids = new Int32Array(B * T);
  const targets = new Int32Array(B * T);
  for (let b = 0; b < B; b++) {
    const s = diffSequence(seed, 1, index, b);
    ids.set(s.ids, b * T);
    targets.set(s.targets, b * T);
  }
  return { batch: B, length: T, ids, targets };
}

/** Held-out sequence i: another stream, never a training batch. */
export const diffHeldout = (seed, i) => diffSequence(seed, 2, 0, i);
/** The sequence whose attention maps are shown. */
export const DIFF_PROBE = Object.freeze(diffSequence(7, 3, 0, 0));

// ---- the races ------------------------------------------------------------------

const CORE_SENTENCES = Object.freeze([
  { text: "The animal didn't cross the street because it was too tired.", word: 'tired', expect: 'animal' },
  { text: "The animal didn't cross the street because it was too wide.", word: 'wide', expect: 'street' },
]);
export const COREFERENCE_SENTENCES = CORE_SENTENCES;

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
  }),
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
  }),
  context: defineRace({
    demo: 'context',
    title: 'Race: a trained model against its own weights with the attention replaced by the plain average',
    seed: 2,
    single: true,
    arms: [arm('with its attention', 'attention', ON), arm('with the plain average instead', 'plain average', OFF)],
    settings: ({ seed }) => [{ task: 'coreference', seed }],
    evaluate: ([t], samples) => [{ accuracy: t.evaluate({ samples }).accuracy }, { accuracy: t.evaluate({ samples, uniformAttention: true }).accuracy }],
    live: ([t]) => ({ sentences: coreferenceLook(t) }),
    final: ([t], out) => {
      out.sentences = coreferenceLook(t);
    },
  }),
});

export const RACE_NAMES = Object.freeze(Object.keys(RACES));

/** The race of a demo, or null. */
export function raceOfDemo(demo) {
  return RACE_NAMES.find((n) => RACES[n].demo === demo) ?? null;
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

// ---- measures ---------------------------------------------------------------------

/** Mean over the rows of a T×T map (row-major, cols = T) of the weight at (i, col(i)), rows where col(i) is valid. */
function meanWeight(data, T, rows, colOf) {
  let s = 0;
  let n = 0;
  for (const i of rows) {
    const j = colOf(i);
    if (j < 0 || j >= T) continue;
    s += data[i * T + j];
    n++;
  }
  return n ? s / n : 0;
}

/** The top-left n×n block of a {rows, cols, data} map, as a copy. */
function crop(m, n) {
  const out = new Float32Array(n * n);
  for (let i = 0; i < n; i++) out.set(m.data.subarray(i * m.cols, i * m.cols + n), i * n);
  return out;
}

/** Maps of every head of a probe: [{layer, head, data (n×n), scores}] and the tokens. */
function probeMaps(p) {
  const n = p.length;
  const maps = [];
  p.layers.forEach((layer, l) => layer.heads.forEach((h, k) => maps.push({ layer: l, head: k, data: crop(h.weights, n), scores: { ...h.scores } })));
  return { tokens: Array.from(p.tokens).slice(0, n), n, maps };
}

/** Heads race: accuracy, each head's weight on the two letters, and how well the heads together cover both. */
export function diffMeasures(trainer, seed, count) {
  const { T, first } = DIFF;
  const H = trainer.config.heads;
  const prev = new Float64Array(H);
  const back = new Float64Array(H);
  let cover = 0;
  let rows = 0;
  let correct = 0;
  let targets = 0;
  for (let i = 0; i < count; i++) {
    const s = diffHeldout(seed, i);
    const p = trainer.probe({ ids: s.ids });
    for (let q = first; q < T; q++) {
      targets++;
      if (p.predictions[q] === s.targets[q]) correct++;
      let bestPrev = 0;
      let bestBack = 0;
      p.layers[0].heads.forEach((h, k) => {
        const a = h.weights.data[q * h.weights.cols + q - 1];
        const b = h.weights.data[q * h.weights.cols + q - 2];
        prev[k] += a;
        back[k] += b;
        bestPrev = Math.max(bestPrev, a);
        bestBack = Math.max(bestBack, b);
      });
      cover += (bestPrev + bestBack) / 2;
      rows++;
    }
  }
  return {
    accuracy: targets ? correct / targets : 0,
    cover: rows ? cover / rows : 0,
    heads: Array.from({ length: H }, (_, k) => ({ head: k, previous: prev[k] / rows, twoBack: back[k] / rows })),
    samples: count,
  };
}

/** Masks race: for each head of a probe, the mean weight a target row puts on the very next position (the answer). */
function peekScores(p) {
  const n = p.length;
  const rows = [];
  for (let i = 0; i + 1 < n; i++) if (p.targets[i] >= 0) rows.push(i);
  const out = [];
  p.layers.forEach((layer) => layer.heads.forEach((h) => out.push(meanWeight(h.weights.data.length === n * n ? h.weights.data : crop(h.weights, n), n, rows, (i) => i + 1))));
  return out;
}

/** Context race: where "it" looks in each head, and what the model answers, with attention and with the plain average. */
function coreferenceLook(trainer) {
  return CORE_SENTENCES.map((sentence) => {
    const p = trainer.probe({ text: sentence.text });
    const u = trainer.probe({ text: sentence.text, uniformAttention: true });
    const tokens = Array.from(p.tokens).slice(0, p.length);
    const it = tokens.indexOf('it');
    const animal = tokens.indexOf('animal');
    const street = tokens.indexOf('street');
    const heads = [];
    p.layers.forEach((layer, l) => layer.heads.forEach((h, k) => {
      const C = h.weights.cols;
      const row = Float32Array.from(h.weights.data.subarray(it * C, it * C + p.length));
      heads.push({ layer: l, head: k, row, animal: row[animal], street: row[street] });
    }));
    const vocab = trainer.vocabulary;
    return {
      word: sentence.word,
      expect: sentence.expect,
      tokens,
      it,
      heads,
      answer: vocab[p.predictions[it]],
      averageAnswer: vocab[u.predictions[it]],
    };
  });
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

// ---- summaries (pure: from what the page has received) ------------------------------

/** Mean of one row field over the steps in (from, to], or NaN. */
export function meanOver(rows, field, from, to) {
  let s = 0;
  let n = 0;
  for (const r of rows) {
    if (r[0] > from && r[0] <= to) {
      s += r[field];
      n++;
    }
  }
  return n ? s / n : NaN;
}

/** The last n rows' mean of a field. */
export function recentMean(rows, field, n) {
  if (!rows.length) return NaN;
  const last = rows[rows.length - 1][0];
  return meanOver(rows, field, last - n, last);
}

/** Running mean over `w` steps of a row field, as chart points [[step, y]]. */
export function smoothed(rows, field, w = 10) {
  const out = [];
  let s = 0;
  for (let i = 0; i < rows.length; i++) {
    s += rows[i][field];
    if (i >= w) s -= rows[i - w][field];
    out.push([rows[i][0], s / Math.min(i + 1, w)]);
  }
  return out;
}

/** Fewer points for a long curve (every k-th, plus the last). */
export function thin(points, max = 400) {
  if (points.length <= max) return points;
  const k = Math.ceil(points.length / max);
  const out = points.filter((_, i) => i % k === 0);
  if (out[out.length - 1] !== points[points.length - 1]) out.push(points[points.length - 1]);
  return out;
}
