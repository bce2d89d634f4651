// `attn run --model DIR` on Hugging Face folders (tests/pretrained/make_checkpoints.py):
// the native forward against the independent float64 PyTorch reference, the JSON's
// shape, and every bad folder refused with its own message (exit code 2).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync, truncateSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { cliRun, tempDir } from './helpers.mjs';
import { checkpointsDir, compareToGolden, goldenNames, goldenOf, gpt2ConfigText, gpt2Header, overflowingGpt2, GPT2_TOKENIZER } from './pretrained.mjs';

const root = checkpointsDir();

function runJson(args) {
  const r = cliRun(['run', ...args]);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** A copy of a checkpoint folder to break. */
function copyOf(name) {
  const dir = tempDir('attn-hub-bad-');
  cpSync(path.join(root, name), dir, { recursive: true });
  return dir;
}

function refused(args, message) {
  const r = cliRun(['run', ...args]);
  assert.equal(r.status, 2, `exit ${r.status}: ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, message);
}

test('attn run --model DIR matches the float64 PyTorch reference on every test checkpoint', () => {
  for (const name of goldenNames()) {
    const worst = compareToGolden(name, (ids) => {
      const json = runJson(['--model', path.join(root, name), '--ids', ids.join(',')]);
      return { weights: (l, h) => json.layers[l].heads[h].weights, logits: json.logits };
    });
    assert.ok(worst < 1e-4, `${name}: ${worst}`);
  }
});

test('the JSON of a Hub folder has the family, the trace of every layer and the top-5 next tokens (GPT-2)', () => {
  const ids = goldenOf('gpt2').sequences[0].ids;
  const json = runJson(['--model', path.join(root, 'gpt2'), '--ids', ids.join(',')]);
  assert.equal(json.config.family, 'gpt2');
  assert.equal(json.layers.length, 2);
  for (const layer of json.layers) {
    for (const key of ['input', 'normed', 'heads', 'concat', 'output']) assert.ok(key in layer, key);
    assert.equal(layer.heads.length, 3);
  }
  assert.equal(json.logits.length, ids.length);
  assert.equal(json.probabilities[0].length, 96);
  assert.equal(json.top_next.length, ids.length);
  for (const [t, top] of json.top_next.entries()) {
    assert.equal(top.length, 5);
    const sorted = [...json.probabilities[t]].sort((a, b) => b - a);
    top.forEach((c, k) => assert.ok(Math.abs(c.probability - sorted[k]) < 1e-6 && json.probabilities[t][c.id] === c.probability));
  }
});

test('--layer K traces one layer only; the logits stay those of the whole model', () => {
  const ids = goldenOf('bert').sequences[0].ids;
  const all = runJson(['--model', path.join(root, 'bert'), '--ids', ids.join(',')]);
  const one = runJson(['--model', path.join(root, 'bert'), '--ids', ids.join(','), '--layer', '1']);
  assert.equal(one.layers[0].heads.length, 0);
  assert.deepEqual(one.layers[1].heads, all.layers[1].heads);
  assert.deepEqual(one.logits, all.logits);
  refused(['--model', path.join(root, 'bert'), '--ids', '2,3', '--layer', '2'], /--layer 2 is past the model's 2 layers/);
});

test('a folder without config.json is refused', () => {
  const dir = copyOf('gpt2');
  rmSync(path.join(dir, 'config.json'));
  refused(['--model', dir, '--ids', '1,2'], /no config\.json in/);
});

test('a folder without model.safetensors is refused', () => {
  const dir = copyOf('gpt2');
  rmSync(path.join(dir, 'model.safetensors'));
  refused(['--model', dir, '--ids', '1,2'], /no model\.safetensors in/);
});

test('a safetensors file cut inside its header is refused', () => {
  const dir = copyOf('bert');
  truncateSync(path.join(dir, 'model.safetensors'), 100);
  refused(['--model', dir, '--ids', '2,3'], /the header needs \d+ bytes; 100 were given/);
});

test('a safetensors file cut inside its data is refused, naming the tensor', () => {
  const dir = copyOf('gpt2-f16');
  const file = path.join(dir, 'model.safetensors');
  truncateSync(file, statSync(file).size - 1000);
  refused(['--model', dir, '--ids', '1,2'], /the file ends at byte \d+ but tensor '[^']+' needs bytes/);
});

test('an unknown architecture is refused by name', () => {
  const dir = copyOf('gpt2');
  const config = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8'));
  config.architectures = ['MistralForCausalLM'];
  config.model_type = 'mistral';
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  refused(['--model', dir, '--ids', '1,2'], /MistralForCausalLM is not supported: this page runs GPT-2, BERT, Llama, Qwen2 and Qwen3 models/);
});

test('a config whose vocabulary disagrees with the weights is refused', () => {
  const dir = copyOf('bert-mlm');
  const config = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8'));
  config.vocab_size = 97;
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  refused(['--model', dir, '--ids', '2,3'], /has 96 rows \(its vocabulary\) but config\.json's vocab_size is 97/);
});

test('ids outside the vocabulary or past the context, and --ids with a checkpoint file, are refused', () => {
  refused(['--model', path.join(root, 'gpt2'), '--ids', '1,96'], /token id 96 is outside the vocabulary of 96/);
  refused(['--model', path.join(root, 'gpt2'), '--ids', Array(33).fill(1).join(',')], /33 tokens; this model reads at most 32/);
  refused(['--model', path.join(root, 'gpt2'), '--ids', '1,,2'], /--ids expects a whole number/);
  refused(['--model', path.join(root, 'gpt2', 'config.json'), '--ids', '1'], /--ids needs a Hugging Face model folder/);
});


test('a GPT-2 folder with the Hub\'s real tokenizer.json: a sentence end to end, against the reference', () => {
  const dir = copyOf('gpt2-vocab');
  cpSync(GPT2_TOKENIZER, path.join(dir, 'tokenizer.json'));
  const sentence = "The animal didn't cross the street because it was too tired.";
  const expected = goldenOf('gpt2-vocab').sequences[0].ids;
  const worst = compareToGolden('gpt2-vocab', (ids) => {
    const args = ids.join(',') === expected.join(',') ? ['--sentence', sentence] : ['--ids', ids.join(',')];
    const json = runJson(['--model', dir, ...args]);
    if (args[0] === '--sentence') {
      assert.deepEqual(json.tokens.map((t) => t.id), expected);
      assert.deepEqual(json.tokens.map((t) => sentence.slice(t.start, t.end)).join(''), sentence);
      assert.equal(json.top_next.length, expected.length);
      for (const top of json.top_next) for (const c of top) assert.equal(typeof c.token, 'string');
    }
    return { weights: (l, h) => json.layers[l].heads[h].weights, logits: json.logits };
  });
  assert.ok(worst < 1e-4);
});

test('the Winograd sentence through attn run with the real tokenizer: the ids of an independent GPT-2 encoder', () => {
  // gpt-3-encoder: its own encoder.json + vocab.bpe and its own JS BPE, not the Hub's tokenizer.json
  const { encode } = createRequire(import.meta.url)('gpt-3-encoder');
  const dir = copyOf('gpt2-vocab');
  cpSync(GPT2_TOKENIZER, path.join(dir, 'tokenizer.json'));
  const sentence = "The trophy didn't fit in the suitcase because it was too big";
  const json = runJson(['--model', dir, '--sentence', sentence]);
  assert.deepEqual(json.tokens.map((t) => t.id), encode(sentence));
  // the pieces as the page shows them: GPT-2's "Ġ" as a marked space
  assert.deepEqual(json.tokens.slice(0, 3).map((t) => t.text), ['The', '\u2423trophy', '\u2423didn']);
});

test('a BERT sentence with [MASK]: [CLS] and [SEP] added, the top-5 fills at the mask', () => {
  const json = runJson(['--model', path.join(root, 'bert-mlm'), '--sentence', 'the cat sat on the [MASK] .']);
  assert.equal(json.config.family, 'bert');
  const texts = json.tokens.map((t) => t.text);
  assert.equal(texts[0], '[CLS]');
  assert.equal(texts.at(-1), '[SEP]');
  const mask = texts.indexOf('[MASK]');
  assert.ok(mask > 0);
  assert.equal(json.top_fill.length, 1);
  assert.equal(json.top_fill[0].position, mask);
  assert.equal(json.top_fill[0].choices.length, 5);
  const best = Math.max(...json.probabilities[mask]);
  assert.equal(json.top_fill[0].choices[0].probability, best);
});

test('a sentence for a folder without tokenizer files is refused, naming what is missing', () => {
  const dir = copyOf('bert');
  rmSync(path.join(dir, 'vocab.txt'));
  refused(['--model', dir, '--sentence', 'hello'], /no tokenizer in .*BERT needs vocab\.txt or tokenizer\.json/);
  refused(['--model', path.join(root, 'gpt2'), '--sentence', 'hello'], /GPT-2 needs tokenizer\.json, or vocab\.json and merges\.txt/);
});

test('--format table cuts a long label at a character boundary, never inside a UTF-8 character', () => {
  // GPT-2 writes "ドラゴン" as one token of 12 bytes: the weights table's label column is 10 wide
  const dir = copyOf('gpt2-vocab');
  cpSync(GPT2_TOKENIZER, path.join(dir, 'tokenizer.json'));
  const r = cliRun(['run', '--model', dir, '--sentence', 'A dragon: ドラゴン ————', '--format', 'table']);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(!r.stdout.includes('\uFFFD'), `the table holds a cut character:\n${r.stdout}`);
  assert.match(r.stdout, /^ *ドラゴン  [01]\.\d{4}/m);
});

test('a model too large for the engine is refused from config.json alone, before the weights are opened', () => {
  // gpt2-xl's sizes (1.56 G parameters, 6.2 GB): the folder has no model.safetensors, and needs none to be refused
  const dir = tempDir('attn-hub-xl-');
  writeFileSync(path.join(dir, 'config.json'), gpt2ConfigText({ V: 50257, T: 1024, C: 1600, L: 48, H: 25 }));
  const r = cliRun(['run', '--model', dir, '--ids', '1,2']);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /config\.json: the model has 1557611200 parameters \(6\.2 GB as float32\), above the 3\.2 GB this engine holds/);
  rmSync(dir, { recursive: true, force: true });
});

test('a safetensors header that describes more data than the file holds is refused before anything is allocated', () => {
  // 34 KB of header describing a 2.6 GB GPT-2 (within the native limit): its parameters were allocated and zeroed first
  const sizes = { V: 50257, T: 1024, C: 1280, L: 30, H: 20 };
  const dir = tempDir('attn-hub-empty-');
  writeFileSync(path.join(dir, 'config.json'), gpt2ConfigText(sizes));
  const { header, fileBytes } = gpt2Header(sizes);
  writeFileSync(path.join(dir, 'model.safetensors'), header);
  const t0 = Date.now();
  const r = cliRun(['run', '--model', dir, '--ids', '1,2']);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, new RegExp(`the file ends at byte ${header.length} but tensor 'wte\\.weight' needs bytes .*the header says ${fileBytes} bytes`));
  assert.ok(Date.now() - t0 < 5000, `refused in ${Date.now() - t0} ms`);
  rmSync(dir, { recursive: true, force: true });
});

test('a vocabulary larger than the tokenizer: padding ids are valid logits with no text, shown as <pad ID>', () => {
  // nanoGPT's 50304 ids with GPT-2's 50257 pieces; a BERT vocab.txt of 90 pieces for 96 ids: in both
  // the padding ids are the likeliest (make_checkpoints.py), and every trace's top 5 holds them
  const dir = copyOf('gpt2-padded');
  cpSync(GPT2_TOKENIZER, path.join(dir, 'tokenizer.json'));
  const gpt2 = runJson(['--model', dir, '--sentence', 'Hello world']);
  for (const top of gpt2.top_next) {
    for (const c of top) {
      assert.equal(c.id >= 50257, c.padding === true, JSON.stringify(c));
      if (c.padding) assert.equal(c.token, `<pad ${c.id}>`);
    }
  }
  assert.ok(gpt2.top_next[0].some((c) => c.padding));
  const table = cliRun(['run', '--model', dir, '--sentence', 'Hello world', '--format', 'table']);
  assert.equal(table.status, 0, table.stderr);
  assert.match(table.stdout, /<pad 5\d{4}>/);
  const bert = runJson(['--model', path.join(root, 'bert-padded'), '--sentence', 'the cat sat on the [MASK] .']);
  assert.equal(bert.top_fill.length, 1);
  assert.deepEqual(bert.top_fill[0].choices.map((c) => c.token).sort(), bert.top_fill[0].choices.map((c) => `<pad ${c.id}>`).sort());
  // ids given as input: a padding id is a token of the model, named the same way
  const ids = runJson(['--model', path.join(root, 'bert-padded'), '--ids', '2,93,3']);
  assert.deepEqual(ids.tokens.map((t) => t.text), ['[CLS]', '<pad 93>', '[SEP]']);
});

test('finite weights whose activations overflow: exit 2 naming where, never nan in the JSON', () => {
  // head 2 of layer 1's queries and keys times 1e20: its scores (near 1e40) overflow float32; the
  // JSON held bare nan (invalid) with exit 0
  const dir = copyOf('gpt2');
  const file = path.join(dir, 'model.safetensors');
  writeFileSync(file, overflowingGpt2(readFileSync(file)));
  for (const format of ['json', 'table']) {
    const r = cliRun(['run', '--model', dir, '--ids', '5,17,42,3', '--format', format]);
    assert.equal(r.status, 2, `${format}: exit ${r.status}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /layer 1, the attention scores of head 2 are not finite/);
  }
  rmSync(dir, { recursive: true, force: true });
});
