// <attention-playground> on a hostile host page: a strict Content-Security-Policy,
// CSS that tries to break everything, and two independent instances; plus the
// iframe form and the exports.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, readFileSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startHarness, ARTIFACTS, ROOT } from './harness.mjs';

const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";

const HOST_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>host</title>
<link rel="stylesheet" href="/__host/hostile.css">
<script type="module" src="/attention-playground.js"></script>
<script type="module" src="/__host/host.js"></script>
</head><body>
<div class="outside" id="outside">host content</div>
<p id="para">A paragraph of the host's tutorial.</p>
<attention-playground id="a" sentence="The cat sat on the mat." step="softmax" query="1" controls="sentence,mask,step"></attention-playground>
<attention-playground id="b" sentence="Dogs bark at night loudly." mask="causal" step="masked" d-model="8" heads="2" controls="none" theme="dark"></attention-playground>
</body></html>`;

// Hostile CSS: resets everything, hides every div, restyles buttons and canvases.
const HOSTILE_CSS = `* { all: unset; }
div { display: none !important; }
button, select, input, canvas { display: none !important; color: red !important; }
.ap, .card, .ap-frame { display: none !important; }
:root { --bg: red; --text: red; --surface: red; }`;

// Records CSP violations and the events of both instances.
const HOST_JS = `window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
window.__events = [];
for (const id of ['a', 'b']) {
  const el = document.getElementById(id);
  el.addEventListener('attention-change', (e) => window.__events.push({ id, type: e.type, step: e.detail.state.step, sentence: e.detail.state.sentence }));
  el.addEventListener('attention-step', (e) => window.__events.push({ id, type: e.type, step: e.detail.state.step }));
}`;

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

async function openHost() {
  const page = await h.context.newPage();
  const errors = [];
  const requests = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('request', (r) => requests.push(r.url()));
  const headers = { 'content-security-policy': CSP };
  await page.route('**/__host/page.html', (r) => r.fulfill({ contentType: 'text/html', body: HOST_HTML, headers }));
  await page.route('**/__host/hostile.css', (r) => r.fulfill({ contentType: 'text/css', body: HOSTILE_CSS }));
  await page.route('**/__host/host.js', (r) => r.fulfill({ contentType: 'text/javascript', body: HOST_JS }));
  await page.goto(`${h.url}__host/page.html`);
  await waitReady(page, ['a', 'b']);
  return { page, errors, requests };
}

/** Both instances ran the engine and drew their step. */
async function waitReady(page, ids) {
  await page.waitForFunction((list) => list.every((id) => {
    const root = document.getElementById(id)?.shadowRoot;
    const ap = root?.querySelector('.ap');
    return ap?.dataset.state === 'ready' && ap.dataset.run && root.querySelector('[data-testid="panel"]')?.dataset.rendered;
  }), ids, { timeout: 20000 });
}

const rendered = (page, id) => page.evaluate((i) => document.getElementById(i).shadowRoot.querySelector('[data-testid="panel"]').dataset.rendered, id);
const runs = (page, id) => page.evaluate((i) => Number(document.getElementById(i).shadowRoot.querySelector('.ap').dataset.run), id);

test('two instances on a hostile, strict-CSP page each render their own state', async () => {
  const { page, errors } = await openHost();
  assert.equal(await rendered(page, 'a'), 'softmax');
  assert.equal(await rendered(page, 'b'), 'masked');
  const a = await page.evaluate(() => document.getElementById('a').getState());
  const b = await page.evaluate(() => document.getElementById('b').getState());
  assert.equal(a.sentence, 'The cat sat on the mat.');
  assert.equal(b.sentence, 'Dogs bark at night loudly.');
  assert.equal(b.mask, 'causal');
  assert.equal(b.dModel, 8);
  assert.equal(b.heads, 2);
  // the hostile CSS did not reach inside: the panels are laid out and visible
  for (const id of ['a', 'b']) {
    const box = await page.evaluate((i) => {
      const r = document.getElementById(i).shadowRoot.querySelector('[data-testid="panel"]').getBoundingClientRect();
      return { w: r.width, h: r.height };
    }, id);
    assert.ok(box.w > 200 && box.h > 200, `${id} panel is laid out (${box.w}×${box.h})`);
  }
  // our CSS did not leak out: the host's own div stays hidden by the host's rule
  assert.equal(await page.evaluate(() => getComputedStyle(document.getElementById('outside')).display), 'none');
  // only the requested controls exist visibly: a shows the sentence box, b shows none
  assert.equal(await page.locator('#a').getByLabel('Sentence', { exact: true }).isVisible(), true);
  assert.equal(await page.locator('#b').getByLabel('Sentence', { exact: true }).isVisible(), false);
  assert.equal(await page.locator('#b').getByRole('button', { name: 'Next step' }).isVisible(), false);
  assert.deepEqual(await page.evaluate(() => window.__violations), [], 'no CSP violation');
  assert.deepEqual(errors, [], 'no console errors');
  mkdirSync(join(ARTIFACTS, 'embed'), { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, 'embed', 'hostile-host.png'), fullPage: true });
  await page.close();
});

test('the element makes no request to another origin', async () => {
  const { page, requests } = await openHost();
  await page.evaluate(() => document.getElementById('a').goToStep('scores'));
  await page.waitForFunction(() => document.getElementById('a').shadowRoot.querySelector('[data-testid="panel"]').dataset.rendered === 'scores');
  const origin = new URL(h.url).origin;
  const foreign = requests.filter((u) => !u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:'));
  assert.deepEqual(foreign, []);
  // one file carries everything: no separate .wasm or .css request
  assert.deepEqual(requests.filter((u) => /\.wasm|style\.css|generated\//.test(u)), []);
  await page.close();
});

test('an attribute change updates only its own element', async () => {
  const { page, errors } = await openHost();
  const runsB = await runs(page, 'b');
  const runsA = await runs(page, 'a');
  await page.evaluate(() => document.getElementById('a').setAttribute('sentence', 'Birds sing every morning here.'));
  await page.waitForFunction((n) => Number(document.getElementById('a').shadowRoot.querySelector('.ap').dataset.run) > n, runsA);
  assert.equal((await page.evaluate(() => document.getElementById('a').getState())).sentence, 'Birds sing every morning here.');
  assert.equal(await runs(page, 'b'), runsB, 'b did not rerun');
  assert.equal((await page.evaluate(() => document.getElementById('b').getState())).sentence, 'Dogs bark at night loudly.');
  // a step attribute moves the view; a layout attribute rebuilds it, keeping the state
  await page.evaluate(() => document.getElementById('b').setAttribute('step', 'softmax'));
  await page.waitForFunction(() => document.getElementById('b').shadowRoot.querySelector('[data-testid="panel"]').dataset.rendered === 'softmax');
  await page.evaluate(() => document.getElementById('b').setAttribute('controls', 'step'));
  await waitReady(page, ['b']);
  assert.equal(await page.locator('#b').getByRole('button', { name: 'Next step' }).isVisible(), true);
  assert.equal((await page.evaluate(() => document.getElementById('b').getState())).step, 'softmax');
  assert.equal(await rendered(page, 'a'), 'softmax');
  assert.deepEqual(errors, []);
  await page.close();
});

test('events fire with the right state, and play/pause/goToStep work', async () => {
  const { page, errors } = await openHost();
  await page.evaluate(() => { window.__events = []; document.getElementById('a').goToStep('scaled'); });
  await page.waitForFunction(() => window.__events.some((e) => e.id === 'a' && e.type === 'attention-step' && e.step === 'scaled'));
  const events = await page.evaluate(() => window.__events);
  assert.ok(events.some((e) => e.id === 'a' && e.type === 'attention-change' && e.step === 'scaled'));
  assert.ok(events.every((e) => e.id === 'a'), 'b fired nothing');
  await assert.rejects(page.evaluate(() => document.getElementById('a').goToStep('nope')), /unknown step "nope"/);
  await page.evaluate(() => document.getElementById('a').play());
  assert.equal(await page.evaluate(() => document.getElementById('a').playing), true);
  await page.evaluate(() => document.getElementById('a').pause());
  assert.equal(await page.evaluate(() => document.getElementById('a').playing), false);
  // typing in a's sentence box fires attention-change with the new sentence
  await page.evaluate(() => { window.__events = []; });
  const box = page.locator('#a').getByLabel('Sentence', { exact: true });
  await box.fill('A new sentence for a.');
  await page.waitForFunction(() => window.__events.some((e) => e.id === 'a' && e.sentence === 'A new sentence for a.'));
  assert.deepEqual(errors, []);
  await page.close();
});

test('the PNG export is a valid non-blank image and the SVG parses', async () => {
  const { page, errors } = await openHost();
  const png = await page.evaluate(async () => {
    const blob = await document.getElementById('a').exportPng();
    const bytes = new Uint8Array(await blob.arrayBuffer());
    const bitmap = await createImageBitmap(blob);
    const c = new OffscreenCanvas(bitmap.width, bitmap.height);
    const ctx = c.getContext('2d');
    ctx.drawImage(bitmap, 0, 0);
    const px = ctx.getImageData(0, 0, bitmap.width, bitmap.height).data;
    const colours = new Set();
    for (let i = 0; i < px.length; i += 4 * 97) colours.add(`${px[i]},${px[i + 1]},${px[i + 2]}`);
    return { type: blob.type, magic: [...bytes.slice(0, 8)], width: bitmap.width, height: bitmap.height, colours: colours.size, size: bytes.length, data: [...bytes] };
  });
  assert.equal(png.type, 'image/png');
  assert.deepEqual(png.magic, [137, 80, 78, 71, 13, 10, 26, 10]);
  assert.ok(png.width > 300 && png.height > 200, `${png.width}×${png.height}`);
  assert.ok(png.colours > 10, `non-blank: ${png.colours} colours sampled`);
  mkdirSync(join(ARTIFACTS, 'embed'), { recursive: true });
  writeFileSync(join(ARTIFACTS, 'embed', 'export.png'), Buffer.from(png.data));

  const svg = await page.evaluate(() => {
    const text = document.getElementById('b').exportSvg();
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    const err = doc.querySelector('parsererror');
    return { ok: !err, root: doc.documentElement.nodeName, rects: doc.querySelectorAll('rect').length, texts: [...doc.querySelectorAll('text')].map((t) => t.textContent), text };
  });
  assert.ok(svg.ok, 'SVG parses');
  assert.equal(svg.root, 'svg');
  // b is on the mask step: 6 tokens (5 words + '.')? — "Dogs bark at night loudly." = 6 tokens → 36 cells + background
  assert.equal(svg.rects, 36 + 1);
  assert.ok(svg.texts.includes('\u2212\u221e'), 'masked cells are written as −∞');
  assert.ok(svg.texts.some((t) => t.startsWith('Masked scores')));
  writeFileSync(join(ARTIFACTS, 'embed', 'export.svg'), svg.text);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the export buttons and "Copy link" work inside the element', async () => {
  const { page, errors } = await openHost();
  // controls="sentence,mask,step" on a: the export bar is hidden unless listed
  assert.equal(await page.locator('#a').getByRole('button', { name: 'Save SVG' }).isVisible(), false);
  await page.evaluate(() => document.getElementById('a').setAttribute('controls', 'all'));
  await waitReady(page, ['a']);
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#a').getByRole('button', { name: 'Save SVG' }).click()]);
  assert.match(download.suggestedFilename(), /^attention-softmax\.svg$/);
  await page.locator('#a').getByRole('button', { name: 'Copy link' }).click();
  await page.waitForFunction(() => /Link copied|Copy this link/.test(document.getElementById('a').shadowRoot.querySelector('.export-status').textContent));
  const link = await page.evaluate(() => document.getElementById('a').link());
  assert.match(link, /\/index\.html#/);
  // the link reproduces a's state in the full playground
  const full = await h.context.newPage();
  await full.goto(link);
  await full.waitForFunction(() => document.querySelector('[data-testid="panel"]')?.dataset.rendered === 'softmax', null, { timeout: 20000 });
  const state = await full.evaluate(async () => {
    const { parseHash } = await import('/app/state.js');
    return parseHash(location.hash).state;
  });
  assert.equal(state.sentence, 'The cat sat on the mat.');
  assert.equal(state.step, 'softmax');
  assert.equal(state.query, 1);
  await full.close();
  assert.deepEqual(errors, []);
  await page.close();
});

test('the iframe form renders the state from its URL and follows hash changes', async () => {
  const page = await h.context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.route('**/embed.html', async (route) => {
    const response = await route.fetch();
    await route.fulfill({ response, headers: { ...response.headers(), 'content-security-policy': CSP } });
  });
  await page.goto(`${h.url}embed.html#sentence=Dogs%20chase%20cats&step=scores&mask=causal&heads=2&controls=none`);
  await page.waitForFunction(() => {
    const root = document.querySelector('attention-playground')?.shadowRoot;
    return root?.querySelector('[data-testid="panel"]')?.dataset.rendered === 'scores' && root.querySelector('.ap').dataset.run;
  }, null, { timeout: 20000 });
  const state = await page.evaluate(() => document.querySelector('attention-playground').getState());
  assert.equal(state.sentence, 'Dogs chase cats');
  assert.equal(state.mask, 'causal');
  assert.equal(state.heads, 2);
  await page.evaluate(() => { location.hash = 'sentence=Birds%20fly&step=softmax'; });
  await page.waitForFunction(() => document.querySelector('attention-playground').shadowRoot.querySelector('[data-testid="panel"]').dataset.rendered === 'softmax');
  assert.equal((await page.evaluate(() => document.querySelector('attention-playground').getState())).sentence, 'Birds fly');
  mkdirSync(join(ARTIFACTS, 'embed'), { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, 'embed', 'iframe-form.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test('the element sizes to a narrow column without horizontal overflow', async () => {
  const { page } = await openHost();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForFunction(() => document.getElementById('a').shadowRoot.querySelector('.ap').getBoundingClientRect().width <= 390);
  const widths = await page.evaluate(() => ({
    page: document.scrollingElement.scrollWidth,
    a: document.getElementById('a').shadowRoot.querySelector('.ap').scrollWidth,
  }));
  assert.ok(widths.page <= 390, `page scroll width ${widths.page}`);
  assert.ok(widths.a <= 390, `element scroll width ${widths.a}`);
  mkdirSync(join(ARTIFACTS, 'embed'), { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, 'embed', 'narrow.png'), fullPage: true });
  await page.close();
});

