// Lesson 5: heads differ. In the trained coreference model's second layer each
// head has its own W_Q, W_K, W_V, and on one sentence their patterns differ.

import { num, myth, maxAbs } from './parts.js';

const SENTENCE = 'The animal didn\u2019t cross the street because it was too tired.';
const LAYER = 1;
const MYTH = 'the heads repeat the same calculation';
/** Two heads "look alike" when no weight of their patterns differs by this much. */
export const ALIKE = 0.1;

export const heads = {
  id: 'heads',
  title: 'Heads differ',
  myth: MYTH,
  needs: ['coreference'],
  question: ['A layer runs several heads side by side on the same words. ',
    'Do they all compute the same pattern, or does each look for something else?'],
  sentence: SENTENCE,
  compute(engine, { coreference }) {
    const tr = coreference.trace({ text: SENTENCE.replace('\u2019', '\'') });
    const hs = tr.layers[LAYER].heads;
    const T = tr.tokens.length;
    const patterns = hs.map((h) => Array.from(h.weights.data));
    const diff = patterns.map((p) => maxAbs(patterns[0], p));
    return { H: hs.length, T, layer: LAYER + 1, alike: ALIKE, patterns, diff, words: tr.tokens.map((t) => t.text), closest: Math.min(...diff.slice(1)) };
  },
  predict: {
    kind: 'pick',
    multi: true,
    prompt: ['Here are the other heads of layer L', num('layer', { int: true }), ' of the trained model. Click each head you think will have the same pattern as H1 on this sentence (none is a fine answer), then reveal.'],
    options: (f) => Array.from({ length: f.H - 1 }, (_, k) => ({ id: String(k + 1), label: `H${k + 2}` })),
  },
  classify(guess, f) {
    if (!guess) return { verdict: 'skipped', parts: ['You skipped the prediction. Here are the heads.'] };
    const truth = f.diff.map((d, k) => (k > 0 && d < ALIKE ? String(k) : null)).filter(Boolean);
    const same = guess.length === truth.length && guess.every((g) => truth.includes(g));
    if (same && !truth.length) return { verdict: 'right', parts: ['Right: no head repeats H1. The closest differs from it by ', num('closest'), ' in one weight.'] };
    if (same) return { verdict: 'right', parts: [`Right: only ${truth.map((t) => `H${Number(t) + 1}`).join(', ')} looks like H1.`] };
    if (guess.length === f.H - 1 && truth.length < f.H - 1) {
      return { verdict: 'myth', parts: ['You expected every head to look like H1: that is the misconception ', myth(MYTH), '. Each head has its own W_Q and W_K; the closest one still differs from H1 by ', num('closest'), ' in one weight.'] };
    }
    const k = Number(guess.find((g) => !truth.includes(g)) ?? truth.find((t) => !guess.includes(t)));
    return { verdict: 'wrong', parts: [`Not quite: H${k + 1} differs from H1 by `, num(`diff.${k}`), ' in one weight; two heads count as alike here below ', num('alike'), '.'] };
  },
  reveal(f, guess) {
    return {
      figure: {
        kind: 'heads',
        caption: ['Each head\u2019s weights (a row per word, darker = more weight) and its largest difference from H1:'],
        heads: f.patterns.map((p, k) => ({ label: `H${k + 1}`, key: `diff.${k}`, mine: Boolean(guess?.includes(String(k))), pattern: p })),
      },
      parts: ['In layer L', num('layer', { int: true }), ' the head closest to H1 still differs from it by ', num('closest'), ' in one weight. Same words, same input, different questions asked of them.'],
    };
  },
  why: {
    parts: ['Several heads let one layer follow several relations at once: one head finds what \u201cit\u201d refers to while another tracks the previous word. Force them to share weights and they become identical copies: the concept lab shows that exactly.'],
    links: () => [
      { text: 'Shared against separate heads in the concept lab', href: 'concepts.html#demo=heads' },
      { text: 'Open every head of this layer in the playground', href: `index.html#model=coreference&s=${encodeURIComponent(SENTENCE.replace('\u2019', '\''))}&layer=${LAYER}&head=0&step=heads` },
    ],
  },
  check: {
    question: 'Why does a layer have several heads rather than one wide one?',
    choices: [
      { id: 'same', text: 'Each head repeats the same calculation, and the copies are averaged for stability.', myth: true },
      { id: 'diff', text: 'Each head has its own projections, so each can attend by a different relation.' },
      { id: 'speed', text: 'Heads only split the work for speed; the result is the same as one head.' },
    ],
    answer: 'diff',
    explain: 'Every head has its own W_Q, W_K and W_V slice, so its scores, and so its pattern, differ. Their outputs are concatenated and mixed by W_O, not averaged.',
  },
};
