// Lesson 4: why 1/√d_k. At d_k = 64 the unscaled scores are about √64 times
// larger, so a softmax row saturates: one weight near 1. The engine computes the
// row both ways (one head of width 64, seeded weights) and the score variance of
// random unit-variance q, k (scaleExperiment).

import { num, word, myth, rowOf, argmax } from './parts.js';

const SENTENCE = 'the cat sat on the mat and the dog sat on the rug';
const QUERY = 1; // "cat"
const DK = 64;
const MYTH = 'the scale is an optional tuning knob';
/** A guess this close to the true largest weight is right. */
export const CLOSE = 0.1;

export const scale = {
  id: 'scale',
  title: 'Why 1/\u221ad_k',
  myth: MYTH,
  needs: [],
  question: ['Scores are divided by \u221ad_k before softmax, d_k being the width of a query. ',
    'Does that division matter, or is it a detail you could leave out?'],
  sentence: SENTENCE,
  compute(engine) {
    const run = (scaleOn) => engine.run({ sentence: SENTENCE, dModel: DK, heads: 1, scale: scaleOn });
    const on = run(true);
    const off = run(false);
    const wOn = rowOf(on.heads[0].weights, QUERY);
    const wOff = rowOf(off.heads[0].weights, QUERY);
    const exp = (scaleOn) => engine.scaleExperiment({ dK: DK, tokens: 8, samples: 32, seed: 1, scale: scaleOn });
    return {
      query: on.tokens[QUERY].text, T: on.tokens.length, dk: on.config.dHead, rootDk: Math.sqrt(on.config.dHead),
      topOn: Math.max(...wOn), topOff: Math.max(...wOff), offWord: on.tokens[argmax(wOff)].text, uniform: 1 / on.tokens.length,
      varOn: exp(true).scoreVariance, varOff: exp(false).scoreVariance,
    };
  },
  predict: {
    kind: 'slider',
    prompt: ['With the scale, the largest weight in the row of ', word('query'), ' is ', num('topOn'), ' (d_k = ', num('dk', { int: true }), '). Drag the slider to how large you think it becomes without the scale.'],
    min: 'uniform',
    start: 'topOn',
    label: 'Largest weight without the scale',
  },
  classify(guess, f) {
    if (guess === null || guess === undefined) return { verdict: 'skipped', parts: ['You skipped the prediction. Here is what the engine computes.'] };
    const g = { guess };
    if (Math.abs(guess - f.topOff) <= CLOSE) return { verdict: 'right', extra: g, parts: ['Right: you guessed ', num('guess'), '; without the scale the row is nearly all on ', word('offWord'), ' (', num('topOff'), ').'] };
    if (guess <= f.topOn + CLOSE) {
      return { verdict: 'myth', extra: g, parts: ['You guessed ', num('guess'), ', about what the scaled row has: that is the misconception ', myth(MYTH), '. Without it the scores are ', num('rootDk'), ' times larger and softmax puts ', num('topOff'), ' on one word.'] };
    }
    return { verdict: 'wrong', extra: g, parts: ['You guessed ', num('guess'), ': more peaked than with the scale, yes, but the engine gives ', num('topOff'), '. Scores ', num('rootDk'), ' times larger make softmax close to a hard choice.'] };
  },
  reveal(f, guess) {
    return {
      figure: {
        kind: 'scale',
        caption: ['The largest weight of the row of ', word('query'), ', from ', num('uniform'), ' (all words equal) up to one word taking it all:'],
        marks: [
          { label: 'with the scale', key: 'topOn' },
          ...(guess === null || guess === undefined ? [] : [{ label: 'your guess', key: 'guess', mine: true }]),
          { label: 'without the scale', key: 'topOff', truth: true },
        ],
      },
      parts: ['Without the scale the largest weight is ', num('topOff'), ', with it ', num('topOn'), '. For random q and k with unit-variance entries, the engine measures a score variance of ', num('varOff'), ' at d_k = ', num('dk', { int: true }), ' unscaled, and ', num('varOn'), ' once divided by \u221a', num('dk', { int: true }), ' = ', num('rootDk'), '.'],
    };
  },
  why: {
    parts: ['A saturated softmax is nearly flat around its choice, so its gradient nearly vanishes and the head stops learning. The scale keeps the scores\u2019 spread the same at every width, so wide heads train like narrow ones.'],
    links: () => [
      { text: 'Race: training with and without the scale', href: `concepts.html#demo=scale&dk=${DK}&scale=0` },
      { text: 'Open this row without the scale in the playground', href: `index.html#model=random&s=${encodeURIComponent(SENTENCE)}&c=${DK}&h=1&scale=0&step=softmax&q=${QUERY}` },
    ],
  },
  check: {
    question: 'You double a head\u2019s width d_k and keep the scale. What happens to the spread of its scores?',
    choices: [
      { id: 'knob', text: 'It depends on how you set the scale: it is a knob to tune by taste.', myth: true },
      { id: 'same', text: 'It stays about the same: dividing by \u221ad_k cancels the growth.' },
      { id: 'double', text: 'It doubles, so softmax saturates more.' },
    ],
    answer: 'same',
    explain: 'q\u00b7k sums d_k products, so its variance grows like d_k and its spread like \u221ad_k. Dividing by \u221ad_k cancels exactly that, at every width. Without it, wider heads saturate.',
  },
};
