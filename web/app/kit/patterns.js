// Heads that mean something get named. The engine scores every head's weights
// against the standard attention patterns on the current sentence (the core's
// head_patterns(): standard_keys() and answer_key_score(), src/train/tasks.hpp)
// and hands them over beside the heads: trace.patterns[h] (a trained model's:
// layers[l].patterns[h]) = {name: {score, rows}}:
//
//   previous-token  query i → key i−1 (row 0 not scored)
//   first-token     every query → key 0
//   same-token      query i → the other positions with the same token id
//                   (earlier ones only under a causal mask; rows without one not scored)
//   induction       query i → the position after each earlier copy of token i
//                   (rows without an earlier copy not scored)
//   antecedent      (coreference models) the pronoun → the noun it stands for,
//                   the task's own answer key
// score = mean over the scored rows (rows) of the weight the row puts on its
// key's positions: 1 = all weight where the pattern says; null when the
// pattern scores no row of this sentence (left out, not 0). This module only
// names heads from those numbers: a pattern read off repeats (same-token,
// induction) needs MIN_REPEAT_ROWS scored rows to name a head: one repeated
// "the" is one row, too little evidence (the head is "thin" on it).
//
// Pure functions: no DOM, no engine.

export const PATTERN_NAMES = Object.freeze(['previous-token', 'first-token', 'same-token', 'induction', 'antecedent']);

/** Best score at or above this names the head; below it the head has "no clear pattern". */
export const NAME_THRESHOLD = 0.5;

/** Scored rows a repeat pattern needs on a sentence before it may name a head. */
export const MIN_REPEAT_ROWS = 2;
const REPEAT_PATTERNS = new Set(['same-token', 'induction']);

/**
 * Every head of one layer named from the engine's pattern scores (patterns[h]):
 * [{scores: {name: score|null}, rows: {name: scored rows}, best: {name, score, rows}|null, thin}].
 * best is the highest score among the patterns with enough evidence; thin is
 * the highest repeat pattern that scored higher but on too few rows
 * ({name, score, rows}, or null).
 */
export function headPatterns(patterns) {
  return patterns.map((head) => {
    const scores = {};
    const rows = {};
    let best = null;
    let thin = null;
    for (const name of PATTERN_NAMES) {
      const p = head[name];
      if (!p) continue;
      const s = p.score;
      scores[name] = s;
      rows[name] = p.rows;
      if (s === null) continue;
      const enough = !REPEAT_PATTERNS.has(name) || rows[name] >= MIN_REPEAT_ROWS;
      if (enough && (!best || s > best.score)) best = { name, score: s, rows: rows[name] };
      if (!enough && (!thin || s > thin.score)) thin = { name, score: s, rows: rows[name] };
    }
    if (thin && best && thin.score <= best.score) thin = null;
    return { scores, rows, best, thin };
  });
}
