// Idea 6, order and distance: what each positional kind does to one pair of
// words when the whole sentence moves right by `shift` filler words. Pure (the
// engine is passed in), so Node checks the same numbers the page prints.
//
// Absolute kinds (sinusoidal, learned) add a vector that depends on where a word
// stands: the word's input changes when it moves, and so does the score of the
// pair. Relative kinds act inside attention on the distance only: rotary turns
// q and k by angles whose difference is the distance, ALiBi subtracts slope ×
// distance; neither touches the inputs, so the moved pair keeps its score.
// Without positions nothing depends on place (nor on distance: see the first card).

import { formatValue } from '../kit/format.js';

export const KINDS = Object.freeze(['none', 'sinusoidal', 'learned', 'rope', 'alibi']);
export const KIND_TEXT = Object.freeze({ none: 'none', sinusoidal: 'sinusoidal', learned: 'learned', rope: 'rotary (RoPE)', alibi: 'ALiBi' });
const ABSOLUTE = new Set(['sinusoidal', 'learned']);

/** Words put before the sentence to move it right (as many as the shift asks). */
export const FILLER = Object.freeze(['well', 'then', 'one', 'day', 'in', 'the', 'old', 'town', 'park', 'at', 'noon', 'today']);
export const MAX_SHIFT = FILLER.length;

/** Relative tolerance of "the same score": float32 rounding of the products, not a real change. */
export const SAME_SCORE = 1e-5;

/** The score the softmax reads for query i and key j of head h: S′, minus m_h·|i − j| with ALiBi. */
export function softmaxScore(trace, h, i, j) {
  const s = trace.heads[h].scaled;
  const x = s.data[i * s.cols + j];
  const slopes = trace.alibiSlopes;
  return trace.config.positional === 'alibi' && slopes?.length ? Math.fround(x - Math.fround(slopes[h] * Math.abs(i - j))) : x;
}

function rowDiff(m, i, n, j) {
  let d = 0;
  for (let c = 0; c < m.cols; c++) d = Math.max(d, Math.abs(m.data[i * m.cols + c] - n.data[j * n.cols + c]));
  return d;
}

/**
 * For each kind: the score of the pair (query = the sentence's last word, key = its
 * first word, head `head`) in place and moved right by `shift` words, and how much
 * the key word's input vector X′ changed. {query, key, distance, shift, rows: [{kind, at, moved, change, same, inputChange}]}
 */
export function distanceModel(engine, { sentence, shift, seed, head = 0 }) {
  const moved = [...FILLER.slice(0, shift), sentence].join(' ');
  const rows = KINDS.map((kind) => {
    const a = engine.run({ sentence, positional: kind, seed });
    const b = engine.run({ sentence: moved, positional: kind, seed });
    const T = a.tokens.length;
    const k = b.tokens.length - T; // the filler's tokens
    const [qi, ki] = [T - 1, 0];
    const at = softmaxScore(a, head, qi, ki);
    const there = softmaxScore(b, head, qi + k, ki + k);
    const change = Math.abs(there - at);
    return { kind, at, moved: there, change, same: change <= SAME_SCORE * Math.max(1, Math.abs(at)), inputChange: rowDiff(a.input, ki, b.input, ki + k), absolute: ABSOLUTE.has(kind), tokens: a.tokens.length, filler: k };
  });
  const t = engine.run({ sentence, positional: 'none', seed }).tokens;
  return { query: t[t.length - 1].text, key: t[0].text, distance: t.length - 1, shift: rows[0].filler, moved, rows };
}

const list = (xs) => (xs.length <= 1 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`);
const names = (rows) => list(rows.map((r) => KIND_TEXT[r.kind]));

/** The page's sentences about the table, each read from its numbers. */
export function distanceSentences(m) {
  if (m.distance < 1) return ['Write at least two words: the pair is the last word looking at the first.'];
  if (m.shift === 0) return [`Move the sentence right (the slider puts filler words before it) to see which kinds keep the score of \u201c${m.query}\u201d \u2192 \u201c${m.key}\u201d.`];
  const keep = m.rows.filter((r) => r.same);
  const change = m.rows.filter((r) => !r.same);
  const vec = m.rows.filter((r) => r.inputChange > 0);
  const flat = m.rows.filter((r) => r.inputChange === 0);
  const out = [];
  const pair = `\u201c${m.query}\u201d \u2192 \u201c${m.key}\u201d (distance ${m.distance})`;
  if (keep.length) out.push(`Moved ${m.shift} word${m.shift === 1 ? '' : 's'} to the right, ${pair} keeps its score with ${names(keep)}${keep.some((r) => r.change > 0) ? ' (up to float rounding)' : ''}.`);
  if (change.length) out.push(`With ${names(change)} the same pair at the same distance scores differently: ${change.map((r) => `${KIND_TEXT[r.kind]} ${formatValue(r.at, 4)} \u2192 ${formatValue(r.moved, 4)}`).join(', ')}.`);
  if (vec.length) out.push(`${names(vec)} give${vec.length === 1 ? 's' : ''} \u201c${m.key}\u201d a different input vector at position ${m.shift} than at 0 (largest change ${formatValue(Math.max(...vec.map((r) => r.inputChange)), 3)}): absolute positions.`);
  if (flat.length) out.push(`${names(flat)} leave${flat.length === 1 ? 's' : ''} the input vectors alone.`);
  return out.map((x) => x[0].toUpperCase() + x.slice(1));
}
