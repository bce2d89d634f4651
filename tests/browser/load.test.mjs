// Loading: the page starts without errors, shows a loading state while the
// engine compiles, and says clearly when WebAssembly or SIMD is missing.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, waitReady } from './harness.mjs';

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

test('the page loads with zero console errors and shows the default sentence', async () => {
  const { page, errors, dialogs } = await h.open();
  const chips = page.getByTestId('token-chip');
  assert.equal(await chips.count(), 12);
  assert.equal(await chips.first().locator('.chip-text').textContent(), 'The');
  assert.equal(await page.getByTestId('step-title').textContent(), 'Token embeddings X');
  assert.equal(await page.locator('[data-testid="hm-embeddings"] canvas').evaluate((c) => c.width > 0 && c.height > 0), true);
  assert.deepEqual(errors, []);
  assert.deepEqual(dialogs, []);
  assert.equal(await page.title(), 'Attention Playground');
});

test('a loading state is shown while the WebAssembly module starts', async () => {
  let release;
  const gate = new Promise((r) => { release = r; });
  const { page, errors } = await h.open('', {
    wait: false,
    before: (p) => p.route('**/attention_core.wasm', async (route) => { await gate; await route.continue(); }),
  });
  await page.getByText('Starting the attention engine').waitFor();
  assert.equal(await page.locator('.ap').getAttribute('data-state'), 'loading');
  // the controls are already there while the engine loads
  await page.getByLabel('Sentence', { exact: true }).waitFor();
  release();
  await waitReady(page);
  assert.equal(await page.getByTestId('panel-status').isHidden(), true);
  assert.deepEqual(errors, []);
});

test('without WebAssembly the page shows a clear message, not a blank page', async () => {
  const { page } = await h.open('', { wait: false, init: () => { delete globalThis.WebAssembly; } });
  const msg = page.getByTestId('message-error');
  await msg.waitFor();
  assert.match(await msg.textContent(), /could not start.*WebAssembly/s);
  assert.match(await page.getByTestId('panel-status').textContent(), /WebAssembly/);
  assert.equal(await page.locator('.ap').getAttribute('data-state'), 'error');
  assert.equal(await page.getByRole('heading', { name: 'Attention Playground' }).isVisible(), true);
});

test('without WebAssembly SIMD the page names the missing feature', async () => {
  const { page } = await h.open('', { wait: false, init: () => { WebAssembly.validate = () => false; } });
  const msg = page.getByTestId('message-error');
  await msg.waitFor();
  assert.match(await msg.textContent(), /SIMD/);
});
