// An F16/BF16 checkpoint kept 16-bit in the wasm engine's memory against the same file loaded
// as float32 (openCheckpoint's {float32}), in Node. Run by hand, not a test:
//   python3 tests/pretrained/make_checkpoints.py DIR --only smollm2-shape
//   node bench/half.mjs DIR/smollm2-shape 16|32 [repeat]
// One process per storage (the wasm memory only grows): prints one JSON line with the
// parameters' bytes, the wasm memory after the load and at the end, and the traced forward
// (traceIds: layer 0's heads and every layer's vectors and weights, the T×V logits) at
// T = 16 and 128, the best and the median of `repeat` after two warm-up calls (V8 tiers up late:
// docs/performance.md). bench/half_bench.cpp measures the same natively.

import { readFileSync, openSync, readSync, closeSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine } from '../web/engine.js';

const [dir, storage = '16', repeatArg = '5'] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node bench/half.mjs DIR 16|32 [repeat]');
  process.exit(2);
}
const repeat = Number(repeatArg);

// a SentencePiece-style tokenizer.json with a piece for every id (the bench gives ids; the
// trace names its top tokens)
const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
const vocab = {};
const pieces = ['<unk>', '<s>', '</s>', '\u2581', ...'abcdefghijklmnopqrstuvwxyz'];
for (let i = 0; pieces.length < config.vocab_size; i++) pieces.push(`x${i}`);
pieces.forEach((p, i) => { vocab[p] = i; });
const tokenizerJson = JSON.stringify({
  version: '1.0', added_tokens: [], pre_tokenizer: null, post_processor: null, decoder: null,
  normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '\u2581' }, { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' }] },
  model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: true, byte_fallback: false, vocab, merges: [] },
});

const engine = await createEngine();
const file = join(dir, 'model.safetensors');
const fd = openSync(file, 'r');
const read = (begin, end) => {
  const b = new Uint8Array(end - begin);
  readSync(fd, b, 0, b.length, begin);
  return b;
};
const size = statSync(file).size;
const headerBytes = engine.safetensorsHeaderSize(read(0, 8));
const t0 = performance.now();
const loader = engine.openCheckpoint(readFileSync(join(dir, 'config.json'), 'utf8'), read(0, Math.min(size, headerBytes)), size, { float32: storage === '32' });
for (const { begin, end } of loader.needed) {
  for (let a = begin; a < end; a += loader.stagingBytes) loader.feed(a, read(a, Math.min(end, a + loader.stagingBytes)));
}
closeSync(fd);
const model = loader.finish({ tokenizerJson });
const out = { storage: model.storage, load_s: +((performance.now() - t0) / 1000).toFixed(2), parameter_bytes: model.parameterBytes, wasm_memory_after_load: engine.memoryBytes() };
for (const T of [16, 128]) {
  const ids = Array.from({ length: T }, (_, t) => (t * 7 + 3) % 30);
  const times = [];
  for (let r = 0; r < repeat + 2; r++) {
    const a = performance.now();
    model.traceIds(ids, { layer: 0, logits: true });
    if (r >= 2) times.push(performance.now() - a);
  }
  times.sort((x, y) => x - y);
  out[`trace_T${T}_ms`] = { best: +times[0].toFixed(1), median: +times[Math.floor(times.length / 2)].toFixed(1) };
}
out.wasm_memory = engine.memoryBytes();
console.log(JSON.stringify(out));
model.dispose();
engine.dispose();
