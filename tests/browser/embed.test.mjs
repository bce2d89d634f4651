// <attention-playground> on a hostile host page: a strict Content-Security-Policy,
// CSS that tries to break everything, and two independent instances; plus the
// iframe form and the exports.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, readFileSync, copyFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startHarness, gotoAnew, ARTIFACTS, ROOT, WEB, WAIT, REVIEW_SHOTS, pageRelay } from './harness.mjs';
import { tempDir } from '../js/helpers.mjs';

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

/** The hostile host page with both elements ready; errors and requests hold this document's only.
 *  A host page (desktop size) a test is done with (release) serves the next: harness.mjs pageRelay. */
const relay = pageRelay({
  open: () => newHostPage(),
  load: async (page) => {
    await gotoAnew(page, `${h.url}__host/page.html`);
    await waitReady(page, ['a', 'b']);
  },
});
const release = relay.release;
const openHost = () => relay.take();

/** openHost in a new page. */
async function newHostPage() {
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
  }), ids, { timeout: WAIT });
}

const rendered = (page, id) => page.evaluate((i) => document.getElementById(i).shadowRoot.querySelector('[data-testid="panel"]').dataset.rendered, id);
const runs = (page, id) => page.evaluate((i) => Number(document.getElementById(i).shadowRoot.querySelector('.ap').dataset.run), id);

test('two instances on a hostile, strict-CSP page each render their own state', async () => {
  const opened = await openHost();
  const { page, errors } = opened;
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
  if (REVIEW_SHOTS) await page.screenshot({ path: join(ARTIFACTS, 'embed', 'hostile-host.png'), fullPage: true });
  release(opened);
});

