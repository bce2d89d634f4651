// The tests' independent reader of a checkpoint's F32 tensors (safetensors-reader.mjs): the
// tensors of a file built here by hand, the shipped models' LayerNorm gains as the
// engine reports them, and a clear RangeError (code bad_checkpoint) for every kind of
// damaged file, never a raw DataView, typed-array or JSON error.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readSafetensors } from './safetensors-reader.mjs';

/** A .safetensors file from a header object and the data bytes (little-endian u64 length, JSON, data). */
function fileOf(header, data = new Uint8Array(0), { headerText = JSON.stringify(header), length = null } = {}) {
  const json = new TextEncoder().encode(headerText);
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(length ?? json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

/** The little-endian bytes of some float32 values. */
function f32(values) {
  const b = new Uint8Array(4 * values.length);
  const dv = new DataView(b.buffer);
  values.forEach((v, i) => dv.setFloat32(4 * i, v, true));
  return b;
}

test('a hand-made file: every tensor with its shape and values, the metadata as written', () => {
  const data = new Uint8Array([...f32([1, -2.5, 0.125]), ...f32([3, 4])]);
  const bytes = fileOf({
    __metadata__: { task: '{"name":"copy"}' },
    'a.gain': { dtype: 'F32', shape: [3], data_offsets: [0, 12] },
    'b.bias': { dtype: 'F32', shape: [1, 2], data_offsets: [12, 20] },
  }, data);
  const { tensors, metadata } = readSafetensors(bytes);
  assert.deepEqual(metadata, { task: '{"name":"copy"}' });
  assert.deepEqual(tensors['a.gain'].shape, [3]);
  assert.deepEqual(Array.from(tensors['a.gain'].data), [1, -2.5, 0.125]);
  assert.deepEqual(tensors['b.bias'].shape, [1, 2]);
  assert.deepEqual(Array.from(tensors['b.bias'].data), [3, 4]);
  // a view into a bigger buffer at an odd offset reads the same
  const padded = new Uint8Array(bytes.length + 3);
  padded.set(bytes, 3);
  assert.deepEqual(Array.from(readSafetensors(padded.subarray(3)).tensors['b.bias'].data), [3, 4]);
});

test('the shipped models: every LayerNorm gain and bias is read, with the model\'s width', () => {
  for (const name of ['coreference', 'language']) {
    const { tensors } = readSafetensors(new Uint8Array(readFileSync(new URL(`../../models/${name}.safetensors`, import.meta.url))));
    const gains = Object.keys(tensors).filter((k) => k.endsWith('.gain'));
    assert.ok(gains.length >= 2, `${name}: ${gains}`);
    for (const g of gains) {
      const b = tensors[g.replace(/gain$/, 'bias')];
      assert.ok(b, `${name}: ${g} has a bias`);
      assert.equal(tensors[g].data.length, b.data.length);
      assert.ok(tensors[g].data.every(Number.isFinite));
    }
  }
});

const good = { dtype: 'F32', shape: [2], data_offsets: [0, 8] };
const DAMAGED = [
  ['fewer than 8 bytes', new Uint8Array(5), /fewer than 8 bytes/],
  ['not bytes', 'hello', /fewer than 8 bytes/],
  ['a header longer than the file', fileOf({ x: good }, f32([1, 2]), { length: 10000 }), /header length \(10000 bytes\) is larger/],
  ['a header length past 2^53', fileOf({}, new Uint8Array(0), { length: 2n ** 62n }), /header length .* is larger/],
  ['a header that is not JSON', fileOf(null, f32([1, 2]), { headerText: '{"x": [' }), /header is not JSON/],
  ['a header that is not UTF-8', fileOf(null, new Uint8Array(0), { headerText: '\ud800' }), /header is not JSON|not a JSON object/],
  ['a header that is an array', fileOf([1, 2]), /not a JSON object/],
  ['an F16 tensor', fileOf({ x: { ...good, dtype: 'F16' } }, f32([1, 2])), /tensor x is F16, not F32/],
  ['a tensor without dtype', fileOf({ x: 7 }), /tensor x is of no dtype/],
  ['offsets past the data', fileOf({ x: { ...good, data_offsets: [0, 80] } }, f32([1, 2])), /data_offsets \[0, 80\] outside its 8 bytes/],
  ['offsets the wrong way round', fileOf({ x: { ...good, data_offsets: [8, 0] } }, f32([1, 2])), /outside/],
  ['negative offsets', fileOf({ x: { ...good, data_offsets: [-4, 4] } }, f32([1, 2])), /no valid data_offsets/],
  ['fractional offsets', fileOf({ x: { ...good, data_offsets: [0, 7.5] } }, f32([1, 2])), /no valid data_offsets/],
  ['bytes that do not fit the shape', fileOf({ x: { ...good, shape: [3] } }, f32([1, 2])), /has 8 bytes for shape \[3\], which needs 12/],
  ['a length not a multiple of 4', fileOf({ x: { ...good, shape: [2], data_offsets: [0, 6] } }, f32([1, 2])), /has 6 bytes for shape \[2\]/],
  ['a shape that is not a list', fileOf({ x: { ...good, shape: 'big' } }, f32([1, 2])), /no valid shape/],
  ['metadata that is not an object', fileOf({ __metadata__: 'x', y: good }, f32([1, 2])), /__metadata__ is not a JSON object/],
];

for (const [what, bytes, message] of DAMAGED) {
  test(`a damaged file (${what}): RangeError naming the problem, code bad_checkpoint`, () => {
    assert.throws(() => readSafetensors(bytes), (e) => {
      assert.ok(e instanceof RangeError, `${e?.name}: ${e?.message}`);
      assert.equal(e.code, 'bad_checkpoint');
      assert.match(e.message, /^not a safetensors file the page can read: /);
      assert.match(e.message, message);
      return true;
    });
  });
}
