// The parts a race's table (races.js) is made of on the page side: the step rows'
// layout and summaries, and the results rows, chart series and check columns most
// races share. Pure (no DOM): functions of what the page has received, a race's
// history h = {rows: [[step row…] per arm], evals: [{step, arms}], live, final, …}.
// The table's functions get a context ctx = {arms, label(i, form)} for the arms'
// names and colours (form 'label' or 'short', of the race's variant).

import { formatValue, formatPercent } from '../kit/format.js';

/** Step rows: [step, loss, accuracy, scoreVariance, rowEntropy, scoreGradNorm] (the training batch of that step, before its update). */
export const ROW = Object.freeze({ step: 0, loss: 1, accuracy: 2, scoreVariance: 3, rowEntropy: 4, scoreGradNorm: 5 });

/** Every number of the races: formatValue with `digits` significant digits (3 unless told). */
export function fmt(x, digits = 3) {
  if (x === null || x === undefined || !Number.isFinite(x)) return '\u2014';
  return formatValue(x, digits);
}
export const pct = (x) => formatPercent(x, 3);

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

/** The held-out numbers of the latest evaluation (null before the first). */
export function lastEval(h) {
  return h.evals[h.evals.length - 1] ?? null;
}

/** A field of an arm at the finish, else at the latest check. */
export const finalOr = (h, arm, field) => (h.final ? h.final.arms[arm][field] : lastEval(h)?.arms[arm]?.[field]);

// ---- results rows: {id, label(h), value(h, arm) → number, format?} ----------------------

export const RESULT = Object.freeze({
  accuracy: { id: 'acc', label: (h) => (h.final ? `held-out accuracy (${h.final.samples} sequences, at the finish)` : 'held-out accuracy (latest check)'), value: (h, a) => finalOr(h, a, 'accuracy'), format: pct },
  loss: { id: 'loss', label: () => 'training loss (mean of the last 25 steps)', value: (h, a) => recentMean(h.rows[a], ROW.loss, 25) },
});

// ---- charts: {id, title, yLabel, yLog?, yDomain?, chance?, series(h, v, ctx) → [...]} -------

/** Each arm's curve of a step-row field, smoothed over w steps. */
export const perArm = (h, ctx, field, w = 10) => h.rows.map((rows, i) => ({
  name: ctx.label(i, 'short'), className: ctx.arms[i].className, points: thin(smoothed(rows, field, w)), active: true, noDots: true,
}));

/** Each arm's (or one arm's) curve of an evaluation field, at the checks. */
export const evalSeries = (h, ctx, field, { arm = null, dashed = false, suffix = '' } = {}) => ctx.arms.map((a, i) => ({ a, i }))
  .filter(({ i }) => arm === null || arm === i)
  .map(({ a, i }) => ({
    name: `${ctx.label(i, 'short')}${suffix}`,
    className: a.className,
    points: h.evals.filter((e) => Number.isFinite(e.arms[i]?.[field])).map((e) => [e.step, e.arms[i][field]]),
    active: !dashed,
    dashed,
  }));

export const CHART = Object.freeze({
  loss: { id: 'loss', title: 'Training loss (mean over 10 steps)', yLabel: 'cross-entropy', series: (h, v, ctx) => perArm(h, ctx, ROW.loss) },
  heldout: { id: 'accuracy', title: 'Held-out accuracy', yLabel: 'accuracy', yDomain: [0, 1], chance: true, series: (h, v, ctx) => evalSeries(h, ctx, 'accuracy') },
});

// ---- columns of the numbers-behind-the-curves table: {header, value(h, e, arm, evalEvery), format?} ----

/** The mean of a step-row field over the steps since the check before. */
export const sinceLastCheck = (field) => (h, e, a, evalEvery) => meanOver(h.rows[a] ?? [], field, e.step - evalEvery, e.step);

export const COLUMN = Object.freeze({
  loss: { header: 'loss', value: sinceLastCheck(ROW.loss) },
  heldout: { header: 'held-out', value: (h, e, a) => e.arms[a]?.accuracy, format: pct },
});
