// The engine's tokenizer is the native one: for Unicode sentences of many
// scripts and emoji, engine.tokenize() and engine.run().tokens equal the CLI's
// JSON tokens (text, id, UTF-8 byte offsets), and startChar/endChar are UTF-16
// offsets into the JS string.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../web/engine.js';
import { cliTrace, plainTokens } from './helpers.mjs';

const engine = await createEngine();
const utf8 = new TextEncoder();

const SENTENCES = [
  ['precomposed accents', 'Le café est naïve, déjà vu à Zürich.'],
  ['combining accents', 'Le cafe\u0301 est nai\u0308ve, de\u0301ja\u0300 vu.'],
  ['CJK without spaces', '猫が好きです。東京タワー、大阪！'],
  ['Korean and Chinese', '나는 고양이를 좋아해 我喜欢猫'],
  ['Arabic (right-to-left)', 'مرحبا بالعالم، كيف حالك؟'],
  ['Hebrew (right-to-left) with points', 'שָׁלוֹם עוֹלָם! מה שלומך?'],
  ['mixed left-to-right and right-to-left', 'He said שלום and مرحبا then left.'],
  ['emoji ZWJ sequences', 'The 🐈‍⬛ met 👩‍👩‍👧‍👦 and 🧑‍💻 today'],
  ['emoji skin tones', 'Nice 👍🏽 👋🏿 🙌🏻!'],
  ['flags (regional indicator pairs)', 'Flags: 🇫🇷🇩🇪 🇯🇵 and 🏴󠁧󠁢󠁳󠁣󠁴󠁿 here'],
  ['keycaps', 'Press 1️⃣ then #️⃣ and 9⃣.'],
  ['straight and curly apostrophes', "I didn't know it wasn’t 'quoted' o’clock"],
  ['hyphens (ASCII, U+2010, U+2011)', 'well-known state‐of‐the‐art non‑breaking -dash- x--y'],
  ['punctuation runs', 'Really?! Yes!!! ... (maybe) "quoted" [x]{y}'],
  ['tabs and newlines', 'line one\tcol\nline two\r\n\tindented  end'],
  ['digits and decimals', 'Pi is 3.14, e is 2.718 and ½ is 0.5 or ²'],
  ['Cyrillic and Greek capitals', 'Привет МИР ΣΟΦΙΑ Αθήνα'],
  ['Devanagari and Thai', 'नमस्ते दुनिया। สวัสดีครับ'],
  ['emoji with variation selectors', 'I ❤️ tea ☕️ and ✌︎ peace'],
  ['currency and math symbols', 'Costs €5 or $3 × 2 ÷ 4 ≥ 1 → done'],
  ['a lone zero-width joiner and non-breaking spaces', 'a\u200Db c\u00A0d e\u3000f'],
  ['control characters become [UNK]', 'bell\u0007ring and del\u007F here'],
  ['single punctuation', '!'],
  ['astral letters (math alphanumerics, Gothic)', '𝐀𝐁𝐂 𐌰𐌱𐌲 done'],
  ['CJK ideographs, kana runs, an extension-B ideograph', '猫はマットの上に座った。東京タワーはtall 𠮷野家'],
];

test('each CJK ideograph is its own token in wasm too, kana runs stay words', () => {
  assert.deepEqual(engine.tokenize('猫はマットの上に座った').map((t) => t.text), ['猫', 'は', 'マット', 'の', '上', 'に', '座', 'った']);
});

/** Checks the UTF-16 offsets and that they agree with the UTF-8 byte offsets. */
function assertCharOffsets(sentence, tokens) {
  for (const [i, t] of tokens.entries()) {
    assert.ok(Number.isInteger(t.startChar) && Number.isInteger(t.endChar), `token ${i} has integer char offsets`);
    assert.ok(t.startChar >= 0 && t.startChar <= t.endChar && t.endChar <= sentence.length, `token ${i} char offsets in range`);
    assert.equal(sentence.slice(t.startChar, t.endChar), t.text, `token ${i}: slice(startChar, endChar) is its text`);
    assert.equal(utf8.encode(sentence.slice(0, t.startChar)).length, t.start, `token ${i}: startChar matches byte start`);
    assert.equal(utf8.encode(sentence.slice(0, t.endChar)).length, t.end, `token ${i}: endChar matches byte end`);
  }
}

