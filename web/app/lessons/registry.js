// The seven lessons, one per idea of docs/product.md, in the concept lab's order.
// Each lesson (one file each) is data plus three pure functions:
//   id, title, myth (the misconception, named by the feedback), needs (shipped models),
//   question (parts), sentence,
//   compute(engine, models) → facts: every number the lesson states, from the engine,
//   predict: {kind: 'pick' (options(facts), multi) | 'bars' (start(facts)) | 'slider' (min, start: fact keys), prompt},
//   classify(guess, facts) → {verdict: 'right'|'myth'|'wrong'|'skipped', parts, extra?}: chosen by
//     what the guess shows (a guess: pick → [option id…], bars → [number…], slider → number; null: skipped),
//   reveal(facts, guess) → {figure, parts}, why: {parts, links(facts)}, check: {question, choices, answer, explain}.
// Sentences are parts (parts.js): their numbers are filled from the facts when drawn.

import { context } from './context.js';
import { qkv } from './qkv.js';
import { scores } from './scores.js';
import { scale } from './scale.js';
import { heads } from './heads.js';
import { order } from './order.js';
import { masks } from './masks.js';

export const LESSONS = Object.freeze([context, qkv, scores, scale, heads, order, masks]);
export const LESSON_IDS = Object.freeze(LESSONS.map((l) => l.id));
export const lessonById = (id) => LESSONS.find((l) => l.id === id) ?? null;

/** The screens of every lesson, in order; the URL counts them from 1. */
export const SCREENS = Object.freeze([
  { id: 'question', label: 'Question' },
  { id: 'predict', label: 'Predict' },
  { id: 'reveal', label: 'Reveal' },
  { id: 'why', label: 'Why it matters' },
  { id: 'check', label: 'Check' },
]);
