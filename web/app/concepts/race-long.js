// The race "train short, test long" (races.js): five copies of one model, one per
// positional kind, trained on the previous-token task at n = 16 tokens, then
// tested on new sequences of n, 2n and 4n tokens. Pure (no DOM): the race worker,
// the page and Node run it.
//
// Why the previous-token task: its answer (the letter one step back) is a rule
// about distance, not about place. A relative kind (rotary, ALiBi) scores a pair
// of positions by their distance only, so what it learned at 16 tokens applies
// unchanged at 64. An absolute kind learned the rule position by position and has
// never seen a position past 16; learned positions have no vector there at all.
//
// Test sequences are letters a–p (ids 1–16, the task's vocabulary), drawn by a
// counter from a fixed stream: the same sequences for every seed and every replay.

import { draw } from './race-diff-task.js';
import { formatValue, formatPercent } from '../kit/format.js';
import { RESULT, CHART, COLUMN, evalSeries, finalOr } from './race-parts.js';

export const LONG = Object.freeze({
  n: 16,
  factors: Object.freeze([1, 2, 4]),
  letters: 16,
  kinds: Object.freeze(['none', 'sinusoidal', 'learned', 'rope', 'alibi']),
  // "holds": at 4n it keeps at least this share of its accuracy at n
  keep: 0.85,
  // two kinds whose losses from n to 4n differ by less than this lose "about the same"
  close: 0.05,
  // below this at n a kind has not learned the task: its later lengths say nothing about positions
  learnt: 0.5,
});

/** The test lengths n, 2n, 4n. */
export const LONG_LENGTHS = Object.freeze(LONG.factors.map((f) => f * LONG.n));
/** The field of an arm's numbers for each test length (the first is the held-out accuracy at n). */
export const LONG_FIELDS = Object.freeze(['accuracy', 'at2', 'at4']);

const TEST_STREAM = 0x51ed;

/** Test sequence i of length L (the same for every seed). */
export function longSequence(L, i) {
  return Array.from({ length: L }, (_, p) => 1 + (draw(TEST_STREAM, L, i, p) % LONG.letters));
}

/** Whether a kind has a position vector at every position of a sequence of L tokens. */
export const reachesLength = (kind, L) => kind !== 'learned' || L <= LONG.n;

/** The share of positions 1 … L−1 of `count` test sequences where the model names the letter before. */
export function lengthAccuracy(trainer, L, count) {
  let right = 0;
  let all = 0;
  for (let i = 0; i < count; i++) {
    const ids = longSequence(L, i);
    const { predictions } = trainer.probe({ ids });
    for (let p = 1; p < L; p++) {
      all += 1;
      if (predictions[p] === ids[p - 1]) right += 1;
    }
  }
  return right / all;
}

/** Each arm's accuracy at n, 2n and 4n ({accuracy, at2, at4}); null where the kind has no vectors. */
export function lengthMeasures(trainers, count) {
  return trainers.map((t, a) => Object.fromEntries(LONG_LENGTHS.map((L, k) => [LONG_FIELDS[k], reachesLength(LONG.kinds[a], L) ? lengthAccuracy(t, L, count) : null])));
}

/** The trainer settings of the five arms: one model, only the positional kind differs. */
export function longSettings({ seed }) {
  return LONG.kinds.map((positional) => ({
    task: 'previous-token',
    length: LONG.n,
    layers: 1,
    heads: 8,
    dModel: 32,
    mlp: 0,
    batch: 32,
    seed,
    positional,
    // learned positions get a table of n rows: the model never has a vector past n
    context: positional === 'learned' ? LONG.n : LONG_LENGTHS[LONG_LENGTHS.length - 1],
  }));
}

// ---- what the numbers say (every sentence is read from them) -------------------------

const pct = (x) => formatPercent(x, 3);

/** How a kind fared from n to 4n: 'untrained' | 'holds' | 'degrades' | 'untested'. */
export function longOutcome(kind, arm) {
  if (!reachesLength(kind, LONG_LENGTHS[2])) return 'untested';
  if (arm.accuracy < LONG.learnt) return 'untrained';
  return arm.at4 >= LONG.keep * arm.accuracy ? 'holds' : 'degrades';
}

const sayKind = { none: 'without positions', sinusoidal: 'sinusoidal', learned: 'learned', rope: 'rotary', alibi: 'ALiBi' };

/** One kind's sentence part, e.g. "rotary holds (100% at 16 tokens, 97.2% at 64)". */
function kindLine(kind, arm) {
  const [n, , n4] = LONG_LENGTHS;
  const o = longOutcome(kind, arm);
  if (o === 'untested') return `${sayKind[kind]} ${pct(arm.accuracy)} at ${n} tokens and no position vector past ${n}`;
  const nums = `${pct(arm.accuracy)} at ${n} tokens, ${pct(arm.at2)} at ${LONG_LENGTHS[1]}, ${pct(arm.at4)} at ${n4}`;
  if (o === 'untrained') return `${sayKind[kind]} never learned the rule (${nums})`;
  return `${sayKind[kind]} ${o === 'holds' ? 'holds' : 'degrades'} (${nums})`;
}

