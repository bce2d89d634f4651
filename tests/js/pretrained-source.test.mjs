// Where a pretrained model's files come from (web/app/hub/source.js): the Hub
// through a cache, and the files a user drops. Against a local stand-in for
// the Hub (hub-server.mjs) and an in-memory Cache Storage with the same
// methods the module uses (Node has none); the browser's real one is in
// tests/browser/pretrained.test.mjs.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHubServer, memoryCaches } from './hub-server.mjs';
import { parseHubId, filesSource, pickTokenizer, isHubName, isLocalName, hubFileUrl, readRanges } from '../../web/app/hub/source.js';
import { hubSource, urlSource, isCachedModel, fileSize } from '../../web/app/hub/download.js';

const WEIGHTS = new Uint8Array(3 << 20).map((_, i) => (i * 7) & 255);
let hub;

before(async () => {
  hub = await startHubServer({
    'org/tiny-gpt2': { 'config.json': '{"model_type": "gpt2"}', 'vocab.json': '{"a": 0}', 'merges.txt': '#version: 0.2\n', 'model.safetensors': WEIGHTS },
    'tiny-bert': { 'config.json': '{"model_type": "bert"}', 'tokenizer.json': '{}' },
    // a captive portal's page where config.json should be (served 200)
    'portal/gpt2': { 'config.json': '<!DOCTYPE html><html><head><title>Sign in to the Wi-Fi</title></head></html>', 'model.safetensors': WEIGHTS },
  });
});
after(async () => {
  delete globalThis.caches;
  await hub.close();
});

test('parseHubId: ids and huggingface.co addresses are read, anything else is refused', () => {
  assert.equal(parseHubId('openai-community/gpt2'), 'openai-community/gpt2');
  assert.equal(parseHubId('  distilgpt2 '), 'distilgpt2');
  assert.equal(parseHubId('bert-base-uncased'), 'bert-base-uncased');
  assert.equal(parseHubId('https://huggingface.co/openai-community/gpt2'), 'openai-community/gpt2');
  assert.equal(parseHubId('https://huggingface.co/openai-community/gpt2/tree/main'), 'openai-community/gpt2');
  for (const bad of ['', 'a/b/c', '../etc', 'a/..', 'gpt 2', 'x/', '/x', 'a?b', 'a#b', 'https://example.com/gpt2', '<script>']) {
    assert.equal(parseHubId(bad), null, bad);
  }
  assert.ok(isHubName('hf:distilgpt2'));
  assert.ok(!isHubName('hf:../x'));
  assert.ok(isLocalName('local:my-gpt2'));
  assert.ok(!isLocalName('local:'));
  assert.equal(hubFileUrl('http://h/', 'a/b', 'config.json'), 'http://h/a/b/resolve/main/config.json');
});

test('hubSource: a download reports its bytes in order, up to the file size', async () => {
  globalThis.caches = memoryCaches();
  const events = [];
  const src = hubSource({ base: hub.base, id: 'org/tiny-gpt2', onProgress: (p) => events.push(p) });
  const blob = await src.weights();
  assert.equal(blob.size, WEIGHTS.length);
  assert.deepEqual(new Uint8Array(await blob.slice(1000, 1010).arrayBuffer()), WEIGHTS.subarray(1000, 1010));
  const mine = events.filter((e) => e.file === 'model.safetensors');
  assert.ok(mine.length >= 2, `several progress events, got ${mine.length}`);
  for (let i = 1; i < mine.length; i++) assert.ok(mine[i].loaded > mine[i - 1].loaded);
  assert.equal(mine.at(-1).loaded, WEIGHTS.length);
  assert.ok(mine.every((e) => e.total === WEIGHTS.length && !e.cached));
});

test('hubSource: a file that is not on the Hub is named, with its address (not_found)', async () => {
  globalThis.caches = memoryCaches();
  const src = hubSource({ base: hub.base, id: 'tiny-bert' });
  await assert.rejects(src.weights(), (e) => {
    assert.equal(e.code, 'not_found');
    assert.equal(e.file, 'model.safetensors');
    assert.match(e.message, /model\.safetensors was not found at http:\/\/127\.0\.0\.1:\d+\/tiny-bert\/resolve\/main\/model\.safetensors \(HTTP 404\)/);
    return true;
  });
  // an optional file's absence is an answer, not an error
  assert.equal(await src.text('tokenizer_config.json', { optional: true }), '');
  await assert.rejects(hubSource({ base: hub.base, id: 'nobody/none' }).text('config.json'), (e) => e.code === 'not_found' && /config\.json/.test(e.message));
});

