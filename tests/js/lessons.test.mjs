// The lessons (web/app/lessons): every lesson's data is complete; the numbers a
// lesson states (its facts) equal numbers recomputed here from the engine's raw
// matrices by separate code; the feedback is chosen by what a guess shows (a right
// guess is right, the misconception's guess is named); links are checked.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createEngine } from '../../web/engine.js';
import { LESSONS, LESSON_IDS, SCREENS } from '../../web/app/lessons/registry.js';
import { partsText } from '../../web/app/lessons/parts.js';
import { parseLessonHash, lessonHash } from '../../web/app/lessons/state.js';
import { DEMOS, parseConceptHash } from '../../web/app/concepts/state.js';
import { parseHash } from '../../web/app/playground/state.js';
import { REPO_ROOT } from './helpers.mjs';
import { guessesFor } from './lesson-guesses.mjs';

const engine = await createEngine();
const models = { coreference: engine.loadTrainer(new Uint8Array(readFileSync(path.join(REPO_ROOT, 'models', 'coreference.safetensors')))) };
const facts = Object.fromEntries(LESSONS.map((l) => [l.id, l.compute(engine, models)]));
const row = (m, i) => Array.from(m.data.slice(i * m.cols, (i + 1) * m.cols));
/** softmax in double, written apart from the engine's */
const softmax = (s) => {
  const m = Math.max(...s);
  const e = s.map((x) => Math.exp(x - m));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
};
const dot = (a, b) => a.reduce((acc, x, k) => acc + x * b[k], 0);

