// The training lab's memory estimate (engine.estimateTrainingMemory, shown by
// web/app/train/main.js under the transport): settings too large for the
// engine are refused with the sizes named before anything is allocated, and
// the page stays alive; small settings show what they need.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startHarness, artifactDir } from './harness.mjs';
import { labState, waitIdle, openLab, trainTo } from './train-helpers.mjs';

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

/** The memory line's text and its hooks, once the worker has reported the estimate. */
async function memoryLine(page) {
  await page.waitForFunction(() => document.querySelector('[data-testid="memory"]')?.dataset.bytes);
  return page.getByTestId('memory').evaluate((e) => ({ text: e.textContent, bytes: Number(e.dataset.bytes), fits: e.dataset.fits }));
}

test('a link whose step needs 17 GB shows the sizes and the settings to lower, and does not start', async () => {
  // 1024 sequences × 64 heads × 256² tokens: 2³² attention weights, which wrapped to an empty buffer in wasm
  const { page, errors } = await h.open('train.html#task=induction&n=256&L=1&H=64&C=64&bs=1024&step=1', { wait: false, model: null });
  await page.waitForFunction(() => document.querySelector('[data-testid="message-error"]'));
  const notice = await page.getByTestId('message-error').textContent();
  assert.match(notice, /These settings cannot train:/);
  assert.match(notice, /batch 1024 × 64 heads × 256² tokens × 1 layer needs 17\.2 GB of attention weights/);
  assert.match(notice, /lower batch, heads, length or layers/);
  const line = await memoryLine(page);
  assert.equal(line.fits, 'false');
  assert.equal(line.bytes > 4 * 1024 * 64 * 256 * 256, true);
  assert.match(line.text, /^Training would need about 1\d\.\d GB of memory; the lab can use 805 MB\.$/);
  assert.equal(await page.getByTestId('play').isDisabled(), true);
  assert.equal(await page.getByTestId('step').isDisabled(), true);
  const s = await labState(page);
  assert.equal(s.state, 'ready', 'the engine is alive');
  assert.equal(s.step, '0', 'nothing trained');
  await page.screenshot({ path: join(artifactDir('train'), 'memory-too-large.png') });
  // the same page goes on working: the task defaults build and train
  await page.getByTestId('defaults').click();
  await page.waitForFunction(() => !document.querySelector('[data-testid="message-error"]') && !document.querySelector('[data-testid="play"]').disabled);
  await waitIdle(page);
  await trainTo(page, 5);
  assert.deepEqual(errors, []);
});

test('small settings show their memory before ▶, in megabytes', async () => {
  const { page, errors } = await openLab(h, '#task=reverse');
  const line = await memoryLine(page);
  assert.equal(line.fits, 'true');
  assert.ok(line.bytes > 0 && line.bytes < 100e6, String(line.bytes));
  assert.match(line.text, /^Training needs about \d+(\.\d+)? [kM]B of memory\.$/);
  assert.equal(await page.getByTestId('play').isDisabled(), false);
  assert.equal((await labState(page)).step, '0');
  await page.screenshot({ path: join(artifactDir('train'), 'memory-fits.png') });
  assert.deepEqual(errors, []);
});
