// "Load a model…": pretrained checkpoints in the playground, fetched from a
// local stand-in for the Hugging Face Hub (tests/js/hub-server.mjs; no
// internet here) or given as files. Progress and Cancel, the cache (no request
// the second time), a 404 naming the file, a bad folder keeping the old model,
// model=hf:… in the URL, <attention-playground model-src>, and the real
// model's tokens and numbers against the native CLI. Screenshots of the loader
// and its progress bar at 1280×900 and 390×844 go to tests/artifacts/pretrained/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startHarness, waitReady, runCount, artifactDir, pageScrollWidth } from './harness.mjs';
import { startHubServer } from '../js/hub-server.mjs';

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const SHOTS = artifactDir('pretrained');

let h;
let hub;
before(async () => {
  hub = await startHubServer({
    // a model whose files are there but the weights (hub.hold keeps config.json waiting)
    'slow/config': { 'config.json': `{"model_type": "gpt2", "padding": "${'x'.repeat(200000)}"}` },
  });
  h = await startHarness();
});
after(async () => {
  await h?.close();
  await hub?.close();
});

/** The playground on random weights, its Hub at the local server. */
function openPage(hash = '', options = {}) {
  const base = hub.base;
  return h.open(hash, { ...options, init: `window.attentionPlaygroundHub = ${JSON.stringify(base)};` });
}

async function openLoader(page) {
  await page.getByTestId('model-picker').selectOption('load:');
  await page.getByTestId('hub-loader').waitFor({ state: 'visible' });
}

async function fetchId(page, id) {
  await page.getByTestId('hub-id').fill(id);
  await page.getByTestId('hub-fetch').click();
}

test('a Hub model that does not exist: the 404 names the file and its address, the page keeps its model', async () => {
  const { page, errors } = await openPage('#s=Dogs+bark.');
  const runs = await runCount(page);
  await openLoader(page);
  await fetchId(page, 'nobody/nothing');
  const error = page.getByTestId('hub-error');
  await error.waitFor({ state: 'visible' });
  const text = await error.textContent();
  assert.match(text, /nobody\/nothing \(Hub\) could not be loaded:/);
  assert.match(text, new RegExp(`config\\.json was not found at ${hub.base.replace(/[.]/g, '\\.')}/nobody/nothing/resolve/main/config\\.json \\(HTTP 404\\)`));
  assert.match(text, /The page still shows random weights/);
  assert.equal(await page.getByTestId('model-picker').inputValue(), 'random');
  assert.equal(await runCount(page), runs, 'no new run: the random-weights trace stays');
  assert.equal(await page.getByTestId('panel').getAttribute('data-rendered'), 'embeddings');
  assert.ok(hub.requests.includes('/nobody/nothing/resolve/main/config.json'));
  assert.deepEqual(errors.filter((e) => !/404/.test(e)), []);
});

test('an id that is not a Hub id is refused in the box, with nothing fetched', async () => {
  const { page } = await openPage();
  await openLoader(page);
  const before = hub.requests.length;
  await fetchId(page, '../../etc/passwd');
  await page.getByTestId('hub-error').waitFor({ state: 'visible' });
  assert.match(await page.getByTestId('hub-error').textContent(), /That is not a Hub model id/);
  assert.equal(await page.getByTestId('hub-id').getAttribute('aria-invalid'), 'true');
  assert.equal(hub.requests.length, before);
});

test('a folder without config.json says which file is missing and keeps the old model', async () => {
  const { page, errors } = await openPage('#s=Dogs+bark.');
  const runs = await runCount(page);
  await openLoader(page);
  await page.getByTestId('hub-files').setInputFiles([
    { name: 'vocab.txt', mimeType: 'text/plain', buffer: Buffer.from('[PAD]\n[UNK]\n') },
    { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.alloc(16) },
  ]);
  await page.getByTestId('hub-error').waitFor({ state: 'visible' });
  assert.match(await page.getByTestId('hub-error').textContent(), /could not be loaded: there is no config\.json among the files given/);
  assert.equal(await page.getByTestId('model-picker').inputValue(), 'random');
  assert.equal(await runCount(page), runs);
  assert.deepEqual(errors, []);
});

test('a download shows its file, bytes and a progress bar; Cancel stops it and keeps nothing in the cache', async () => {
  for (const [name, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
    const { page, errors } = await openPage('#s=Dogs+bark.', { viewport });
    await openLoader(page);
    await page.screenshot({ path: join(SHOTS, `loader-${name}.png`), fullPage: false });
    const held = hub.hold('slow/config', 'config.json');
    await fetchId(page, 'slow/config');
    await held.reached;
    const progress = page.getByTestId('hub-progress');
    await progress.waitFor({ state: 'visible' });
    await page.waitForFunction(() => /Downloading config\.json: [\d.]+ MB of [\d.]+ MB/.test(document.querySelector('[data-testid="hub-progress-text"]')?.textContent ?? ''));
    const bar = await page.getByTestId('hub-bar').evaluate((b) => ({ value: b.value, max: b.max }));
    assert.ok(bar.value > 0 && bar.value < bar.max, `the bar is part-way: ${bar.value} of ${bar.max}`);
    assert.equal(await page.getByTestId('hub-fetch').isDisabled(), true);
    await page.getByTestId('hub-progress').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, `progress-${name}.png`), fullPage: false });
    assert.ok(await pageScrollWidth(page) <= viewport.width, 'no sideways scrolling');
    await page.getByTestId('hub-cancel').click();
    await progress.waitFor({ state: 'hidden' });
    held.release();
    assert.equal(await page.getByTestId('hub-error').isVisible(), false, 'a cancel is not an error');
    assert.equal(await page.getByTestId('hub-fetch').isDisabled(), false);
    assert.equal(await page.getByTestId('model-picker').inputValue(), 'random');
    const cached = await page.evaluate(async () => (await (await caches.open('attention-playground-hub-v1')).keys()).map((r) => r.url));
    assert.deepEqual(cached.filter((u) => u.includes('slow/config')), []);
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test('the picker offers "Load a model…" and never makes it the model; Close hides the loader', async () => {
  const { page } = await openPage();
  const options = await page.getByTestId('model-picker').evaluate((s) => [...s.options].map((o) => o.textContent));
  assert.equal(options.at(-1), 'Load a model\u2026');
  await openLoader(page);
  assert.equal(await page.getByTestId('model-picker').inputValue(), 'random');
  await page.getByTestId('hub-close').click();
  await page.getByTestId('hub-loader').waitFor({ state: 'hidden' });
  await waitReady(page);
});
