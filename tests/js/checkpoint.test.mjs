// Hostile checkpoints through engine.loadTrainer (wasm) and hostile files
// through the CLI (build/attn, or $ATTN_CLI): a vocabulary that does not fit
// the config, a step or settings out of range, a small file claiming a large
// model (the wasm memory must not grow by the model's size), inputs without
// an end (/dev/zero) or too large, and an --out that cannot be written.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, existsSync, ftruncateSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createEngine } from '../../web/engine.js';
import { cliRun, tempDir } from './helpers.mjs';

const { default: factory } = await import('../../web/generated/attention_core.node.cjs');
const engine = await createEngine();
const tmp = tempDir('attn-checkpoint-');

/** .safetensors bytes from a header object and the data bytes after it. */
function safetensors(header, data = new Uint8Array(0)) {
  let json = JSON.stringify(header);
  while ((8 + json.length) % 8 !== 0) json += ' ';
  const head = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + head.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(head.length), true);
  out.set(head, 8);
  out.set(data, 8 + head.length);
  return out;
}

function headerOf(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return { header: JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))), data: bytes.subarray(8 + n) };
}

/** The same file with its __metadata__ edited by `edit(metadata)`. */
function withMetadata(bytes, edit) {
  const { header, data } = headerOf(bytes);
  edit(header.__metadata__);
  return safetensors(header, data);
}

function expectCode(call, code, message) {
  assert.throws(call, (e) => {
    assert.equal(e.code, code, e.message);
    if (message) assert.match(e.message, message);
    return true;
  });
}

test('a small file whose config claims a large model is refused without growing the wasm memory by its size', async () => {
  // 12 layers of d_model 512 with an MLP of 2048: 37.7 M parameters (151 MB), no tensors at all
  const eng = await createEngine({ moduleFactory: factory });
  const config = { vocab: 2, context: 512, layers: 12, d_model: 512, heads: 8, mlp: 2048, layernorm: true, positional: 'learned', causal: false, scale: true, tied: false };
  const bytes = safetensors({ __metadata__: { config: JSON.stringify(config), vocabulary: '["a","b"]' } });
  assert.ok(bytes.length < 400, `${bytes.length} bytes`);
  const before = eng.memoryBytes();
  expectCode(() => eng.loadTrainer(bytes), 'bad_checkpoint', /missing tensor "embed"/);
  assert.ok(eng.memoryBytes() - before <= 4 * 2 ** 20, `wasm memory grew by ${(eng.memoryBytes() - before) / 2 ** 20} MB`);
});

test('a checkpoint without a vocabulary, or with one of another size than config.vocab, is refused at load', () => {
  const t = engine.createTrainer({ task: 'reverse', dModel: 8, batch: 4 });
  const good = t.save();
  t.dispose();
  expectCode(() => engine.loadTrainer(withMetadata(good, (m) => { delete m.vocabulary; })), 'bad_checkpoint', /vocabulary/);
  expectCode(() => engine.loadTrainer(withMetadata(good, (m) => { m.vocabulary = '["[PAD]"]'; })), 'bad_checkpoint', /vocabulary has 1 tokens but the config says vocab 11/);
  // a model of 28 ids for a task of 11 tokens, without a vocabulary: ids 11 … 27 had no name
  const wide = engine.createTrainer({ task: 'text', corpus: 'a b c d e f g h i j k l m n o p q r s t u v w x y z '.repeat(4), maxVocab: 38, length: 4, dModel: 8, heads: 1 });
  assert.equal(wide.config.vocab, 28);
  const bytes = withMetadata(wide.save(), (m) => { delete m.vocabulary; m.task = '{"name":"reverse","length":0}'; });
  wide.dispose();
  expectCode(() => engine.loadTrainer(bytes), 'bad_checkpoint');
});

test('a step beyond the counter\'s range is refused at load (it used to wrap to a negative count)', () => {
  const t = engine.createTrainer({ task: 'reverse', dModel: 8, batch: 4 });
  t.step(2);
  const good = t.save();
  t.dispose();
  for (const step of ['2147483647', '-1', '3x']) {
    expectCode(() => engine.loadTrainer(withMetadata(good, (m) => { m.step = step; })), 'bad_checkpoint', /checkpoint metadata step .* from 0 to 1000000000/);
  }
  const back = engine.loadTrainer(withMetadata(good, (m) => { m.step = '999999999'; }));
  assert.equal(back.step(1).step, 1000000000);
  expectCode(() => back.step(1), 'bad_state', /1000000000 steps/);
  assert.equal(back.stepCount, 1000000000);
  back.dispose();
});

