// The training lab's own text in a link (web/app/train/state.js packText /
// unpackText): inflated by stream with a cap, so a crafted link (a deflate bomb)
// is refused with one sentence instead of inflating to gigabytes and then
// being cut or emptied in silence.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { packText, unpackText, MAX_CORPUS, MAX_CORPUS_BYTES, LINK_TEXT_PROBLEM } from '../../web/app/train/state.js';

const link = (bytes) => `z${Buffer.from(bytes).toString('base64url')}`;

test('a deflate bomb in the link (64 MB of one letter in 64 KB) is refused as damaged or too long', async () => {
  const bomb = link(zlib.deflateRawSync(Buffer.alloc(64 << 20, 0x61), { level: 9 }));
  assert.ok(bomb.length < 100_000, `the crafted link has ${bomb.length} characters`);
  await assert.rejects(unpackText(bomb), { message: LINK_TEXT_PROBLEM });
});

test('a link text just over the cap is refused; one at the cap of MAX_CORPUS characters is kept whole', async () => {
  const over = link(zlib.deflateRawSync(Buffer.alloc(MAX_CORPUS_BYTES + 1, 0x61)));
  await assert.rejects(unpackText(over), { message: LINK_TEXT_PROBLEM });
  const longest = 'a'.repeat(MAX_CORPUS);
  assert.equal(await unpackText(await packText(longest)), longest);
  const tooMany = link(zlib.deflateRawSync(Buffer.from('a'.repeat(MAX_CORPUS + 1))));
  await assert.rejects(unpackText(tooMany), { message: LINK_TEXT_PROBLEM }, 'more characters than the lab takes: refused, not cut');
  // the widest text: MAX_CORPUS code units of 3 UTF-8 bytes each
  const wide = '\u20ac'.repeat(MAX_CORPUS);
  assert.equal(await unpackText(await packText(wide)), wide);
});

test('damaged link texts are refused with the same sentence; a real text round-trips', async () => {
  for (const bad of ['zAAAA', 'z!!!', 'q' + 'abc', 'u' + Buffer.from([0xff, 0xfe]).toString('base64url'), link(zlib.deflateRawSync(Buffer.from('cut here')).subarray(0, 4))]) {
    await assert.rejects(unpackText(bad), { message: LINK_TEXT_PROBLEM }, bad);
  }
  const text = 'the moon rises over the hill . d\u00e9j\u00e0 vu \ud83d\udc08 . '.repeat(50);
  assert.equal(await unpackText(await packText(text)), text);
});
