// Lesson 7: masks. Under a causal mask a word sees only itself and the words
// before it, so editing a later word leaves every earlier output unchanged.

import { num, word, myth, rowOf, maxAbs } from './parts.js';

const A = 'the cat sat on the mat';
const B = 'the cat ran on the mat';
const MYTH = 'every token always sees every other token';

export const masks = {
  id: 'masks',
  title: 'Masks restrict',
  myth: MYTH,
  needs: [],
  question: ['A model that writes text one word at a time must not peek at words it has not written yet. ',
    'A causal mask sets those scores to \u2212\u221e before softmax. What does that change?'],
  sentence: A,
  compute(engine) {
    const a = engine.run({ sentence: A, mask: 'causal' });
    const b = engine.run({ sentence: B, mask: 'causal' });
    const edit = a.tokens.findIndex((t, i) => t.id !== b.tokens[i].id);
    const delta = a.tokens.map((_, i) => maxAbs(rowOf(a.output, i), rowOf(b.output, i)));
    return { words: a.tokens.map((t) => t.text), edit, from: a.tokens[edit].text, to: b.tokens[edit].text, delta, before: Math.max(0, ...delta.slice(0, edit)), after: Math.min(...delta.slice(edit)) };
  },
  predict: {
    kind: 'pick',
    multi: true,
    prompt: ['Causal mask. We change ', word('from'), ' to ', word('to'), '. Click every word whose output vector you think changes, then reveal.'],
    options: (f) => f.words.map((w, i) => ({ id: String(i), label: w })),
  },
  classify(guess, f) {
    if (!guess) return { verdict: 'skipped', parts: ['You skipped the prediction. Here is what the engine computes.'] };
    const truth = f.words.map((_, i) => (i >= f.edit ? String(i) : null)).filter(Boolean);
    if (guess.length === truth.length && guess.every((g) => truth.includes(g))) {
      return { verdict: 'right', parts: ['Right: the words before ', word('from'), ' cannot see it, so they stay exactly the same (largest change ', num('before'), '); it and every word after it change.'] };
    }
    const early = guess.map(Number).find((i) => i < f.edit);
    if (early !== undefined) {
      return { verdict: 'myth', parts: [`You expected \u201c${f.words[early]}\u201d, before the edit, to change: that is the misconception `, myth(MYTH), '. Under the causal mask its weight on later words is exactly zero, so its output changes by ', num(`delta.${early}`), '.'] };
    }
    const missed = truth.map(Number).find((i) => !guess.includes(String(i)));
    return { verdict: 'wrong', parts: [`\u201c${f.words[missed]}\u201d comes after the edit and sees it: its output changes by `, num(`delta.${missed}`), '.'] };
  },
  reveal(f, guess) {
    return {
      figure: {
        kind: 'bars',
        caption: ['Each word\u2019s output: largest |change| after the edit.'],
        rows: f.words.map((w, i) => ({ label: w, key: `delta.${i}`, mine: Boolean(guess?.includes(String(i))), truth: i >= f.edit })),
      },
      parts: ['Every word before ', word('from'), ' keeps its output exactly (largest change ', num('before'), '); from the edit on, each output changes by at least ', num('after'), '. A causal mask lets a word see only itself and what came before.'],
    };
  },
  why: {
    parts: ['This is what lets a model like GPT-2 be trained on every position of a text at once, and generate one word at a time with a cache: what a word computed never depends on the future. A padding mask does the same for the padding of short sentences in a batch.'],
    links: () => [
      { text: 'Edit a later word in the concept lab', href: 'concepts.html#demo=masks' },
      { text: 'Open the masked scores in the playground', href: `index.html#model=random&s=${encodeURIComponent(A)}&mask=causal&step=masked` },
    ],
  },
  check: {
    question: 'Under a causal mask, which words can the third word attend to?',
    choices: [
      { id: 'all', text: 'All of them: attention always sees the whole sentence.', myth: true },
      { id: 'past', text: 'The first, the second and itself.' },
      { id: 'self', text: 'Only itself.' },
    ],
    answer: 'past',
    explain: 'The mask sets the scores of later words to \u2212\u221e, so after softmax their weights are exactly 0. Earlier words and the word itself keep their weights, which still add up to 1.',
  },
};