test('the element makes no request to another origin', async () => {
  const opened = await openHost();
  const { page, requests } = opened;
  await page.evaluate(() => document.getElementById('a').goToStep('scores'));
  await page.waitForFunction(() => document.getElementById('a').shadowRoot.querySelector('[data-testid="panel"]').dataset.rendered === 'scores');
  const origin = new URL(h.url).origin;
  const foreign = requests.filter((u) => !u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:'));
  assert.deepEqual(foreign, []);
  // one file carries everything: no separate .wasm or .css request
  assert.deepEqual(requests.filter((u) => /\.wasm|style\.css|generated\//.test(u)), []);
  release(opened);
});

test('an attribute change updates only its own element', async () => {
  const opened = await openHost();
  const { page, errors } = opened;
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
  release(opened);
});

test('events fire with the right state, and play/pause/goToStep work', async () => {
  const opened = await openHost();
  const { page, errors } = opened;
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
  release(opened);
});

test('the PNG export is a valid non-blank image and the SVG parses', async () => {
  const opened = await openHost();
  const { page, errors } = opened;
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
  release(opened);
});

test('the export buttons and "Copy link" work inside the element', async () => {
  const opened = await openHost();
  const { page, errors } = opened;
  // controls="sentence,mask,step" on a: the export bar is hidden unless listed
  assert.equal(await page.locator('#a').getByRole('button', { name: 'Save SVG' }).isVisible(), false);
  await page.evaluate(() => document.getElementById('a').setAttribute('controls', 'all'));
  await waitReady(page, ['a']);
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#a').getByRole('button', { name: 'Save SVG' }).click()]);
  assert.match(download.suggestedFilename(), /^attention-softmax\.svg$/);
  await h.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(h.url).origin });
  await page.locator('#a').getByRole('button', { name: 'Copy link' }).click().finally(() => h.context.clearPermissions());
  // the script is served beside web/index.html, so the default playground is there, and it says so
  await page.waitForFunction(() => /^Link copied/.test(document.getElementById('a').shadowRoot.querySelector('.export-status').textContent));
  assert.equal(await page.evaluate(() => document.getElementById('a').shadowRoot.querySelector('.export-status').textContent),
    `Link copied: it opens this exact view in the playground at ${h.url}index.html.`);
  const link = await page.evaluate(() => document.getElementById('a').link());
  assert.match(link, /\/index\.html#/);
  // the link reproduces a's state in the full playground
  const full = await h.context.newPage();
  await full.goto(link);
  await full.waitForFunction(() => document.querySelector('[data-testid="panel"]')?.dataset.rendered === 'softmax', null, { timeout: WAIT });
  const state = await full.evaluate(async () => {
    const { parseHash } = await import('/app/playground/state.js');
    return parseHash(location.hash).state;
  });
  assert.equal(state.sentence, 'The cat sat on the mat.');
  assert.equal(state.step, 'softmax');
  assert.equal(state.query, 1);
  await full.close();
  assert.deepEqual(errors, []);
  release(opened);
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
  }, null, { timeout: WAIT });
  const state = await page.evaluate(() => document.querySelector('attention-playground').getState());
  assert.equal(state.sentence, 'Dogs chase cats');
  assert.equal(state.mask, 'causal');
  assert.equal(state.heads, 2);
  await page.evaluate(() => { location.hash = 'sentence=Birds%20fly&step=softmax'; });
  await page.waitForFunction(() => document.querySelector('attention-playground').shadowRoot.querySelector('[data-testid="panel"]').dataset.rendered === 'softmax');
  assert.equal((await page.evaluate(() => document.querySelector('attention-playground').getState())).sentence, 'Birds fly');
  mkdirSync(join(ARTIFACTS, 'embed'), { recursive: true });
  if (REVIEW_SHOTS) await page.screenshot({ path: join(ARTIFACTS, 'embed', 'iframe-form.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test('the element sizes to a narrow column without horizontal overflow', async () => {
  const opened = await openHost();
  const { page } = opened;
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForFunction(() => document.getElementById('a').shadowRoot.querySelector('.ap').getBoundingClientRect().width <= 390);
  const widths = await page.evaluate(() => ({
    page: document.scrollingElement.scrollWidth,
    a: document.getElementById('a').shadowRoot.querySelector('.ap').scrollWidth,
  }));
  assert.ok(widths.page <= 390, `page scroll width ${widths.page}`);
  assert.ok(widths.a <= 390, `element scroll width ${widths.a}`);
  mkdirSync(join(ARTIFACTS, 'embed'), { recursive: true });
  if (REVIEW_SHOTS) await page.screenshot({ path: join(ARTIFACTS, 'embed', 'narrow.png'), fullPage: true });
  await page.close(); // (resized: no other test's host page)
});

/** The element's snippet, verbatim: the first ```html block of docs/embedding.md (README.md shows a copy). */
function elementSnippet() {
  const doc = readFileSync(join(ROOT, 'docs', 'embedding.md'), 'utf8');
  const section = doc.slice(doc.indexOf('# Embedding in your page'));
  const m = /```html\n([\s\S]*?)```/.exec(section);
  assert.ok(m, 'docs/embedding.md has an html snippet under "Embedding in your page"');
  return m[1];
}

test('the element snippet of docs/embedding.md in a blank HTML file next to the built file works, opened from disk', async () => {
  const dir = tempDir('ap-blank-');
  copyFileSync(join(ROOT, 'web', 'attention-playground.js'), join(dir, 'attention-playground.js'));
  writeFileSync(join(dir, 'blank.html'), `<!doctype html>\n<meta charset="utf-8">\n<title>blank</title>\n${elementSnippet()}`);
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
  }, null, { timeout: WAIT });
  const state = await page.evaluate(() => document.querySelector('attention-playground').getState());
  assert.equal(state.mask, 'causal');
  assert.equal(state.step, 'masked');
  assert.deepEqual(requests.filter((u) => !u.startsWith('file:') && !u.startsWith('data:')), [], 'no network request');
  assert.deepEqual(errors, []);
  await page.close();
  rmSync(dir, { recursive: true, force: true });
});

test('the element snippet of docs/embedding.md works over http under the strict CSP', async () => {
  const page = await h.context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  const html = `<!doctype html>\n<meta charset="utf-8">\n<title>blank</title>\n${elementSnippet()}`;
  await page.route('**/__blank/page.html', (r) => r.fulfill({ contentType: 'text/html', body: html, headers: { 'content-security-policy': CSP } }));
  await page.route('**/__blank/attention-playground.js', (r) => r.fulfill({ path: join(ROOT, 'web', 'attention-playground.js'), contentType: 'text/javascript' }));
  await page.goto(`${h.url}__blank/page.html`);
  await page.waitForFunction(() => document.querySelector('attention-playground')?.shadowRoot?.querySelector('[data-testid="panel"]')?.dataset.rendered === 'masked', null, { timeout: WAIT });
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
  }, null, { timeout: WAIT });
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
  const opened = await openHost();
  const { page, errors } = opened;
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
  release(opened);
});

