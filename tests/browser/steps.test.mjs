// Stepping: every step renders (a screenshot of each is saved as an
// artifact), the buttons and the keyboard move through the steps, Play
// animates and advances.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startHarness, STEPS, waitStep, artifactDir, hashState, waitHash, waitFigureInView } from './harness.mjs';
import { stepEntry } from '../../web/app/steps.js';

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

async function checkStep(page, step) {
  await waitStep(page, step);
  // the page shows the registry's title (random weights: no trained-model title)
  assert.equal(await page.getByTestId('step-title').textContent(), stepEntry(step).title);
  const explain = await page.locator(`section[data-step="${step}"] [data-testid="step-explain"]`).textContent();
  assert.ok(explain.length > 60, `${step} explains itself`);
  const result = page.locator(`section[data-step="${step}"] [data-testid="formula-result"]`);
  assert.equal(await result.count(), 1, `${step} has a formula with a result`);
  assert.ok(!Number.isNaN(Number(await result.getAttribute('data-value'))), `${step} formula result is a number`);
  const drawn = await page.locator(`section[data-step="${step}"]`).evaluate((s) => [...s.querySelectorAll('canvas, svg')].filter((c) => c.getBoundingClientRect().width > 20).length);
  assert.ok(drawn >= 1, `${step} draws something`);
}

test('every step renders, with a screenshot of each saved (light and dark)', async () => {
  const dir = artifactDir('steps');
  for (const scheme of ['light', 'dark']) {
    const { page, errors } = await h.open('', { colorScheme: scheme });
    for (const step of STEPS) {
      await page.locator(`.step-btn[data-step="${step}"]`).click();
      await checkStep(page, step);
      await page.screenshot({ path: join(dir, scheme === 'light' ? `${step}.png` : `${step}-dark.png`), fullPage: true });
    }
    assert.deepEqual(errors, []);
  }
});

test('every step renders in batch mode, with a causal mask and with one head', async () => {
  for (const hash of ['#batch=1&bi=1&mask=padding', '#mask=causal', '#h=1&c=8']) {
    const { page, errors } = await h.open(hash);
    for (const step of STEPS) {
      await page.locator(`.step-btn[data-step="${step}"]`).click();
      await checkStep(page, step);
    }
    assert.deepEqual(errors, [], hash);
  }
});

test('Next step and Previous step move through the steps and update the URL', async () => {
  const { page } = await h.open();
  const next = page.getByRole('button', { name: 'Next step' });
  const prev = page.getByRole('button', { name: 'Previous step' });
  assert.equal(await prev.isDisabled(), true);
  for (const step of STEPS.slice(1)) {
    await next.click();
    await waitStep(page, step);
  }
  assert.equal(await next.isDisabled(), true);
  await waitHash(page, 'step', 'output');
  await prev.click();
  await waitStep(page, 'concat');
  assert.equal((await hashState(page)).step, 'concat');
  assert.equal(await page.locator('.step-btn[aria-current="step"]').getAttribute('data-step'), 'concat');
});

test('desktop (1280×900): at every step the sticky stepper and the step\'s figure are both in view', async () => {
  const { page, errors } = await h.open('', { viewport: { width: 1280, height: 900 } });
  const next = page.getByRole('button', { name: 'Next step' });
  for (const step of STEPS.slice(1)) {
    await next.click();
    await waitStep(page, step);
    await waitFigureInView(page, step);
  }
  // ← and Play follow the figure too; Play starts on the figure whose row it fills
  await page.keyboard.press('ArrowLeft');
  await waitStep(page, 'concat');
  await waitFigureInView(page, 'concat');
  await page.locator('.step-btn[data-step="scores"]').click();
  await waitStep(page, 'scores');
  await page.evaluate(() => scrollTo(0, 0));
  await page.getByRole('button', { name: 'Play' }).click();
  await waitFigureInView(page, 'scores');
  await page.getByRole('button', { name: 'Pause' }).click();
  assert.deepEqual(errors, []);
});

test('the page does not follow the figure when nothing asked it to: a link that opens a step stays at the top', async () => {
  const { page } = await h.open('#step=softmax', { viewport: { width: 1280, height: 900 } });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  assert.equal(await page.evaluate(() => scrollY), 0);
});

test('keyboard alone steps through: arrows move, Space plays and pauses', async () => {
  const { page, errors } = await h.open();
  await page.keyboard.press('ArrowRight');
  await waitStep(page, 'positional');
  await page.keyboard.press('ArrowRight');
  await waitStep(page, 'input');
  await page.keyboard.press('ArrowLeft');
  await waitStep(page, 'positional');
  await page.keyboard.press('Space');
  await page.getByRole('button', { name: 'Pause' }).waitFor();
  await page.keyboard.press('Space');
  await page.getByRole('button', { name: 'Play' }).waitFor();
  // typing in the sentence box does not step or play
  await page.getByLabel('Sentence', { exact: true }).focus();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Space');
  assert.equal(await page.getByRole('button', { name: 'Play' }).count(), 1);
  assert.equal(await page.getByTestId('panel').getAttribute('data-step'), 'positional');
  // Tab reaches the step buttons and Enter activates them
  await page.locator('.step-btn[data-step="softmax"]').focus();
  await page.keyboard.press('Enter');
  await waitStep(page, 'softmax');
  assert.deepEqual(errors, []);
});

test('every control can be reached with Tab', async () => {
  const { page } = await h.open('#step=softmax');
  const names = new Set();
  await page.locator('body').focus();
  for (let i = 0; i < 80; i++) {
    await page.keyboard.press('Tab');
    const name = await page.evaluate(() => {
      const a = document.activeElement;
      if (!a || a === document.body) return '';
      return a.labels?.[0]?.textContent || a.getAttribute('aria-label') || a.textContent.trim();
    });
    names.add(name);
  }
  for (const n of ['Sentence', 'Batch mode', 'Model width', 'Heads', 'Seed', 'Positional encoding', 'Mask', 'Scale by 1/\u221ad_k', 'Previous step', 'Next step', 'Speed', 'Query token', 'Head']) {
    assert.ok([...names].some((x) => x.trim().startsWith(n) || x.includes(n)), `${n} is reachable with Tab`);
  }
});

test('Play fills the score row cell by cell and then advances to the next step', async () => {
  const { page, errors } = await h.open('#step=scores&speed=4&s=one+two+three');
  await page.getByRole('button', { name: 'Play' }).click();
  // while the row fills, some products are still pending and the row readout is partial
  await page.waitForFunction(() => document.querySelector('[data-testid="products"] .is-pending') !== null);
  await waitStep(page, 'scaled');
  await page.getByRole('button', { name: 'Pause' }).click();
  await page.getByRole('button', { name: 'Play' }).waitFor();
  assert.deepEqual(errors, []);
});

test('Play at the last step starts again from the first', async () => {
  const { page } = await h.open('#step=output&speed=4');
  await page.getByRole('button', { name: 'Play' }).click();
  await waitStep(page, 'embeddings');
  await page.getByRole('button', { name: 'Pause' }).click();
});
