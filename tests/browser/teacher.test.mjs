// A teacher's page on its own site, in Chromium: the playground's site (web/,
// served by the harness) and the teacher's (a temp folder) are two servers on
// two 127.0.0.1 ports, so two origins, as on the web. The script from the
// playground's site loads both shipped models (no CORS needed), a lone copied
// file says which file it misses without widening a phone's page, "Open in the
// full playground" works by default, and an iframe below the fold reports its
// final height once, before it is seen.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startHarness, startServer, ARTIFACTS, ROOT, WEB, WAIT } from './harness.mjs';
import { tempDir } from '../js/helpers.mjs';

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };
const SHOTS = join(ARTIFACTS, 'teacher');

let h; // the playground's site
let teacherDir;
let teacher; // the teacher's site
before(async () => {
  h = await startHarness();
  teacherDir = tempDir('ap-teacher-');
  teacher = await startServer(teacherDir);
  mkdirSync(SHOTS, { recursive: true });
  assert.notEqual(new URL(h.url).origin, new URL(teacher.url).origin, 'two origins');
});
after(async () => {
  await teacher?.close();
  await h?.close();
  rmSync(teacherDir, { recursive: true, force: true });
});

/** Opens the teacher's page `name` (written into the teacher's folder) and records errors and requests. */
async function openTeacherPage(name, html, viewport = DESKTOP) {
  writeFileSync(join(teacherDir, name), html);
  const page = await h.context.newPage();
  await page.setViewportSize(viewport);
  const errors = [];
  const requests = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(teacher.url + name);
  return { page, errors, requests };
}

/** Every element is ready and drew its step, or shows an error. */
function settled(page) {
  return page.waitForFunction(() => [...document.querySelectorAll('attention-playground')].every((el) => {
    const root = el.shadowRoot;
    return root?.querySelector('[data-testid="message-error"]')
      || (root?.querySelector('.ap')?.dataset.state === 'ready' && root.querySelector('[data-testid="panel"]')?.dataset.rendered);
  }), null, { timeout: WAIT });
}

const seen = (page) => page.evaluate(() => Object.fromEntries([...document.querySelectorAll('attention-playground')].map((el) => {
  const open = el.shadowRoot.querySelector('[data-testid="open-playground"]');
  return [el.id, {
    model: el.getState().model,
    error: el.shadowRoot.querySelector('[data-testid="message-error"]')?.textContent ?? null,
    tokens: [...el.shadowRoot.querySelectorAll('[data-testid="token-chip"]')].map((x) => x.textContent.trim()),
    open: open ? { tag: open.tagName.toLowerCase(), href: open.getAttribute('href'), text: open.textContent, visible: open.getBoundingClientRect().height > 0 } : null,
  }];
})));

