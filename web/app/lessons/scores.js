// Lesson 3: raw scores are not weights. A row of scores can be negative and sums
// to anything; softmax turns it into weights that are all positive and sum to 1.

import { num, word, myth, rowOf, argmax } from './parts.js';

const SENTENCE = 'the cat sat on the mat';
const QUERY = 1; // "cat"
const MYTH = 'the raw scores are the attention weights';
/** How far from 1 a guess's bars may add up and still read as a distribution. */
export const SUM_SLACK = 0.2;
/** A bar below this is "no weight". */
const ZERO = 0.005;

export const scores = {
  id: 'scores',
  title: 'Raw scores are not weights',
  myth: MYTH,
  needs: [],
  question: ['A query meets every key and gets one score per word: q\u00b7k/\u221ad_k. ',
    'Are those scores the attention weights?'],
  sentence: SENTENCE,
  compute(engine) {
    const tr = engine.run({ sentence: SENTENCE });
    const h = tr.heads[0];
    const s = rowOf(h.scaled, QUERY);
    const w = rowOf(h.weights, QUERY);
    const neg = s.findIndex((x) => x < 0);
    return {
      words: tr.tokens.map((t) => t.text), query: tr.tokens[QUERY].text,
      scores: s, weights: w, best: argmax(w), bestWord: tr.tokens[argmax(w)].text,
      scoreSum: s.reduce((a, b) => a + b, 0), weightSum: w.reduce((a, b) => a + b, 0),
      neg, negWord: neg >= 0 ? tr.tokens[neg].text : '', negScore: neg >= 0 ? s[neg] : 0, negWeight: neg >= 0 ? w[neg] : 0,
    };
  },
  predict: {
    kind: 'bars',
    prompt: ['These are the scores of ', word('query'), ' against every word (head H1). Drag each bar to the weight you think softmax gives that word, then reveal.'],
    /** The bars start at the scores themselves, cut to 0 … 1. */
    start: (f) => f.scores.map((s) => Math.min(1, Math.max(0, Math.round(s * 100) / 100))),
  },
  classify(guess, f) {
    if (!guess) return { verdict: 'skipped', parts: ['You skipped the prediction. Here is what softmax does.'] };
    const sum = guess.reduce((a, b) => a + b, 0);
    const g = { guessSum: sum };
    if (Math.abs(sum - 1) > SUM_SLACK) {
      return { verdict: 'myth', extra: g, parts: ['Your bars add up to ', num('guessSum'), ': that is the misconception ', myth(MYTH), '. Scores add up to anything (these to ', num('scoreSum'), '); weights always add up to ', num('weightSum'), '.'] };
    }
    if (f.neg >= 0 && guess[f.neg] < ZERO && f.negWeight >= ZERO) {
      return { verdict: 'myth', extra: g, parts: ['You gave ', word('negWord'), ' no weight because its score is negative (', num('negScore'), '): that is the misconception ', myth(MYTH), '. Softmax takes e to the score, which is never zero: it gets ', num('negWeight'), '.'] };
    }
    if (argmax(guess) !== f.best) {
      return { verdict: 'wrong', extra: g, parts: ['Your bars add up to about 1, good. But the largest score always gets the largest weight: ', word('bestWord'), ' gets ', num(`weights.${f.best}`), '.'] };
    }
    return { verdict: 'right', extra: g, parts: ['Right: your bars add up to ', num('guessSum'), ', every word keeps some weight, and ', word('bestWord'), ' gets the most.'] };
  },
  reveal(f, guess) {
    return {
      figure: {
        kind: 'bars',
        caption: ['Each word: the score, your bar and the engine\u2019s weight after softmax.'],
        rows: f.words.map((w, i) => ({ label: w, key: `weights.${i}`, score: `scores.${i}`, guess: guess ? guess[i] : null, truth: i === f.best })),
      },
      parts: ['The scores of ', word('query'), ' add up to ', num('scoreSum'), ...(f.neg >= 0 ? [' and one is negative (', word('negWord'), ': ', num('negScore'), ')'] : []), '. After softmax every weight is positive and they add up to ', num('weightSum'), '. Softmax keeps the order of the scores but not their sizes.'],
    };
  },
  why: {
    parts: ['Only a distribution can mix the values: a negative or oversized \u201cweight\u201d would flip or blow up the vectors it mixes. Softmax is the step that makes a score a share.'],
    links: () => [
      { text: 'Scores against weights in the concept lab', href: 'concepts.html#demo=scores' },
      { text: 'Open the softmax step in the playground', href: `index.html#model=random&s=${encodeURIComponent(SENTENCE)}&step=softmax&q=${QUERY}` },
    ],
  },
  check: {
    question: 'A word\u2019s score against another word is negative. What is its attention weight?',
    choices: [
      { id: 'neg', text: 'The same negative number: the score is the weight.', myth: true },
      { id: 'pos', text: 'A small positive number: e to its score over the row\u2019s sum of e to every score.' },
      { id: 'zero', text: 'Exactly 0, since negative scores are dropped.' },
    ],
    answer: 'pos',
    explain: 'Softmax gives e^s\u2c7c / \u03a3\u2096 e^s\u2096: positive for every score, and the row adds up to 1. Only a mask makes a weight exactly 0.',
  },
};
