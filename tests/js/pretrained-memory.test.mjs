// The wasm module's memory may grow to 4 GiB (-sMAXIMUM_MEMORY=4GB, CMakeLists.txt), for
// pretrained checkpoints (gpt2-medium's weights alone are 1.4 GB). Past 2 GiB a pointer no
// longer fits a signed 32-bit number: the glue must read every one unsigned. Here the heap
// is pushed past 2 GiB (malloc'd, never touched: no real memory is used) and the engine's
// string, trace and copy-out paths are checked to still give the same numbers.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../web/engine.js';

const SETTINGS = { sentence: 'The cat sat on the mat.', dModel: 16, heads: 4, seed: 42 };

test('memory grows past 2 GiB and the engine still reads text and returns the same trace', async () => {
  const engine = await createEngine();
  const before = engine.run(SETTINGS);
  const start = engine.memoryBytes();
  assert.ok(start <= 64 << 20, `the module starts small: ${start} bytes`);
  const m = engine._m;
  const blocks = [];
  let last = 0;
  while (last < 2 ** 31 + 2 ** 27) {
    const p = m._malloc(256 << 20) >>> 0;
    assert.notEqual(p, 0, `malloc failed at ${engine.memoryBytes()} bytes`);
    blocks.push(p);
    last = p;
  }
  assert.ok(engine.memoryBytes() > 2 ** 31, `memory is ${engine.memoryBytes()} bytes`);
  // the free space left below (the first run's buffers) filled too, so what the engine allocates next lies above 2 GiB
  let small = 0;
  for (let i = 0; i < 200000 && small < 2 ** 31; i++) {
    small = m._malloc(4096) >>> 0;
    blocks.push(small);
  }
  assert.ok(small > 2 ** 31, `a new small block lies above 2 GiB: ${small}`);
  const after = engine.run(SETTINGS);
  assert.deepEqual(after.tokens.map((t) => t.text), before.tokens.map((t) => t.text));
  assert.deepEqual(Array.from(after.heads[0].weights.data), Array.from(before.heads[0].weights.data));
  assert.deepEqual(Array.from(after.output.data), Array.from(before.output.data));
  assert.deepEqual(engine.tokenize('hello world').map((t) => t.text), ['hello', 'world']);
  for (const p of blocks) m._free(p);
  engine.dispose();
});