test('the script from the playground\u2019s site, on a teacher\u2019s site: both shipped models load (the server sends no CORS header), and the link opens that playground', async () => {
  const { page, errors, requests } = await openTeacherPage('lesson.html', `<!doctype html>
<meta charset="utf-8"><title>A lesson</title><link rel="icon" href="data:,">
<p>Attention, in a trained model:</p>
<attention-playground id="language" model="language" sentence="The cat sat on the mat." step="softmax" controls="step"></attention-playground>
<attention-playground id="coreference" model="coreference" sentence="The trophy did not fit in the suitcase because it was too big." step="softmax" controls="none"></attention-playground>
<script src="${h.url}attention-playground.js" defer></script>`);
  await settled(page);
  const s = await seen(page);
  for (const name of ['language', 'coreference']) {
    assert.equal(s[name].error, null, `${name}: ${s[name].error}`);
    assert.equal(s[name].model, name);
    assert.ok(s[name].tokens.length > 3, `${name} tokens: ${s[name].tokens.join(' | ')}`);
    // visible without `export` in controls, and it leads to the playground the script came from
    assert.equal(s[name].open.tag, 'a');
    assert.ok(s[name].open.visible);
    assert.ok(s[name].open.href.startsWith(`${h.url}index.html#`), s[name].open.href);
  }
  assert.match(s.language.open.href, /model=language/);
  // the language model came as a script from the playground's site, once
  assert.deepEqual(requests.filter((u) => /generated\/models\//.test(u)), [`${h.url}generated/models/language.js`]);
  // what a fetch() of the .safetensors would have met: the server allows no other origin to read it
  const fetched = await page.evaluate((u) => fetch(u).then(() => 'read', (e) => `refused: ${e.name}`), `${h.url}generated/models/language.safetensors`);
  assert.equal(fetched, 'refused: TypeError');
  // the link opens the same view in the playground
  const href = s.language.open.href;
  const pg = await h.context.newPage();
  await pg.goto(href);
  await pg.waitForFunction(() => document.querySelector('.ap')?.dataset.state === 'ready' && document.querySelector('[data-testid="panel"]')?.dataset.rendered === 'softmax', null, { timeout: WAIT });
  assert.equal(await pg.evaluate(() => document.querySelector('.sentence-input, textarea, input[type="text"]')?.value ?? ''), 'The cat sat on the mat.');
  await pg.close();
  await page.screenshot({ path: join(SHOTS, 'cross-origin-desktop.png'), fullPage: true });
  assert.deepEqual(errors.filter((e) => !/Access-Control-Allow-Origin|Failed to load resource: net::ERR_FAILED/.test(e)), []);
  await page.close();
});

test('one copied file on a phone: the missing language model is named in text that wraps within 390 px, and the full playground opens in place', async () => {
  copyFileSync(join(WEB, 'attention-playground.js'), join(teacherDir, 'attention-playground.js'));
  const { page, errors } = await openTeacherPage('phone.html', `<!doctype html>
<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>A lesson</title><link rel="icon" href="data:,">
<p>Attention, in a trained model:</p>
<attention-playground id="language" model="language" sentence="The cat sat on the mat." step="softmax" controls="step"></attention-playground>
<attention-playground id="plain" sentence="Dogs chase cats." step="softmax" query="1" controls="none"></attention-playground>
<script src="attention-playground.js" defer></script>`, PHONE);
  await settled(page);
  const s = await seen(page);
  assert.match(s.language.error, new RegExp(`${teacher.url.replace(/[.]/g, '\\.')}generated/models/language\\.js`));
  assert.match(s.language.error, /Copy generated\/models\/language\.js/);
  const widths = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    boxes: [...document.getElementById('language').shadowRoot.querySelectorAll('[data-testid="message-error"], .panel')].map((x) => x.getBoundingClientRect().right),
  }));
  assert.ok(widths.page <= PHONE.width, `page ${widths.page} px wide`);
  for (const right of widths.boxes) assert.ok(right <= PHONE.width, `a box ends at ${right} px`);
  await page.screenshot({ path: join(SHOTS, 'lone-file-phone.png'), fullPage: true });
  // the playground is not beside this file: the button opens it in place, in this state
  assert.deepEqual([s.plain.open.tag, s.plain.open.visible], ['button', true]);
  await page.locator('#plain').getByTestId('open-playground').click();
  await page.waitForFunction(() => {
    const d = document.getElementById('plain').shadowRoot.querySelector('dialog.ap-full');
    return d?.open && d.querySelector('.ap')?.dataset.state === 'ready' && d.querySelector('[data-testid="panel"]')?.dataset.rendered === 'softmax';
  }, null, { timeout: WAIT });
  const full = await page.evaluate(() => {
    const d = document.getElementById('plain').shadowRoot.querySelector('dialog.ap-full');
    const r = d.getBoundingClientRect();
    return {
      compact: d.querySelector('.ap').classList.contains('ap--compact'),
      steps: d.querySelectorAll('.step-btn').length,
      tokens: [...d.querySelectorAll('[data-testid="token-chip"]')].map((x) => x.textContent.trim()),
      box: [r.width, r.height],
      scroll: d.scrollWidth <= d.clientWidth,
      concepts: d.querySelectorAll('[data-testid="concepts-link"]').length,
    };
  });
  assert.equal(full.compact, false, 'the full view');
  assert.ok(full.steps >= 10, `every step: ${full.steps}`);
  assert.ok(full.tokens.join(' ').includes('Dogs'), full.tokens.join(' | '));
  assert.deepEqual(full.box, [PHONE.width, PHONE.height], 'it covers the screen');
  assert.ok(full.scroll, 'no sideways scroll inside');
  assert.equal(full.concepts, 0, 'no link to a concept lab that is not here');
  await page.screenshot({ path: join(SHOTS, 'in-place-phone.png') });
  await page.locator('#plain').getByTestId('close-playground').click();
  await page.waitForFunction(() => !document.getElementById('plain').shadowRoot.querySelector('dialog'));
  assert.equal(await page.evaluate(() => document.getElementById('plain').getState().step), 'softmax', 'the figure is as the teacher set it');
  // opened again, then the element leaves the page: the playground in place goes with it
  await page.locator('#plain').getByTestId('open-playground').click();
  await page.waitForFunction(() => document.getElementById('plain').shadowRoot.querySelector('dialog.ap-full')?.open);
  await page.evaluate(() => { window.removed = document.getElementById('plain'); window.removed.remove(); });
  await page.waitForFunction(() => !window.removed.shadowRoot.querySelector('dialog'));
  // the one failed request is the missing model's script
  assert.deepEqual(errors, ['Failed to load resource: the server responded with a status of 404 (File not found)']);
  await page.close();
});

