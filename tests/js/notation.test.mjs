// The "Notation" legend (web/app/kit/notation.js) names every symbol the modern decoders' steps
// write: RoPE's position m, its speeds θᵢ and its pairs (i, i + d_k/2), grouped-query attention's
// H_kv and a norm's gain g, each with what it means.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NOTATION } from '../../web/app/kit/notation.js';

const meaning = (symbol) => NOTATION.find(([s]) => s === symbol)?.[1] ?? '';

test('the legend names RoPE\u2019s m, \u03b8\u1d62 and pair, GQA\u2019s H_kv and RMSNorm\u2019s g, each with its meaning', () => {
  assert.match(meaning('m, \u03b8\u1d62'), /position.*base\^\(\u22122i\/d_k\).*m\u00b7\u03b8\u1d62/);
  assert.match(meaning('(i, i + d_k/2)'), /dimension i .* dimension i \+ d_k\/2/);
  assert.match(meaning('H_kv'), /K\/V heads.*H\/H_kv.*KV cache/);
  assert.match(meaning('g'), /RMSNorm\(x\) = x\/rms\(x\)\u00b7g.*no bias/);
  // one line per symbol
  assert.equal(new Set(NOTATION.map(([s]) => s)).size, NOTATION.length);
});
