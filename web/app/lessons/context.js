// Lesson 1: context, not an average. In the trained coreference model's featured
// head (L2 H1) the row of "it" is nearly all on the animal it refers to; the plain
// average would give every word 1/T.

import { num, word, myth, rowOf, argmax, tokenIndex } from './parts.js';

const SENTENCE = 'The animal didn\u2019t cross the street because it was too tired.';
const LAYER = 1;
const HEAD = 0;
const MYTH = 'it is just a plain average of the words';

export const context = {
  id: 'context',
  title: 'Context, not an average',
  myth: MYTH,
  needs: ['coreference'],
  question: ['When a transformer reads \u201cit\u201d, how does it know what \u201cit\u201d means? ',
    'Each word builds its new vector from the other words\u2019 values. Does it take all of them equally, or pick some?'],
  sentence: SENTENCE,
  compute(engine, { coreference }) {
    const tr = coreference.trace({ text: SENTENCE.replace('\u2019', '\'') });
    const q = tokenIndex(tr.tokens, 'it');
    const weights = rowOf(tr.layers[LAYER].heads[HEAD].weights, q);
    const best = argmax(weights);
    const words = tr.tokens.map((t) => t.text);
    return { words, q, weights, best, bestWord: words[best], query: words[q], wBest: weights[best], T: words.length, uniform: 1 / words.length, layer: LAYER + 1, head: HEAD + 1 };
  },
  predict: {
    kind: 'pick',
    multi: false,
    prompt: ['Click the word that ', word('query'), ' will take most of its weight from, in the trained model\u2019s head L', num('layer', { int: true }), ' H', num('head', { int: true }), '. Or, if you think it mixes all ', num('T', { int: true }), ' words equally, pick that.'],
    options: (f) => [...f.words.map((w, i) => ({ id: String(i), label: w })), { id: 'even', label: 'every word equally' }],
  },
  classify(guess, f) {
    if (!guess || !guess.length) return { verdict: 'skipped', parts: ['You skipped the prediction. Here is what the model does.'] };
    const g = guess[0];
    if (g === 'even') {
      return { verdict: 'myth', parts: ['You spread the weight evenly: that is the misconception ', myth(MYTH), '. An average would give each word ', num('uniform'), '; the model gives ', word('bestWord'), ' ', num('wBest'), '.'] };
    }
    if (Number(g) === f.best) return { verdict: 'right', parts: ['Right: the row of ', word('query'), ' puts ', num('wBest'), ' of its weight on ', word('bestWord'), '.'] };
    const i = Number(g);
    return { verdict: 'wrong', parts: [`You picked \u201c${f.words[i]}\u201d: the head gives it `, num(`weights.${i}`), ' and gives ', word('bestWord'), ' ', num('wBest'), '. It looks for what \u201cit\u201d refers to, not for a neighbour.'] };
  },
  reveal(f, guess) {
    const picked = guess?.[0];
    return {
      figure: {
        kind: 'bars',
        caption: ['The row of ', word('query'), ' in L', num('layer', { int: true }), ' H', num('head', { int: true }), ': the engine\u2019s weights; the line marks the plain average ', num('uniform'), '.'],
        reference: 'uniform',
        // "every word equally" is the average line itself, not a tag on every row
        referenceLabel: picked === 'even' ? 'the plain average: your guess' : 'the plain average',
        rows: f.words.map((w, i) => ({ label: w, key: `weights.${i}`, mine: picked === String(i), truth: i === f.best })),
      },
      parts: ['The row of ', word('query'), ' puts ', num('wBest'), ' of its weight on ', word('bestWord'), ', where a plain average would put ', num('uniform'), ' on every word. So the new vector of ', word('query'), ' is mostly the value of ', word('bestWord'), ': it carries what it refers to.'],
    };
  },
  why: {
    parts: ['This is how a model resolves \u201cit\u201d, \u201cthey\u201d or \u201cthe bank\u201d: the same word gets a different vector in each sentence. An average would give every sentence the same blur.'],
    links: (f) => [
      { text: 'Open this head in the playground', href: `index.html#model=coreference&s=${encodeURIComponent(SENTENCE.replace('\u2019', '\''))}&layer=${LAYER}&head=${HEAD}&q=${f.q}&step=heads` },
      { text: 'Race: attention against the plain average', href: 'concepts.html#demo=context' },
    ],
  },
  check: {
    question: 'What is the attention output of \u201cit\u201d in one head?',
    choices: [
      { id: 'avg', text: 'The plain average of every word\u2019s value vector.', myth: true },
      { id: 'weighted', text: 'A weighted sum of the value vectors, the weights being the row of \u201cit\u201d after softmax.' },
      { id: 'copy', text: 'The embedding of the word most similar to \u201cit\u201d.' },
    ],
    answer: 'weighted',
    explain: 'Each output row is \u03a3 weight \u00d7 value over the words. The weights come from the query of \u201cit\u201d meeting every key, so they are uneven; the plain average is the special case where every weight is 1/T, which a trained head rarely does.',
  },
};
