// A 390 px wide phone: no horizontal page scroll on any step, light or dark,
// with the default sentence, a long one, and batch mode. Screenshots of each
// step are saved as artifacts.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startHarness, STEPS, waitStep, artifactDir, pageScrollWidth, waitFigureInView, REVIEW_SHOTS } from './harness.mjs';

const PHONE = { width: 390, height: 844 };
let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

for (const scheme of REVIEW_SHOTS ? ['light', 'dark'] : ['light']) {
  test(`phone (390×844, ${scheme}): no horizontal scroll on any step`, async () => {
    const dir = artifactDir('phone');
    const { page, errors } = await h.open('', { viewport: PHONE, colorScheme: scheme });
    for (const step of STEPS) {
      await page.locator(`.step-btn[data-step="${step}"]`).click();
      await waitStep(page, step);
      const w = await pageScrollWidth(page);
      assert.ok(w <= 390, `${step}: scrollWidth ${w} > 390`);
      await page.screenshot({ path: join(dir, `${step}-${scheme}.png`), fullPage: true });
    }
    assert.deepEqual(errors, []);
  });
}

test('phone: long sentences, long words and batch mode stay inside the screen', async () => {
  const long = Array.from({ length: 70 }, (_, i) => `token${i}`).join('+');
  const word = 'Supercalifragilisticexpialidocious'.repeat(3);
  for (const hash of [`#s=${long}`, `#s=${word}+is+a+word&q=0`, '#batch=1&mask=padding&bi=1', '#c=64&h=2']) {
    const { page, errors } = await h.open(hash, { viewport: PHONE });
    for (const step of STEPS) {
      await page.locator(`.step-btn[data-step="${step}"]`).click();
      await waitStep(page, step);
      const w = await pageScrollWidth(page);
      assert.ok(w <= 390, `${hash} ${step}: scrollWidth ${w} > 390`);
    }
    assert.deepEqual(errors, [], hash);
    await page.close();
  }
});

test('phone: sentence, then the stepper, then the figure; at every step the sticky stepper and the figure are in view', async () => {
  const { page, errors } = await h.open('', { viewport: PHONE });
  await page.emulateMedia({ reducedMotion: 'reduce' });
  const order = await page.evaluate(() => ['.card-sentence', '.card-stepper', '.card-panel', '.card-controls'].map((s) => document.querySelector(s).getBoundingClientRect().top));
  assert.deepEqual([...order].sort((a, b) => a - b), order, 'sentence, stepper, panel, model settings from the top');
  const next = page.getByRole('button', { name: 'Next step' });
  for (const step of STEPS.slice(1)) {
    await next.click();
    await waitStep(page, step);
    await waitFigureInView(page, step);
    // the strip of steps shows the current one
    const shown = await page.locator(`.step-btn[data-step="${step}"]`).evaluate((b) => {
      const r = b.getBoundingClientRect();
      const box = b.closest('.steps').getBoundingClientRect();
      return r.left >= box.left - 1 && r.right <= box.right + 1;
    });
    assert.ok(shown, `${step}: its step button is visible in the strip`);
  }
  assert.ok(await pageScrollWidth(page) <= 390);
  assert.deepEqual(errors, []);
});

test('phone: Play does not pull a reader away from the model settings', async () => {
  const { page } = await h.open('#step=embeddings&speed=1', { viewport: PHONE });
  await page.emulateMedia({ reducedMotion: 'reduce' });
  // every step the panel renders, in order (waiting for a named step, a loaded machine once found
  // Play already at the last one)
  await page.evaluate(() => {
    const panel = document.querySelector('[data-testid="panel"]');
    window.__rendered = [];
    new MutationObserver(() => window.__rendered.push(panel.dataset.rendered)).observe(panel, { attributes: true, attributeFilter: ['data-rendered'] });
  });
  await page.getByRole('button', { name: 'Play' }).click();
  // Play's first step brings its figure into view (a step change shows its heading): after that the
  // reader goes to the model settings, and the steps that follow must leave them there
  await page.waitForFunction(() => window.__rendered.includes('positional'));
  await page.locator('.card-controls').evaluate((c) => c.scrollIntoView({ block: 'start' }));
  const where = () => page.locator('.card-controls').evaluate((c) => Math.round(c.getBoundingClientRect().top));
  const y = await where();
  const seen = await page.evaluate(() => window.__rendered.length);
  // two more steps rendered after the reader moved (none, and the wait fails: nothing would be tested)
  await page.waitForFunction((n) => new Set(window.__rendered.slice(n)).size >= 2, seen);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  // the panel above changes height from step to step; scroll anchoring keeps what the reader sees in place
  assert.ok(Math.abs((await where()) - y) <= 2, 'the model settings stay where the reader has them');
  await page.getByRole('button', { name: 'Pause' }).click();
});

test('phone: a tap on a cell shows its exact value', async () => {
  // (a persistent context cannot emulate touch; a click is what a tap produces)
  const { page } = await h.open('#step=scores', { viewport: PHONE });
  const canvas = page.locator('[data-testid="hm-scores"] canvas');
  const g = await canvas.evaluate((c) => ({ ...c.dataset }));
  await canvas.click({ position: { x: Number(g.x0) + 0.5 * Number(g.cw), y: Number(g.y0) + 0.5 * Number(g.ch) } });
  const tip = page.getByTestId('tooltip');
  await tip.waitFor();
  assert.match(await tip.textContent(), /S\[0, 0\]/);
  const box = await tip.boundingBox();
  assert.ok(box.x >= 0 && box.x + box.width <= 390, 'the tooltip stays on screen');
});
