// Smoke test of every page, the one browser file of `tests/run_all.sh --quick`
// (the full run runs it too): each page opens in Chromium, shows a number the
// engine computed, and logs no console error. One browser for the file, a new
// page per test. The other files of tests/browser test the pages in depth.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, readoutValues, WAIT } from './harness.mjs';
import { waitIdle } from './train-helpers.mjs';

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

test('index.html: the softmax step draws its heatmap and the selected row of weights sums to 1', async () => {
  const { page, errors, dialogs } = await h.open('#step=softmax');
  assert.equal(await page.getByTestId('panel').getAttribute('data-rendered'), 'softmax');
  assert.equal(await page.locator('[data-testid="hm-softmax"] canvas').evaluate((c) => c.width > 0 && c.height > 0), true);
  const row = await readoutValues(page, 'softmax');
  assert.ok(row.length >= 2, `a row of ${row.length} weights`);
  const sum = row.reduce((s, c) => s + c.value, 0);
  assert.ok(Math.abs(sum - 1) < 1e-3, `the row sums to ${sum}`);
  assert.ok(row.every((c) => Number.isFinite(c.value) && c.value >= 0), JSON.stringify(row));
  assert.deepEqual(errors, []);
  assert.deepEqual(dialogs, []);
  await page.close();
});

test('concepts.html: the first demo shows its claim and live metrics from the engine', async () => {
  const { page, errors } = await h.open('concepts.html#demo=context', { wait: false, model: null });
  await page.waitForFunction(() => {
    const s = document.querySelector('[data-testid="demo-context"]');
    return s && !s.hidden && Number(s.dataset.rendered || 0) > 0;
  }, null, { timeout: WAIT });
  const metrics = await page.getByTestId('demo-context').locator('.cx-metric-value').evaluateAll((els) => els.map((e) => Number(e.dataset.value)));
  assert.ok(metrics.length >= 2 && metrics.some((v) => Number.isFinite(v)), `metrics ${metrics}`);
  const diff = Number(await page.getByTestId('ctx-diff-avg').first().getAttribute('data-value'));
  assert.ok(diff > 1e-3, `output − plain average = ${diff}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('lessons.html: a lesson\u2019s link opens its prediction, in the figure, with the engine\u2019s numbers', async () => {
  const { page, errors } = await h.open('lessons.html#lesson=scale&screen=2', { wait: false, model: null });
  await page.waitForFunction(() => document.querySelector('[data-testid="lessons"]')?.dataset.state === 'ready', null, { timeout: WAIT });
  assert.equal(await page.getByTestId('lesson-screen').getAttribute('data-screen'), 'predict');
  assert.match(await page.locator('[data-fact="topOn"]').textContent(), /^0\.\d+$/);
  assert.equal(await page.locator('[data-testid="predict-figure"] input[type="range"]').count(), 1);
  assert.deepEqual(errors, []);
  await page.close();
});

test('train.html: the lab starts, evaluates its model on held-out sequences and draws every head', async () => {
  const { page, errors } = await h.open('train.html#task=reverse', { wait: false, model: null });
  await waitIdle(page);
  const lab = await page.evaluate(() => ({ ...document.getElementById('lab').dataset }));
  assert.equal(lab.step, '0');
  const heldout = Number(lab.heldout);
  assert.ok(heldout >= 0 && heldout <= 1, `held-out accuracy ${lab.heldout}`);
  const digests = await page.evaluate(() => [...document.querySelectorAll('[data-testid^="head-"] canvas')].map((c) => c.dataset.digest));
  assert.ok(digests.length >= 1 && digests.every(Boolean), `head maps ${digests}`);
  assert.deepEqual(errors, []);
  await page.close();
});

/** The element's shadow roots in the page are all drawn (engine ran, step rendered). */
function waitElements(page, count) {
  return page.waitForFunction((n) => {
    const all = [...document.querySelectorAll('attention-playground')];
    return all.length >= n && all.every((e) => {
      const root = e.shadowRoot;
      return root?.querySelector('.ap')?.dataset.state === 'ready' && root.querySelector('.ap').dataset.run && root.querySelector('[data-testid="panel"]')?.dataset.rendered;
    });
  }, count, { timeout: WAIT });
}

test('embed.html: the iframe form draws the step of its link', async () => {
  const { page, errors } = await h.open('embed.html#sentence=Dogs%20chase%20cats&step=scores&controls=none', { wait: false, model: null });
  await waitElements(page, 1);
  const seen = await page.evaluate(() => {
    const root = document.querySelector('attention-playground').shadowRoot;
    return { step: root.querySelector('[data-testid="panel"]').dataset.rendered, canvases: [...root.querySelectorAll('canvas')].filter((c) => c.width > 0).length };
  });
  assert.equal(seen.step, 'scores');
  assert.ok(seen.canvases >= 1, 'a heatmap is drawn');
  assert.equal((await page.evaluate(() => document.querySelector('attention-playground').getState())).sentence, 'Dogs chase cats');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the element: examples.html draws every <attention-playground> on it', async () => {
  const { page, errors } = await h.open('examples.html', { wait: false, model: null });
  const count = await page.locator('attention-playground').count();
  assert.ok(count >= 1, `${count} elements`);
  await waitElements(page, count);
  const states = await page.evaluate(() => [...document.querySelectorAll('attention-playground')].map((e) => e.getState().sentence));
  assert.ok(states.every((s) => typeof s === 'string' && s.length > 0), JSON.stringify(states));
  assert.deepEqual(errors, []);
  await page.close();
});
