// Heads that mean something get named: each head's weights scored against the
// standard attention patterns on the current sentence, the same definitions as
// the core's standard_keys() and answer_key_score() (src/core/tasks.hpp):
//
//   previous-token  query i → key i−1 (row 0 not scored)
//   first-token     every query → key 0
//   same-word       query i → the other positions with the same token id
//                   (earlier ones only under a causal mask; rows without one not scored)
//   induction       query i → the position after each earlier copy of token i
//                   (rows without an earlier copy not scored)
//   antecedent      (coreference models) the pronoun → the noun it stands for,
//                   the task's own answer key
// score = mean over the scored rows of the weight the row puts on its key's
// positions: 1 = all weight where the pattern says. A pattern that scores no
// row of this sentence is left out (null), not 0. A pattern read off repeats
// (same-word, induction) needs MIN_REPEAT_ROWS scored rows to name a head: one
// repeated "the" is one row, too little evidence (the head is "thin" on it).
//
// Pure functions: no DOM, no engine.

export const PATTERN_NAMES = Object.freeze(['previous-token', 'first-token', 'same-word', 'induction', 'antecedent']);

/** Best score at or above this names the head; below it the head has "no clear pattern". */
export const NAME_THRESHOLD = 0.5;

/** Scored rows a repeat pattern needs on a sentence before it may name a head. */
export const MIN_REPEAT_ROWS = 2;
const REPEAT_PATTERNS = new Set(['same-word', 'induction']);

/** The rows a key scores (its non-null rows). */
export function scoredRows(rows) {
  return rows.reduce((n, r) => n + (r ? 1 : 0), 0);
}

/** The standard keys for token ids (length T) as lists of key positions per row (null = not scored). */
export function standardKeys(ids, causal) {
  const T = ids.length;
  const previous = [];
  const first = [];
  const same = [];
  const induction = [];
  for (let i = 0; i < T; i++) {
    previous.push(i > 0 ? [i - 1] : null);
    first.push([0]);
    const s = [];
    for (let j = 0; j < (causal ? i : T); j++) if (j !== i && ids[j] === ids[i]) s.push(j);
    same.push(s.length ? s : null);
    const ind = new Set();
    for (let k = 0; k < i; k++) if (ids[k] === ids[i]) ind.add(k + 1);
    induction.push(ind.size ? [...ind].sort((a, b) => a - b) : null);
  }
  return { 'previous-token': previous, 'first-token': first, 'same-word': same, induction };
}

/** A T×T 0/1 key matrix ({rows, cols, data}) → rows of key positions. */
export function keyRows(matrix) {
  const out = [];
  for (let i = 0; i < matrix.rows; i++) {
    const r = [];
    for (let j = 0; j < matrix.cols; j++) if (matrix.data[i * matrix.cols + j] !== 0) r.push(j);
    out.push(r.length ? r : null);
  }
  return out;
}

/** Score of a weight matrix against key rows; null when no row is scored. */
export function patternScore(weights, rows) {
  let total = 0;
  let scored = 0;
  const T = weights.cols;
  for (let i = 0; i < rows.length && i < weights.rows; i++) {
    if (!rows[i]) continue;
    let on = 0;
    for (const j of rows[i]) on += weights.data[i * T + j];
    total += on;
    scored += 1;
  }
  return scored ? total / scored : null;
}

/**
 * Every head of one layer against every pattern:
 * [{scores: {name: score|null}, rows: {name: scored rows}, best: {name, score, rows}|null, thin}].
 * best is the highest score among the patterns with enough evidence; thin is
 * the highest repeat pattern that scored higher but on too few rows
 * ({name, score, rows}, or null). heads: [{weights}]; keys: standardKeys(...)
 * plus an optional antecedent key (rows).
 */
export function headPatterns(heads, keys) {
  return heads.map((h) => {
    const scores = {};
    const rows = {};
    let best = null;
    let thin = null;
    for (const name of PATTERN_NAMES) {
      if (!keys[name]) continue;
      const s = patternScore(h.weights, keys[name]);
      scores[name] = s;
      rows[name] = scoredRows(keys[name]);
      if (s === null) continue;
      const enough = !REPEAT_PATTERNS.has(name) || rows[name] >= MIN_REPEAT_ROWS;
      if (enough && (!best || s > best.score)) best = { name, score: s, rows: rows[name] };
      if (!enough && (!thin || s > thin.score)) thin = { name, score: s, rows: rows[name] };
    }
    if (thin && best && thin.score <= best.score) thin = null;
    return { scores, rows, best, thin };
  });
}
