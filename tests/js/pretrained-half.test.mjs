// 16-bit weights kept 16-bit in the wasm engine's memory (HubLoader's keep_16bit, the default;
// openCheckpoint(…, {float32: true}) stores everything as float32): every F16/BF16 test
// checkpoint the engine can give a tokenizer to traces, generates, and steps by hand exactly as
// the same file loaded as float32, bit for bit, with about half the parameter bytes; and so does
// the same file with its 16-bit values spread over many small allocations (chunkBytes).
// (gpt2-f16 and gpt2-bf16 have 96 tokens, fewer than a byte-level BPE's 256: GPT-2's 16-bit
// weights are tested on gpt2-vocab-f16 / -bf16, GPT-2's vocabulary with its real tokenizer;
// llama3-bf16 gets a SentencePiece-style tokenizer.json of its 96 tokens. Qwen2 and Qwen3 take
// only a byte-level BPE, 256 tokens at least: qwen2 (F16) and qwen3 (BF16) are tested natively,
// tests/core/test_half.cpp.)

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine } from '../../web/engine.js';
import { hubFolders } from './pretrained.mjs';

const CHECKPOINTS = {
  'gpt2-vocab-f16': 'F16', 'gpt2-vocab-bf16': 'BF16', 'bert-f16': 'F16', 'bert-bf16': 'BF16',
  'llama3-bf16': 'BF16',
};
const MODERN = new Set(['llama3-bf16']);

// a SentencePiece-style BPE of the modern test checkpoints' 96 tokens (no merges: letters and ▁)
const SMALL_TOKENIZER = (() => {
  const vocab = {};
  const letters = [...'abcdefghijklmnopqrstuvwxyz'];
  const pieces = ['<unk>', '<s>', '</s>', '\u2581', ...letters, ...letters.map((c) => `\u2581${c}`), ...letters.map((c) => `${c}${c}`)];
  for (let i = 0; pieces.length < 96; i++) pieces.push(`x${i}`);
  pieces.forEach((p, i) => { vocab[p] = i; });
  return JSON.stringify({
    version: '1.0', added_tokens: [], pre_tokenizer: null, post_processor: null, decoder: null,
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '\u2581' }, { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' }] },
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: true, byte_fallback: false, vocab, merges: [] },
  });
})();

