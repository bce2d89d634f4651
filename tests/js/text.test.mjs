// Text caps of the page (web/app/kit/text.js, web/app/playground/state.js, the lab's state):
// a cut never splits a character, and batch lines are never dropped.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cutText } from '../../web/app/kit/text.js';
import { parseHash, normalizeState, computedSentences, MAX_BATCH } from '../../web/app/playground/state.js';
import { parseConceptHash, normalizeDemoState } from '../../web/app/concepts/state.js';
import { prng } from './helpers.mjs';

const isWellFormed = (s) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

test('property: cutText gives the longest well-formed prefix within the cap (2000 random strings)', () => {
  const rand = prng(99);
  const pieces = ['a', '\u00e9', '\u732b', '\u{1F600}', '\u{1F408}\u200D\u2B1B', ' ', '\u{10FFFF}'];
  for (let i = 0; i < 2000; i++) {
    let s = '';
    const n = Math.floor(rand() * 40);
    for (let k = 0; k < n; k++) s += pieces[Math.floor(rand() * pieces.length)];
    const max = Math.floor(rand() * (s.length + 3));
    const cut = cutText(s, max);
    assert.ok(s.startsWith(cut), 'a prefix');
    assert.ok(cut.length <= max, 'within the cap');
    assert.ok(isWellFormed(cut), `well-formed: ${JSON.stringify(cut)}`);
    assert.ok(cut.length >= Math.min(s.length, max) - 1, 'at most one unit short of the cap (half a pair)');
  }
});

test('a link cut inside an emoji keeps the emoji out, not half of it (playground and lab)', () => {
  const { state, problems } = parseHash(`#s=${'a'.repeat(19999)}${encodeURIComponent('\u{1F600}')}`);
  assert.equal(state.sentence, 'a'.repeat(19999));
  assert.match(problems.join(), /longer than 20000 characters, cut/);
  assert.equal(normalizeState({ sentence: `${'a'.repeat(19999)}\u{1F600}` }).sentence, 'a'.repeat(19999));
  const lab = parseConceptHash(`#demo=qkv&s=${'b'.repeat(299)}${encodeURIComponent('\u{1F600}')}`);
  assert.equal(lab.state.s, 'b'.repeat(299));
  assert.equal(normalizeDemoState('qkv', { s: `${'b'.repeat(299)}\u{1F600}` }).s, 'b'.repeat(299));
});

test('batch lines past the 8th are kept in the state and the link; the first 8 are computed', () => {
  const lines = Array.from({ length: 11 }, (_, i) => `line ${i + 1}`);
  const s = normalizeState({ batch: true, sentences: lines });
  assert.deepEqual(s.sentences, lines);
  assert.deepEqual(computedSentences(s), lines.slice(0, MAX_BATCH));
  const { state, problems } = parseHash(`#batch=1&bs=${encodeURIComponent(lines.join('\n'))}&bi=7`);
  assert.deepEqual(state.sentences, lines);
  assert.equal(state.shown, 7);
  assert.deepEqual(problems, []);
  assert.equal(parseHash(`#batch=1&bs=${encodeURIComponent(lines.join('\n'))}&bi=9`).state.shown, 0, 'only a computed sentence can be shown');
});