/** The README's snippet, verbatim: the first ```html block under "Embedding in your page". */
function readmeSnippet() {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Embedding in your page'));
  const m = /```html\n([\s\S]*?)```/.exec(section);
  assert.ok(m, 'the README has an html snippet under "Embedding in your page"');
  return m[1];
}

test('the README snippet in a blank HTML file next to the built file works, opened from disk', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ap-blank-'));
  copyFileSync(join(ROOT, 'web', 'attention-playground.js'), join(dir, 'attention-playground.js'));
  writeFileSync(join(dir, 'blank.html'), `<!doctype html>\n<meta charset="utf-8">\n<title>blank</title>\n${readmeSnippet()}`);
  const page = await h.context.newPage();
  const errors = [];
  const requests = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(pathToFileURL(join(dir, 'blank.html')).href);
  await page.waitForFunction(() => {
    const root = document.querySelector('attention-playground')?.shadowRoot;
    return root?.querySelector('.ap')?.dataset.state === 'ready' && root.querySelector('[data-testid="panel"]')?.dataset.rendered === 'masked';
  }, null, { timeout: 20000 });
  const state = await page.evaluate(() => document.querySelector('attention-playground').getState());
  assert.equal(state.mask, 'causal');
  assert.equal(state.step, 'masked');
  assert.deepEqual(requests.filter((u) => !u.startsWith('file:') && !u.startsWith('data:')), [], 'no network request');
  assert.deepEqual(errors, []);
  await page.close();
  rmSync(dir, { recursive: true, force: true });
});

