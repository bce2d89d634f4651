// The first ten minutes of a newcomer (issue #40), at desktop 1280×800 and phone
// 390×844: the tour waits for the learner, says where it is and stops on
// demand (item 1); a step change shows its heading and first line below the
// sticky stepper (item 2); the phone opens at the sentence, its sticky stepper
// is compact, "scroll →" and the tap card cover no cell (item 3); a trimmed
// link keeps the page's model (item 7); an export names model, layer and head
// (item 8); at the sentence box, experiments that work and one click to a real
// model, its size first (item 4); glosses and the steps with nothing to show
// (item 5); the load panel's error where the user acted (item 10), sizes in
// human units (11), a loaded model opening on a meaningful head (12), said to be
// what is known of it (13), the Hub mirror in the panel and the link (15); the
// phone's stepper strip clear of the Learn label. The Hub is a local stand-in
// (tests/js/hub-server.mjs). Screenshots go to tests/artifacts/first-minutes/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { rmSync } from 'node:fs';
import { startHarness, waitStep, waitReady, artifactDir, pageScrollWidth, hashState, WAIT, pageRelay } from './harness.mjs';
import { startHubServer, readModelFolder } from '../js/hub-server.mjs';
import { hubFolders } from '../js/pretrained.mjs';

/** The real model the sentence box offers (web/app/playground/experiments.js REAL_MODEL). */
const REAL_MODEL = 'hf:HuggingFaceTB/SmolLM2-135M';

