// How large a pretrained model the engine holds, known before a download (issue #36, items 4
// and 10): engine.checkHubConfig says it from config.json alone; openCheckpoint refuses a
// safetensors header whose model is above the limit, or which describes more data than the
// file's size, before it allocates anything. And the limit is this build's true one: a model
// at it allocates (one block of memory: the wasm allocator gives at most 2³¹ − 4148 bytes at once).

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../web/engine.js';
import { gpt2ConfigText, gpt2Header } from './pretrained.mjs';

const engine = await createEngine();
after(() => engine.dispose());

const LIMIT = 2 ** 31 - 2 ** 26;  // kMaxParameterBytes in wasm (checkpoints/pretrained.hpp)
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
  // Llama-3.2-1B kept BF16 is still 2.5 GB: above the page's one allocation, refused with its 16-bit size
  const llama = JSON.stringify({
    model_type: 'llama', architectures: ['LlamaForCausalLM'], vocab_size: 128256, hidden_size: 2048, intermediate_size: 8192,
    num_hidden_layers: 16, num_attention_heads: 32, num_key_value_heads: 8, max_position_embeddings: 131072,
    rms_norm_eps: 1e-5, tie_word_embeddings: true, rope_theta: 500000, dtype: 'bfloat16',
  });
  const big = engine.checkHubConfig(llama);
  assert.equal(big.storage, 'BF16');
  assert.equal(big.fits, false);
  assert.match(big.message, /^the model has 1235814400 parameters \(2\.5 GB as BF16 and float32\), above the 2\.1 GB this engine holds$/);
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

test('the limit is true: a model at it allocates in this build, one layer more is refused', async () => {
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