test('the README snippet works over http under the strict CSP', async () => {
  const page = await h.context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  const html = `<!doctype html>\n<meta charset="utf-8">\n<title>blank</title>\n${readmeSnippet()}`;
  await page.route('**/__blank/page.html', (r) => r.fulfill({ contentType: 'text/html', body: html, headers: { 'content-security-policy': CSP } }));
  await page.route('**/__blank/attention-playground.js', (r) => r.fulfill({ path: join(ROOT, 'web', 'attention-playground.js'), contentType: 'text/javascript' }));
  await page.goto(`${h.url}__blank/page.html`);
  await page.waitForFunction(() => document.querySelector('attention-playground')?.shadowRoot?.querySelector('[data-testid="panel"]')?.dataset.rendered === 'masked', null, { timeout: 20000 });
  // links point next to the script, where index.html lives in a real install
  assert.match(await page.evaluate(() => document.querySelector('attention-playground').link()), /\/__blank\/index\.html#/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('embed.html with a sentence cut at the length cap inside an emoji draws the step', async () => {
  const page = await h.context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${h.url}embed.html#sentence=${'a'.repeat(19999)}${encodeURIComponent('\u{1F600}')}&step=softmax&controls=none`);
  await page.waitForFunction(() => {
    const root = document.querySelector('attention-playground')?.shadowRoot;
    return root?.querySelector('[data-testid="panel"]')?.dataset.rendered || root?.querySelector('[data-testid="message-error"]');
  }, null, { timeout: 20000 });
  const seen = await page.evaluate(() => {
    const root = document.querySelector('attention-playground').shadowRoot;
    return { error: root.querySelector('[data-testid="message-error"]')?.textContent ?? null, step: root.querySelector('[data-testid="panel"]').dataset.rendered, run: root.querySelector('.ap').dataset.run };
  });
  assert.equal(seen.error, null);
  assert.equal(seen.step, 'softmax');
  assert.ok(seen.run, 'the engine ran');
  assert.equal((await page.evaluate(() => document.querySelector('attention-playground').getState())).sentence, 'a'.repeat(19999));
  assert.deepEqual(errors, []);
  await page.close();
});

test('an exported SVG is well-formed XML for tokens XML forbids (U+FFFE, U+FFFF, controls)', async () => {
  // U+FFFE and U+FFFF are letters to the tokenizer but not XML characters:
  // the SVG did not parse. Now they become U+FFFD in the figure's labels.
  const { page, errors } = await openHost();
  const sentence = 'a\uFFFEb c\uFFFFd x\u0001y \uDBFF\uDFFF z';
  await page.evaluate((s) => document.getElementById('a').setAttribute('sentence', s), sentence);
  await page.waitForFunction((s) => document.getElementById('a').getState().sentence === s
    && document.getElementById('a').shadowRoot.querySelector('[data-testid="panel"]')?.dataset.rendered === 'softmax', sentence);
  for (const step of ['softmax', 'embeddings']) {
    await page.evaluate((st) => document.getElementById('a').goToStep(st), step);
    const svg = await page.evaluate(() => {
      const text = document.getElementById('a').exportSvg();
      const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
      return { error: doc.querySelector('parsererror')?.textContent ?? null, labels: [...doc.querySelectorAll('text')].map((t) => t.textContent) };
    });
    assert.equal(svg.error, null, `${step}: the SVG parses`);
    assert.ok(svg.labels.includes('a\uFFFDb'), `${step}: U+FFFE shown as U+FFFD: ${svg.labels.slice(0, 12).join(' | ')}`);
    assert.ok(svg.labels.includes('c\uFFFDd'), `${step}: U+FFFF shown as U+FFFD`);
    assert.ok(svg.labels.includes('\uDBFF\uDFFF'), `${step}: U+10FFFF, a valid XML character, kept`);
  }
  assert.deepEqual(errors, []);
  await page.close();
});
