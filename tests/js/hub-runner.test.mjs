// The pretrained-model worker's runner (web/app/hub/runner.js) loading from the
// local stand-in for the Hub (hub-server.mjs) through an in-memory Cache Storage:
// a load that fails forgets the model's files, so that the next try (the page's
// "Download again") asks the server again and works once the server is fixed,
// rather than meet the same bad copy from the cache for good.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { createEngine } from '../../web/engine.js';
import { createHubRunner } from '../../web/app/hub/runner.js';
import { HUB_CACHE } from '../../web/app/hub/source.js';
import { startHubServer, readModelFolder, memoryCaches } from './hub-server.mjs';
import { hubFolders, gpt2ConfigText } from './pretrained.mjs';

let engine;
let hub;
let dir;
let folder;
before(async () => {
  engine = await createEngine();
  dir = hubFolders(['gpt2-vocab'], { withTokenizer: ['gpt2-vocab'] });
  folder = readModelFolder(join(dir, 'gpt2-vocab'));
  hub = await startHubServer({});
});
after(async () => {
  delete globalThis.caches;
  engine?.dispose();
  await hub?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Loads Hub model `id` in a new runner: its last reply ('loaded' or 'error'). */
async function load(id) {
  const replies = [];
  const runner = createHubRunner((msg) => replies.push(msg), { loadEngine: async () => engine });
  await runner.onMessage({ type: 'load', source: { kind: 'hub', base: hub.base, id } });
  runner.dispose();
  return replies.at(-1);
}

const cachedUrls = async (id) => (await (await globalThis.caches.open(HUB_CACHE)).keys()).map((k) => k.url).filter((u) => u.includes(`/${id}/`));
/** Requests of the whole file (a range request, for the header alone, is not one) since log entry `from`. */
const asked = (from, id, file) => hub.log.slice(from).filter((r) => r.url === `/${id}/resolve/main/${file}` && r.range === null).length;

test('a model.safetensors cut short with a clean end: refused, forgotten; once the server has the whole file, the next try downloads and loads it', async () => {
  globalThis.caches = memoryCaches();
  const id = 'cut/gpt2';
  const whole = folder['model.safetensors'];
  hub.models[id] = { ...folder, 'model.safetensors': whole.subarray(0, whole.length - 1000) };
  for (let attempt = 0; attempt < 2; attempt++) {
    const failed = await load(id);
    assert.equal(failed.type, 'error');
    assert.equal(failed.code, 'bad_download');
    assert.equal(failed.file, 'model.safetensors');
    assert.match(failed.message, /^model\.safetensors from http:\/\/127\.0\.0\.1:\d+\/cut\/gpt2\/resolve\/main\/model\.safetensors has [\d,]+ bytes; its header says the file holds [\d,]+: the download was cut short/);
    assert.equal(failed.forgotten, true, 'the copy in this browser was removed');
    assert.deepEqual(await cachedUrls(id), [], 'nothing of the model is kept');
  }
  hub.models[id]['model.safetensors'] = whole;
  const from = hub.requests.length;
  const loaded = await load(id);
  assert.equal(loaded.type, 'loaded', JSON.stringify(loaded));
  assert.equal(asked(from, id, 'model.safetensors'), 1, 'the whole file was asked for again');
  assert.equal(asked(from, id, 'config.json'), 1);
});

test('a config.json that is JSON but not a config (or a page served as one): refused, forgotten, and fetched again once fixed', async () => {
  globalThis.caches = memoryCaches();
  const id = 'odd/gpt2';
  for (const bad of ['{"model_type": "gpt2", "n_layer": "twelve"}', '<!doctype html><title>Sign in</title>']) {
    hub.models[id] = { ...folder, 'config.json': bad };
    const failed = await load(id);
    assert.equal(failed.type, 'error', bad);
    assert.equal(failed.file, 'config.json', bad);
    assert.deepEqual(await cachedUrls(id), [], `${bad}: nothing kept`);
  }
  hub.models[id]['config.json'] = folder['config.json'];
  const from = hub.requests.length;
  assert.equal((await load(id)).type, 'loaded');
  assert.equal(asked(from, id, 'config.json'), 1);
});

test('a load that fails once everything is cached (a tokenizer the engine refuses) forgets every file of the model', async () => {
  globalThis.caches = memoryCaches();
  const id = 'badtok/gpt2';
  hub.models[id] = { ...folder, 'tokenizer.json': '{"model": {"type": "Unigram"}}' };
  const failed = await load(id);
  assert.equal(failed.type, 'error');
  assert.equal(failed.forgotten, true);
  assert.deepEqual(await cachedUrls(id), []);
  hub.models[id] = { ...folder };
  assert.equal((await load(id)).type, 'loaded');
  assert.ok((await cachedUrls(id)).length >= 3);
});

test('a model too large for the engine (GPT-2 large\u2019s config.json) is refused from config.json alone: neither its tokenizer nor its weights are asked for, and no retry is offered', async () => {
  globalThis.caches = memoryCaches();
  const id = 'large/gpt2';
  hub.models[id] = { ...folder, 'config.json': gpt2ConfigText({ V: 50257, T: 1024, C: 1280, L: 36, H: 20 }) };
  const from = hub.requests.length;
  const failed = await load(id);
  assert.equal(failed.type, 'error');
  assert.equal(failed.code, 'too_large');
  assert.equal(failed.file, 'config.json');
  assert.match(failed.message, /^the model has 774030080 parameters \(3\.1 GB as float32\), above the 2\.1 GB this engine holds, as its config\.json says: its model\.safetensors was not downloaded\. Pick a smaller model$/);
  assert.equal(failed.forgotten, false, 'not offered as worth another download');
  assert.deepEqual(hub.requests.slice(from).filter((u) => !u.endsWith('/config.json')), [], 'only config.json was asked for');
  assert.deepEqual(await cachedUrls(id), [], 'nothing of it is kept');
});

test('a model.safetensors whose header describes more than the file holds, in dropped files: refused before the engine allocates the model', async () => {
  const whole = folder['model.safetensors'];
  const short = whole.subarray(0, whole.length - 1000);
  const files = Object.entries({ ...folder, 'model.safetensors': short }).map(([name, data]) => new File([data], name));
  const replies = [];
  const before = engine.memoryBytes();
  const runner = createHubRunner((msg) => replies.push(msg), { loadEngine: async () => engine });
  await runner.onMessage({ type: 'load', source: { kind: 'files', files } });
  runner.dispose();
  const failed = replies.at(-1);
  assert.equal(failed.type, 'error');
  assert.equal(failed.code, 'bad_checkpoint');
  assert.equal(failed.file, 'model.safetensors');
  assert.match(failed.message, new RegExp(`^model\\.safetensors has ${short.length.toLocaleString('en-US')} bytes; its header says the file holds ${whole.length.toLocaleString('en-US')}: the file is cut short, or its header is wrong$`));
  assert.equal(engine.memoryBytes(), before);
});

test('with a server that answers range requests, a model.safetensors whose header does not fit config.json is refused from its header alone: the file is never downloaded whole', async () => {
  globalThis.caches = memoryCaches();
  hub.ranges = true;
  try {
    const id = 'shape/gpt2';
    // config.json says a wider model than the file's tensors: the first shape the engine checks is off
    const config = JSON.parse(folder['config.json'].toString());
    hub.models[id] = { ...folder, 'config.json': JSON.stringify({ ...config, n_embd: config.n_embd * 2 }) };
    const from = hub.log.length;
    const failed = await load(id);
    assert.equal(failed.type, 'error');
    assert.equal(failed.code, 'bad_checkpoint');
    assert.equal(failed.file, 'model.safetensors');
    assert.match(failed.message, /shape/);
    const weights = hub.log.slice(from).filter((r) => r.url === `/${id}/resolve/main/model.safetensors`);
    assert.ok(weights.length > 0, 'its header was read');
    assert.ok(weights.every((r) => r.range !== null), `only ranges of it were asked for: ${JSON.stringify(weights)}`);
    assert.deepEqual((await cachedUrls(id)).filter((u) => u.endsWith('model.safetensors')), [], 'nothing of the weights is kept');
  } finally {
    hub.ranges = false;
  }
});

test('with a server that answers range requests, a model.safetensors cut short is refused from its header and its size: no download', async () => {
  globalThis.caches = memoryCaches();
  hub.ranges = true;
  try {
    const id = 'cut-ranged/gpt2';
    const whole = folder['model.safetensors'];
    hub.models[id] = { ...folder, 'model.safetensors': whole.subarray(0, whole.length - 1000) };
    const from = hub.log.length;
    const failed = await load(id);
    assert.equal(failed.type, 'error');
    assert.equal(failed.code, 'bad_checkpoint');
    assert.equal(failed.file, 'model.safetensors');
    assert.match(failed.message, /the file is truncated/);
    const weights = hub.log.slice(from).filter((r) => r.url === `/${id}/resolve/main/model.safetensors`);
    assert.ok(weights.length > 0 && weights.every((r) => r.range !== null), `only ranges: ${JSON.stringify(weights)}`);
    // once the server has the whole file, the same page loads it, ranges and all
    hub.models[id]['model.safetensors'] = whole;
    const loaded = await load(id);
    assert.equal(loaded.type, 'loaded', JSON.stringify(loaded));
  } finally {
    hub.ranges = false;
  }
});

test('memory: the engine heap in bytes (0 before the engine exists), for the benchmark (bench/modern_page.mjs)', async () => {
  globalThis.caches = memoryCaches();
  const id = 'memory/gpt2';
  hub.models[id] = folder;
  const replies = [];
  const runner = createHubRunner((msg) => replies.push(msg), { loadEngine: async () => engine });
  try {
    await runner.onMessage({ type: 'memory', req: 3 });
    assert.deepEqual(replies.at(-1), { type: 'memory', req: 3, memoryBytes: 0 });
    await runner.onMessage({ type: 'load', source: { kind: 'hub', base: hub.base, id } });
    const loaded = replies.at(-1);
    assert.equal(loaded.type, 'loaded', JSON.stringify(loaded));
    await runner.onMessage({ type: 'memory', req: 4 });
    assert.deepEqual(replies.at(-1), { type: 'memory', req: 4, memoryBytes: engine.memoryBytes() });
    assert.ok(replies.at(-1).memoryBytes >= loaded.info.memoryBytes);
  } finally {
    runner.dispose();
  }
});