test('seven lessons, one per idea of the concept lab, each complete: question, prediction, misconception, why with links, a check whose choices hold the answer and the misconception', () => {
  assert.deepEqual([...LESSON_IDS], [...DEMOS]);
  for (const l of LESSONS) {
    for (const k of ['title', 'myth', 'sentence']) assert.ok(typeof l[k] === 'string' && l[k].length > 3, `${l.id}.${k}`);
    assert.ok(['pick', 'bars', 'slider'].includes(l.predict.kind), `${l.id} predict kind`);
    const f = facts[l.id];
    assert.ok(partsText(l.question, f).length > 20 && partsText(l.predict.prompt, f).length > 20, `${l.id} texts`);
    const links = l.why.links(f);
    assert.ok(links.length >= 1 && links.every((x) => /^(index|concepts)\.html#/.test(x.href)), `${l.id} links`);
    const c = l.check;
    assert.ok(c.choices.some((x) => x.id === c.answer), `${l.id}: the answer is a choice`);
    assert.equal(c.choices.filter((x) => x.myth).length, 1, `${l.id}: one choice is the misconception`);
    assert.ok(!c.choices.find((x) => x.id === c.answer).myth && c.explain.length > 40);
  }
  assert.equal(SCREENS.length, 5);
});

test('context: the row of “it” in L2 H1 is the trained model\u2019s, and its largest weight is on “animal”', () => {
  const f = facts.context;
  const tr = models.coreference.trace({ text: 'The animal didn\'t cross the street because it was too tired.' });
  const w = row(tr.layers[1].heads[0].weights, 7);
  assert.equal(f.query, 'it');
  assert.deepEqual(f.weights, w);
  assert.equal(f.bestWord, 'animal');
  assert.ok(f.wBest > 0.9 && Math.abs(f.uniform - 1 / 12) < 1e-12);
});

test('qkv: the change of q, k and v equals x′·W recomputed here for both sentences (head 1)', () => {
  const f = facts.qkv;
  const proj = (tr, w, i) => {
    const x = row(tr.input, i);
    const D = tr.config.dHead;
    return Array.from({ length: D }, (_, d) => x.reduce((acc, xc, c) => acc + xc * w.data[c * w.cols + d], 0));
  };
  const a = engine.run({ sentence: 'the cat sat on the mat' });
  const b = engine.run({ sentence: 'the dog sat on the mat' });
  ['wQuery', 'wKey', 'wValue'].forEach((m, k) => {
    const pa = proj(a, a[m], 1);
    const pb = proj(b, b[m], 1);
    const d = Math.max(...pa.map((v, j) => Math.abs(v - pb[j])));
    assert.ok(Math.abs(d - f.delta[k]) < 1e-4, `${m}: ${d} vs ${f.delta[k]}`);
    assert.ok(f.delta[k] > 0.01, `${m} changed`);
  });
});

test('scores: the weights are the softmax of the scores (double, here), positive, summing to 1; the scores are q·k/√D', () => {
  const f = facts.scores;
  const tr = engine.run({ sentence: 'the cat sat on the mat' });
  const h = tr.heads[0];
  const q = row(h.query, 1);
  const s = Array.from({ length: tr.tokens.length }, (_, j) => dot(q, row(h.key, j)) / Math.sqrt(tr.config.dHead));
  s.forEach((x, j) => assert.ok(Math.abs(x - f.scores[j]) < 1e-5));
  softmax(s).forEach((w, j) => assert.ok(Math.abs(w - f.weights[j]) < 1e-6));
  assert.ok(f.neg >= 0 && f.negScore < 0 && f.negWeight > 0);
  assert.ok(Math.abs(f.weightSum - 1) < 1e-5 && Math.abs(f.scoreSum - 1) > 0.5);
});

test('scale: the largest weight with and without 1/√64 equals softmax(q·k) recomputed here; unscaled it saturates', () => {
  const f = facts.scale;
  const top = (scale) => {
    const tr = engine.run({ sentence: 'the cat sat on the mat and the dog sat on the rug', dModel: 64, heads: 1, scale });
    const h = tr.heads[0];
    const q = row(h.query, 1);
    const s = Array.from({ length: tr.tokens.length }, (_, j) => dot(q, row(h.key, j)) / (scale ? 8 : 1));
    return Math.max(...softmax(s));
  };
  assert.equal(f.dk, 64);
  assert.ok(Math.abs(top(true) - f.topOn) < 1e-5 && Math.abs(top(false) - f.topOff) < 1e-5);
  assert.ok(f.topOff > 0.8 && f.topOn < 0.5 && f.varOff > 20 * f.varOn);
});

test('heads, order, masks: the differences are the engine\u2019s, recomputed here', () => {
  const h = facts.heads;
  assert.equal(h.diff[0], 0);
  assert.ok(h.closest > 0.1, 'no two heads of the layer alike');
  const o = facts.order;
  assert.ok(o.noneMax < 1e-5 && o.sinMax > 0.1);
  const m = facts.masks;
  const a = engine.run({ sentence: 'the cat sat on the mat', mask: 'causal' });
  const b = engine.run({ sentence: 'the cat ran on the mat', mask: 'causal' });
  assert.equal(m.edit, 2);
  for (let i = 0; i < 6; i++) {
    const d = Math.max(...row(a.output, i).map((v, c) => Math.abs(v - row(b.output, i)[c])));
    assert.equal(m.delta[i], d);
    if (i < 2) assert.equal(d, 0, `row ${i} before the edit is unchanged`);
  }
});

test('feedback is chosen by the guess: right is right, the misconception\u2019s guess names it, no guess is skipped; every text fills', () => {
  for (const l of LESSONS) {
    const f = facts[l.id];
    const { right, myth } = guessesFor(l.id, f);
    const r = l.classify(right, f);
    assert.equal(r.verdict, 'right', `${l.id}: ${partsText(r.parts, { ...f, ...r.extra })}`);
    const m = l.classify(myth, f);
    assert.equal(m.verdict, 'myth', l.id);
    assert.ok(partsText(m.parts, { ...f, ...m.extra }).includes(`\u201c${l.myth}\u201d`), `${l.id} names its misconception`);
    assert.equal(l.classify(null, f).verdict, 'skipped');
    for (const g of [right, myth, null]) assert.ok(partsText(l.reveal(f, g).parts, f).length > 40);
  }
});

test('feedback for other wrong guesses says what the numbers show, not the misconception', () => {
  const c = facts.context;
  const street = String(c.words.indexOf('street'));
  const r = context().classify([street], c);
  assert.equal(r.verdict, 'wrong');
  assert.match(partsText(r.parts, c), /street/);
  const m = facts.masks;
  assert.equal(LESSONS[6].classify(['5'], m).verdict, 'wrong', 'missing later rows is not the misconception');
  assert.equal(LESSONS[6].classify(['0', '2', '3', '4', '5'], m).verdict, 'myth', 'an earlier row changing is');
});
const context = () => LESSONS[0];

test('links: a known lesson and screen are read, an unknown lesson or screen is named (as text) and dropped', () => {
  assert.deepEqual(parseLessonHash('#lesson=scale&screen=2'), { lesson: 'scale', screen: 1, teacher: false, problems: [] });
  const bad = parseLessonHash('#lesson=<img src=x onerror=alert(1)>&screen=99');
  assert.equal(bad.lesson, null);
  assert.equal(bad.screen, 0);
  assert.equal(bad.problems.length, 2);
  assert.match(bad.problems[0], /no lesson/);
  assert.equal(parseLessonHash('#teacher').teacher, true);
  assert.equal(lessonHash({ lesson: 'masks', screen: 4 }), 'lesson=masks&screen=5');
  for (const s of [{ lesson: 'qkv', screen: 2 }, { lesson: 'heads', teacher: true }, { teacher: true }]) {
    const p = parseLessonHash(lessonHash(s));
    assert.equal(p.lesson, s.lesson ?? null);
    assert.equal(p.teacher, Boolean(s.teacher));
  }
});

test('every "why it matters" link opens a state the playground or the concept lab reads without a problem', () => {
  for (const l of LESSONS) {
    for (const { href } of l.why.links(facts[l.id])) {
      const [page, hash] = href.split('#');
      const parsed = page === 'index.html' ? parseHash(`#${hash}`) : parseConceptHash(`#${hash}`);
      assert.deepEqual(parsed.problems, [], `${l.id}: ${href}`);
      if (page === 'concepts.html') assert.equal(parsed.demo, l.id);
      else assert.equal(parsed.state.sentence.toLowerCase().replace('\u2019', '\''), l.sentence.toLowerCase().replace('\u2019', '\''));
    }
  }
});
