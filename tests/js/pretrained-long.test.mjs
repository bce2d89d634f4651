// A long input through a pretrained model in the wasm engine (web/pretrained.js over
// src/bindings/pretrained_bindings.cpp): the gpt2-long checkpoint (GPT-2's 50,257-token
// vocabulary, 1024-token context and 12 heads; C = 48, 2 layers; make_checkpoints.py) traced
// at its full context the way the page asks (one layer, no other layers' weights, the top 5
// per position, no T×V logits). Its top 5 are checked against forward()'s full logits
// (Model::run: the unembedding in one product), sorted here in float64.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine } from '../../web/engine.js';
import { hubFolders, textOfTokens } from './pretrained.mjs';

const NAME = 'gpt2-long';
const T = 1024;

let engine;
let dir;
let model;
before(async () => {
  engine = await createEngine();
  dir = hubFolders([NAME], { withTokenizer: [NAME] });
  const bytes = new Uint8Array(readFileSync(join(dir, NAME, 'model.safetensors')));
  const loader = engine.openCheckpoint(readFileSync(join(dir, NAME, 'config.json'), 'utf8'), bytes.subarray(0, engine.safetensorsHeaderSize(bytes.subarray(0, 8))), bytes.length);
  for (const { begin, end } of loader.needed) {
    for (let a = begin; a < end; a += loader.stagingBytes) loader.feed(a, bytes.subarray(a, Math.min(end, a + loader.stagingBytes)));
  }
  model = loader.finish({ tokenizerJson: readFileSync(join(dir, NAME, 'tokenizer.json'), 'utf8') });
});
after(() => {
  model?.dispose();
  engine?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('gpt2-long is GPT-2 small\'s vocabulary, context and heads', () => {
  assert.equal(model.config.vocab, 50257);
  assert.equal(model.config.context, T);
  assert.equal(model.config.heads, 12);
});

test('a 1024-token text traces one layer (no T×V logits): its steps, and a top 5 per position that is the full logits\' top 5', () => {
  const text = textOfTokens((s) => model.tokenize(s), T);
  const tr = model.trace(text, { layer: 1, allWeights: false });
  assert.equal(tr.tokens.length, T);
  assert.equal(tr.logits, undefined);
  // layer 1 in full, layer 0 empty
  const l1 = tr.layers[1];
  assert.equal(l1.heads.length, 12);
  assert.equal(l1.heads[5].weights.rows, T);
  assert.equal(l1.heads[5].weights.cols, T);
  for (const k of ['input', 'normed', 'concat', 'attentionOutput', 'residual', 'mlpNormed', 'mlpHidden', 'mlpOutput', 'output']) assert.equal(l1[k].rows, T, k);
  assert.equal(tr.layers[0].heads.length, 0);
  assert.equal(tr.layers[0].input, undefined);
  // causal: row 1023 of each map sums to 1 over all 1024 keys
  let sum = 0;
  for (let j = 0; j < T; j++) sum += l1.heads[5].weights.data[(T - 1) * T + j];
  assert.ok(Math.abs(sum - 1) < 1e-4, `row sum ${sum}`);
  const { k, ids, p, texts } = tr.top;
  assert.equal(k, 5);
  assert.equal(ids.length, T * k);
  assert.equal(p.length, T * k);
  assert.equal(texts.length, T * k);
  // the full logits of the same ids (no trace), their softmax and its five largest in float64
  const { logits } = model.forward(tr.tokens.map((t) => t.id));
  const V = logits.cols;
  assert.equal(logits.rows, T);
  for (let i = 0; i < T; i++) {
    const row = logits.data.subarray(i * V, (i + 1) * V);
    let m = -Infinity;
    for (let j = 0; j < V; j++) m = Math.max(m, row[j]);
    let z = 0;
    for (let j = 0; j < V; j++) z += Math.exp(row[j] - m);
    const best = [];
    for (let j = 0; j < V; j++) {
      if (best.length < k || row[j] > row[best[best.length - 1]]) {
        best.push(j);
        best.sort((a, b) => row[b] - row[a] || a - b);
        if (best.length > k) best.pop();
      }
    }
    for (let r = 0; r < k; r++) {
      const want = Math.exp(row[best[r]] - m) / z;
      const got = ids[i * k + r];
      // equal logits (a tie in float) may come in either order; a different token must be as likely
      assert.ok(got === best[r] || Math.abs(Math.exp(row[got] - m) / z - want) <= 1e-6, `position ${i} rank ${r}: ${got} vs ${best[r]}`);
      assert.ok(Math.abs(p[i * k + r] - want) <= 1e-5 * want + 1e-7, `position ${i} rank ${r}: p ${p[i * k + r]} vs ${want}`);
    }
  }
});

test('at 1024 tokens every layer\'s maps with the full logits do not fit: refused by code, naming what to ask for instead; the engine goes on', () => {
  const text = textOfTokens((s) => model.tokenize(s), T);
  assert.throws(() => model.trace(text, { layer: 0, allWeights: true, logits: true }),
    (e) => e.code === 'too_large' && /^tracing 1024 tokens needs [\d.]+ (MB|GB), more than the 805 MB limit/.test(e.message) &&
      /the full logits and probabilities/.test(e.message) && /every layer's heads/.test(e.message) &&
      /ask for the top-k next tokens instead of the full logits, trace one layer, or use fewer tokens/.test(e.message));
  // the same model traces again afterwards
  assert.equal(model.trace(text, { layer: 0, allWeights: false }).top.k, 5);
});
