// The native CLI (build/attn, or $ATTN_CLI): its JSON format, its table
// format, and its handling of bad arguments (exit code 2, a message on
// stderr, nothing on stdout).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { createEngine } from '../../web/engine.js';
import { CLI, cliRun, cliTrace, tempDir } from './helpers.mjs';

const engine = await createEngine();

const TOP_LEVEL_KEYS = ['config', 'tokens', 'embeddings', 'positional', 'input', 'w_query', 'w_key', 'w_value', 'w_output', 'mask', 'heads', 'concat', 'output'];
const CONFIG_KEYS = ['d_model', 'heads', 'd_head', 'seed', 'positional', 'mask', 'scale'];
const HEAD_KEYS = ['query', 'key', 'value', 'scores', 'scaled', 'row_max', 'row_sum', 'weights', 'output'];

test('the CLI binary exists and --help prints usage with exit code 0', () => {
  assert.ok(existsSync(CLI), `no CLI at ${CLI} (set ATTN_CLI or build build/attn)`);
  const r = cliRun(['--help']);
  assert.equal(r.status, 0);
  assert.match(r.stdout, /usage: attn --sentence/);
  assert.equal(r.stderr, '');
});

test('--format json prints exactly the documented top-level keys, in order', () => {
  const r = cliRun(['--sentence', 'The cat sat.', '--format', 'json']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  const json = JSON.parse(r.stdout);
  assert.deepEqual(Object.keys(json), TOP_LEVEL_KEYS);
  assert.deepEqual(Object.keys(json.tokens[0]), ['text', 'id', 'start', 'end']);
  for (const h of json.heads) assert.deepEqual(Object.keys(h), HEAD_KEYS);
});

test('JSON is the default format', () => {
  const r = cliRun(['--sentence', 'The cat sat.']);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(Object.keys(JSON.parse(r.stdout)), TOP_LEVEL_KEYS);
});

test('config has exactly d_model, heads, d_head, seed, positional, mask, scale with the defaults', () => {
  const json = cliTrace(['--sentence', 'The cat sat.']);
  assert.deepEqual(Object.keys(json.config), CONFIG_KEYS);
  assert.deepEqual(json.config, { d_model: 16, heads: 4, d_head: 4, seed: 42, positional: 'sinusoidal', mask: 'none', scale: true });
});

test('config reflects every flag given', () => {
  const json = cliTrace(['--sentence', 'The cat sat.', '--d-model', '24', '--heads', '3', '--seed', '4294967295',
    '--positional', 'learned', '--mask', 'causal+padding', '--no-scale', '--pad-to', '5']);
  assert.deepEqual(json.config, { d_model: 24, heads: 3, d_head: 8, seed: 4294967295, positional: 'learned', mask: 'causal+padding', scale: false });
  assert.equal(json.tokens.length, 5);
  assert.equal(json.heads.length, 3);
});

test('matrices have the documented shapes and the mask is booleans', () => {
  const json = cliTrace(['--sentence', 'a b c d e', '--d-model', '12', '--heads', '3']);
  const T = 5, C = 12, D = 4;
  const shape = (m) => [m.length, m[0].length];
  for (const key of ['embeddings', 'positional', 'input', 'concat', 'output']) assert.deepEqual(shape(json[key]), [T, C], key);
  for (const key of ['w_query', 'w_key', 'w_value', 'w_output']) assert.deepEqual(shape(json[key]), [C, C], key);
  assert.deepEqual(shape(json.mask), [T, T]);
  assert.ok(json.mask.flat().every((v) => v === true));
  for (const h of json.heads) {
    for (const key of ['query', 'key', 'value', 'output']) assert.deepEqual(shape(h[key]), [T, D], key);
    for (const key of ['scores', 'scaled', 'weights']) assert.deepEqual(shape(h[key]), [T, T], key);
  }
});

test('scaled values (and every matrix entry) are finite numbers, also for masked and unscaled runs', () => {
  for (const extra of [[], ['--mask', 'causal'], ['--no-scale', '--d-model', '64', '--heads', '1'], ['--mask', 'causal+padding', '--pad-to', '12']]) {
    const json = cliTrace(['--sentence', 'The animal didn\'t cross the street because it was too tired.', ...extra]);
    for (const h of json.heads) {
      for (const key of HEAD_KEYS) {
        for (const v of h[key].flat()) assert.ok(typeof v === 'number' && Number.isFinite(v), `${key} value ${v} (${extra.join(' ')})`);
      }
    }
  }
});

test('--pad-to adds tokens with text "[PAD]", id 0, at the end byte offset', () => {
  const sentence = 'naïve cat';
  const json = cliTrace(['--sentence', sentence, '--pad-to', '5', '--mask', 'padding']);
  const bytes = Buffer.byteLength(sentence, 'utf8');
  assert.equal(json.tokens.length, 5);
  assert.deepEqual(json.tokens.slice(2), Array(3).fill({ text: '[PAD]', id: 0, start: bytes, end: bytes }));
  for (const h of json.heads) {
    for (const row of h.weights) assert.deepEqual(row.slice(2), [0, 0, 0]);
  }
});

test('--lowercase lower-cases token texts; --share-heads makes every head\'s weights equal', () => {
  const lower = cliTrace(['--sentence', 'The CAT Éclair ΣΟΦΙΑ', '--lowercase']);
  assert.deepEqual(lower.tokens.map((t) => t.text), ['the', 'cat', 'éclair', 'σοφια']);
  const shared = cliTrace(['--sentence', 'The cat sat on the mat.', '--d-model', '32', '--heads', '4', '--share-heads']);
  for (const h of shared.heads) assert.deepEqual(h.weights, shared.heads[0].weights);
});

test('--format table prints every token and a weight table per head', () => {
  const sentence = 'Le café 猫 sat.';
  const r = cliRun(['--sentence', sentence, '--format', 'table']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.match(r.stdout, /d_model 16, heads 4, d_head 4, seed 42/);
  for (const t of engine.tokenize(sentence)) assert.ok(r.stdout.includes(t.text), `token ${t.text} printed`);
  for (let h = 0; h < 4; h++) assert.match(r.stdout, new RegExp(`head ${h} attention weights`));
  assert.doesNotMatch(r.stdout, /head 4 /);
  assert.throws(() => JSON.parse(r.stdout));
});

test('attn run --model FILE --format table cuts long labels at a character boundary', () => {
  // a text model whose words are longer than the table's label columns (7 and 10 wide), in bytes and characters
  const dir = tempDir('attn-table-');
  try {
    const corpus = path.join(dir, 'corpus.txt');
    writeFileSync(corpus, 'ドラゴンドラゴン は 空を 飛ぶ . Größenwahnsinnig ist der Drache . '.repeat(20));
    const out = path.join(dir, 'm.safetensors');
    const t = cliRun(['train', '--task', 'text', '--corpus', corpus, '--length', '4', '--d-model', '8', '--heads', '2',
      '--layers', '1', '--mlp', '0', '--steps', '1', '--batch', '2', '--out', out]);
    assert.equal(t.status, 0, t.stderr);
    const r = cliRun(['run', '--model', out, '--sentence', 'ドラゴンドラゴン Größenwahnsinnig', '--format', 'table']);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(!r.stdout.includes('\uFFFD'), `the table holds a cut character:\n${r.stdout}`);
    // the row labels 10 characters wide, the column labels 7 (the words are lower-cased)
    assert.match(r.stdout, /^  ドラゴンドラゴン  [01]\.\d{4}/m);
    assert.match(r.stdout, /^größenwahn  [01]\.\d{4}/m);
    assert.match(r.stdout, /^ {11}ドラゴンドラゴ größenw$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const BAD_ARGUMENTS = [
  ['an unknown flag', ['--sentence', 'a b', '--bogus'], /unknown argument "--bogus"/],
  ['a non-numeric --heads', ['--sentence', 'a b', '--heads', 'x'], /--heads expects a whole number/],
  ['--heads with a trailing non-digit', ['--sentence', 'a b', '--heads', '2x'], /--heads/],
  ['--d-model 10 --heads 3', ['--sentence', 'a b', '--d-model', '10', '--heads', '3'], /d_model 10 is not divisible by 3 heads/],
  ['--d-model 0', ['--sentence', 'a b', '--d-model', '0'], /--d-model/],
  ['--d-model above the limit', ['--sentence', 'a b', '--d-model', '4096'], /--d-model/],
  ['a missing --sentence', ['--d-model', '8'], /--sentence is required/],
  ['--sentence without a value', ['--sentence'], /needs a value/],
  ['an empty sentence', ['--sentence', ''], /no tokens/],
  ['a whitespace-only sentence', ['--sentence', ' \t\n '], /no tokens/],
  ['--mask bogus', ['--sentence', 'a b', '--mask', 'bogus'], /mask "bogus"/],
  ['--mask custom (library only)', ['--sentence', 'a b', '--mask', 'custom'], /custom/],
  ['--positional bogus', ['--sentence', 'a b', '--positional', 'bogus'], /positional encoding "bogus"/],
  ['--pad-to 1 with a 3-token sentence', ['--sentence', 'a b c', '--pad-to', '1'], /pad_to 1 is shorter than the sentence's 3 tokens/],
  ['a negative --pad-to', ['--sentence', 'a b', '--pad-to', '-1'], /--pad-to/],
  ['--seed above 2^32 - 1', ['--sentence', 'a b', '--seed', '4294967296'], /--seed/],
  ['--format xml', ['--sentence', 'a b', '--format', 'xml'], /--format expects json or table/],
  ['more heads than dimensions', ['--sentence', 'a b', '--d-model', '4', '--heads', '8'], /heads/],
  // numbers: digits only, the same rule for every flag (strtoll took " 16" and "+16" but not "16 ")
  ['--heads " 16" (a leading space)', ['--sentence', 'a b', '--d-model', '16', '--heads', ' 16'], /--heads expects a whole number from 1 to 1024, got " 16"/],
  ['--heads "+16" (a sign)', ['--sentence', 'a b', '--d-model', '16', '--heads', '+16'], /--heads expects a whole number from 1 to 1024, got "\+16"/],
  ['--heads "16 " (a trailing space)', ['--sentence', 'a b', '--d-model', '16', '--heads', '16 '], /--heads expects a whole number from 1 to 1024, got "16 "/],
  ['--seed "\t7"', ['--sentence', 'a b', '--seed', '\t7'], /--seed expects a whole number/],
  ['--pad-to "+3"', ['--sentence', 'a b', '--pad-to', '+3'], /--pad-to expects a whole number/],
  ['--d-model "1e1"', ['--sentence', 'a b', '--d-model', '1e1'], /--d-model expects a whole number/],
  ['--d-model "0x10"', ['--sentence', 'a b', '--d-model', '0x10'], /--d-model expects a whole number/],
  ['an empty --seed', ['--sentence', 'a b', '--seed', ''], /--seed expects a whole number/],
  // every flag at most once (the last one silently won)
  ['--heads given twice', ['--sentence', 'a b', '--heads', '2', '--heads', '4'], /--heads is given twice/],
  ['--sentence given twice', ['--sentence', 'a b', '--sentence', 'c d'], /--sentence is given twice/],
  ['--no-scale given twice', ['--sentence', 'a b', '--no-scale', '--no-scale'], /--no-scale is given twice/],
  ['--sentence and --sentence-file together', ['--sentence', 'a b', '--sentence-file', '-'], /--sentence or --sentence-file, not both/],
  ['a --sentence-file that does not exist', ['--sentence-file', '/nonexistent/attn-sentence.txt'], /cannot read --sentence-file "\/nonexistent\/attn-sentence.txt"/],
];

for (const [what, args, message] of BAD_ARGUMENTS) {
  test(`${what} exits with code 2, a message on stderr and nothing on stdout`, () => {
    const r = cliRun(args);
    assert.equal(r.signal, null, `not killed by a signal (${r.signal})`);
    assert.equal(r.status, 2, `exit code (stderr: ${r.stderr})`);
    assert.equal(r.stdout, '', 'nothing on stdout');
    assert.match(r.stderr, /^attn: /);
    assert.match(r.stderr, message);
  });
}

test('control characters in token texts are escaped so the JSON stays valid', () => {
  const json = cliTrace(['--sentence', 'bell\u0007 tab\tquote" back\\slash del\u007F']);
  assert.deepEqual(json.tokens.map((t) => t.text), ['bell', '\u0007', 'tab', 'quote', '"', 'back', '\\', 'slash', 'del', '\u007F']);
  assert.equal(json.tokens[1].id, 1);
});

// ---- --sentence-file: text the argument list cannot carry -----------------------------------

/** A temporary file holding `bytes`; returns its path (removed by the caller's cleanup). */
function tempFile(bytes) {
  const dir = tempDir('attn-cli-');
  const file = path.join(dir, 'sentence.txt');
  writeFileSync(file, bytes);
  return { file, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test('--sentence-file PATH gives exactly the output of --sentence with the same text', () => {
  const { file, cleanup } = tempFile(Buffer.from('The cat sat on the mat.', 'utf8'));
  try {
    assert.deepEqual(cliTrace(['--sentence-file', file, '--heads', '2']), cliTrace(['--sentence', 'The cat sat on the mat.', '--heads', '2']));
  } finally {
    cleanup();
  }
});

test('--sentence-file - reads the sentence from stdin', () => {
  const r = spawnSync(CLI, ['--sentence-file', '-', '--heads', '2'], { input: 'didn\u2019t \u{1F408}\u200D\u2B1B\n', encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).tokens.map((t) => t.text), ['didn\u2019t', '\u{1F408}\u200D\u2B1B']);
});

test('NUL bytes, which no argument can hold, reach the tokenizer through a file ([UNK] tokens)', () => {
  const { file, cleanup } = tempFile(Buffer.from('a\0b \0', 'latin1'));
  try {
    const json = cliTrace(['--sentence-file', file]);
    assert.deepEqual(json.tokens.map((t) => [t.text, t.id]), [['a', json.tokens[0].id], ['\0', 1], ['b', json.tokens[2].id], ['\0', 1]]);
    assert.deepEqual(json.tokens.map((t) => [t.start, t.end]), [[0, 1], [1, 2], [2, 3], [4, 5]]);
  } finally {
    cleanup();
  }
});

test('a sentence file above 65536 bytes is refused with the limit (read no further), one at the limit is fine', () => {
  const big = tempFile(Buffer.alloc(1 << 20, 'a'));  // larger than one argument may be (128 KiB on Linux)
  const edge = tempFile(Buffer.alloc(65536, 'a'));
  try {
    const r = cliRun(['--sentence-file', big.file]);
    assert.equal(r.status, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^attn: .*more than 65536 bytes, above the limit of 65536 bytes/);
    assert.equal(cliTrace(['--sentence-file', edge.file, '--d-model', '4', '--heads', '1']).tokens.length, 1);
  } finally {
    big.cleanup();
    edge.cleanup();
  }
});
