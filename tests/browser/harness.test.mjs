// The browser harness itself: its waits must not depend on the page's animation frames,
// which a renderer starved of CPU may not run for seconds (launchBrowser says why).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, waitStep, WAIT } from './harness.mjs';

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

test('waits poll on a timer: a change on a page whose animation frames never come is still seen', async () => {
  const page = await h.context.newPage();
  await page.addInitScript(() => { window.requestAnimationFrame = () => 0; });
  await page.goto(`${h.url}#model=random`);
  await page.evaluate(() => { setTimeout(() => { window.__changed = true; }, 100); });
  await page.waitForFunction(() => window.__changed === true, null, { timeout: 5000 });
  // the step wait, on the playground: a click handled after the wait's first check
  await page.waitForFunction(() => document.querySelector('.ap')?.dataset.state === 'ready', null, { timeout: WAIT });
  await page.evaluate(() => { setTimeout(() => document.querySelector('.step-btn[data-step="softmax"]').click(), 100); });
  await waitStep(page, 'softmax');
  await page.close();
});

test('a step wait that times out says what the page shows instead', async () => {
  const { page } = await h.open('#step=scores');
  await page.evaluate(() => { document.querySelector('[data-testid="panel"]').dataset.rendered = 'never'; });
  await assert.rejects(waitStepBriefly(page, 'nonexistent'), /waiting for step nonexistent; the page shows .*"rendered":"never"/);
  await page.close();
});

/** waitStep with a short timeout (its message is the point, not its patience). */
async function waitStepBriefly(page, step) {
  return waitStep(page, step, { timeout: 500 });
}
