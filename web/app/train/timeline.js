// Bounded memory for a run of any length: the timeline of snapshots (the
// probe's attention maps and scores at chosen steps, never the weights) and
// the loss/accuracy curves.
//
// Snapshot steps depend on the step alone, so a link that retrains to the same
// step has the same timeline: at step S the kept snapshots are the multiples of
// I(S) = BASE·2^k, the smallest such interval with at most `cap` multiples in
// [0, S]. When the run grows past cap·I, every other snapshot is dropped and I
// doubles, so the timeline always covers the whole run evenly. The worker
// (worker.js) takes a snapshot at each such step; the page keeps them here.
//
// Memory: cap = min(MAX_SNAPSHOTS, BUDGET / bytes of one snapshot), at least
// MIN_SNAPSHOTS; one snapshot is L·H·T² float32 weights plus a few numbers, so
// the timeline never holds more than max(BUDGET, MIN_SNAPSHOTS snapshots).

export const BASE = 5;
export const MAX_SNAPSHOTS = 200;
export const MIN_SNAPSHOTS = 24;
export const BUDGET_BYTES = 16 * 1024 * 1024;
/** Points kept per curve before pairs are merged. */
export const MAX_POINTS = 2000;

/** How many snapshots a model whose one snapshot has `bytes` bytes may keep. */
export function snapshotCap(bytes) {
  return Math.max(MIN_SNAPSHOTS, Math.min(MAX_SNAPSHOTS, Math.floor(BUDGET_BYTES / Math.max(1, bytes))));
}

/** The interval I(S) of the kept snapshots at step S. */
export function snapshotInterval(step, cap) {
  let i = BASE;
  while (Math.floor(step / i) + 1 > cap) i *= 2;
  return i;
}

/** True when step S is a snapshot step (S is a multiple of I(S)). */
export function isSnapshotStep(step, cap) {
  return step % snapshotInterval(step, cap) === 0;
}

/** The first snapshot step after `step`. */
export function nextSnapshotStep(step, cap) {
  let m = step + 1;
  for (;;) {
    const i = snapshotInterval(m, cap);
    if (m % i === 0) return m;
    m = (Math.floor(m / i) + 1) * i;
  }
}

/** Bytes of one snapshot object (its typed arrays). */
export function snapshotBytes(snapshot) {
  let n = 0;
  for (const m of snapshot.maps) n += m.byteLength;
  n += snapshot.predictions?.byteLength ?? 0;
  return n;
}

/**
 * The snapshots of a run, ordered by step.
 *   const t = createTimeline();
 *   t.add({step, maps: [Float32Array], scores: [{key: value}], predictions, correct, accuracy}, cap);
 */
export function createTimeline() {
  let list = [];
  let bytes = 0;
  return {
    /** Adds a snapshot (replacing one of the same step) and drops those no longer kept. */
    add(snapshot, cap) {
      const last = list.length ? list[list.length - 1].step : -1;
      if (snapshot.step <= last) list = list.filter((s) => s.step < snapshot.step);
      list.push(snapshot);
      const interval = snapshotInterval(snapshot.step, cap);
      if (list.some((s) => s.step % interval !== 0)) list = list.filter((s) => s.step % interval === 0);
      bytes = list.reduce((n, s) => n + snapshotBytes(s), 0);
    },
    clear() {
      list = [];
      bytes = 0;
    },
    get list() {
      return list;
    },
    get length() {
      return list.length;
    },
    get bytes() {
      return bytes;
    },
    /** The last snapshot at or before `step` (or the first one). */
    atStep(step) {
      let found = list[0] ?? null;
      for (const s of list) {
        if (s.step > step) break;
        found = s;
      }
      return found;
    },
  };
}

/**
 * A curve of [x, y] points that never holds more than `cap`: when full, each
 * pair of neighbours is merged into their mean, so the curve keeps its shape
 * over the whole run at half the resolution.
 */
export function createSeries(cap = MAX_POINTS) {
  let xs = [];
  let ys = [];
  return {
    push(x, y) {
      if (!Number.isFinite(y)) return;
      xs.push(x);
      ys.push(y);
      if (xs.length > cap) {
        const nx = [];
        const ny = [];
        for (let i = 0; i + 1 < xs.length; i += 2) {
          nx.push(xs[i + 1]);
          ny.push((ys[i] + ys[i + 1]) / 2);
        }
        if (xs.length % 2) {
          nx.push(xs[xs.length - 1]);
          ny.push(ys[ys.length - 1]);
        }
        xs = nx;
        ys = ny;
      }
    },
    clear() {
      xs = [];
      ys = [];
    },
    get length() {
      return xs.length;
    },
    get points() {
      return xs.map((x, i) => [x, ys[i]]);
    },
    get last() {
      return xs.length ? [xs[xs.length - 1], ys[ys.length - 1]] : null;
    },
  };
}
