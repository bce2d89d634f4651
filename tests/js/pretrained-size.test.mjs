// How large a pretrained model the engine holds, known before a download (issue #36, items 4
// and 10): engine.checkHubConfig says it from config.json alone; openCheckpoint refuses a
// safetensors header whose model is above the limit, or which describes more data than the
// file's size, before it allocates anything. And the limits are this build's true ones: a
// float32 model is one block of memory (the wasm allocator gives at most 2³¹ − 4148 bytes at
// once), a 16-bit one's values lie in chunks of at most 256 MiB, 3 GiB in all: a model at either
// limit allocates.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../web/engine.js';
import { gpt2ConfigText, gpt2Header, llamaConfigText, llamaHeader } from './pretrained.mjs';

const engine = await createEngine();
after(() => engine.dispose());

const LIMIT = 2 ** 31 - 2 ** 26;  // a float32 model in wasm: kMaxAllocationBytes (model/model.hpp)
const LIMIT_16 = 3 * 2 ** 30;      // a 16-bit one: kMaxParameterBytes (checkpoints/pretrained.hpp)
/** Llama-3.2-1B's sizes (tied; heads of 64) and its matrices' and gains' counts, by hand. */
const LLAMA32_1B = { V: 128256, C: 2048, L: 16, H: 32, Hkv: 8, F: 8192 };
const llamaCounts = ({ V, C, L, H, Hkv, F }) => {
  const D = C / H;
  return { matrices: V * C + L * (2 * C * H * D + 2 * C * Hkv * D + 3 * C * F), gains: L * 2 * C + C };
};
const GPT2 = {
  small: { V: 50257, T: 1024, C: 768, L: 12, H: 12 },
  medium: { V: 50257, T: 1024, C: 1024, L: 24, H: 16 },
  large: { V: 50257, T: 1024, C: 1280, L: 36, H: 20 },
  xl: { V: 50257, T: 1024, C: 1600, L: 48, H: 25 },
};
/** Float32 bytes of a GPT-2's parameters, tied (F = 4C: 12C² + 13C a layer). */
const gpt2Bytes = ({ V, T, C, L }) => 4 * ((V + T) * C + L * (12 * C * C + 13 * C) + 2 * C);

test('checkHubConfig: GPT-2 small and medium fit; large (3.1 GB) and xl are refused from config.json alone', () => {
  for (const [name, sizes] of Object.entries(GPT2)) {
    const c = engine.checkHubConfig(gpt2ConfigText(sizes));
    assert.equal(c.config.family, 'gpt2');
    assert.equal(c.limitBytes, LIMIT);
    assert.equal(c.parameterBytes, gpt2Bytes(sizes), name);
    assert.equal(c.largestBytes, c.parameterBytes + 4 * sizes.V * sizes.C, `${name}: with an lm_head of its own`);
    const fits = name === 'small' || name === 'medium';
    assert.equal(c.fits, fits, name);
    if (fits) assert.equal(c.message, null);
    else assert.match(c.message, new RegExp(`^the model has ${gpt2Bytes(sizes) / 4} parameters \\(.* as float32\\), above the 2\\.1 GB this engine holds$`));
  }
  // the largest config the inference limits allow: 3.9 G floats, past 2³² bytes, counted without wrapping
  const most = JSON.stringify({ model_type: 'gpt2', vocab_size: 262144, n_positions: 2048, n_embd: 2048, n_layer: 48, n_head: 16, n_inner: 8192 });
  const c = engine.checkHubConfig(most);
  const [C, F] = [2048, 8192];
  assert.equal(c.parameterBytes, 4 * (262144 * C + 2048 * C + 48 * (4 * C * C + 2 * C * F + 9 * C + F) + 2 * C));
  assert.equal(c.fits, false);
  // a config that cannot be read is refused as readHubConfig refuses it
  assert.throws(() => engine.checkHubConfig('{"model_type": "mistral"}'), (e) => e.code === 'bad_checkpoint' && /mistral/.test(e.message));
});

