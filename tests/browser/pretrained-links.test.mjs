// A link that names a pretrained model fetches nothing until the reader asks
// (issue #36, 1): index.html#model=url:… and #model=hf:…, embed.html#model-src=…
// and #hub-base=…&model-src=hf:…, against the local stand-in for the Hub
// (tests/js/hub-server.mjs) on its own port: a second origin, as another site
// would be. Opening the link sends that origin no request; the page says which
// model and where from; "Check its size" asks for config.json and the weights'
// size only; "Download …" loads it. Picking another model meanwhile ends the
// question with nothing fetched. (A page author's own <attention-playground
// model-src> loads as it opens: pretrained.test.mjs.)

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { startHarness, waitReady, WAIT } from './harness.mjs';
import { startHubServer, readModelFolder } from '../js/hub-server.mjs';
import { hubFolders } from '../js/pretrained.mjs';
import { formatBytes } from '../../web/app/kit/format.js';

const SENTENCE = 'the cat sat on the mat';
const IDS = ['link/page', 'link/hash', 'link/embed', 'link/embed-hub'];

let h;
let hub;
let dir;
let size;
before(async () => {
  dir = hubFolders(['gpt2-vocab'], { withTokenizer: ['gpt2-vocab'] });
  const folder = readModelFolder(join(dir, 'gpt2-vocab'));
  size = folder['model.safetensors'].length;
  hub = await startHubServer(Object.fromEntries(IDS.map((id) => [id, folder])));
  h = await startHarness();
  assert.notEqual(new URL(hub.base).origin, new URL(h.url).origin, 'two origins');
});
after(async () => {
  await h?.close();
  await hub?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const asked = (id) => hub.log.filter((r) => r.url.startsWith(`/${id}/`)).map((r) => `${r.method} ${r.url.slice(id.length + 2)}`);
const folderOf = (id) => `${hub.base}/${id}/resolve/main/`;

/** The message that asks. */
const asking = (page) => page.getByTestId('message-info').filter({ hasText: 'This link names a pretrained model' });

/** The question's text once shown (in the page, or an element's shadow root: Playwright looks inside). */
async function question(page) {
  await page.getByTestId('ask-look').waitFor();
  return asking(page).textContent();
}

/** "Check its size": only config.json and the weights' size are asked for; the answer names the size. */
async function checkSize(page, id) {
  await page.getByTestId('ask-look').click();
  const download = page.getByTestId('ask-download');
  await download.waitFor();
  assert.deepEqual(asked(id).sort(), ['GET resolve/main/config.json', 'HEAD resolve/main/model.safetensors']);
  assert.equal(await download.textContent(), `Download ${formatBytes(size)}`);
  const text = await asking(page).textContent();
  assert.match(text, /a GPT-2 model, 2 layers \u00d7 2 heads, C = 8, vocabulary 50,257/);
  assert.match(text, new RegExp(`Its weights \\(model\\.safetensors\\) are ${formatBytes(size).replace('.', '\\.')}`));
  return download;
}

test('index.html#model=url:<another origin>: no request until the click; the page says where from; then it loads', async () => {
  const id = 'link/page';
  const { page, errors } = await h.open(`#model=url:${encodeURIComponent(folderOf(id))}&s=${encodeURIComponent(SENTENCE)}`, { model: null, wait: false });
  const text = await question(page);
  assert.match(text, /This link names a pretrained model:/);
  assert.ok(text.includes(`the model in ${folderOf(id)}, whose files come from ${hub.base}. Nothing is fetched from there until you ask.`), text);
  assert.match(await page.getByTestId('panel-status').textContent(), /not loaded: .*Nothing is fetched until you ask/);
  assert.deepEqual(asked(id), [], 'no request reached the other origin');
  const download = await checkSize(page, id);
  await download.click();
  await waitReady(page);
  assert.equal(await page.getByTestId('model-picker').inputValue(), `url:${folderOf(id)}`);
  assert.ok(asked(id).includes('GET resolve/main/model.safetensors'));
  assert.equal(await page.getByTestId('ask-look').count(), 0, 'the question is gone');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a link pasted into an open page (#model=hf:…) asks too; picking another model ends the question with nothing fetched', async () => {
  const id = 'link/hash';
  const { page, errors } = await h.open('#s=Dogs+bark.', { init: `window.attentionPlaygroundHub = ${JSON.stringify(hub.base)};` });
  await page.evaluate((x) => { location.hash = `#model=hf:${x}&s=Dogs+bark.`; }, id);
  const text = await question(page);
  assert.ok(text.includes(`${id} on the Hugging Face Hub, whose files come from ${hub.base} (a copy of the Hub the link names).`), text);
  await page.getByTestId('model-picker').selectOption('random');
  await page.getByTestId('ask-look').waitFor({ state: 'detached' });
  await waitReady(page);
  assert.deepEqual(asked(id), []);
  assert.deepEqual(errors, []);
  await page.close();
});

/** embed.html with this hash: the element's state and panel once it has drawn. */
async function openEmbed(hash) {
  const page = await h.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // the element loads in the page (no worker file beside the bundle): the optional files' 404s show in its console
  page.on('console', (m) => { if (m.type() === 'error' && !/404/.test(m.text())) errors.push(m.text()); });
  await page.goto(`${h.url}embed.html${hash}`);
  return { page, errors };
}

const drawn = (page) => page.waitForFunction(() => {
  const root = document.querySelector('attention-playground')?.shadowRoot?.querySelector('.ap');
  return root?.dataset.run && root.querySelector('[data-testid="panel"]')?.dataset.rendered;
}, null, { timeout: WAIT });

test('embed.html#model-src=<another origin\u2019s folder>: the element asks before it fetches, then loads', async () => {
  const id = 'link/embed';
  const { page, errors } = await openEmbed(`#model-src=${encodeURIComponent(folderOf(id))}&sentence=${encodeURIComponent(SENTENCE)}`);
  const text = await question(page);
  assert.ok(text.includes(`whose files come from ${hub.base}`), text);
  assert.deepEqual(asked(id), []);
  await (await checkSize(page, id)).click();
  await drawn(page);
  assert.equal(await page.evaluate(() => document.querySelector('attention-playground').getState().model), `url:${folderOf(id)}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('embed.html#hub-base=<another origin>&model-src=hf:…: the origin the hash names is shown, and asked nothing until the click', async () => {
  const id = 'link/embed-hub';
  const { page, errors } = await openEmbed(`#hub-base=${encodeURIComponent(hub.base)}&model-src=hf:${id}&sentence=${encodeURIComponent(SENTENCE)}`);
  const text = await question(page);
  assert.ok(text.includes(`${id} on the Hugging Face Hub, whose files come from ${hub.base} (a copy of the Hub the link names)`), text);
  assert.deepEqual(asked(id), []);
  await (await checkSize(page, id)).click();
  await drawn(page);
  assert.equal(await page.evaluate(() => document.querySelector('attention-playground').getState().model), `hf:${id}`);
  assert.deepEqual(errors, []);
  await page.close();
});
