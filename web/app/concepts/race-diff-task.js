// The heads race's own task (races.js), the difference task: a pure function of
// (seed, stream, index), the same in the race worker, on the page and in Node.
//
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
export function draw(seed, stream, index, k) {
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

const LETTERS = 'abcdefghijklmnop';
/** "c f a …" for ids of the difference task. */
export function diffLetters(ids) {
  return ids.map((x) => LETTERS[x - 1]).join(' ');
}