let h;
let hub;
let dir;
before(async () => {
  // a random-weights GPT-2 in the Hub's layout, served as the real model the page offers and as a plain id
  dir = hubFolders(['gpt2-vocab'], { withTokenizer: ['gpt2-vocab'] });
  const folder = readModelFolder(join(dir, 'gpt2-vocab'));
  hub = await startHubServer({ [REAL_MODEL.slice(3)]: folder, 'tiny/gpt2': folder });
  h = await startHarness();
});
after(async () => {
  await h?.close();
  await hub?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };

/** A page a test is done with (release) serves the next openAt(hash, viewport): harness.mjs pageRelay. */
const relay = pageRelay({
  open: (hash, { viewport } = {}) => h.open(hash, { model: null, viewport }),
  load: (page, hash) => h.reload(page, hash, { model: null }),
});
const release = relay.release;
const openAt = (hash, viewport) => relay.take(hash, { viewport });
const shot = (page, name) => page.screenshot({ path: join(artifactDir('first-minutes'), `${name}.png`) });

/** Waits until the step's heading and its first line of text are in view below the sticky stepper. */
async function waitHeadingInView(page, step) {
  await page.waitForFunction((s) => {
    const section = document.querySelector(`section[data-step="${s}"]`);
    const head = document.querySelector('[data-testid="step-title"]').closest('.panel-header').getBoundingClientRect();
    const stepper = document.querySelector('.card-stepper').getBoundingClientRect();
    const walk = document.createTreeWalker(section, NodeFilter.SHOW_TEXT);
    let line = null;
    for (let n = walk.nextNode(); n && !line; n = walk.nextNode()) {
      if (!n.data.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      const box = range.getClientRects()[0];
      if (box && box.height > 0) line = box;
    }
    return line && stepper.top >= -1 && head.top >= stepper.bottom - 1 && line.bottom <= innerHeight;
  }, step, { timeout: WAIT });
}

for (const [name, viewport] of Object.entries(SIZES)) {
  test(`${name}: the tour waits for Next, says where it is, and stops (item 1)`, async () => {
    const opened = await openAt('', viewport);
    const { page, errors } = opened;
    await waitStep(page, 'heads');
    await page.getByTestId('tour-start').click();
    await waitStep(page, 'embeddings');
    assert.equal(await page.getByTestId('tour-where').textContent(), 'Tour \u00b7 1 of 12');
    assert.equal(await page.getByTestId('tour-next').textContent(), 'Next: Position \u25b6');
    assert.equal(await page.getByTestId('play').isVisible(), false, 'the tour has no clock to play');
    // it never moves on by itself: 3 s is longer than the old 1.6 s a step
    await page.waitForTimeout(3000);
    assert.equal(await page.getByTestId('panel').getAttribute('data-rendered'), 'embeddings');
    await waitHeadingInView(page, 'embeddings');
    await shot(page, `${name}-tour-1`);
    await page.getByTestId('tour-next').click();
    await waitStep(page, 'positional');
    assert.equal(await page.getByTestId('tour-where').textContent(), 'Tour \u00b7 2 of 12');
    await page.getByTestId('tour-next').click();
    await waitStep(page, 'input');
    assert.equal(await page.getByTestId('tour-where').textContent(), 'Tour \u00b7 3 of 12');
    await waitHeadingInView(page, 'input');
    // the tour's row takes the transport's place: the sticky stepper grows by no line
    const tall = await page.locator('.card-stepper').evaluate((c) => c.getBoundingClientRect().height);
    assert.ok(name === 'desktop' || tall <= 110, `the phone's stepper in the tour is ${tall} px tall`);
    await shot(page, `${name}-tour-3`);
    await page.getByTestId('tour-back').click();
    await waitStep(page, 'positional');
    assert.ok(await pageScrollWidth(page) <= viewport.width);
    // Escape stops it: the transport is back, the step stays
    await page.keyboard.press('Escape');
    await page.getByTestId('play').waitFor();
    assert.equal(await page.getByTestId('tour-row').isVisible(), false);
    assert.equal(await page.getByTestId('panel').getAttribute('data-rendered'), 'positional');
    // End tour stops it too; on the last step Next says Finish and ends it
    await page.locator('.step-btn[data-step="heads"]').click();
    await waitStep(page, 'heads');
    await page.getByTestId('tour-start').click();
    await waitStep(page, 'embeddings');
    await page.getByTestId('tour-end').click();
    await page.getByTestId('play').waitFor();
    await page.getByTestId('tour-start').evaluate(() => {}); // still there on the heads step (not shown now)
    assert.deepEqual(errors, []);
    release(opened);
  });

  test(`${name}: after a step change the step's heading and first line are in view below the stepper (item 2)`, async () => {
    const opened = await openAt('', viewport);
    const { page, errors } = opened;
    await waitStep(page, 'heads');
    for (const step of ['embeddings', 'scores', 'softmax', 'output']) {
      await page.locator(`.step-btn[data-step="${step}"]`).click();
      await waitStep(page, step);
      await waitHeadingInView(page, step);
    }
    await page.getByRole('button', { name: 'Previous step' }).click();
    await waitStep(page, 'concat');
    await waitHeadingInView(page, 'concat');
    await shot(page, `${name}-step-concat`);
    assert.deepEqual(errors, []);
    release(opened);
  });
}

test('phone: opens at the sentence (no scroll of its own); the sticky stepper is compact (item 3)', async () => {
  const opened = await openAt('', SIZES.phone);
  const { page, errors } = opened;
  await waitStep(page, 'heads');
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  assert.equal(await page.evaluate(() => scrollY), 0, 'the page stays where the learner opened it');
  const box = await page.getByLabel('Sentence', { exact: true }).boundingBox();
  assert.ok(box.y >= 0 && box.y + box.height <= 844, 'the sentence box is on screen');
  await shot(page, 'phone-load');
  const stepperHeight = await page.locator('.card-stepper').evaluate((c) => c.getBoundingClientRect().height);
  assert.ok(stepperHeight <= 110, `the sticky stepper is ${stepperHeight} px tall (175 before)`);
  // the Learn row sits beside the strip of steps, not under it, and is still there
  const rows = await page.evaluate(() => {
    const r = (s) => document.querySelector(s).getBoundingClientRect();
    return { steps: r('.steps'), learn: r('.steps-nav-learn') };
  });
  assert.ok(rows.learn.height > 0 && rows.learn.top < rows.steps.bottom && rows.learn.bottom > rows.steps.top, 'Learn beside the steps');
  assert.deepEqual(errors, []);
  release(opened);
});

test('phone: "scroll →" covers no cell; a tap\'s card covers none of the matrix (item 3)', async () => {
  const opened = await openAt('#model=coreference&step=softmax', SIZES.phone);
  const { page, errors } = opened;
  await waitStep(page, 'softmax');
  const cue = page.getByTestId('cue-right-softmax');
  await cue.waitFor();
  const g = await cue.evaluate((el) => {
    const range = document.createRange();
    range.selectNodeContents(el);
    const t = range.getBoundingClientRect();
    const b = el.parentElement.querySelector('.hm-scroll').getBoundingClientRect();
    return { text: { top: t.top, bottom: t.bottom }, box: { top: b.top, bottom: b.bottom } };
  });
  assert.ok(g.text.top >= g.box.bottom - 1, `the cue's words (top ${g.text.top}) sit below the map (bottom ${g.box.bottom})`);
  // a tap on a cell of the middle row: the card goes above or below the matrix
  const canvas = page.locator('[data-testid="hm-softmax"] canvas');
  await canvas.scrollIntoViewIfNeeded();
  const d = await canvas.evaluate((c) => ({ ...c.dataset }));
  await canvas.click({ position: { x: Number(d.x0) + 1.5 * Number(d.cw), y: Number(d.y0) + 5.5 * Number(d.ch) } });
  const tip = page.getByTestId('tooltip');
  await tip.waitFor();
  const t = await tip.boundingBox();
  const m = await page.locator('[data-testid="hm-softmax"] .hm-scroll').boundingBox();
  const overlap = Math.min(t.y + t.height, m.y + m.height) - Math.max(t.y, m.y);
  assert.ok(overlap <= 0, `the card (${Math.round(t.y)}–${Math.round(t.y + t.height)}) covers none of the matrix (${Math.round(m.y)}–${Math.round(m.y + m.height)})`);
  assert.ok(t.x >= 0 && t.x + t.width <= 390 && t.y >= 0 && t.y + t.height <= 844, 'and stays on screen');
  await shot(page, 'phone-tap');
  assert.deepEqual(errors, []);
  release(opened);
});

test('a trimmed link keeps the page\'s model; a link with a random-weights setting opens random weights (item 7)', async () => {
  const model = (page) => page.getByLabel('Model', { exact: true }).inputValue();
  const trimmed = await h.open('#step=softmax', { model: null });
  await waitStep(trimmed.page, 'softmax');
  assert.equal(await model(trimmed.page), 'coreference');
  assert.match(await trimmed.page.getByTestId('step-counter').textContent(), /layer 2 of 2/);
  const old = await h.open('#step=softmax&seed=42', { model: null });
  assert.equal(await model(old.page), 'random');
  assert.deepEqual([...trimmed.errors, ...old.errors], []);
});

test('Save SVG names the model, the layer and the head under the title (item 8)', async () => {
  const opened = await openAt('#model=coreference&layer=0&head=2&step=softmax', undefined);
  const { page, errors } = opened;
  await waitStep(page, 'softmax');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Save SVG' }).click()]);
  const svg = readFileSync(await download.path(), 'utf8');
  assert.match(svg, /Weights A = softmax\(S\u2032\), head 3<\/text>/);
  assert.match(svg, /class="source"[^>]*>coreference \(trained\) \u00b7 layer 1 of 2 \u00b7 head 3 of 4<\/text>/);
  assert.deepEqual(errors, []);
  release(opened);
});

for (const [name, viewport] of Object.entries(SIZES)) {
  test(`${name}: view="figure" shows the step's figure alone, no prose, as tall as the figure (item 6)`, async () => {
    const { page, errors } = await h.open('embed.html#model=coreference&step=softmax&view=figure', { model: null, viewport, wait: false });
    await page.waitForFunction(() => document.querySelector('attention-playground')?.shadowRoot?.querySelector('[data-testid="panel"]')?.dataset.rendered === 'softmax', null, { timeout: WAIT });
    const g = await page.evaluate(() => {
      const root = document.querySelector('attention-playground').shadowRoot;
      const shown = (sel) => [...root.querySelectorAll(sel)].some((e) => e.getClientRects().length > 0);
      return {
        prose: shown('.step-explain') || shown('.formula-wrap') || shown('.panel-header') || shown('.fit-note') || shown('.model-note'),
        controls: shown('.card-sentence') || shown('.card-stepper') || shown('.card-controls'),
        map: shown('[data-testid="hm-softmax"] canvas'),
        rows: [...root.querySelectorAll('section[data-step="softmax"] .figures > .figure-row')].filter((r) => r.getClientRects().length).length,
        height: document.querySelector('attention-playground').getBoundingClientRect().height,
      };
    });
    assert.equal(g.prose, false, 'no explanation, formula or step heading');
    assert.equal(g.controls, false, 'no controls unless the host lists some');
    assert.equal(g.map, true);
    assert.equal(g.rows, 1, 'one row of figures');
    assert.ok(g.height < 800, `${Math.round(g.height)} px tall (a compact embed is ~1,900)`);
    assert.ok(await pageScrollWidth(page) <= viewport.width);
    await shot(page, `${name}-figure-embed`);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

for (const [name, viewport] of Object.entries(SIZES)) {
  test(`${name}: examples.html opens with a bare figure of a trained model, then the playground on it (item 9)`, async () => {
    const { page, errors } = await h.open('examples.html', { model: null, viewport, wait: false });
    const first = page.locator('attention-playground').first();
    await page.waitForFunction(() => document.querySelector('attention-playground')?.shadowRoot?.querySelector('[data-testid="panel"]')?.dataset.rendered, null, { timeout: WAIT });
    const attrs = await first.evaluate((e) => ({ view: e.getAttribute('view'), model: e.getState().model, height: e.getBoundingClientRect().height }));
    assert.equal(attrs.view, 'figure');
    assert.equal(attrs.model, 'coreference');
    assert.ok(attrs.height < 800, `the first example is ${Math.round(attrs.height)} px tall`);
    assert.equal(await page.locator('attention-playground').nth(1).evaluate((e) => e.getAttribute('model')), 'coreference');
    assert.ok(await pageScrollWidth(page) <= viewport.width);
    await first.scrollIntoViewIfNeeded();
    await shot(page, `${name}-examples`);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

/** The Hub stand-in's requests for one model id, as "METHOD file". */
const asked = (id) => hub.log.filter((r) => r.url.startsWith(`/${id}/`)).map((r) => `${r.method} ${r.url.slice(id.length + 2).replace('resolve/main/', '')}`);

/** Whether each word of the element's text lies on one line (no word split mid-word); addresses may break. */
function wordsWhole(locator) {
  return locator.evaluate((box) => {
    const split = [];
    const walk = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      for (const m of n.data.matchAll(/[^\s]+/g)) {
        if (/[/:.]\S*[/:.]/.test(m[0])) continue; // an address or a file path may wrap where it must
        const r = document.createRange();
        r.setStart(n, m.index);
        r.setEnd(n, m.index + m[0].length);
        const tops = new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top)));
        if (tops.size > 1) split.push(m[0]);
      }
    }
    return split;
  });
}

/** Whether the element lies wholly inside the window. */
const inView = (locator) => locator.evaluate((e) => {
  const r = e.getBoundingClientRect();
  return r.top >= 0 && r.bottom <= innerHeight && r.height > 0;
});

for (const [name, viewport] of Object.entries(SIZES)) {
  test(`${name}: the sentence box offers experiments that work, the empty steps say why, terms have glosses (items 4, 5)`, async () => {
    const opened = await openAt('', viewport);
    const { page, errors } = opened;
    await waitStep(page, 'heads');
    // item 4: the experiments of this model, one click each; the featured head shows the change
    const tries = page.getByTestId('try-one');
    assert.equal(await tries.count(), 2, 'the default sentence is one of three: two others offered');
    await tries.first().click();
    await page.waitForFunction(() => /too wide\.$/.test(document.querySelector('[data-testid="sentence"]').value));
    await page.getByTestId('start-here').filter({ hasText: /the row of \u201cit\u201d puts 0\.\d+ of its weight on \u201cstreet\u201d/ }).waitFor({ timeout: WAIT });
    assert.equal(await page.getByTestId('try-real').isVisible(), true);
    await page.getByTestId('try').scrollIntoViewIfNeeded();
    await shot(page, `${name}-try`);
    // item 5: the mask of all 1s and the fixed scale say why, and offer where they show something
    await page.locator('.step-btn[data-step="scaled"]').click();
    await waitStep(page, 'scaled');
    assert.match(await page.getByTestId('step-offer').textContent(), /^The scale is fixed: this model was trained with it/);
    await page.locator('.step-btn[data-step="masked"]').click();
    await waitStep(page, 'masked');
    const offer = page.locator('section[data-step="masked"] [data-testid="step-offer"]');
    assert.match(await offer.textContent(), /^Every cell is 1: this model reads the whole sentence, so it blocks nothing\./);
    await offer.scrollIntoViewIfNeeded();
    await shot(page, `${name}-mask-offer`);
    await offer.getByTestId('step-offer-go').click();
    await page.waitForFunction(() => document.querySelector('[data-testid="model-picker"]').value === 'language' && document.querySelector('[data-testid="panel"]').dataset.rendered === 'masked');
    await page.locator('section[data-step="masked"] [data-testid="step-offer"]').waitFor({ state: 'hidden' });
    // item 5: a term's first use carries its gloss, shown on focus (a tap or the keyboard)
    await page.locator('.step-btn[data-step="input"]').click();
    await waitStep(page, 'input');
    const term = page.locator('section[data-step="input"] dfn.gloss', { hasText: 'residual stream' });
    assert.equal(await term.count(), 1, 'glossed once, where it first appears');
    await term.focus();
    const shown = await term.evaluate((d) => getComputedStyle(d, '::after').content);
    assert.match(shown, /the running sum each layer reads/);
    assert.match(await page.getByTestId('token-count').textContent(), /T = \d+: every matrix below has a row per token/);
    await shot(page, `${name}-gloss`);
    if (name === 'phone') {
      // the stepper's strip shows the current step and the next one whole, none cut under the LEARN label
      for (const [step, next] of [['heads', 'concat'], ['weighted', 'heads'], ['concat', 'output']]) {
        await page.locator(`.step-btn[data-step="${step}"]`).click();
        await waitStep(page, step);
        await page.waitForFunction(([a, b]) => {
          const strip = document.querySelector('.stepper .steps').getBoundingClientRect();
          const learn = document.querySelector('.steps-nav-learn').getBoundingClientRect();
          return strip.right <= learn.left && [a, b].every((s) => {
            const r = document.querySelector(`.step-btn[data-step="${s}"]`).getBoundingClientRect();
            return r.left >= strip.left - 0.5 && r.right <= strip.right + 0.5;
          });
        }, [step, next], { timeout: WAIT });
      }
      await shot(page, 'phone-stepper');
    }
    // item 4: a 40-word paragraph is refused by the toy with the way forward: a real model, or random weights
    const paragraph = Array.from({ length: 5 }, () => 'The animal didn\'t cross the street because it was').join(' ');
    await page.getByLabel('Sentence', { exact: true }).fill(paragraph);
    await page.getByLabel('Sentence', { exact: true }).press('Enter');
    const refusal = page.getByTestId('message-error').filter({ hasText: 'This model reads short sentences:' });
    await refusal.waitFor({ timeout: WAIT });
    assert.match(await refusal.textContent(), /Shorten the sentence, read it with a real model trained on long text, or pick random weights/);
    assert.equal(await refusal.getByTestId('run-real').textContent(), 'Read it with a real model\u2026');
    await refusal.getByTestId('run-random').click();
    await page.waitForFunction(() => document.querySelector('[data-testid="model-picker"]').value === 'random' && !document.querySelector('[data-testid="message-error"]'), null, { timeout: WAIT });
    await page.getByTestId('token-count').filter({ hasText: /^45 tokens/ }).waitFor({ timeout: WAIT });
    assert.ok(await pageScrollWidth(page) <= viewport.width);
    assert.deepEqual(errors, []);
    release(opened);
  });

  test(`${name}: one click to a real model: its size first (human units), then it opens on a meaningful head, described as what is known (items 4, 11, 12, 13, 15)`, async () => {
    const id = REAL_MODEL.slice(3);
    const opened = await openAt(`#hub=${encodeURIComponent(hub.base)}&s=${encodeURIComponent('The cat sat on the mat because it was tired')}`, viewport);
    const { page, errors } = opened;
    await page.evaluate(() => caches.delete('attention-playground-hub-v1'));
    const before = asked(id).length;
    await page.getByTestId('try-real').click();
    const download = page.getByTestId('ask-download');
    await download.waitFor({ timeout: WAIT });
    assert.deepEqual(asked(id).slice(before).sort(), ['GET config.json', 'HEAD model.safetensors'], 'only the size was asked for');
    assert.match(await download.textContent(), /^Download \d+(\.\d+)? (B|kB|MB)$/);
    const question = await page.getByTestId('message-info').filter({ hasText: 'A real model' }).textContent();
    assert.match(question, /Its weights \(model\.safetensors\) are \d+(\.\d+)? (B|kB|MB);/);
    assert.doesNotMatch(question, /\de[\u2212-]?\d/, 'no scientific notation');
    await shot(page, `${name}-real-size`);
    await download.click();
    await waitStep(page, 'heads', { timeout: WAIT });
    await page.waitForFunction((m) => document.querySelector('[data-testid="model-picker"]').value === m, REAL_MODEL);
    // item 12: the last token's row, in a head that looks past the first token
    const start = page.getByTestId('start-here');
    await start.waitFor({ timeout: WAIT });
    const chips = await page.locator('[data-testid="chips"] li').evaluateAll((ls) => ls.map((l) => l.firstChild?.getAttribute('aria-pressed') === 'true'));
    assert.equal(chips.lastIndexOf(true), chips.length - 1, 'the query is the last token');
    const text = await start.textContent();
    const m = /^Start here: in \u2605 L(\d+) H(\d+).*the row of \u201c(.+?)\u201d puts (0\.\d+|1\.00) of its weight on \u201c(.+?)\u201d/.exec(text);
    assert.ok(m, text);
    assert.match(m[3], /tired$/, 'the query is the last word');
    assert.notEqual(m[5], 'The', 'not the first token');
    const s = await hashState(page);
    assert.equal(s.query, chips.length - 1);
    assert.equal(s.hub, hub.base, 'the mirror stays in the link');
    // item 13: said to be what is known: where from, not that it was trained
    const about = await page.locator('.ap-about').textContent();
    assert.ok(about.startsWith(`${id}, read from ${hub.base}, a copy of the Hub: on the Hub, ${id} holds weights its authors trained`), about);
    assert.match(about, /whether this copy holds the same, its files do not say/);
    await shot(page, `${name}-real-loaded`);
    assert.ok(await pageScrollWidth(page) <= viewport.width);
    assert.deepEqual(errors, []);
    release(opened);
  });

  test(`${name}: the load panel: the mirror is set there (validated), the id is not cut, an error shows where the user acted, in view, words whole (items 10, 15)`, async () => {
    const opened = await openAt('', viewport);
    const { page, errors } = opened;
    await waitStep(page, 'heads');
    await page.getByTestId('model-picker').selectOption('load:');
    await page.getByTestId('hub-loader').waitFor({ state: 'visible' });
    // the placeholder fits its box
    const fit = await page.getByTestId('hub-id').evaluate((i) => {
      const cs = getComputedStyle(i);
      const ctx = document.createElement('canvas').getContext('2d');
      ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
      return { text: ctx.measureText(i.placeholder).width, room: i.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) };
    });
    assert.ok(fit.text <= fit.room, `the placeholder needs ${fit.text} px, the box has ${fit.room}`);
    // a mirror that is neither https nor this computer is refused, under the Hub's box
    await page.getByTestId('hub-mirror').fill('http://mirror.example');
    await page.getByTestId('hub-id').fill('nobody/nothing');
    await page.getByTestId('hub-fetch').click();
    const error = page.getByTestId('hub-error');
    await error.waitFor({ state: 'visible' });
    assert.match(await error.textContent(), /^That is not a Hub address: \u201chttp:\/\/mirror\.example\u201d must be an https address/);
    assert.equal(await page.getByTestId('hub-mirror').getAttribute('aria-invalid'), 'true');
    // the local mirror: a model it does not have says so under the Fetch row, scrolled into view
    await page.getByTestId('hub-mirror').fill(hub.base);
    await page.getByTestId('hub-fetch').click();
    await error.filter({ hasText: 'could not be loaded' }).waitFor({ timeout: WAIT });
    assert.ok(asked('nobody/nothing').includes('GET config.json'), 'asked the mirror');
    const place = await error.evaluate((e) => ({ after: e.previousElementSibling?.className, inBody: e.parentElement.className }));
    assert.deepEqual(place, { after: 'hub-form', inBody: 'hub-body' });
    await page.waitForFunction(() => { const r = document.querySelector('[data-testid="hub-error"]').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }, null, { timeout: WAIT });
    assert.equal(await inView(error), true);
    assert.deepEqual(await wordsWhole(error), []);
    // its long address wraps inside the panel: the page neither widens nor scrolls sideways
    assert.ok(await pageScrollWidth(page) <= viewport.width);
    assert.equal(await page.evaluate(() => scrollX), 0);
    const edges = await error.evaluate((e) => [e.getBoundingClientRect().left, e.getBoundingClientRect().right]);
    assert.ok(edges[0] >= 0 && edges[1] <= viewport.width, `the error spans ${edges}`);
    assert.equal((await hashState(page)).hub, hub.base, 'the mirror went into the link');
    await shot(page, `${name}-hub-error`);
    // files with no config.json: the error moves under the drop zone
    await page.getByTestId('hub-files').setInputFiles([{ name: 'vocab.txt', mimeType: 'text/plain', buffer: Buffer.from('[PAD]\n') }]);
    await error.filter({ hasText: 'no config.json' }).waitFor({ timeout: WAIT });
    assert.equal(await error.evaluate((e) => e.previousElementSibling?.dataset.testid), 'hub-drop');
    assert.deepEqual(await wordsWhole(error), []);
    assert.ok(await pageScrollWidth(page) <= viewport.width);
    assert.deepEqual(errors.filter((e) => !/404/.test(e)), []);
    release(opened);
  });
}