// ---- issue #16: embeds on someone else's site -----------------------------------

/** A teacher's page at /__teacher/, with the one file copied beside it (and no playground there). */
async function openTeacher(body, { csp = true } = {}) {
  const page = await h.context.newPage();
  const errors = [];
  const warnings = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()} (${m.location().url})`);
    if (m.type() === 'warning') warnings.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>teacher</title>
<script src="attention-playground.js" defer></script><script src="record.js" defer></script></head><body>${body}</body></html>`;
  await page.route('**/__teacher/page.html', (r) => r.fulfill({ contentType: 'text/html', body: html, headers: csp ? { 'content-security-policy': CSP } : {} }));
  await page.route('**/__teacher/record.js', (r) => r.fulfill({ contentType: 'text/javascript', body: `window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));` }));
  await page.route('**/__teacher/attention-playground.js', (r) => r.fulfill({ path: join(WEB, 'attention-playground.js'), contentType: 'text/javascript' }));
  await page.goto(`${h.url}__teacher/page.html`);
  const ids = await page.evaluate(() => [...document.querySelectorAll('attention-playground')].map((e) => e.id));
  await waitReady(page, ids);
  return { page, errors, warnings };
}

const statusOf = (page, id) => page.evaluate((i) => document.getElementById(i).shadowRoot.querySelector('.export-status').textContent, id);

/**
 * Clicks "Copy link" in element `id` and waits for the status it settles on. With
 * clipboard false the clipboard refuses (as without permission), so the element shows
 * the link to copy by hand.
 */
async function copyLink(page, id, { clipboard = true } = {}) {
  await page.evaluate(([i, ok]) => {
    document.getElementById(i).shadowRoot.querySelector('.export-status').textContent = '';
    if (!ok) navigator.clipboard.writeText = () => Promise.reject(new DOMException('denied', 'NotAllowedError'));
    else delete navigator.clipboard.writeText;
  }, [id, clipboard]);
  await page.locator(`#${id}`).getByRole('button', { name: 'Copy link' }).click();
  await page.waitForFunction((i) => document.getElementById(i).shadowRoot.querySelector('.export-status').textContent !== '', id);
  return statusOf(page, id);
}

