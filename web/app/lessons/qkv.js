// Lesson 2: Q, K and V come from one input. Change one word and its query, key
// and value all change, because all three are that word's input row times a
// weight matrix (seeded random weights: the point holds for any weights).

import { num, word, myth, rowOf, maxAbs } from './parts.js';

const A = 'the cat sat on the mat';
const B = 'the dog sat on the mat';
const WORD = 1; // "cat"
const MYTH = 'Q, K and V are three separate inputs';
const PARTS = ['q', 'k', 'v'];
const LABEL = { q: 'its query q', k: 'its key k', v: 'its value v' };
const FIELD = { q: 'query', k: 'key', v: 'value' };

export const qkv = {
  id: 'qkv',
  title: 'Q, K, V from one input',
  myth: MYTH,
  needs: [],
  question: ['Every word has a query (what it looks for), a key (what it offers to be found by) and a value (what it hands over). ',
    'Where do these three vectors come from?'],
  sentence: A,
  compute(engine) {
    const a = engine.run({ sentence: A });
    const b = engine.run({ sentence: B });
    const h = 0;
    const d = (m) => maxAbs(rowOf(a.heads[h][m], WORD), rowOf(b.heads[h][m], WORD));
    return {
      from: a.tokens[WORD].text, to: b.tokens[WORD].text,
      dx: maxAbs(rowOf(a.input, WORD), rowOf(b.input, WORD)),
      delta: PARTS.map((p) => d(FIELD[p])),
      dModel: a.config.dModel, dHead: a.config.dHead,
    };
  },
  predict: {
    kind: 'pick',
    multi: true,
    prompt: ['We change ', word('from'), ' to ', word('to'), '. Which of its vectors change? Click each one you think changes (none is a fine answer too), then reveal.'],
    options: () => PARTS.map((p) => ({ id: p, label: LABEL[p] })),
  },
  classify(guess, f) {
    if (!guess) return { verdict: 'skipped', parts: ['You skipped the prediction. Here is what the engine computes.'] };
    if (guess.length === 3) return { verdict: 'right', parts: ['Right: all three change, because all three are made from the one input row of the word.'] };
    if (guess.length > 0) {
      const missed = PARTS.filter((p) => !guess.includes(p));
      return { verdict: 'myth', parts: [`You expected ${missed.map((p) => p.toUpperCase()).join(' and ')} to stay: that is the misconception `, myth(MYTH), '. The word\u2019s input row changed by up to ', num('dx'), ', and q, k and v are each that row times a weight matrix, so they all move.'] };
    }
    return { verdict: 'wrong', parts: ['You expected none to change. But the input row changed by up to ', num('dx'), ', and q, k and v are each computed from it.'] };
  },
  reveal(f, guess) {
    return {
      figure: {
        kind: 'bars',
        caption: ['How much each vector of ', word('from'), ' changed (largest |difference| of one entry, head H1):'],
        rows: PARTS.map((p, i) => ({ label: LABEL[p], key: `delta.${i}`, mine: Boolean(guess?.includes(p)), truth: true })),
      },
      parts: ['Changing the word changed its input row x\u2032 by up to ', num('dx'), '. Then q = x\u2032\u00b7W_Q changed by up to ', num('delta.0'), ', k = x\u2032\u00b7W_K by ', num('delta.1'), ' and v = x\u2032\u00b7W_V by ', num('delta.2'), ': one input, three learned matrices.'],
    };
  },
  why: {
    parts: ['Because Q, K and V are three views of the same word, a word can look for one thing (its query) while offering another (its key) and handing over a third (its value). Training learns the three matrices, not three inputs.'],
    links: () => [
      { text: 'Trace q, k and v back to the input in the concept lab', href: 'concepts.html#demo=qkv' },
      { text: 'Open the projections step in the playground', href: `index.html#model=random&s=${encodeURIComponent(A)}&step=projections&q=${WORD}` },
    ],
  },
  check: {
    question: 'What does the model multiply by W_K to get the key of a word?',
    choices: [
      { id: 'sep', text: 'A separate key input that is fed to the model beside the sentence.', myth: true },
      { id: 'same', text: 'The same input row (embedding plus position) that W_Q and W_V multiply.' },
      { id: 'query', text: 'The word\u2019s query vector.' },
    ],
    answer: 'same',
    explain: 'Q = X\u2032W_Q, K = X\u2032W_K, V = X\u2032W_V: one input X\u2032, three weight matrices. There is no second or third input.',
  },
};