/**
 * The verdict of a finished race from its numbers (arms in LONG.kinds order), and
 * how it compares with Press et al. 2022: sinusoidal degrades soon past the
 * training length, rotary somewhat, ALiBi holds. Where this run differs, it says so.
 */
export function longVerdict(arms) {
  const by = Object.fromEntries(LONG.kinds.map((k, i) => [k, arms[i]]));
  const parts = LONG.kinds.map((k) => kindLine(k, by[k]));
  const out = [`At the finish, trained on ${LONG.n} tokens: ${parts.join('; ')}.`];
  const o = Object.fromEntries(LONG.kinds.map((k) => [k, longOutcome(k, by[k])]));
  const drop = (k) => by[k].accuracy - by[k].at4;
  const agree = [];
  const differ = [];
  if (o.sinusoidal === 'degrades') agree.push('sinusoidal degrades past the training length');
  else differ.push(o.sinusoidal === 'holds' ? 'sinusoidal holds here' : 'sinusoidal did not learn the task here');
  if (o.alibi === 'holds') agree.push('ALiBi holds');
  else differ.push(o.alibi === 'degrades' ? 'ALiBi degrades here' : 'ALiBi did not learn the task here');
  if (o.rope !== 'untrained' && o.alibi !== 'untrained' && o.sinusoidal !== 'untrained') {
    const [r, a, s] = [drop('rope'), drop('alibi'), drop('sinusoidal')];
    const vs = `${fmtPoints(r)} lost from ${LONG.n} to ${LONG_LENGTHS[2]} tokens against ALiBi\u2019s ${fmtPoints(a)}`;
    if (Math.abs(r - a) < LONG.close) differ.push(`rotary loses about as much as ALiBi here (${vs})`);
    else if (r < a) differ.push(`rotary loses less than ALiBi here (${vs})`);
    else if (r < s) agree.push(`rotary loses more than ALiBi (${vs}) and less than sinusoidal`);
    else differ.push(`rotary loses as much as sinusoidal here (${fmtPoints(r)} against ${fmtPoints(s)})`);
  }
  if (agree.length) out.push(`As Press et al. report for language modelling: ${agree.join('; ')}.`);
  if (differ.length) out.push(`Unlike their language models: ${differ.join('; ')}.`);
  return out.join(' ');
}

/** "3.1 points" of accuracy lost (a gain is "no points"). */
function fmtPoints(d) {
  return d <= 0 ? 'no points' : `${formatValue(100 * d, 3)} points`;
}

/** What the paper reports, beside our numbers (a citation, not a claim of this run). */
export const PAPER_NOTE = 'Press et al. (2022, \u201cTrain Short, Test Long\u201d, ALiBi; WikiText-103 language models) report that sinusoidal positions degrade soon past the training length, rotary ones somewhat, and ALiBi holds; learned positions cannot go past their table.';

/**
 * "over race seeds 1–5 at 200 steps, accuracy at 16 → 64 tokens: without positions
 * 29.3–32.8% → 17.4–19.1%, …": the spread the page prints, from the race's `spread`
 * ({seeds, steps, arms: [{accuracy: [low, high], at4: [low, high] | null}]}).
 */
export function longSpreadText({ seeds, steps, arms }) {
  const range = ([low, high]) => (formatValue(100 * low, 3) === formatValue(100 * high, 3) ? pct(high) : `${formatValue(100 * low, 3)}\u2013${pct(high)}`);
  const [n, , n4] = LONG_LENGTHS;
  const each = LONG.kinds.map((k, i) => (arms[i].at4 ? `${sayKind[k]} ${range(arms[i].accuracy)} \u2192 ${range(arms[i].at4)}` : `${sayKind[k]} ${range(arms[i].accuracy)} (no vector past ${n})`));
  return `race seeds ${seeds[0]}\u2013${seeds[1]} at ${steps} steps, accuracy at ${n} \u2192 ${n4} tokens: ${each.join(', ')}`;
}

// ---- the race's table (races.js wraps it in defineRace) -----------------------------

/** Measured by `node tests/js/race-seeds.mjs long` (seeds 1–5 at 200 steps, 128 test sequences per length). */
export const LONG_SPREAD = Object.freeze({
  seeds: [1, 5],
  steps: 200,
  arms: [
    { accuracy: [0.3047, 0.3281], at4: [0.1737, 0.1824] },
    { accuracy: [0.9755, 0.9885], at4: [0.2963, 0.3001] },
    { accuracy: [1, 1], at4: null },
    { accuracy: [1, 1], at4: [0.9325, 0.984] },
    { accuracy: [0.838, 0.85], at4: [0.7502, 0.7897] },
  ],
});