test('train and task metadata go through createTrainer\'s ranges and name the field (bad_checkpoint)', () => {
  const t = engine.createTrainer({ task: 'reverse', dModel: 8, batch: 4 });
  const good = t.save();
  t.dispose();
  const train = JSON.parse(headerOf(good).header.__metadata__.train);
  assert.equal(train.batch, 4);
  const cases = [
    [{ batch: 65536 }, /checkpoint metadata train\.batch 65536 is outside 1…4096/],
    [{ batch: 0 }, /checkpoint metadata train\.batch 0 is outside 1…4096/],
    [{ seed: 1e20 }, /checkpoint metadata train\.seed 1e\+20 is outside 0…4294967295/],
    [{ seed: -1 }, /checkpoint metadata train\.seed -1 is outside/],
    [{ seed: 2.75 }, /checkpoint metadata train\.seed 2\.75 is not a whole number/],
    [{ lr: 1e-30 }, /checkpoint metadata train\.lr 1e-30 is outside 1e-08…10 \(the learning rate\)/],
  ];
  for (const [change, message] of cases) {
    expectCode(() => engine.loadTrainer(withMetadata(good, (m) => { m.train = JSON.stringify({ ...train, ...change }); })), 'bad_checkpoint', message);
  }
  expectCode(() => engine.loadTrainer(withMetadata(good, (m) => { m.task = '{"name":"reverse","length":5000}'; })), 'bad_checkpoint', /checkpoint metadata task\.length 5000 is outside 0…4096/);
  // the same range from createTrainer's side: the same words after the field name
  expectCode(() => engine.createTrainer({ task: 'reverse', batch: 65536 }), 'bad_input', /65536/);
});

// ---- the CLI: bounded reads and --out ---------------------------------------------------------

test('attn train --corpus /dev/zero stops at the corpus limit: exit 2 naming the file and the limit', () => {
  const r = cliRun(['train', '--task', 'text', '--corpus', '/dev/zero', '--steps', '1']);
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /--corpus "\/dev\/zero" has more than 24000000 bytes, above the limit of 24000000 bytes/);
});

test('attn run --sentence-file /dev/zero and a --model file above the checkpoint limit are refused: exit 2', () => {
  const t = engine.createTrainer({ task: 'reverse', dModel: 8, batch: 4 });
  const model = path.join(tmp, 'reverse.safetensors');
  writeFileSync(model, t.save());
  t.dispose();
  const sentence = cliRun(['run', '--model', model, '--sentence-file', '/dev/zero']);
  assert.equal(sentence.status, 2, sentence.stderr);
  assert.match(sentence.stderr, /--sentence-file "\/dev\/zero" has more than 65536 bytes, above the limit of 65536 bytes/);
  assert.equal(sentence.stdout, '');
  // the model file's limit: the largest checkpoint the model limits allow (about 358 MB)
  const big = path.join(tmp, 'sparse.safetensors');
  const fd = openSync(big, 'w');
  ftruncateSync(fd, 400 * 2 ** 20);  // sparse: no disk, and refused by its size before a byte is read
  closeSync(fd);
  const huge = cliRun(['run', '--model', big, '--sentence', '1 2 3']);
  assert.equal(huge.status, 2, huge.stderr);
  assert.match(huge.stderr, /--model ".*sparse\.safetensors" has more than 358117384 bytes, above the limit of 358117384 bytes/);
  for (const args of [['baseline', '--corpus', '/dev/zero'], ['baseline', '--corpus', model, '--model', big]]) {
    const r = cliRun(args);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /above the limit of \d+ bytes/);
  }
});

test('attn train --out PATH that cannot be written fails before training, leaving no file behind', () => {
  for (const out of [path.join(tmp, 'no-such-dir', 'model.safetensors'), tmp]) {
    const r = cliRun(['train', '--task', 'reverse', '--steps', '50', '--d-model', '8', '--batch', '4', '--out', out]);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stdout, '', 'no training output: it failed first');
    assert.match(r.stderr, /cannot write --out ".*"/);
    assert.doesNotMatch(r.stderr, /step \d+\//);
  }
  assert.equal(existsSync(path.join(tmp, 'no-such-dir')), false);
});

test('attn train --out over an existing file leaves exactly the new checkpoint (not appended to the old bytes)', () => {
  const out = path.join(tmp, 'replaced.safetensors');
  writeFileSync(out, 'old contents');
  const r = cliRun(['train', '--task', 'reverse', '--steps', '2', '--d-model', '8', '--batch', '4', '--out', out]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /wrote .*replaced\.safetensors/);
  const back = engine.loadTrainer(new Uint8Array(readFileSync(out)));
  assert.equal(back.stepCount, 2);
  back.dispose();
});
