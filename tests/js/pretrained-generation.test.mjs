// Generation through the engine's JS API (PretrainedModel.generate, web/pretrained.js
// over the KV cache of src/model/generation.hpp): on the test checkpoint with GPT-2's
// real vocabulary and tokenizer, every appended token is the full forward's argmax
// (traceIds on the sequence so far), and the new row's weights and logits equal the
// full forward's on the extended sequence; undo recomputes only what it must;
// seeded sampling replays; BERT and the context are refused by name.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { createEngine } from '../../web/engine.js';
import { checkpointsDir, GPT2_TOKENIZER } from './pretrained.mjs';

// an independent GPT-2 encoder (its own encoder.json + vocab.bpe and JS code)
const { encode: independentEncode } = createRequire(import.meta.url)('gpt-3-encoder');
const SENTENCE = "The trophy didn't fit in the suitcase because it was too big";
const REL = 1e-5;

let engine;
let root;
before(async () => {
  engine = await createEngine();
  root = checkpointsDir();
});
after(() => engine?.dispose());

function load(name, tokenizerJson = '', vocabTxt = '') {
  const bytes = new Uint8Array(readFileSync(join(root, name, 'model.safetensors')));
  const loader = engine.openCheckpoint(readFileSync(join(root, name, 'config.json'), 'utf8'), bytes.subarray(0, engine.safetensorsHeaderSize(bytes.subarray(0, 8))), bytes.length);
  for (const { begin, end } of loader.needed) {
    for (let a = begin; a < end; a += loader.stagingBytes) loader.feed(a, bytes.subarray(a, Math.min(end, a + loader.stagingBytes)));
  }
  return loader.finish({ tokenizerJson, vocabTxt, tokenizerConfigJson: vocabTxt ? '{"do_lower_case": true}' : '' });
}
const gpt2 = () => load('gpt2-vocab', readFileSync(GPT2_TOKENIZER, 'utf8'));

/** max |a − b| / max(max |b|, 1e-3) over two equal-length arrays. */
function relative(a, b) {
  assert.equal(a.length, b.length);
  let d = 0;
  let s = 1e-3;
  for (let i = 0; i < a.length; i++) {
    d = Math.max(d, Math.abs(a[i] - b[i]));
    s = Math.max(s, Math.abs(b[i]));
  }
  return d / s;
}

const row = (m, r) => m.data.subarray(r * m.cols, (r + 1) * m.cols);
const argmax = (xs) => xs.reduce((best, x, i) => (x > xs[best] ? i : best), 0);

test('the test checkpoint with GPT-2\'s real tokenizer splits a sentence as an independent encoder does', () => {
  const model = gpt2();
  const ids = model.tokenize(SENTENCE).map((t) => t.id);
  assert.deepEqual(ids, independentEncode(SENTENCE));
  model.dispose();
});

test('greedy next tokens: each is the full forward\'s argmax, and the new row\'s weights and logits equal the full forward\'s', () => {
  const model = gpt2();
  let text = SENTENCE;
  let generated = [];
  let ids = model.tokenize(SENTENCE).map((t) => t.id);
  for (let step = 0; step < 4; step++) {
    const full = model.traceIds(ids, { logits: true });
    const token = model.generate(text, { generated, logits: true });
    assert.equal(token.id, argmax(row(full.logits, ids.length - 1)), `step ${step}: the argmax of the last row`);
    assert.equal(token.position, ids.length);
    assert.equal(token.reused, ids.length, 'every earlier row of K and V came from the cache');
    assert.equal(token.recomputed, step === 0 ? ids.length : 0, 'after the first call only the new row is computed');
    ids = [...ids, token.id];
    const extended = model.traceIds(ids, { logits: true });
    assert.ok(relative(token.logits.data ?? token.logits, row(extended.logits, ids.length - 1)) < REL);
    for (let l = 0; l < model.config.layers; l++) {
      for (let h = 0; h < model.config.heads; h++) {
        assert.ok(relative(token.weights[l][h], row(extended.layers[l].heads[h].weights, ids.length - 1)) < REL, `layer ${l} head ${h}`);
      }
    }
    assert.deepEqual(token.generated, [...generated, token.id]);
    text = token.sentence;
    generated = token.generated;
  }
  // the text with its generated ids traces exactly those ids (not a re-tokenisation)
  const traced = model.trace(text, { generated });
  assert.equal(traced.generated, generated.length);
  assert.deepEqual(traced.tokens.map((t) => t.id), ids);
  assert.equal(traced.tokens.at(-1).endChar, text.length);
  model.dispose();
});

