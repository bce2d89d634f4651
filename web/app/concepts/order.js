// Idea 6's controller: positional encoding. Without positions, attention treats
// the input as a set: "dog chases cat" gives exactly the outputs of "cat chases
// dog", permuted (0 up to float rounding after un-permuting); with sinusoidal or
// learned positions the outputs differ. Also the sinusoidal encoding itself
// (from the engine's trace) and the dot products of its rows.

import { createCache, firstError } from './controller.js';
import { rowOf } from './common.js';
import { createOrderView } from './views/order.js';
import { createRace } from './race-view.js';
import { createDistanceCard } from './views/order-move.js';
import { distanceModel, KINDS } from './order-distance.js';

// every kind: rotary and ALiBi make order matter too (inside attention, not in the inputs)
export const PES = KINDS;

/**
 * perm[i] = the index in a of token i of b (matching token ids, each used once),
 * or null when b is not a reordering of a.
 */
export function permutationOf(a, b) {
  if (a.length !== b.length) return null;
  const used = new Array(a.length).fill(false);
  const perm = [];
  for (const t of b) {
    const k = a.findIndex((x, j) => !used[j] && x.id === t.id);
    if (k < 0) return null;
    used[k] = true;
    perm.push(k);
  }
  return perm;
}

/** max over rows i and columns c of |Ya[perm[i], c] − Yb[i, c]|. */
function permutedDiff(ya, yb, perm) {
  let m = 0;
  for (let i = 0; i < perm.length; i++) {
    const ra = rowOf(ya, perm[i]);
    const rb = rowOf(yb, i);
    for (let c = 0; c < ra.length; c++) m = Math.max(m, Math.abs(ra[c] - rb[c]));
  }
  return m;
}

/** The rows of m in the order perm gives. */
function reorder(m, perm) {
  const data = new Float32Array(perm.length * m.cols);
  perm.forEach((k, i) => data.set(rowOf(m, k), i * m.cols));
  return { rows: perm.length, cols: m.cols, data };
}

/** Both sentences under every encoding: {none: {a, b}, sinusoidal: …, learned: …}. */
export function runOrder(engine, { a, b, seed }) {
  return Object.fromEntries(PES.map((p) => [p, {
    a: engine.run({ sentence: a, positional: p, seed }),
    b: engine.run({ sentence: b, positional: p, seed }),
  }]));
}

/** The sinusoidal encoding P of n positions and width c, as the engine adds it. */
export function runEncoding(engine, { n, c }) {
  return engine.run({ sentence: Array(n).fill('a').join(' '), positional: 'sinusoidal', dModel: c, heads: 1 }).positional;
}

/** The permutation, the un-permuted difference under each encoding, and the rows of the selected one. */
export function orderModel(runs, pe) {
  const ta = runs.none.a;
  const tb = runs.none.b;
  const perm = permutationOf(ta.tokens, tb.tokens);
  const diffs = Object.fromEntries(PES.map((p) => [p, perm ? permutedDiff(runs[p].a.output, runs[p].b.output, perm) : NaN]));
  const ra = runs[pe].a;
  const rb = runs[pe].b;
  const ya = perm ? reorder(ra.output, perm) : ra.output;
  let difference = null;
  if (perm) {
    const data = new Float32Array(ya.data.length);
    for (let x = 0; x < data.length; x++) data[x] = ya.data[x] - rb.output.data[x];
    difference = { rows: ya.rows, cols: ya.cols, data };
  }
  return { a: ta, b: tb, perm, identity: Boolean(perm?.every((x, i) => x === i)), diffs, ra, ya, yb: rb.output, difference };
}

/** P·Pᵀ of an encoding (N × N) and the largest change along any of its diagonals. */
export function encodingModel(pe) {
  const N = pe.rows;
  const C = pe.cols;
  const dot = new Float32Array(N * N);
  for (let i = 0; i < N; i++) {
    for (let j = 0; j < N; j++) {
      let sum = 0;
      for (let x = 0; x < C; x++) sum += pe.data[i * C + x] * pe.data[j * C + x];
      dot[i * N + j] = sum;
    }
  }
  let shift = 0;
  for (let i = 0; i + 1 < N; i++) for (let j = 0; j + 1 < N; j++) shift = Math.max(shift, Math.abs(dot[i * N + j] - dot[(i + 1) * N + j + 1]));
  return { pe, N, C, dot: { rows: N, cols: N, data: dot }, shift };
}

export function createOrderDemo(root, { engine, onState, tooltip, palette }) {
  const view = createOrderView(root, { onState, tooltip, encodings: PES });
  // two races: with and without positions, then five kinds trained short and tested long
  const races = ['order', 'long'].map((name) => createRace(view.frame, name, { onState, tooltip, palette }));
  const distanceCard = createDistanceCard(view.frame, { onState });
  const distances = createCache((inputs) => distanceModel(engine, inputs));
  const runs = createCache((inputs) => runOrder(engine, inputs));
  const encoding = createCache((inputs) => encodingModel(runEncoding(engine, inputs)));
  return {
    hide: () => races.forEach((r) => r.hide()),
    update(s) {
      races.forEach((r) => r.update(s));
      const r = runs({ a: s.a, b: s.b, seed: s.seed });
      const p = encoding({ n: s.n, c: s.c });
      const d = distances({ sentence: s.a, shift: s.sh, seed: s.seed });
      view.frame.setError(firstError(r, p, d));
      view.update(s, { sentences: r.value && orderModel(r.value, s.pe), encoding: p.value }, palette());
      distanceCard.update(s, d.value ?? null);
    },
  };
}
