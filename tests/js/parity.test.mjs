// Parity: the WebAssembly engine and the native CLI compute the same trace
// (every matrix within 1e-5, absolute or relative for |x| > 1; tokens and mask
// identical) for random settings and Unicode sentences from a seeded PRNG.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../web/engine.js';
import { cliArgs, cliTrace, compareMatrix, matrixPairs, maskRows, plainTokens, prng } from './helpers.mjs';

const engine = await createEngine();
const TOLERANCE = 1e-5;
let overallMax = 0;  // over every compared trace, updated before each tolerance check

const WORDS = [
  'The', 'cat', 'sat', 'on', 'the', 'mat', 'CAT', 'Street', 'it', 'was', 'tired',
  'café', 'naïve', 'Éclair', '猫', '東京タワー', '🐈‍⬛', '👍🏽', "didn't", 'well-known', 'مرحبا', 'שלום',
  'Привет', 'ΣΟΦΙΑ', '42', '3.14', '!', ',', '?!', '.', '(', ')', '"', '🇫🇷', '1️⃣', 'don’t',
];
const D_MODELS = [4, 6, 8, 12, 16, 24, 32];
const POSITIONALS = ['none', 'sinusoidal', 'learned'];
const MASKS = ['none', 'causal', 'padding', 'causal+padding'];

function pick(rand, list) {
  return list[Math.floor(rand() * list.length)];
}

function randomSentence(rand) {
  const n = 1 + Math.floor(rand() * 12);
  let s = '';
  for (let i = 0; i < n; i++) {
    const sep = i === 0 ? '' : rand() < 0.8 ? ' ' : rand() < 0.5 ? '' : '\t';
    s += sep + pick(rand, WORDS);
  }
  return s;
}

function randomCase(rand) {
  const dModel = pick(rand, D_MODELS);
  const divisors = [];
  for (let h = 1; h <= dModel; h++) if (dModel % h === 0) divisors.push(h);
  const sentence = randomSentence(rand);
  const settings = {
    sentence,
    dModel,
    heads: pick(rand, divisors),
    seed: Math.floor(rand() * 4294967296),
    positional: pick(rand, POSITIONALS),
    mask: pick(rand, MASKS),
    scale: rand() < 0.7,
    lowercase: rand() < 0.3,
    shareHeads: rand() < 0.15,
  };
  if (rand() < 0.4) settings.padTo = engine.tokenize(sentence).length + Math.floor(rand() * 4);
  return settings;
}

function describe(s) {
  return [
    `dModel ${s.dModel}`, `${s.heads} head${s.heads > 1 ? 's' : ''}`, `seed ${s.seed}`, s.positional,
    `mask ${s.mask}`, s.padTo ? `padTo ${s.padTo}` : null, s.scale ? 'scaled' : 'unscaled',
    s.lowercase ? 'lowercase' : null, s.shareHeads ? 'shared heads' : null,
  ].filter(Boolean).join(', ');
}

/** Asserts a CLI JSON trace and an engine trace agree; returns the max difference. */
function assertSameTrace(trace, json, label) {
  assert.deepEqual(
    {
      dModel: trace.config.dModel, heads: trace.config.heads, dHead: trace.config.dHead, seed: trace.config.seed,
      positional: trace.config.positional, mask: trace.config.mask, scale: trace.config.scale,
    },
    {
      dModel: json.config.d_model, heads: json.config.heads, dHead: json.config.d_head, seed: json.config.seed,
      positional: json.config.positional, mask: json.config.mask, scale: json.config.scale,
    },
    `${label}: config differs`,
  );
  assert.deepEqual(plainTokens(trace.tokens), json.tokens, `${label}: tokens differ`);
  assert.deepEqual(maskRows(trace.mask), json.mask, `${label}: mask differs`);
  assert.equal(trace.heads.length, json.heads.length, `${label}: number of heads differs`);

  let maxDiff = 0;
  let where = '(none)';
  for (const [name, m, ref] of matrixPairs(trace, json)) {
    assert.ok(m, `${label}: engine trace has no ${name}`);
    const r = compareMatrix(name, m, ref);
    assert.equal(r.problem, null, `${label}: ${r.problem}`);
    if (r.maxDiff > maxDiff) {
      maxDiff = r.maxDiff;
      where = r.where;
    }
  }
  overallMax = Math.max(overallMax, maxDiff);
  assert.ok(
    maxDiff <= TOLERANCE,
    `${label}: max difference ${maxDiff.toExponential(3)} at ${where} exceeds ${TOLERANCE}`,
  );
  return { maxDiff, where };
}

const rand = prng(0x5eed1234);
const CASES = Array.from({ length: 40 }, () => randomCase(rand));

for (const [i, settings] of CASES.entries()) {
  test(`case ${i + 1}: engine trace equals the CLI trace within 1e-5 (${describe(settings)}) for ${JSON.stringify(settings.sentence)}`, (t) => {
    const json = cliTrace(cliArgs(settings));
    const trace = engine.run(settings);
    const { maxDiff, where } = assertSameTrace(trace, json, `case ${i + 1}`);
    t.diagnostic(`max difference ${maxDiff.toExponential(3)} at ${where}`);
  });
}

test('default settings (the CLI\'s defaults) give the same trace in the engine and the CLI', (t) => {
  const sentence = 'The animal didn\'t cross the street because it was too tired.';
  const json = cliTrace(['--sentence', sentence]);
  const trace = engine.run({ sentence });
  const { maxDiff } = assertSameTrace(trace, json, 'defaults');
  t.diagnostic(`max difference ${maxDiff.toExponential(3)}`);
});

test('the largest seed (2^32 - 1) and a 32-wide single head agree with the CLI', (t) => {
  const settings = { sentence: 'naïve café 猫 🐈‍⬛ 👍🏽 !', dModel: 32, heads: 1, seed: 4294967295, positional: 'learned', mask: 'causal' };
  const json = cliTrace(cliArgs(settings));
  const trace = engine.run(settings);
  assert.equal(trace.config.seed, 4294967295);
  const { maxDiff } = assertSameTrace(trace, json, 'seed 2^32-1');
  t.diagnostic(`max difference ${maxDiff.toExponential(3)}`);
});

test('over all compared traces the largest engine/CLI difference stays within 1e-5', (t) => {
  t.diagnostic(`largest difference over ${CASES.length + 2} traces: ${overallMax.toExponential(3)}`);
  assert.ok(overallMax <= TOLERANCE, `max difference ${overallMax} exceeds ${TOLERANCE}`);
});