test('playground-url: link() and "Copy link" open that playground in the element\'s state, and the status is true in both cases', async () => {
  // the playground on another origin (localhost, where the teacher's page is on 127.0.0.1)
  const elsewhere = h.url.replace('127.0.0.1', 'localhost');
  const { page, errors } = await openTeacher(`
<attention-playground id="lone" sentence="The cat sat on the mat." step="softmax" query="2" controls="all"></attention-playground>
<attention-playground id="pointed" playground-url="${elsewhere}index.html" sentence="Dogs chase cats." mask="causal" step="masked" query="1" heads="2" controls="all"></attention-playground>
<attention-playground id="relative" playground-url="../index.html" sentence="Birds sing." step="scores" controls="all"></attention-playground>`);
  const lone = `${h.url}__teacher/index.html`;
  // without the attribute: index.html beside the copied file, where there is no playground
  assert.equal(await page.evaluate(() => document.getElementById('lone').playgroundUrl), lone);
  assert.ok((await page.evaluate(() => document.getElementById('lone').link())).startsWith(`${lone}#`));
  assert.equal(await copyLink(page, 'lone', { clipboard: false }),
    `This link needs the playground at ${lone}, and there is none there (page authors: set playground-url). Copy it:`);
  assert.ok((await page.evaluate(() => document.getElementById('lone').shadowRoot.querySelector('.export-link').value)).startsWith(`${lone}#`), 'the link is shown to copy by hand');
  // with the clipboard, the same truth in the "copied" wording
  await h.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(h.url).origin });
  try {
    assert.equal(await copyLink(page, 'lone'),
      `Link copied, but it needs the playground at ${lone}, and there is none there (page authors: set playground-url).`);
    assert.ok((await page.evaluate(() => navigator.clipboard.readText())).startsWith(`${lone}#`));
    // an absolute playground-url on another origin is taken at its word (it cannot be checked from here)
    assert.equal(await copyLink(page, 'pointed'), `Link copied: it opens this exact view in the playground at ${elsewhere}index.html.`);
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(copied, await page.evaluate(() => document.getElementById('pointed').link()));
    // a relative one resolves against the page, and is checked: the real playground is there
    assert.equal(await copyLink(page, 'relative'), `Link copied: it opens this exact view in the playground at ${h.url}index.html.`);
    assert.equal(await copyLink(page, 'relative', { clipboard: false }), `Copy this link (it opens this exact view in the playground at ${h.url}index.html):`);
  } finally {
    await h.context.clearPermissions();
  }
  assert.equal(await statusOf(page, 'pointed'), `Link copied: it opens this exact view in the playground at ${elsewhere}index.html.`);

  // the link opens the real web/index.html on the other origin in the element's state
  const link = await page.evaluate(() => document.getElementById('pointed').link());
  assert.ok(link.startsWith(`${elsewhere}index.html#`), link);
  const full = await h.context.newPage();
  const fullErrors = [];
  full.on('pageerror', (e) => fullErrors.push(e.message));
  await full.goto(link);
  await full.waitForFunction(() => document.querySelector('.ap')?.dataset.state === 'ready' && document.querySelector('[data-testid="panel"]')?.dataset.rendered === 'masked', null, { timeout: WAIT });
  const want = await page.evaluate(() => document.getElementById('pointed').getState());
  const got = await full.evaluate(async () => {
    const { parseHash } = await import('/app/playground/state.js');
    return parseHash(location.hash).state;
  });
  for (const k of ['model', 'sentence', 'mask', 'step', 'query', 'heads', 'dModel', 'seed', 'head']) assert.deepEqual(got[k], want[k], k);
  assert.equal(await full.evaluate(() => [...document.querySelectorAll('[data-testid="token-chip"]')].findIndex((c) => c.getAttribute('aria-pressed') === 'true')), 1, 'the query token is selected');
  assert.deepEqual(fullErrors, []);
  await full.close();
  // checking the same-origin playground is allowed by the strict CSP, and nothing was blocked
  assert.deepEqual(await page.evaluate(() => window.__violations), []);
  // the one console error is the browser's note of the check that found no playground (once per URL)
  assert.deepEqual(errors, [`console: Failed to load resource: the server responded with a status of 404 (File not found) (${lone})`]);
  await page.close();
});

test('playground-url accepts only http(s) and relative URLs: anything else warns and links to the default', async () => {
  const { page, errors, warnings } = await openTeacher(`
<attention-playground id="js" playground-url="javascript:alert(document.domain)" controls="export"></attention-playground>
<attention-playground id="tabbed" playground-url=" java&#9;script:alert(1)" controls="export"></attention-playground>
<attention-playground id="data" playground-url="data:text/html,<script>alert(1)</script>" controls="export"></attention-playground>
<attention-playground id="folder" playground-url="https://example.org/attention/" controls="export"></attention-playground>
<attention-playground id="other" playground-url="page.html" controls="export"></attention-playground>`);
  const fallback = `${h.url}__teacher/index.html`;
  for (const id of ['js', 'tabbed', 'data']) {
    assert.equal(await page.evaluate((i) => document.getElementById(i).playgroundUrl, id), fallback, id);
    assert.ok((await page.evaluate((i) => document.getElementById(i).link(), id)).startsWith(`${fallback}#`), id);
  }
  assert.equal(warnings.filter((w) => /playground-url=".*" is not an http\(s\) or relative URL; links lead to .*__teacher\/index\.html instead\./s.test(w)).length, 3, warnings.join('\n'));
  assert.equal(await page.evaluate(() => document.getElementById('folder').playgroundUrl), 'https://example.org/attention/');
  // the fallback is checked like any default: no playground beside the file
  assert.match(await copyLink(page, 'js', { clipboard: false }), /^This link needs the playground at .*__teacher\/index\.html, and there is none there/);
  // a page that answers but is not the playground (here the teacher's own page) is no playground
  assert.equal(await copyLink(page, 'other', { clipboard: false }),
    `This link needs the playground at ${h.url}__teacher/page.html, and there is none there (page authors: set playground-url). Copy it:`);
  // a later valid value takes over (the element rebuilds, keeping its state)
  await page.evaluate(() => { document.getElementById('js').goToStep('scores'); document.getElementById('js').setAttribute('playground-url', '/index.html'); });
  await waitReady(page, ['js']);
  assert.equal(await page.evaluate(() => document.getElementById('js').getState().step), 'scores');
  assert.ok((await page.evaluate(() => document.getElementById('js').link())).startsWith(`${h.url}index.html#`));
  assert.deepEqual(errors, [`console: Failed to load resource: the server responded with a status of 404 (File not found) (${fallback})`]);
  await page.close();
});

