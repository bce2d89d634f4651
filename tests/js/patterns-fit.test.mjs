// The playground's honesty rules as pure functions: a repeat pattern needs
// enough repeats to name a head (patterns.js), the query follows its word
// into a new sentence (rules.js), and a trained model's distance from the
// sentence (model-trace.js sentenceFit).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { headPatterns, MIN_REPEAT_ROWS } from '../../web/app/kit/patterns.js';
import { patternText, rowSpread } from '../../web/app/playground/views/headsgrid.js';
import { followQuery, naturalQuery } from '../../web/app/playground/rules.js';

/** A head's pattern scores as the engine gives them ({name: [score, rows]} → {name: {score, rows}}). The
 * numbers are the core's for these hand-made heads (tests/core/test_answer_keys.cpp computes them from the weights). */
function head(patterns) {
  return Object.fromEntries(Object.entries(patterns).map(([name, [score, rows]]) => [name, { score, rows }]));
}

test('patterns: one repeat is not enough to name an induction head ("not enough repeats")', () => {
  // "the cat chased the dog": the only repeat is "the" (ids 1 … 1);
  // a head whose row 3 looks at position 1 (after the first "the") and the rest at 0
  const [p] = headPatterns([head({ 'previous-token': [0.25, 4], 'first-token': [0.8, 5], 'same-token': [0, 1], induction: [1, 1] })]);
  assert.equal(p.rows.induction, 1);
  assert.ok(p.rows.induction < MIN_REPEAT_ROWS);
  assert.equal(p.scores.induction, 1);
  assert.notEqual(p.best.name, 'induction');
  assert.equal(p.best.name, 'first-token');
  assert.match(patternText(p), /^first-token 0\.80$/);
  // a head that is only induction on that one row (row i → i, row 3 → 1): no name, and the reason
  const [p2] = headPatterns([head({ 'previous-token': [0, 4], 'first-token': [0.2, 5], 'same-token': [0, 1], induction: [1, 1] })]);
  assert.equal(p2.thin.name, 'induction');
  assert.match(patternText(p2), /not enough repeats on this sentence \(1 row\)/);
  assert.doesNotMatch(patternText(p2), /^induction/);
});

test('patterns: two repeats name an induction head', () => {
  // "a b c a b": rows 3 and 4 repeat; row 3 → 1, row 4 → 2
  const [p] = headPatterns([head({ 'previous-token': [0.25, 4], 'first-token': [0.6, 5], 'same-token': [0, 2], induction: [1, 2] })]);
  assert.equal(p.rows.induction, 2);
  assert.equal(p.best.name, 'induction');
  assert.equal(p.thin, null);
  assert.match(patternText(p), /^induction 1\.0$/);
});

test('patterns: the row spread of a near-uniform row is small, of a peaked row large', () => {
  const flat = { rows: 1, cols: 4, data: new Float32Array([0.26, 0.25, 0.25, 0.24]) };
  const peak = { rows: 1, cols: 4, data: new Float32Array([0.97, 0.01, 0.01, 0.01]) };
  assert.ok(Math.abs(rowSpread(flat, 0) - 0.02) < 1e-6);
  assert.ok(Math.abs(rowSpread(peak, 0) - 0.96) < 1e-6);
  // masked keys are left out
  const mask = { rows: 1, cols: 4, data: new Uint8Array([1, 1, 0, 0]) };
  assert.ok(Math.abs(rowSpread(peak, 0, mask) - 0.96) < 1e-6);
  assert.ok(Math.abs(rowSpread(flat, 0, mask) - 0.01) < 1e-6);
});

const words = (list, model = null) => ({ tokens: list.map((t) => ({ text: t, typed: t })), model });

test('query: follows its word into a new sentence, nearest occurrence; else the model\'s natural query', () => {
  const coref = { task: 'coreference', causal: false };
  const lang = { task: 'text', causal: true };
  const trophy = 'the trophy didn\'t fit in the suitcase because it was too big .'.split(' ');
  // "it" was at 7 in the default sentence; in the trophy sentence it is at 8
  assert.equal(followQuery(words(trophy, coref), { word: 'it', query: 7, last: false }), 8);
  // the nearest "the" to position 4
  assert.equal(followQuery(words(trophy, coref), { word: 'the', query: 4, last: false }), 5);
  // a word no longer there: coreference goes to "it", a next-word model to the last token
  assert.equal(followQuery(words(trophy, coref), { word: 'street', query: 5, last: false }), 8);
  const bank = 'i went to the bank to deposit money'.split(' ');
  assert.equal(followQuery(words(bank, lang), { word: 'buy', query: 12, last: false }), 7);
  // on the last token of a next-word model, it stays on the last token as the sentence grows
  assert.equal(followQuery(words(bank, lang), { word: 'bank', query: 4, last: true }), 7);
  // random weights without the word: the same index, inside the sentence
  assert.equal(naturalQuery(words(['a', 'b']), 7), 1);
  assert.equal(followQuery(words(['a', 'b', 'c']), { word: 'z', query: 1, last: false }), 1);
});
