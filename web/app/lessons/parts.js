// The pieces a lesson's sentences are made of. A sentence is an array of parts:
// plain strings, and placeholders that are filled from the lesson's facts (the
// numbers the engine gave) when it is drawn, so no number is ever typed into a
// lesson's text:
//   ['The row puts ', num('wBest'), ' of its weight on ', word('bestWord'), '.']
// partsText() gives the plain text (Node tests, the printable sheet's checks);
// the view draws the same parts, each number in a span with data-fact=<key>.

import { formatValue, quoted } from '../kit/format.js';

/** A number of the facts; digits: significant digits (formatValue), int: a whole count. */
export const num = (key, { digits = 3, int = false } = {}) => ({ fact: key, digits, int });
/** A token of the facts, quoted (“it”). */
export const word = (key) => ({ word: key });
/** The misconception, named in the feedback (drawn emphasised). */
export const myth = (text) => ({ myth: text });

/** The text of one number as every lesson shows it. */
export function factText(value, { digits = 3, int = false } = {}) {
  if (typeof value !== 'number') throw new TypeError(`a lesson fact must be a number, got ${typeof value}`);
  return int ? String(Math.round(value)) : formatValue(value, digits);
}

/** The text of one part. A missing fact is an error: a lesson never states what it did not compute. */
export function partText(part, facts) {
  if (typeof part === 'string') return part;
  if (part.myth) return `\u201c${part.myth}\u201d`;
  if (part.word) {
    if (typeof facts[part.word] !== 'string') throw new Error(`the lesson's fact ${part.word} is not a word`);
    return quoted(facts[part.word]);
  }
  return factText(getFact(facts, part.fact), part);
}

/** A fact by key: "name", or "name.3" for an entry of an array fact. */
export function getFact(facts, key) {
  const [name, index] = key.split('.');
  const v = index === undefined ? facts[name] : facts[name]?.[Number(index)];
  if (typeof v !== 'number') throw new Error(`the lesson states ${key}, which it did not compute`);
  return v;
}

export function partsText(parts, facts) {
  return parts.map((p) => partText(p, facts)).join('');
}

// ---- small maths on the engine's matrices ---------------------------------------------

/** Row i of a T×C matrix {rows, cols, data}, as a plain array. */
export function rowOf(m, i) {
  return Array.from(m.data.subarray(i * m.cols, (i + 1) * m.cols));
}

/** max |a_k − b_k| */
export function maxAbs(a, b) {
  let m = 0;
  for (let k = 0; k < a.length; k++) m = Math.max(m, Math.abs(a[k] - b[k]));
  return m;
}

/** Index of the largest value (the first on a tie). */
export function argmax(xs) {
  let best = 0;
  for (let j = 1; j < xs.length; j++) if (xs[j] > xs[best]) best = j;
  return best;
}

/** Index of the first token whose text is `text` (case-insensitive); an error if absent. */
export function tokenIndex(tokens, text) {
  const i = tokens.findIndex((t) => t.text.toLowerCase() === text);
  if (i < 0) throw new Error(`the lesson's sentence has no token "${text}"`);
  return i;
}

/** Two sets of ids are equal. */
export function sameSet(a, b) {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
}