test('embed.html ignores playground-url in its hash (its links open the playground beside it)', async () => {
  const page = await h.context.newPage();
  await page.goto(`${h.url}embed.html#sentence=Dogs%20chase%20cats&playground-url=https%3A%2F%2Fevil.example%2F&controls=export`);
  await page.waitForFunction(() => document.querySelector('attention-playground')?.shadowRoot?.querySelector('[data-testid="panel"]')?.dataset.rendered, null, { timeout: WAIT });
  // its own playground-url is the playground beside it, never the hash's
  assert.equal(await page.evaluate(() => document.querySelector('attention-playground').getAttribute('playground-url')), 'index.html');
  assert.ok((await page.evaluate(() => document.querySelector('attention-playground').link())).startsWith(`${h.url}index.html#`));
  await page.close();
});

/** The iframe snippet, verbatim: the ```html block under "Iframe form" in docs/embedding.md. */
function iframeSnippet() {
  const doc = readFileSync(join(ROOT, 'docs', 'embedding.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Iframe form'));
  const m = /```html\n([\s\S]*?)```/.exec(section);
  assert.ok(m, 'docs/embedding.md has an html snippet after "Iframe form"');
  return m[1];
}

test('the iframe snippet of docs/embedding.md with its listener sizes the iframe to its content: no inner scrollbar, no empty band', async () => {
  const snippet = iframeSnippet();
  assert.match(snippet, /event\.source === frame\.contentWindow/);
  assert.match(snippet, /'attention-playground:height'/);
  const page = await h.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.route('**/__outer.html', (r) => r.fulfill({ contentType: 'text/html', body: `<!doctype html><meta charset="utf-8"><title>outer</title>
<style>body { margin: 0 auto; max-width: 828px; }</style>
<p>Before the iframe.</p>
${snippet}
<p id="after">After the iframe.</p>` }));
  const fits = async () => {
    const frameEl = await page.$('iframe');
    const frame = await frameEl.contentFrame();
    await frame.waitForFunction(() => document.querySelector('attention-playground')?.shadowRoot?.querySelector('[data-testid="panel"]')?.dataset.rendered, null, { timeout: WAIT });
    // wait until the outer page applied the height the iframe reported
    await page.waitForFunction(() => {
      const f = document.querySelector('iframe');
      const d = f.contentDocument;
      const content = Math.ceil(d.querySelector('attention-playground').getBoundingClientRect().height);
      return f.clientHeight === content && d.documentElement.scrollHeight <= d.documentElement.clientHeight;
    }, null, { timeout: WAIT });
    return page.evaluate(() => {
      const f = document.querySelector('iframe');
      const d = f.contentDocument;
      return { frame: f.clientHeight, content: d.querySelector('attention-playground').getBoundingClientRect().height, scrollH: d.documentElement.scrollHeight, clientH: d.documentElement.clientHeight, attr: Number(f.getAttribute('height')) };
    });
  };
  await page.goto(`${h.url}__outer.html`);
  const wide = await fits();
  assert.ok(wide.scrollH <= wide.clientH, `no inner scrollbar: ${JSON.stringify(wide)}`);
  assert.ok(Math.abs(wide.frame - wide.content) < 1, `iframe ${wide.frame}px for ${wide.content}px of content`);
  // the snippet's default height is right for this width (within a line)
  assert.ok(Math.abs(wide.attr - wide.content) <= 24, `default height ${wide.attr} vs content ${wide.content}`);
  mkdirSync(join(ARTIFACTS, 'embed'), { recursive: true });
  if (REVIEW_SHOTS) await page.screenshot({ path: join(ARTIFACTS, 'embed', 'iframe-sized.png'), fullPage: true });
  // the content changes height (another step; a phone's width): the iframe follows, both ways
  const frame = await (await page.$('iframe')).contentFrame();
  await frame.evaluate(() => { location.hash = 'sentence=Dogs%20chase%20cats&step=embeddings&controls=none'; });
  await frame.waitForFunction(() => document.querySelector('attention-playground').shadowRoot.querySelector('[data-testid="panel"]').dataset.rendered === 'embeddings');
  const other = await fits();
  assert.notEqual(Math.round(other.content), Math.round(wide.content), 'the content height changed');
  assert.ok(Math.abs(other.frame - other.content) < 1, JSON.stringify(other));
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForFunction((h0) => document.querySelector('iframe').clientHeight !== h0, other.frame);
  const narrow = await fits();
  assert.ok(Math.abs(narrow.frame - narrow.content) < 1, JSON.stringify(narrow));
  // a message from anything but the iframe is ignored
  await page.evaluate(() => window.postMessage({ type: 'attention-playground:height', height: 5 }, '*'));
  await page.evaluate(() => new Promise((r) => { addEventListener('message', () => setTimeout(r), { once: true }); window.postMessage('flush', '*'); }));
  assert.equal(await page.evaluate(() => document.querySelector('iframe').clientHeight), narrow.frame);
  await page.setViewportSize({ width: 1280, height: 900 });
  assert.deepEqual(errors, []);
  await page.close();
});

