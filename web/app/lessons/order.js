// Lesson 6: order needs positions. Without positional encoding "cat chases dog"
// and "dog chases cat" give each word the same output vector; with sinusoidal
// positions they differ.

import { num, word, myth, rowOf, maxAbs } from './parts.js';

const A = 'cat chases dog';
const B = 'dog chases cat';
const MYTH = 'self-attention knows word order by itself';
/** Below this, two output rows are the same vector up to float rounding. */
export const SAME = 1e-5;

/** Per word of a: max |difference| between its output row in a and the same word's row in b. */
function wordDiffs(a, b) {
  return a.tokens.map((t, i) => {
    const j = b.tokens.findIndex((u) => u.id === t.id);
    return maxAbs(rowOf(a.output, i), rowOf(b.output, j));
  });
}

export const order = {
  id: 'order',
  title: 'Order needs positions',
  myth: MYTH,
  needs: [],
  question: ['\u201c', A, '\u201d and \u201c', B, '\u201d mean different things. ',
    'Without any positional encoding, can attention tell them apart?'],
  sentence: A,
  compute(engine) {
    const run = (s, pe) => engine.run({ sentence: s, positional: pe });
    const none = wordDiffs(run(A, 'none'), run(B, 'none'));
    const sin = wordDiffs(run(A, 'sinusoidal'), run(B, 'sinusoidal'));
    const a = run(A, 'none');
    return { words: a.tokens.map((t) => t.text), none, sin, noneMax: Math.max(...none), sinMax: Math.max(...sin), first: a.tokens[0].text };
  },
  predict: {
    kind: 'pick',
    multi: true,
    prompt: ['No positional encoding. We swap the sentence to \u201c', B, '\u201d. Which words get a different output vector? Click each (none is a fine answer), then reveal.'],
    options: (f) => f.words.map((w, i) => ({ id: String(i), label: w })),
  },
  classify(guess, f) {
    if (!guess) return { verdict: 'skipped', parts: ['You skipped the prediction. Here is what the engine computes.'] };
    const truth = f.none.map((d, i) => (d >= SAME ? String(i) : null)).filter(Boolean);
    const right = guess.length === truth.length && guess.every((g) => truth.includes(g));
    if (right) return { verdict: 'right', parts: ['Right: without positions every word keeps exactly its vector (largest difference ', num('noneMax'), '). Attention sees a bag of words.'] };
    if (guess.length > truth.length) {
      return { verdict: 'myth', parts: ['You expected the order to change some vectors: that is the misconception ', myth(MYTH), '. Without positions each word\u2019s output is the same in both sentences (largest difference ', num('noneMax'), '); only with positions does it change, by up to ', num('sinMax'), '.'] };
    }
    return { verdict: 'wrong', parts: ['Without positions the words\u2019 vectors do not change (largest difference ', num('noneMax'), ').'] };
  },
  reveal(f, guess) {
    return {
      figure: {
        kind: 'bars',
        caption: ['Each word\u2019s output: largest |difference| between the two orders, without positions and [with sinusoidal positions].'],
        valueLabel: 'without positions',
        otherLabel: 'with sinusoidal positions',
        rows: f.words.map((w, i) => ({ label: w, key: `none.${i}`, other: `sin.${i}`, mine: Boolean(guess?.includes(String(i))), truth: f.none[i] >= SAME })),
        scaleKey: 'sinMax',
      },
      parts: ['Without positions, ', word('first'), ' and every other word gets the same output in both orders (largest difference ', num('noneMax'), ', float rounding): the sentence is a set. With sinusoidal positions the outputs differ by up to ', num('sinMax'), '.'],
    };
  },
  why: {
    parts: ['Scores compare queries with keys, and a sum over the words does not care in which order it runs. Word order reaches attention only through the position added to each input (or, in newer models, a rotation of q and k).'],
    links: () => [
      { text: 'Swap the words in the concept lab', href: 'concepts.html#demo=order' },
      { text: 'Open the sentence without positions in the playground', href: `index.html#model=random&s=${encodeURIComponent(A)}&pe=none&step=output` },
    ],
  },
  check: {
    question: 'How does a transformer know that \u201ccat\u201d came first?',
    choices: [
      { id: 'attn', text: 'Attention compares neighbouring words, so it sees the order by itself.', myth: true },
      { id: 'pos', text: 'A position vector is added to each word\u2019s input (or q and k are rotated by position).' },
      { id: 'none', text: 'It cannot: transformers ignore order.' },
    ],
    answer: 'pos',
    explain: 'Attention alone is a weighted sum over a set: reorder the words and each word\u2019s output is the same vector. Positional encodings make the input of \u201ccat\u201d at place one differ from \u201ccat\u201d at place three.',
  },
};