for (const [name, sentence] of SENTENCES) {
  test(`${name}: engine.tokenize and run().tokens equal the native tokens, and UTF-16 offsets slice each token`, () => {
    const native = cliTrace(['--sentence', sentence, '--d-model', '4', '--heads', '1']).tokens;
    assert.ok(native.length > 0);
    const tokens = engine.tokenize(sentence);
    assert.deepEqual(plainTokens(tokens), native, 'engine.tokenize differs from the CLI');
    const traceTokens = engine.run({ sentence, dModel: 4, heads: 1 }).tokens;
    assert.deepEqual(plainTokens(traceTokens), native, 'engine.run().tokens differs from the CLI');
    assertCharOffsets(sentence, tokens);
    assertCharOffsets(sentence, traceTokens);
    assert.deepEqual(traceTokens, tokens, 'run().tokens and tokenize() agree including char offsets');
  });
}

test('lowercase tokens equal the native --lowercase tokens and keep the original offsets', () => {
  for (const [, sentence] of SENTENCES) {
    const native = cliTrace(['--sentence', sentence, '--d-model', '4', '--heads', '1', '--lowercase']).tokens;
    const tokens = engine.tokenize(sentence, { lowercase: true });
    assert.deepEqual(plainTokens(tokens), native, `lowercase tokens of ${JSON.stringify(sentence)}`);
    assert.deepEqual(plainTokens(engine.run({ sentence, dModel: 4, heads: 1, lowercase: true }).tokens), native);
    const original = engine.tokenize(sentence);
    assert.deepEqual(
      tokens.map((t) => [t.start, t.end, t.startChar, t.endChar]),
      original.map((t) => [t.start, t.end, t.startChar, t.endChar]),
      'lower-casing does not move token boundaries',
    );
  }
});

test('emoji sequences, flags and keycaps are single tokens, never split inside a code point', () => {
  const texts = (s) => engine.tokenize(s).map((t) => t.text);
  assert.deepEqual(texts('🐈‍⬛'), ['🐈‍⬛']);
  assert.deepEqual(texts('👍🏽'), ['👍🏽']);
  assert.deepEqual(texts('🇫🇷🇩🇪'), ['🇫🇷', '🇩🇪']);
  assert.deepEqual(texts('1️⃣'), ['1️⃣']);
  assert.deepEqual(texts("didn't well-known didn’t"), ["didn't", 'well-known', 'didn’t']);
  assert.deepEqual(texts('Really?!'), ['Really', '?', '!']);
  assert.deepEqual(texts('cafe\u0301'), ['cafe\u0301']);
});

test('control characters get the [UNK] id 1 and other tokens ids in 2..32767', () => {
  const tokens = engine.tokenize('a\u0007b');
  assert.deepEqual(tokens.map((t) => t.text), ['a', '\u0007', 'b']);
  assert.equal(tokens[1].id, 1);
  for (const [, sentence] of SENTENCES) {
    for (const t of engine.tokenize(sentence)) {
      if (t.id !== 1) assert.ok(t.id >= 2 && t.id < engine.info.vocabSize, `id ${t.id} of ${JSON.stringify(t.text)}`);
    }
  }
});

test('a NUL character inside a JS string is kept as an [UNK] token, not treated as the end of the sentence', () => {
  const tokens = engine.tokenize('a\u0000b c');
  assert.deepEqual(tokens.map((t) => [t.text, t.start, t.end, t.startChar, t.endChar]), [
    ['a', 0, 1, 0, 1], ['\u0000', 1, 2, 1, 2], ['b', 2, 3, 2, 3], ['c', 4, 5, 4, 5],
  ]);
  assert.equal(tokens[1].id, 1);
});