test('hubSource: no answer at all is a network error naming the file', async () => {
  globalThis.caches = memoryCaches();
  await assert.rejects(hubSource({ base: 'http://127.0.0.1:1', id: 'x' }).text('config.json'), (e) => e.code === 'network' && e.file === 'config.json' && /config\.json could not be fetched/.test(e.message));
});

test('hubSource: cancelling a download stops it and keeps nothing', async () => {
  globalThis.caches = memoryCaches();
  const abort = new AbortController();
  const held = hub.hold('org/tiny-gpt2', 'model.safetensors');
  const src = hubSource({ base: hub.base, id: 'org/tiny-gpt2', signal: abort.signal });
  const pending = src.weights();
  await held.reached;
  abort.abort();
  await assert.rejects(pending, (e) => e.code === 'cancelled');
  held.release();
  const store = await globalThis.caches.open('attention-playground-hub-v1');
  assert.deepEqual((await store.keys()).map((k) => k.url).filter((u) => u.endsWith('model.safetensors')), []);
});

test('hubSource: the second visit reads every file from the cache, with no request at all', async () => {
  globalThis.caches = memoryCaches();
  const first = hubSource({ base: hub.base, id: 'org/tiny-gpt2' });
  assert.equal(await first.text('config.json'), '{"model_type": "gpt2"}');
  assert.equal(await first.exists('tokenizer.json'), false); // 404: this model has the older files
  assert.equal(await first.text('vocab.json'), '{"a": 0}');
  assert.equal(await first.text('tokenizer_config.json', { optional: true }), '');
  assert.equal((await first.weights()).size, WEIGHTS.length);
  await first.keep();
  const before = hub.requests.length;
  const events = [];
  const second = hubSource({ base: hub.base, id: 'org/tiny-gpt2', onProgress: (p) => events.push(p) });
  assert.equal(await second.text('config.json'), '{"model_type": "gpt2"}');
  assert.equal(await second.exists('tokenizer.json'), false);
  assert.equal(await second.text('vocab.json'), '{"a": 0}');
  assert.equal(await second.text('tokenizer_config.json', { optional: true }), '');
  const blob = await second.weights();
  assert.deepEqual(new Uint8Array(await blob.arrayBuffer()), WEIGHTS);
  assert.deepEqual(hub.requests.slice(before), []);
  assert.ok(events.some((e) => e.file === 'model.safetensors' && e.cached && e.loaded === WEIGHTS.length));
});

test('hubSource: a download that breaks off names the file and says so, not the browser\u2019s DOMException (code network)', async () => {
  // Chromium's cache.put rejects with its own DOMException (numeric code 19) when the body fails
  globalThis.caches = memoryCaches({ chromium: true });
  const held = hub.hold('org/tiny-gpt2', 'model.safetensors');
  const src = hubSource({ base: hub.base, id: 'org/tiny-gpt2' });
  const pending = src.weights();
  await held.reached;
  held.breakOff();
  await assert.rejects(pending, (e) => {
    assert.equal(e.code, 'network');
    assert.equal(e.file, 'model.safetensors');
    assert.match(e.message, /^model\.safetensors stopped downloading from http:\/\/127\.0\.0\.1:\d+\/org\/tiny-gpt2\/resolve\/main\/model\.safetensors after [\d.]+ MB of [\d.]+ MB: the connection broke off/);
    assert.doesNotMatch(e.message, /Failed to execute/);
    return true;
  });
  const store = await globalThis.caches.open('attention-playground-hub-v1');
  assert.deepEqual((await store.keys()).map((k) => k.url).filter((u) => u.endsWith('model.safetensors')), [], 'nothing of it kept');
});

