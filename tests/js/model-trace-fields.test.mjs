// One field table for every model trace (src/model/model_trace_fields.hpp): a trained
// model's trace (Trainer.trace) and a pretrained model's (PretrainedModel.trace) are
// written by one function (js::model_trace_to_js), so a trained model shaped like a
// pretrained test checkpoint gives the same fields with the same shapes; and both are
// the CLI's JSON (attn run) camelCased plus the table's js-only fields.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine } from '../../web/engine.js';
import { cliTrace, REPO_ROOT, tempDir } from './helpers.mjs';
import { checkpointsDir, GPT2_TOKENIZER } from './pretrained.mjs';

const GPT2 = 'gpt2-vocab';
const BERT = 'bert-mlm';

let engine;
let dir;
before(async () => {
  engine = await createEngine();
  const root = checkpointsDir();
  dir = tempDir('ap-trace-fields-');
  for (const name of [GPT2, BERT]) cpSync(join(root, name), join(dir, name), { recursive: true });
  writeFileSync(join(dir, GPT2, 'tokenizer.json'), readFileSync(GPT2_TOKENIZER));
});
after(() => {
  engine?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function load(name) {
  const file = (f) => (existsSync(join(dir, name, f)) ? readFileSync(join(dir, name, f), 'utf8') : '');
  const bytes = new Uint8Array(readFileSync(join(dir, name, 'model.safetensors')));
  const loader = engine.openCheckpoint(file('config.json'), bytes.subarray(0, engine.safetensorsHeaderSize(bytes.subarray(0, 8))), bytes.length);
  for (const { begin, end } of loader.needed) {
    for (let a = begin; a < end; a += loader.stagingBytes) loader.feed(a, bytes.subarray(a, Math.min(end, a + loader.stagingBytes)));
  }
  return loader.finish({ tokenizerJson: file('tokenizer.json'), vocabJson: file('vocab.json'), mergesTxt: file('merges.txt'), vocabTxt: file('vocab.txt') });
}

const isMatrix = (v) => v && typeof v === 'object' && 'rows' in v && 'cols' in v && ArrayBuffer.isView(v.data);
const sorted = (keys) => [...keys].sort();
const without = (o, drop) => sorted(Object.keys(o).filter((k) => !drop.includes(k)));
/** "wQuery" → "w_query", "ln1Gain" → "ln1_gain": the table's name of a JS key. */
const snake = (k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** A matrix's shape in the dimension letters (T tokens, C width, D head width, F MLP width, V vocabulary). */
function shapeOf(m, dims) {
  const letter = (n) => Object.entries(dims).find(([, v]) => v === n)?.[0] ?? String(n);
  return `${letter(m.rows)}×${letter(m.cols)}`;
}

/** Every matrix field of an object (one level), by key: its shape in letters. */
function shapes(o, dims) {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => isMatrix(v)).map(([k, v]) => [k, shapeOf(v, dims)]));
}

test('a trained model and a pretrained checkpoint of the same shape: the same trace fields, the same shapes', () => {
  const model = load(GPT2);
  const c = model.config;
  // the trained model: GPT-2's block (pre-LN, causal, learned positions, an MLP of 4C), our own
  // options otherwise (no attention biases, its task's vocabulary)
  const trainer = engine.createTrainer({ task: 'reverse', layers: c.layers, dModel: c.dModel, heads: c.heads, mlp: c.mlp, causal: true, layernorm: true, positional: 'learned' });
  try {
    assert.equal(trainer.config.mlp, c.mlp);
    const T = 5;
    const ids = Array.from({ length: T }, (_, i) => (i * 3 + 1) % trainer.config.vocab);
    const trained = trainer.trace({ ids });
    const pretrained = model.traceIds(ids, { layer: 0, allWeights: true, logits: true });
    // the document: the same fields but for what each caller adds
    assert.deepEqual(without(trained, ['grammar']), without(pretrained, ['generated', 'undoSentence', 'top']));
    assert.ok(Object.keys(pretrained).includes('finalLnGain') && Object.keys(pretrained).includes('finalNormed'));
    // the layer on screen: the same fields but GPT-2's attention biases
    const biases = ['bQuery', 'bKey', 'bValue', 'bOutput'];
    for (const b of biases) assert.ok(isMatrix(pretrained.layers[0][b]), `GPT-2's ${b}`);
    assert.deepEqual(without(trained.layers[0], []), without(pretrained.layers[0], biases));
    assert.deepEqual(sorted(Object.keys(trained.layers[0].heads[0])), sorted(Object.keys(pretrained.layers[0].heads[0])));
    // the other layers of a pretrained trace are summaries: each head's weights, its pattern scores
    assert.deepEqual(sorted(Object.keys(pretrained.layers[1])), ['heads', 'patterns']);
    assert.deepEqual(Object.keys(pretrained.layers[1].heads[0]), ['weights']);
    // every shared matrix has the same shape in the dimension letters (V: each model's vocabulary)
    const dims = (v) => ({ T, C: c.dModel, D: c.dModel / c.heads, F: c.mlp, V: v, 1: 1 });
    assert.equal(new Set(Object.values(dims(c.vocab))).size, 6, 'the letters are told apart by their sizes');
    const top = (o) => { const s = shapes(o, dims(o.config.vocab)); delete s.mask; return s; };
    assert.deepEqual(top(trained), top(pretrained));
    assert.equal(shapeOf(trained.mask, { T }), 'T×T');
    assert.equal(shapeOf(pretrained.mask, { T }), 'T×T');
    const layer = (o, v) => { const s = shapes(o, dims(v)); for (const b of biases) delete s[b]; return s; };
    assert.deepEqual(layer(trained.layers[0], trainer.config.vocab), layer(pretrained.layers[0], c.vocab));
    trained.layers[0].heads.forEach((h, i) => assert.deepEqual(shapes(h, dims(0)), shapes(pretrained.layers[0].heads[i], dims(0))));
    assert.equal(pretrained.layers[1].heads[0].weights.rows, T);
    assert.equal(trained.layers[0].patterns.length, c.heads);
    assert.equal(pretrained.layers[0].patterns.length, c.heads);
    assert.equal(pretrained.layers[1].patterns.length, c.heads);
  } finally {
    trainer.dispose();
    model.dispose();
  }
});

// the JS objects' own fields: the table's js_only ones, then what each caller adds (patterns, grammar,
// generated; the JS wrapper's sentence)
const JS_ONLY = {
  trace: ['length', 'finalLnGain', 'finalLnBias', 'top', 'grammar', 'generated', 'undoSentence', 'sentence'],
  layer: ['wQuery', 'wKey', 'wValue', 'wOutput', 'bQuery', 'bKey', 'bValue', 'bOutput', 'ln1Gain', 'ln1Bias', 'patterns'],
};

/** The JS trace's keys at every level are the CLI's, camelCased, plus js-only ones; the same matrices' shapes. */
function assertCliKeys(js, cli, what) {
  // the document's own (config, tokens) and the Hub CLI's extras after the trace (hub_cli.cpp)
  const cliTop = Object.keys(cli).filter((k) => !['config', 'tokens', 'top_next', 'top_fill'].includes(k));
  const extra = (o, names) => Object.keys(o).filter((k) => !names.includes(snake(k)) && k !== 'config' && k !== 'tokens');
  assert.deepEqual(sorted(extra(js, cliTop).filter((k) => !JS_ONLY.trace.includes(k))), [], `${what}: trace fields the CLI lacks`);
  for (const k of cliTop) assert.ok(k.replace(/_([a-z])/g, (_, c) => c.toUpperCase()) in js, `${what}: ${k}`);
  cli.layers.forEach((cl, l) => {
    const jl = js.layers[l];
    if (!('input' in jl)) return; // a pretrained trace's summary layer; the CLI's is in full
    assert.deepEqual(sorted(extra(jl, Object.keys(cl)).filter((k) => !JS_ONLY.layer.includes(k))), [], `${what} layer ${l}`);
    for (const k of Object.keys(cl)) {
      const jk = k.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
      assert.ok(jk in jl, `${what} layer ${l}: ${k}`);
      if (isMatrix(jl[jk])) assert.deepEqual([jl[jk].rows, jl[jk].cols], [cl[k].length, cl[k][0].length], `${what} layer ${l}: ${k}'s shape`);
    }
    cl.heads.forEach((ch, h) => assert.deepEqual(sorted(Object.keys(jl.heads[h]).map(snake)), sorted(Object.keys(ch)), `${what} layer ${l} head ${h}`));
  });
}

test('a pretrained trace (GPT-2 and BERT) is the CLI\'s JSON camelCased plus the table\'s js-only fields', () => {
  for (const name of [GPT2, BERT]) {
    const model = load(name);
    const ids = [1, 2, 3, 4, 5];
    const cli = cliTrace(['run', '--model', join(dir, name), '--ids', ids.join(','), '--layer', '0']);
    const js = model.traceIds(ids, { layer: 0, allWeights: true, logits: true });
    assertCliKeys(js, cli, name);
    if (name === BERT) for (const k of ['tokenType', 'embedNormed', 'transformed']) assert.ok(isMatrix(js[k]), `${name}: ${k}`);
    // without the logits asked for, the T×V matrices are left out (the fields the trace did not keep)
    const short = model.traceIds(ids, { layer: 1, allWeights: false });
    assert.ok(!('logits' in short) && !('probabilities' in short));
    assert.deepEqual(short.layers[0].heads, []);
    // (padding: whether each top id is one past the tokenizer's pieces, issue #36, 5)
    assert.deepEqual(Object.keys(short.top).sort(), ['ids', 'k', 'p', 'padding', 'texts']);
    model.dispose();
  }
});

test('a trained model\'s trace is the CLI\'s JSON camelCased plus the table\'s js-only fields', () => {
  const file = join(REPO_ROOT, 'models', 'coreference.safetensors');
  const sentence = 'The animal didn\'t cross the street because it was too tired.';
  const trainer = engine.loadTrainer(new Uint8Array(readFileSync(file)));
  try {
    assertCliKeys(trainer.trace({ text: sentence }), cliTrace(['run', '--model', file, '--sentence', sentence]), 'coreference');
  } finally {
    trainer.dispose();
  }
});