const FONT_HOSTS = {
  'a !important rule on *': '* { font-size: 40px !important; line-height: 3 !important; letter-spacing: 4px !important; }',
  'a large html font size': 'html { font-size: 40px; } body { font-size: 2rem; line-height: 3; text-transform: uppercase; }',
};
const SENTENCE = 'The cat sat on the mat because it was tired.';

/** Font sizes and line heights inside element `id`, and whether its token list fits. */
function measureFonts(page, id) {
  return page.evaluate((i) => {
    const root = document.getElementById(i).shadowRoot;
    const px = (sel, prop = 'fontSize') => parseFloat(getComputedStyle(root.querySelector(sel))[prop]);
    const chips = root.querySelector('[data-testid="chips"]');
    const card = root.querySelector('.card-sentence').getBoundingClientRect();
    const chipBoxes = [...root.querySelectorAll('[data-testid="token-chip"]')].map((c) => c.getBoundingClientRect());
    return {
      ap: px('.ap'), lineHeight: px('.ap', 'lineHeight'), chip: px('[data-testid="token-chip"]'), title: px('.card-title'),
      status: px('.export-status'), letterSpacing: getComputedStyle(root.querySelector('.chip')).letterSpacing,
      transform: getComputedStyle(root.querySelector('.chip')).textTransform,
      chips: { scrollW: chips.scrollWidth, clientW: chips.clientWidth, scrollH: chips.scrollHeight, clientH: chips.clientHeight },
      chipsInside: chipBoxes.every((b) => b.left >= card.left && b.right <= card.right && b.bottom <= card.bottom),
      count: chipBoxes.length,
    };
  }, id);
}