const arm = (label, short, className) => ({ label, short, className });

export const LONG_RACE = Object.freeze({
  demo: 'order',
  prefix: 'l',
  title: 'Race: train short, test long, five kinds of positions',
  jump: 'Train short, test long: a race of five models \u2193',
  steps: 200,
  samples: 16,
  finalSamples: 128,
  arms: [arm('no positions', 'none', 'cx-s-c0'), arm('sinusoidal', 'sinusoidal', 'cx-s-c1'), arm('learned', 'learned', 'cx-s-c2'), arm('rotary (RoPE)', 'rotary', 'cx-s-c3'), arm('ALiBi', 'ALiBi', 'cx-s-c4')],
  settings: longSettings,
  // test sequences of n, 2n and 4n tokens (`samples` of each), the same for every seed
  evaluate: (trainers, samples) => lengthMeasures(trainers, samples),
  live: () => ({}),
  spread: LONG_SPREAD,
  spreadText: longSpreadText,
  text: {
    setup: () => `Five copies of one small model (1 layer, 8 heads of width 4, no MLP, Adam at learning rate 0.003) learn the previous-token task: at every position, name the letter just before. Same starting weights, same batches of ${LONG.n} letters; only the positions differ: none, sinusoidal vectors, a learned table of ${LONG.n} vectors, rotary (RoPE: queries and keys turned by an angle that grows with the position) and ALiBi (each head subtracts slope \u00d7 distance from its scores). At the finish each copy reads new sequences of ${LONG_LENGTHS.join(', ')} tokens.`,
    watch: () => `The answer is always one step back: a rule about distance, not about place. Rotary and ALiBi see only distances in their scores, so the rule they learn at ${LONG.n} tokens still applies at ${LONG_LENGTHS[2]}; what changes is how many far-away letters compete for the weight. Sinusoidal positions learned it position by position: past ${LONG.n} it meets positions it never saw. The learned table simply ends at ${LONG.n}. Without positions a causal model cannot tell the letter before from the ones further back.`,
    condition: () => `${PAPER_NOTE} Here, over ${longSpreadText(LONG_SPREAD)}. A kind \u201cholds\u201d when at ${LONG_LENGTHS[2]} tokens it keeps at least ${LONG.keep * 100}% of its accuracy at ${LONG.n}.`,
  },
  chance: { value: 1 / LONG.letters, label: `1/${LONG.letters}` },
  results: [
    ...LONG_LENGTHS.map((L, k) => ({
      id: `len${L}`,
      label: (h) => `accuracy on ${L} tokens${k === 0 ? ' (the training length)' : ` (${LONG.factors[k]}\u00d7)`}, ${h.final ? `${h.final.samples} new sequences` : 'latest check'}`,
      value: (h, a) => finalOr(h, a, LONG_FIELDS[k]) ?? NaN,
      format: pct,
      note: (h, a) => (reachesLength(LONG.kinds[a], L) ? null : `no position vector past ${LONG.n}`),
    })),
    RESULT.loss,
  ],
  charts: [
    {
      id: 'lengths',
      title: 'Accuracy against test length (trained on 16)',
      xLabel: 'test length (tokens)',
      xLog: true,
      xDomain: [LONG_LENGTHS[0], LONG_LENGTHS[2]],
      yLabel: 'accuracy',
      yDomain: [0, 1],
      chance: true,
      series: (h, v, ctx) => ctx.arms.map((a, i) => ({
        name: ctx.label(i, 'short'),
        className: a.className,
        points: LONG_LENGTHS.map((L, k) => [L, finalOr(h, i, LONG_FIELDS[k])]).filter(([, y]) => Number.isFinite(y)),
        active: true,
      })),
    },
    CHART.loss,
    { ...CHART.heldout, title: `Accuracy on ${LONG.n} tokens, the training length` },
    { id: 'long', title: `Accuracy on ${LONG_LENGTHS[2]} tokens, never trained at`, yLabel: 'accuracy', yDomain: [0, 1], chance: true, series: (h, v, ctx) => evalSeries(h, ctx, 'at4').filter((s, i) => reachesLength(LONG.kinds[i], LONG_LENGTHS[2])) },
  ],
  checks: [COLUMN.loss, { header: `${LONG.n} tokens`, value: (h, e, a) => e.arms[a]?.accuracy, format: pct }, { header: `${LONG_LENGTHS[2]} tokens`, value: (h, e, a) => e.arms[a]?.at4 ?? NaN, format: pct }],
  verdict: (hist) => longVerdict(hist.final.arms),
  maps: 'none',
});