let engine;
let dir;
before(async () => {
  engine = await createEngine();
  dir = hubFolders(Object.keys(CHECKPOINTS), { withTokenizer: ['gpt2-vocab-f16', 'gpt2-vocab-bf16'] });
});
after(() => {
  engine?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const text = (name, file) => (existsSync(join(dir, name, file)) ? readFileSync(join(dir, name, file), 'utf8') : '');

/** info.halfChunks: how many allocations the loader put the 16-bit values in. */
function load(name, float32, chunkBytes = undefined, info = {}) {
  const bytes = new Uint8Array(readFileSync(join(dir, name, 'model.safetensors')));
  const loader = engine.openCheckpoint(text(name, 'config.json'), bytes.subarray(0, engine.safetensorsHeaderSize(bytes.subarray(0, 8))), bytes.length, { float32, chunkBytes });
  const storage = loader.storage;
  const bytesBefore = loader.parameterBytes;
  info.halfChunks = loader.halfChunks;
  for (const { begin, end } of loader.needed) {
    for (let a = begin; a < end; a += loader.stagingBytes) loader.feed(a, bytes.subarray(a, Math.min(end, a + loader.stagingBytes)));
  }
  const model = loader.finish({
    tokenizerJson: MODERN.has(name) ? SMALL_TOKENIZER : text(name, 'tokenizer.json'),
    vocabTxt: text(name, 'vocab.txt'), tokenizerConfigJson: text(name, 'tokenizer_config.json'),
  });
  assert.equal(model.storage, storage);
  assert.equal(model.parameterBytes, bytesBefore);
  return model;
}

function ids(model, n, seed) {
  let s = seed;
  return Array.from({ length: n }, () => { s = (s * 1103515245 + 12345) % 2147483648; return s % model.config.vocab; });
}

const SENTENCE = 'the cat sat on the mat';
// BERT's loss is its guess at a masked word
const learnText = (name) => (name.startsWith('bert') ? 'the cat [MASK] on the mat' : SENTENCE);

for (const [name, format] of Object.entries(CHECKPOINTS)) {
  test(`${name}: stored ${format}, about half the bytes, every traced number the float32 load's bit for bit`, () => {
    const a = load(name, true);
    const b = load(name, false);
    try {
      assert.equal(a.storage, 'F32');
      assert.equal(b.storage, format);
      assert.ok(b.parameterBytes < 0.6 * a.parameterBytes, `${b.parameterBytes} vs ${a.parameterBytes}`);
      for (let layer = 0; layer < a.config.layers; layer++) {
        const x = ids(a, 11, 7 + layer);
        assert.deepStrictEqual(b.traceIds(x, { layer, logits: true }), a.traceIds(x, { layer, logits: true }));
      }
      assert.deepStrictEqual(b.trace(SENTENCE, { layer: 1, logits: true }), a.trace(SENTENCE, { layer: 1, logits: true }));
      // a long trace: the whole context (every row-tile count the products branch on)
      const long = ids(a, a.config.context, 3);
      assert.deepStrictEqual(b.traceIds(long, { layer: a.config.layers - 1 }), a.traceIds(long, { layer: a.config.layers - 1 }));
      assert.deepStrictEqual(b.forward(long.slice(0, 40)), a.forward(long.slice(0, 40)));
    } finally {
      a.dispose();
      b.dispose();
    }
  });

  test(`${name}: Learn's backward, a step by hand and its undo are the float32 load's, bit for bit`, () => {
    const a = load(name, true);
    const b = load(name, false);
    try {
      for (const layer of [0, a.config.layers - 1]) {
        assert.deepStrictEqual(b.backwardTrace({ text: learnText(name), layer }), a.backwardTrace({ text: learnText(name), layer }));
      }
      const before = b.trace(SENTENCE, { layer: 0, logits: true });
      const sa = a.sgdStep({ text: learnText(name), lr: 0.05, layer: 0, head: 1 });
      const sb = b.sgdStep({ text: learnText(name), lr: 0.05, layer: 0, head: 1 });
      assert.deepStrictEqual(sb, sa);
      assert.deepStrictEqual(b.trace(SENTENCE, { layer: 0, logits: true }), a.trace(SENTENCE, { layer: 0, logits: true }));
      b.undoStep();
      assert.deepStrictEqual(b.trace(SENTENCE, { layer: 0, logits: true }), before);
    } finally {
      a.dispose();
      b.dispose();
    }
  });

  test(`${name}: spread over many 256-byte chunks, the same bytes and every traced, generated and stepped number of one chunk and of float32`, () => {
    const [oneInfo, manyInfo, f32Info] = [{}, {}, {}];
    const a = load(name, true, undefined, f32Info);
    const one = load(name, false, undefined, oneInfo);
    const many = load(name, false, 256, manyInfo);
    try {
      assert.equal(f32Info.halfChunks, 0);
      assert.equal(oneInfo.halfChunks, 1);
      assert.ok(manyInfo.halfChunks >= 2 * a.config.layers, `${manyInfo.halfChunks} chunks`);
      assert.equal(many.storage, format);
      assert.equal(many.parameterBytes, one.parameterBytes);
      for (const layer of [0, a.config.layers - 1]) {
        const x = ids(a, 11, 5 + layer);
        const want = a.traceIds(x, { layer, logits: true });
        assert.deepStrictEqual(one.traceIds(x, { layer, logits: true }), want);
        assert.deepStrictEqual(many.traceIds(x, { layer, logits: true }), want);
      }
      assert.deepStrictEqual(many.forward(ids(a, 30, 9)), a.forward(ids(a, 30, 9)));
      if (!name.startsWith('bert')) {
        let ta = SENTENCE;
        let tm = SENTENCE;
        let ga = [];
        let gm = [];
        for (let step = 0; step < 3; step++) {
          const ra = a.generate(ta, { generated: ga, logits: true });
          const rm = many.generate(tm, { generated: gm, logits: true });
          assert.deepStrictEqual(rm, ra);
          [ta, ga, tm, gm] = [ra.sentence, ra.generated, rm.sentence, rm.generated];
        }
      }
      // a step promotes its layer to float32 across the chunks it lies in; its undo restores the numbers
      const before = many.trace(SENTENCE, { layer: 0, logits: true });
      assert.deepStrictEqual(many.sgdStep({ text: learnText(name), lr: 0.05, layer: 0, head: -1 }),
        a.sgdStep({ text: learnText(name), lr: 0.05, layer: 0, head: -1 }));
      assert.deepStrictEqual(many.trace(SENTENCE, { layer: 0, logits: true }), a.trace(SENTENCE, { layer: 0, logits: true }));
      many.undoStep();
      assert.deepStrictEqual(many.trace(SENTENCE, { layer: 0, logits: true }), before);
    } finally {
      a.dispose();
      one.dispose();
      many.dispose();
    }
  });

  if (name.startsWith('bert')) continue;  // BERT does not generate
  test(`${name}: generation with the KV cache is the float32 load's, bit for bit`, () => {
    const a = load(name, true);
    const b = load(name, false);
    try {
      let ga = [];
      let gb = [];
      let ta = SENTENCE;
      let tb = SENTENCE;
      for (let step = 0; step < 6; step++) {
        const ra = a.generate(ta, { generated: ga, logits: true });
        const rb = b.generate(tb, { generated: gb, logits: true });
        assert.deepStrictEqual(rb, ra);
        ga = ra.generated;
        gb = rb.generated;
        ta = ra.sentence;
        tb = rb.sentence;
      }
    } finally {
      a.dispose();
      b.dispose();
    }
  });
}