test('checkHubConfig counts a 16-bit model as the loader holds it: dtype or torch_dtype, BF16 or F16 at 2 bytes a matrix value', () => {
  // Qwen3-0.6B: 28 layers, 16 / 8 heads of 128, hidden 1024, intermediate 3072, vocabulary 151936, tied
  const [V, C, L, H, Hkv, D, F] = [151936, 1024, 28, 16, 8, 128, 3072];
  const matrices = V * C + L * (2 * C * H * D + 2 * C * Hkv * D + 3 * C * F), gains = L * (2 * C + 2 * D) + C;
  const qwen3 = (field, dtype) => JSON.stringify({
    model_type: 'qwen3', architectures: ['Qwen3ForCausalLM'], vocab_size: V, hidden_size: C, intermediate_size: F,
    num_hidden_layers: L, num_attention_heads: H, num_key_value_heads: Hkv, head_dim: D, max_position_embeddings: 40960,
    rms_norm_eps: 1e-6, tie_word_embeddings: true, rope_theta: 1000000, [field]: dtype,
  });
  for (const field of ['torch_dtype', 'dtype']) {
    for (const [dtype, storage] of [['bfloat16', 'BF16'], ['float16', 'F16']]) {
      const c = engine.checkHubConfig(qwen3(field, dtype));
      assert.equal(c.storage, storage, `${field} ${dtype}`);
      assert.equal(c.parameterBytes, 2 * matrices + 4 * gains, `${field} ${dtype}: 1.2 GB`);
      assert.equal(c.fits, true);
      assert.equal(c.message, null);
    }
    // as float32 its 2.4 GB are above the page's limit, refused with its numbers
    const f32 = engine.checkHubConfig(qwen3(field, 'float32'));
    assert.equal(f32.storage, 'F32');
    assert.equal(f32.parameterBytes, 4 * (matrices + gains));
    assert.equal(f32.fits, false);
    assert.equal(f32.message, `the model has ${matrices + gains} parameters (2.4 GB as float32), above the 2.1 GB this engine holds`);
  }
});

test('checkHubConfig: Llama-3.2-1B fits the page kept BF16 (2.5 GB in chunks); as float32 (4.9 GB) and an 8B are refused with their numbers', () => {
  const { matrices, gains } = llamaCounts(LLAMA32_1B);
  assert.equal(matrices + gains, 1235814400);
  const bf16 = engine.checkHubConfig(llamaConfigText(LLAMA32_1B));
  assert.equal(bf16.storage, 'BF16');
  assert.equal(bf16.parameterBytes, 2 * matrices + 4 * gains);  // 2,471,763,968
  assert.equal(bf16.limitBytes, LIMIT_16);
  assert.equal(bf16.fits, true);
  assert.equal(bf16.message, null);
  const f32 = engine.checkHubConfig(llamaConfigText({ ...LLAMA32_1B, dtype: 'float32' }));
  assert.equal(f32.storage, 'F32');
  assert.equal(f32.parameterBytes, 4 * (matrices + gains));
  assert.equal(f32.limitBytes, LIMIT);
  assert.equal(f32.fits, false);
  assert.equal(f32.message, 'the model has 1235814400 parameters (4.9 GB as float32), above the 2.1 GB this engine holds');
  // Llama-3.1-8B: its width alone is above what the engine runs, said before anything else
  assert.throws(() => engine.checkHubConfig(llamaConfigText({ V: 128256, C: 4096, L: 32, H: 32, Hkv: 8, F: 14336 })),
    (e) => e.code === 'bad_checkpoint' && e.message === 'config.json: "hidden_size" is 4096; this engine runs 1 to 2048');
  // an 8B-class model the engine could run (48 layers, a 262144 vocabulary): 6.9 GB even kept BF16
  const eight = { V: 262144, C: 2048, L: 48, H: 32, Hkv: 8, F: 8192 };
  const big = engine.checkHubConfig(llamaConfigText(eight));
  const n = llamaCounts(eight);
  assert.equal(big.parameterBytes, 2 * n.matrices + 4 * n.gains);
  assert.equal(big.fits, false);
  assert.equal(big.message, `the model has ${n.matrices + n.gains} parameters (6.9 GB as BF16 and float32), above the 3.2 GB this engine holds`);
});

test('checkHubConfig: a 16-bit model whose float32 part alone is above one allocation is refused, naming its bytes', () => {
  // a GPT-2 declared BF16 whose width 2044 is no multiple of 8: its attention and output matrices
  // stay float32 (only fits_panels widths are kept 16-bit), 2.15 GB of them in one allocation
  const sizes = { V: 50257, T: 1024, C: 2044, L: 16, H: 4 };
  const { C, T, L, V } = sizes;
  const F = 4 * C;
  const text = JSON.stringify({ ...JSON.parse(gpt2ConfigText(sizes)), torch_dtype: 'bfloat16' });
  const c = engine.checkHubConfig(text);
  const floats = T * C + L * (4 * C * C + F * C + 9 * C + F) + 2 * C;  // positions, q k v o, W_out, biases and gains
  const pad8 = (n) => Math.ceil(n / 8) * 8;                            // each 16-bit tensor 16-byte aligned
  const halves = pad8(V * C) + L * pad8(C * F);                         // the embedding and W_in
  assert.equal(c.parameterBytes, 4 * floats + 2 * halves);
  assert.ok(c.parameterBytes <= LIMIT_16 && 4 * floats > LIMIT);
  assert.equal(c.fits, false);
  assert.equal(c.message, `the model's float32 values, one allocation, take ${(4 * floats).toLocaleString('en-US')} bytes, above the 2,080,374,784 bytes (2.1 GB) one allocation holds in this engine`);
});

