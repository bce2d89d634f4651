// The first ten minutes of a newcomer (issue #40), at desktop 1280×800 and phone
// 390×844: the tour waits for the learner, says where it is and stops on
// demand (item 1); a step change shows its heading and first line below the
// sticky stepper (item 2); the phone opens at the sentence, its sticky stepper
// is compact, "scroll →" and the tap card cover no cell (item 3); a trimmed
// link keeps the page's model (item 7); an export names model, layer and head
// (item 8). Screenshots go to tests/artifacts/first-minutes/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { startHarness, waitStep, artifactDir, pageScrollWidth, WAIT } from './harness.mjs';

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };
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
    const { page, errors } = await h.open('', { model: null, viewport });
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
    await page.close();
  });

  test(`${name}: after a step change the step's heading and first line are in view below the stepper (item 2)`, async () => {
    const { page, errors } = await h.open('', { model: null, viewport });
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
    await page.close();
  });
}

test('phone: opens at the sentence (no scroll of its own); the sticky stepper is compact (item 3)', async () => {
  const { page, errors } = await h.open('', { model: null, viewport: SIZES.phone });
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
});

test('phone: "scroll →" covers no cell; a tap\'s card covers none of the matrix (item 3)', async () => {
  const { page, errors } = await h.open('#model=coreference&step=softmax', { model: null, viewport: SIZES.phone });
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
  const { page, errors } = await h.open('#model=coreference&layer=0&head=2&step=softmax', { model: null });
  await waitStep(page, 'softmax');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Save SVG' }).click()]);
  const svg = readFileSync(await download.path(), 'utf8');
  assert.match(svg, /Weights A = softmax\(S\u2032\), head 3<\/text>/);
  assert.match(svg, /class="source"[^>]*>coreference \(trained\) \u00b7 layer 1 of 2 \u00b7 head 3 of 4<\/text>/);
  assert.deepEqual(errors, []);
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