test('hubSource: a page served 200 as config.json is refused (bad_download) and not kept; the fixed file is fetched next time', async () => {
  globalThis.caches = memoryCaches();
  const id = 'portal/gpt2';
  await assert.rejects(hubSource({ base: hub.base, id }).text('config.json'), (e) => {
    assert.equal(e.code, 'bad_download');
    assert.equal(e.file, 'config.json');
    assert.match(e.message, /^config\.json from http:\/\/127\.0\.0\.1:\d+\/portal\/gpt2\/resolve\/main\/config\.json is not JSON: it begins \u201c<!DOCTYPE html><html><head><title>Sign in/);
    return true;
  });
  const store = await globalThis.caches.open('attention-playground-hub-v1');
  assert.deepEqual((await store.keys()).map((k) => k.url).filter((u) => u.includes(id)), [], 'nothing kept');
  // the network is fixed: the next try asks the server again, and reads the real file
  const real = hub.models[id]['config.json'];
  hub.models[id]['config.json'] = '{"model_type": "gpt2"}';
  try {
    const before = hub.requests.length;
    assert.equal(await hubSource({ base: hub.base, id }).text('config.json'), '{"model_type": "gpt2"}');
    assert.deepEqual(hub.requests.slice(before), [`/${id}/resolve/main/config.json`]);
  } finally {
    hub.models[id]['config.json'] = real;
  }
});

test('forget() removes every file of that model from the cache and only those; isCachedModel follows its list of files', async () => {
  globalThis.caches = memoryCaches();
  const where = { kind: 'hub', base: hub.base, id: 'org/tiny-gpt2' };
  const src = hubSource({ base: hub.base, id: where.id });
  await src.text('config.json');
  await src.weights();
  assert.equal(await isCachedModel(where), false, 'no list of files yet: a load has not worked');
  await src.keep();
  assert.equal(await isCachedModel(where), true);
  const other = hubSource({ base: hub.base, id: 'tiny-bert' });
  await other.text('config.json');
  assert.equal(await src.forget(), 3, 'config.json, model.safetensors and the list of files');
  assert.equal(await isCachedModel(where), false);
  const store = await globalThis.caches.open('attention-playground-hub-v1');
  assert.deepEqual((await store.keys()).map((k) => k.url), [hubFileUrl(hub.base, 'tiny-bert', 'config.json')]);
  // a folder a host serves, by its address
  const url = urlSource({ url: `${hub.base}/tiny-bert/resolve/main/` });
  assert.equal(await url.forget(), 1);
  assert.deepEqual(await store.keys(), []);
});

test('fileSize: a HEAD request\u2019s length, or null when the server does not say', async () => {
  assert.equal(await fileSize({ kind: 'hub', base: hub.base, id: 'org/tiny-gpt2' }, 'model.safetensors'), WEIGHTS.length);
  assert.equal(await fileSize({ kind: 'url', url: `${hub.base}/org/tiny-gpt2/resolve/main/` }, 'model.safetensors'), WEIGHTS.length);
  assert.equal(await fileSize({ kind: 'hub', base: hub.base, id: 'nobody/none' }, 'model.safetensors'), null);
  assert.equal(await fileSize({ kind: 'hub', base: 'http://127.0.0.1:1', id: 'x' }, 'model.safetensors'), null);
});

test('filesSource: files by name (a folder path dropped), a missing one named (missing_file)', async () => {
  const files = [new File(['{"model_type":"bert"}'], 'config.json'), new File(['[PAD]\n'], 'vocab.txt')];
  const src = filesSource(files);
  assert.deepEqual(src.names().sort(), ['config.json', 'vocab.txt']);
  assert.equal(await src.text('config.json'), '{"model_type":"bert"}');
  assert.equal(await src.text('tokenizer_config.json', { optional: true }), '');
  await assert.rejects(src.weights(), (e) => e.code === 'missing_file' && e.file === 'model.safetensors' && /there is no model\.safetensors among the files given/.test(e.message));
  assert.deepEqual(pickTokenizer('bert', src.has), ['vocab.txt']);
  assert.equal(pickTokenizer('gpt2', src.has), null);
  assert.deepEqual(pickTokenizer('gpt2', (f) => f === 'vocab.json' || f === 'merges.txt'), ['vocab.json', 'merges.txt']);
  assert.deepEqual(pickTokenizer('gpt2', () => true), ['tokenizer.json']);
});