test('undo: generating again after dropping the last token recomputes one row and picks the same token', () => {
  const model = gpt2();
  const first = model.generate(SENTENCE);
  const second = model.generate(first.sentence, { generated: first.generated });
  // back to after the first token: the cache drops the second and appends the first again
  const again = model.generate(first.sentence, { generated: first.generated });
  assert.equal(again.id, second.id);
  assert.equal(again.recomputed, 1);
  assert.equal(again.reused, second.reused);
  model.dispose();
});

test('a text edited after generating: its generated ids no longer fit its end and are dropped, the text is tokenized whole', () => {
  const model = gpt2();
  const t = model.generate(SENTENCE);
  const edited = `${t.sentence}!`;
  const traced = model.trace(edited, { generated: t.generated });
  assert.equal(traced.generated, 0);
  assert.deepEqual(traced.tokens.map((x) => x.id), model.tokenize(edited).map((x) => x.id));
  const next = model.generate(edited, { generated: t.generated });
  assert.deepEqual(next.generated, [next.id], 'only the new token was generated after the edit');
  assert.equal(next.sentence, edited + next.text);
  model.dispose();
});

test('seeded sampling replays: the same seed and text give the same tokens, another seed may not', () => {
  const model = gpt2();
  const run = (seed) => {
    let t = { sentence: SENTENCE, generated: [] };
    const out = [];
    for (let i = 0; i < 5; i++) {
      t = model.generate(t.sentence, { generated: t.generated, sample: true, temperature: 1.5, topK: 0, seed });
      out.push(t.id);
    }
    return out;
  };
  const a = run(7);
  assert.deepEqual(run(7), a);
  assert.notDeepEqual([run(8), run(9), run(10)].map(String), [String(a), String(a), String(a)]);
  assert.throws(() => model.generate(SENTENCE, { sample: true, temperature: 0 }), (e) => e.code === 'bad_input' && /temperature 0 is outside the range 0.05 to 5/.test(e.message));
  model.dispose();
});

test('BERT refuses generation by name; a text at the model\'s context cannot grow', () => {
  const bert = load('bert-mlm', '', readFileSync(join(root, 'bert-mlm', 'vocab.txt'), 'utf8'));
  assert.throws(() => bert.generate('the cat sat'), (e) => e.code === 'bad_input' && /BERT is not causal/.test(e.message));
  bert.dispose();
  const model = gpt2();
  const long = Array(model.config.context).fill(' the').join('');
  assert.equal(model.tokenize(long).length, model.config.context);
  assert.throws(() => model.generate(long), (e) => e.code === 'too_long_for_model' && /the most this model reads \(its context\)/.test(e.message));
  model.dispose();
});

test('the hand-built gpt2-patterns checkpoint: the engine\'s pattern scores name head 0 previous-token and head 1 first-token', async () => {
  const { headPatterns } = await import('../../web/app/kit/patterns.js');
  const model = load('gpt2-patterns', readFileSync(GPT2_TOKENIZER, 'utf8'));
  for (const text of [SENTENCE, 'I am here. I am here. I am']) {
    const named = headPatterns(model.trace(text).layers[0].patterns);
    assert.equal(named[0].best.name, 'previous-token', text);
    assert.ok(named[0].best.score > 0.99);
    assert.equal(named[1].best.name, 'first-token', text);
    assert.ok(named[1].best.score > 0.99);
  }
  model.dispose();
});