for (const [name, css] of Object.entries(FONT_HOSTS)) {
  test(`host CSS with ${name} does not reach the element's text; --ap-font-size sets its size`, async () => {
    const body = `<p>Host text</p>
<attention-playground id="plain" sentence="${SENTENCE}" mask="causal" step="masked" query="7" controls="sentence,export"></attention-playground>
<attention-playground id="sized" style="--ap-font-size: 20px" sentence="${SENTENCE}" mask="causal" step="masked" query="7" controls="sentence,export"></attention-playground>`;
    // the same two elements on a page with no CSS of its own (and no CSP, which would block the style attribute)
    const neutral = await openTeacher(body, { csp: false });
    const want = await measureFonts(neutral.page, 'plain');
    const wantSized = await measureFonts(neutral.page, 'sized');
    await neutral.page.close();
    const page = await h.context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.route('**/__fonts/page.html', (r) => r.fulfill({ contentType: 'text/html', body: `<!doctype html><html><head><meta charset="utf-8"><title>fonts</title>
<link rel="stylesheet" href="host.css"><script src="/attention-playground.js" defer></script></head><body>${body}</body></html>` }));
    await page.route('**/__fonts/host.css', (r) => r.fulfill({ contentType: 'text/css', body: css }));
    await page.goto(`${h.url}__fonts/page.html`);
    await waitReady(page, ['plain', 'sized']);
    // the host's rule did apply to the host's own text
    assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('p')).fontSize), name.startsWith('a !important') ? '40px' : '80px');
    const got = await measureFonts(page, 'plain');
    assert.equal(got.ap, 16);
    assert.equal(got.lineHeight, 16 * 1.45);
    for (const k of ['chip', 'title', 'status']) assert.equal(got[k], want[k], `${k}: ${got[k]}px, ${want[k]}px on a plain page`);
    assert.equal(got.letterSpacing, 'normal');
    assert.equal(got.transform, 'none');
    assert.equal(got.count, 11);
    assert.ok(got.chips.scrollW <= got.chips.clientW && got.chips.scrollH <= got.chips.clientH, `token list not clipped: ${JSON.stringify(got.chips)}`);
    assert.ok(got.chipsInside, 'every token chip inside its card');
    // --ap-font-size: 20px scales the element's text by 20/16, on both pages alike
    const sized = await measureFonts(page, 'sized');
    assert.equal(sized.ap, 20);
    assert.equal(sized.chip, want.chip * 20 / 16);
    assert.equal(sized.chip, wantSized.chip);
    assert.ok(sized.chips.scrollW <= sized.chips.clientW && sized.chips.scrollH <= sized.chips.clientH, `token list not clipped at 20px: ${JSON.stringify(sized.chips)}`);
    mkdirSync(join(ARTIFACTS, 'embed'), { recursive: true });
    if (REVIEW_SHOTS) await page.screenshot({ path: join(ARTIFACTS, 'embed', `fonts-${name.startsWith('a !important') ? 'star' : 'html'}.png`), fullPage: true });
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('a playground URL baked in at build time (PLAYGROUND_URL) is the default, and an attribute still wins', async () => {
  const elsewhere = `${h.url.replace('127.0.0.1', 'localhost')}index.html`;
  const dir = tempDir('ap-baked-');
  const out = join(dir, 'attention-playground.js');
  execFileSync('python3', [join(ROOT, 'src', 'tools', 'bundle_element.py'), join(WEB, 'element.js'), join(ROOT, 'build', 'wasm', 'attention_core.js'),
    join(WEB, 'style.css'), out, `coreference=${join(ROOT, 'models', 'coreference.safetensors')}`, `--playground-url=${elsewhere}`]);
  const page = await h.context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.route('**/__baked/page.html', (r) => r.fulfill({ contentType: 'text/html', headers: { 'content-security-policy': CSP }, body: `<!doctype html><meta charset="utf-8"><title>baked</title>
<script src="attention-playground.js" defer></script>
<attention-playground id="baked" sentence="Dogs chase cats." step="softmax" controls="export"></attention-playground>
<attention-playground id="own" playground-url="/index.html" sentence="Dogs chase cats." step="softmax" controls="export"></attention-playground>` }));
  await page.route('**/__baked/attention-playground.js', (r) => r.fulfill({ path: out, contentType: 'text/javascript' }));
  await page.goto(`${h.url}__baked/page.html`);
  await waitReady(page, ['baked', 'own']);
  assert.equal(await page.evaluate(() => document.getElementById('baked').playgroundUrl), elsewhere);
  assert.ok((await page.evaluate(() => document.getElementById('baked').link())).startsWith(`${elsewhere}#`));
  assert.equal(await page.evaluate(() => document.getElementById('own').playgroundUrl), `${h.url}index.html`);
  assert.equal(await copyLink(page, 'baked', { clipboard: false }), `Copy this link (it opens this exact view in the playground at ${elsewhere}):`);
  assert.deepEqual(errors, []);
  await page.close();
  rmSync(dir, { recursive: true, force: true });
});