// ---- reading the weights in bounded chunks (what the worker feeds the loader) ----------------

/** The bytes i of a test file: (i * 31 + 7) mod 251, never a run that repeats at a chunk's length. */
const FILE = new Uint8Array(1_000_003).map((_, i) => (i * 31 + 7) % 251);

test('readRanges gives the ranges asked for, in order, in chunks of at most chunkBytes', async () => {
  const ranges = [{ begin: 5, end: 70_000 }, { begin: 70_000, end: 70_001 }, { begin: 100_000, end: 400_123 }, { begin: 999_000, end: 1_000_003 }];
  const got = [];
  await readRanges(new Blob([FILE]), ranges, 65_536, (offset, bytes) => {
    assert.ok(bytes.byteLength > 0 && bytes.byteLength <= 65_536, `a chunk of ${bytes.byteLength} bytes`);
    got.push({ offset, bytes: bytes.slice() });
  });
  // the chunks tile each range exactly: full chunks, and a shorter one at a range's end
  let i = 0;
  for (const { begin, end } of ranges) {
    for (let a = begin; a < end; a += 65_536) {
      const b = Math.min(end, a + 65_536);
      assert.equal(got[i].offset, a);
      assert.deepEqual(got[i].bytes, FILE.subarray(a, b), `the bytes at ${a}`);
      i += 1;
    }
  }
  assert.equal(got.length, i);
});

test('readRanges reuses one buffer: a chunk is detached once the next one is read', async () => {
  const chunks = [];
  await readRanges(new Blob([FILE]), [{ begin: 0, end: 300_000 }], 100_000, (offset, bytes) => {
    // every chunk is a view of one buffer of chunkBytes, never a copy of its own
    assert.equal(bytes.buffer.byteLength, 100_000);
    assert.equal(bytes.byteOffset, 0);
    chunks.push(bytes);
  });
  assert.equal(chunks.length, 3);
  // the stream took the memory back for the next read: the earlier views have no bytes left
  assert.equal(chunks[0].byteLength, 0);
  assert.equal(chunks[1].byteLength, 0);
});

test('readRanges stops at the end of a short file and skips a range past it', async () => {
  const got = [];
  await readRanges(new Blob([FILE.subarray(0, 1000)]), [{ begin: 900, end: 1200 }, { begin: 1500, end: 1600 }], 4096, (offset, bytes) => got.push([offset, bytes.byteLength]));
  assert.deepEqual(got, [[900, 100]]);
});

test('readRanges falls back to a slice per chunk without a byte stream, with the same chunks', async () => {
  const blob = new Blob([FILE]);
  const plain = { size: blob.size, slice: (a, b) => { const s = blob.slice(a, b); return { arrayBuffer: () => s.arrayBuffer(), stream: () => ({ getReader: () => { throw new TypeError('no byob'); } }) }; } };
  const got = [];
  await readRanges(plain, [{ begin: 10, end: 250_000 }], 100_000, (offset, bytes) => got.push([offset, bytes.byteLength, bytes[0]]));
  assert.deepEqual(got, [[10, 100_000, FILE[10]], [100_010, 100_000, FILE[100_010]], [200_010, 49_990, FILE[200_010]]]);
});

test('readRanges stops at the first chunk onChunk refuses, with its error', async () => {
  const offsets = [];
  const refused = Object.assign(new Error('the download was cancelled'), { code: 'cancelled' });
  await assert.rejects(readRanges(new Blob([FILE]), [{ begin: 0, end: 500_000 }, { begin: 600_000, end: 700_000 }], 100_000, (offset) => {
    offsets.push(offset);
    if (offset === 200_000) throw refused;
  }), (e) => e === refused);
  assert.deepEqual(offsets, [0, 100_000, 200_000]);
});

test('readRanges refuses a chunk size that is not positive', async () => {
  await assert.rejects(readRanges(new Blob([FILE]), [{ begin: 0, end: 10 }], 0, () => {}), /chunkBytes must be positive/);
});
