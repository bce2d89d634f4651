// The pages' one byte hash (web/app/kit/hash.js): FNV-1a 32, checked against the published test
// vectors (Fowler/Noll/Vo's test suite), and the two digests built on it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fnv1a32, hex32, FNV32_BASIS } from '../../web/app/kit/hash.js';
import { digest } from '../../web/app/train/grid.js';
import { bytesKey } from '../../web/app/kit/model-store.js';

const bytes = (s) => new TextEncoder().encode(s);

test('fnv1a32: the published FNV-1a 32 test vectors', () => {
  assert.equal(fnv1a32(bytes('')), 0x811c9dc5);
  assert.equal(fnv1a32(bytes('a')), 0xe40c292c);
  assert.equal(fnv1a32(bytes('foobar')), 0xbf9cf968);
  assert.equal(FNV32_BASIS, 0x811c9dc5);
});

test('fnv1a32: reverse hashes the bytes last first; another basis gives another value', () => {
  assert.equal(fnv1a32(bytes('raboof'), { reverse: true }), 0xbf9cf968);
  assert.notEqual(fnv1a32(bytes('foobar'), { basis: 1 }), 0xbf9cf968);
  assert.equal(fnv1a32(bytes(''), { basis: 7 }), 7);
});

test('digest: the FNV-1a 32 of a Float32Array\'s bytes, 8 hex digits; a view hashes only its own floats', () => {
  const a = new Float32Array([1, -2.5, 3]);
  assert.equal(digest(a), hex32(fnv1a32(new Uint8Array(a.buffer))));
  const big = new Float32Array([9, 1, -2.5, 3, 9]);
  assert.equal(digest(big.subarray(1, 4)), digest(a));
  assert.match(digest(new Float32Array(0)), /^811c9dc5$/);
});

test('bytesKey: 16 hex digits, the forward hash then the backward one; one changed byte changes both halves', () => {
  const b = bytes('checkpoint bytes');
  const key = bytesKey(b);
  assert.match(key, /^[0-9a-f]{16}$/);
  assert.equal(key.slice(0, 8), hex32(fnv1a32(b)));
  const c = b.slice();
  c[3] ^= 1;
  const other = bytesKey(c);
  assert.notEqual(other.slice(0, 8), key.slice(0, 8));
  assert.notEqual(other.slice(8), key.slice(8));
});