test('openCheckpoint refuses a header describing more data than the file, or a model above the limit, before allocating', () => {
  const start = engine.memoryBytes();
  // 34 KB of file whose header describes a 2.6 GB GPT-2: the parameters were allocated before the missing data was noticed
  const sizes = { V: 50257, T: 1024, C: 1280, L: 30, H: 20 };
  const { header, fileBytes } = gpt2Header(sizes);
  assert.throws(() => engine.openCheckpoint(gpt2ConfigText(sizes), header, header.length),
    (e) => e.code === 'bad_checkpoint' && e.message.includes(`the file ends at byte ${header.length} but tensor 'wte.weight' needs bytes`) &&
      e.message.includes(`the header says ${fileBytes} bytes`));
  // the same header with the file whole: its 2.6 GB are above the limit
  assert.throws(() => engine.openCheckpoint(gpt2ConfigText(sizes), header, fileBytes), (e) => e.code === 'too_large' && /this engine holds/.test(e.message));
  assert.ok(engine.memoryBytes() - start < 64 << 20, `the heap grew by ${engine.memoryBytes() - start} bytes`);
  // the file's size is required
  assert.throws(() => engine.openCheckpoint(gpt2ConfigText(sizes), header), (e) => e instanceof TypeError && e.code === 'bad_input');
  assert.throws(() => engine.openCheckpoint(gpt2ConfigText(sizes), header, -1), (e) => e instanceof RangeError && e.code === 'bad_input');
});

test('the float32 limit is true: a model at it allocates in this build, one layer more is refused', async () => {
  // C = 1024 with 37 layers: 2.074 GB of parameters, 6 MB below the limit; 38 layers: 50 MB above it
  const own = await createEngine();
  try {
    const at = { V: 50257, T: 1024, C: 1024, L: 37, H: 16 };
    assert.ok(gpt2Bytes(at) <= LIMIT && gpt2Bytes({ ...at, L: 38 }) > LIMIT);
    const { header, fileBytes } = gpt2Header(at);
    const loader = own.openCheckpoint(gpt2ConfigText(at), header, fileBytes);
    assert.equal(loader.neededBytes, gpt2Bytes(at));
    assert.ok(own.memoryBytes() > gpt2Bytes(at), `the heap holds the parameters: ${own.memoryBytes()} bytes`);
    loader.dispose();
    const over = { ...at, L: 38 };
    const big = gpt2Header(over);
    assert.throws(() => own.openCheckpoint(gpt2ConfigText(over), big.header, big.fileBytes), (e) => e.code === 'too_large');
  } finally {
    own.dispose();
  }
});

test('the 16-bit limit is true: a BF16 Llama of 3.2 GB allocates in chunks, its staging above 2 GiB takes a chunk; one layer more is refused', async () => {
  // Llama-3.2-1B's sizes with 22 layers: 3,200,844,800 bytes of BF16, 20 MB below 3 GiB; 23: 121 MB above
  const own = await createEngine();
  try {
    const at = { ...LLAMA32_1B, L: 22 };
    const { matrices, gains } = llamaCounts(at);
    const bytes = 2 * matrices + 4 * gains;
    assert.ok(bytes <= LIMIT_16 && bytes + 2 * llamaCounts({ ...at, L: 1 }).matrices > LIMIT_16);
    assert.equal(engine.checkHubConfig(llamaConfigText(at)).fits, true);
    const { header, fileBytes } = llamaHeader(at);
    const loader = own.openCheckpoint(llamaConfigText(at), header, fileBytes, { chunkBytes: 256 << 20 });
    try {
      assert.equal(loader.storage, 'BF16');
      assert.equal(loader.parameterBytes, bytes);
      // no chunk above 256 MiB but the embedding's (501 MiB, alone in its own)
      assert.ok(loader.halfChunks >= Math.ceil(bytes / 2 ** 28), `${loader.halfChunks} chunks`);
      assert.ok(own.memoryBytes() > bytes, `the heap holds the parameters: ${own.memoryBytes()} bytes`);
      // the staging buffer was allocated after them: above 2 GiB, where a signed address would be negative
      assert.ok(loader._staging >= 2 ** 31, `staging at ${loader._staging}`);
      const first = loader.needed[0];
      const chunk = new Uint8Array(loader.stagingBytes).fill(0x3f);  // BF16 0x3f3f: 0.746…, finite
      assert.equal(loader.feed(first.begin, chunk), chunk.length);
    } finally {
      loader.dispose();
    }
    const over = { ...at, L: 23 };
    const n = llamaCounts(over);
    const big = llamaHeader(over);
    assert.throws(() => own.openCheckpoint(llamaConfigText(over), big.header, big.fileBytes),
      (e) => e.code === 'too_large' && e.message === `the model has ${n.matrices + n.gains} parameters (3.3 GB as BF16 and float32), above the 3.2 GB this engine holds`);
    // the chunk size is a test's setting with a range
    assert.throws(() => own.openCheckpoint(llamaConfigText(at), header, fileBytes, { chunkBytes: 8 }), (e) => e instanceof RangeError && e.code === 'bad_input');
  } finally {
    own.dispose();
  }
});