test('an iframe below the fold of a phone page, from another origin, reports its final height once, before it is seen', async () => {
  const doc = readFileSync(join(ROOT, 'docs', 'embedding.md'), 'utf8');
  const snippet = /```html\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf('## Iframe form')))[1].replace('src="embed.html', `src="${h.url}embed.html`);
  const { page, errors } = await openTeacherPage('iframe.html', `<!doctype html>
<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>A lesson</title><link rel="icon" href="data:,">
<script>
  window.heights = [];
  addEventListener('message', (e) => { if (e.data?.type === 'attention-playground:height') heights.push(e.data.height); });
</script>
<p style="height: 2000px">A long lesson before the figure.</p>
${snippet}
<p id="after">After the figure.</p>`, PHONE);
  await page.waitForFunction(() => window.heights.length > 0, null, { timeout: WAIT });
  const frame = page.frames().find((f) => f.url().startsWith(`${h.url}embed.html`));
  const content = () => frame.evaluate(() => Math.ceil(document.querySelector('attention-playground').getBoundingClientRect().height));
  const frames = (n) => frame.evaluate((k) => new Promise((resolve) => {
    const next = (i) => (i === 0 ? resolve() : requestAnimationFrame(() => next(i - 1)));
    next(k);
  }), n);
  await frame.waitForFunction(() => document.querySelector('attention-playground').shadowRoot.querySelector('[data-testid="panel"]')?.dataset.rendered === 'softmax');
  await frames(3);
  const before = await page.evaluate(() => ({ heights: [...window.heights], frame: document.querySelector('iframe').clientHeight, top: document.querySelector('iframe').getBoundingClientRect().top }));
  assert.ok(before.top > PHONE.height, 'the iframe is below the screen');
  assert.equal(before.heights.length, 1, `one report: ${before.heights}`);
  assert.equal(before.heights[0], await content(), 'the drawn height');
  assert.equal(before.frame, before.heights[0]);
  // scrolled to: the same height, no second report, the lesson stays where it was
  const afterTop = await page.evaluate(() => document.getElementById('after').getBoundingClientRect().top + scrollY);
  await page.evaluate(() => document.querySelector('iframe').scrollIntoView());
  await frames(5);
  const now = await page.evaluate(() => ({ heights: [...window.heights], top: document.getElementById('after').getBoundingClientRect().top + scrollY }));
  assert.deepEqual(now.heights, before.heights);
  assert.equal(now.top, afterTop);
  assert.equal(await content(), before.heights[0]);
  await page.screenshot({ path: join(SHOTS, 'iframe-phone.png') });
  assert.deepEqual(errors, []);
  await page.close();
});
