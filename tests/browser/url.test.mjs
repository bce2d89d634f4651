// The link is the state: a copied URL reproduces the exact view, and a
// damaged one falls back to defaults with a visible notice.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, runCount, waitRunAfter, waitStep, readoutValues, hashState, waitHash, clickCell, settled, WAIT } from './harness.mjs';

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

/** What a user sees: enough of the DOM to tell two views apart. */
async function snapshot(page) {
  const step = await page.getByTestId('panel').getAttribute('data-step');
  return {
    step,
    title: await page.getByTestId('step-title').textContent(),
    formula: await page.locator(`section[data-step="${step}"] [data-testid="formula"]`).textContent(),
    result: await page.locator(`section[data-step="${step}"] [data-testid="formula-result"]`).getAttribute('data-value'),
    chips: await page.getByTestId('token-chip').locator('.chip-text').allTextContents(),
    pressed: await page.locator('.chip[aria-pressed="true"]').getAttribute('data-index'),
    width: await page.getByLabel('Model width', { exact: true }).inputValue(),
    heads: await page.getByLabel('Heads', { exact: true }).inputValue(),
    head: await page.getByLabel('Head', { exact: true }).inputValue(),
    seed: await page.getByLabel('Seed', { exact: true }).inputValue(),
    positional: await page.getByLabel('Positional encoding', { exact: true }).inputValue(),
    mask: await page.getByLabel('Mask', { exact: true }).inputValue(),
    scale: await page.getByLabel('Scale by 1/\u221ad_k').isChecked(),
    speed: await page.getByLabel('Speed').inputValue(),
    theme: await page.locator('.ap').getAttribute('data-theme'),
    batch: await page.getByLabel('Batch mode').isChecked(),
  };
}

test('a copied URL reproduces the exact state and view', async () => {
  const { page, errors } = await h.open();
  let n = await runCount(page);
  await page.getByLabel('Sentence', { exact: true }).fill('Le chat noir dort sur le canap\u00e9');
  await waitRunAfter(page, n);
  n = await runCount(page);
  await page.getByLabel('Model width', { exact: true }).selectOption('32');
  await waitRunAfter(page, n);
  await page.getByLabel('Heads', { exact: true }).selectOption('8');
  await page.getByLabel('Seed', { exact: true }).fill('1234');
  await page.getByLabel('Seed', { exact: true }).press('Enter');
  await page.getByLabel('Positional encoding', { exact: true }).selectOption('learned');
  await page.getByLabel('Mask', { exact: true }).selectOption('causal');
  await page.getByLabel('Scale by 1/\u221ad_k').uncheck();
  await page.getByLabel('Speed').selectOption('0.5');
  await page.getByRole('button', { name: /Theme/ }).click();
  await page.getByRole('button', { name: /Theme/ }).click();
  await page.locator('.step-btn[data-step="softmax"]').click();
  await waitStep(page, 'softmax');
  await page.getByLabel('Head', { exact: true }).selectOption('5');
  await clickCell(page, 'softmax', 4, 2);
  await waitHash(page, 'k', '2');
  await settled(page);
  const url = page.url();
  const state = await hashState(page);
  assert.equal(state.seed, 1234);
  assert.equal(state.theme, 'dark');
  const want = await snapshot(page);

  const copy = await h.open(new URL(url).hash);
  assert.deepEqual(await hashState(copy.page), state);
  assert.deepEqual(await snapshot(copy.page), want);
  assert.deepEqual(await readoutValues(copy.page, 'softmax'), await readoutValues(page, 'softmax'));
  assert.deepEqual(errors, []);
  assert.deepEqual(copy.errors, []);
});

test('a copied URL reproduces batch mode and a custom mask', async () => {
  const { page } = await h.open('#step=masked');
  let n = await runCount(page);
  await page.getByLabel('Batch mode').check();
  await waitRunAfter(page, n);
  await page.getByLabel('Sentence shown').selectOption('1');
  n = await runCount(page);
  await clickCell(page, 'mask', 0, 0);
  await waitRunAfter(page, n);
  const state = await hashState(page);
  assert.equal(state.mask, 'custom');
  assert.equal(state.batch, true);
  const want = await snapshot(page);
  await settled(page);
  const copy = await h.open(new URL(page.url()).hash);
  assert.deepEqual(await hashState(copy.page), state);
  assert.deepEqual(await snapshot(copy.page), want);
  assert.deepEqual(await readoutValues(copy.page, 'masked'), await readoutValues(page, 'masked'));
});

test('custom-mask edits survive a switch to another mask and back, and a reload', async () => {
  const { page, errors } = await h.open('#step=masked&mask=causal');
  let n = await runCount(page);
  await clickCell(page, 'mask', 7, 2); // causal + query 7 may not see key 2
  await waitRunAfter(page, n);
  const edited = (await hashState(page)).customMask;
  assert.ok(edited.includes('7-2') && edited.includes('0-1'));
  const masked = await readoutValues(page, 'masked');
  n = await runCount(page);
  await page.getByLabel('Mask', { exact: true }).selectOption('none');
  await waitRunAfter(page, n);
  assert.notEqual((await readoutValues(page, 'masked')).find((c) => c.col === 2).value, -Infinity, 'no mask: key 2 is seen');
  assert.deepEqual((await hashState(page)).customMask, edited, 'the link keeps the edits while another mask is on');
  n = await runCount(page);
  await page.getByLabel('Mask', { exact: true }).selectOption('custom');
  await waitRunAfter(page, n);
  assert.deepEqual((await hashState(page)).customMask, edited, 'none \u2192 custom brings the edits back');
  assert.deepEqual(await readoutValues(page, 'masked'), masked);
  // the link carries them compactly (one part a query row) and a reload restores them
  await settled(page);
  const cm = new URLSearchParams(new URL(page.url()).hash.slice(1)).get('cm');
  assert.match(cm, /^0_1-11\.1_2-11\./, `grouped by query row: ${cm}`);
  assert.ok(cm.length < edited.length * 2, `${cm.length} characters for ${edited.length} cells`);
  await page.reload();
  await page.waitForFunction(() => document.querySelector('[data-testid="panel"]')?.dataset.rendered === 'masked');
  assert.deepEqual((await hashState(page)).customMask, edited);
  assert.equal(await page.getByLabel('Mask', { exact: true }).inputValue(), 'custom');
  assert.deepEqual(await readoutValues(page, 'masked'), masked);
  assert.deepEqual(errors, []);
});

test('a bad custom mask in the link says what is wrong with it; the old one-pair-a-cell links still open', async () => {
  for (const [cm, why] of [['0_5-2', /key range 5-2 runs backwards/], ['0_1..2_3', /empty part/], ['7_x', /not a query and its hidden keys/], ['3_9999', /token 9999, past the last index 2047/]]) {
    const { page, errors } = await h.open(`#mask=custom&cm=${cm}`);
    const notice = page.getByTestId('message-notice');
    await notice.waitFor();
    assert.match(await notice.textContent(), why, cm);
    assert.deepEqual((await hashState(page)).customMask, [], `${cm}: the default (no cells) is used`);
    assert.deepEqual(errors, [], cm);
    await page.close();
  }
  const old = await h.open('#step=masked&mask=custom&cm=7-1.7-3&q=7&k=3');
  assert.deepEqual((await hashState(old.page)).customMask, ['7-1', '7-3']);
  assert.equal(await old.page.getByTestId('message-notice').count(), 0);
  assert.equal((await readoutValues(old.page, 'masked')).find((c) => c.col === 3).value, -Infinity);
});

test('a link pasted into an open page switches to its state', async () => {
  const { page } = await h.open();
  const n = await runCount(page);
  // (the link names its model: a link without one opens the page's default model, issue #40 item 7)
  await page.evaluate(() => { location.hash = 'model=random&s=one+two&step=scores&q=1&k=0'; });
  await waitRunAfter(page, n);
  await waitStep(page, 'scores');
  assert.deepEqual(await page.getByTestId('token-chip').locator('.chip-text').allTextContents(), ['one', 'two']);
});

test('invalid URL state falls back to defaults with a visible notice', async () => {
  const { page, errors } = await h.open('#c=abc&h=3&step=nope&q=-1&pe=quantum&scale=maybe&speed=9&zz=1&seed=99999999999');
  const notice = page.getByTestId('message-notice');
  await notice.waitFor();
  const text = await notice.textContent();
  for (const part of ['model width', 'step', 'query token', 'positional encoding', 'scale', 'speed', 'seed', '\u201czz\u201d', 'heads']) assert.ok(text.includes(part), `notice mentions ${part}: ${text}`);
  const s = await hashState(page);
  assert.equal(s.dModel, 16);
  assert.equal(s.heads, 4);
  assert.equal(s.step, 'embeddings');
  assert.equal(s.positional, 'sinusoidal');
  assert.equal(s.scale, true);
  assert.equal(s.seed, 42);
  // the page works, and the notice can be dismissed
  assert.equal(await page.getByTestId('token-chip').count(), 12);
  await page.getByRole('button', { name: /Dismiss/ }).click();
  await notice.waitFor({ state: 'detached' });
  assert.deepEqual(errors, []);
});

test('a garbled hash still opens a working page', async () => {
  const { page, errors } = await h.open('#%E0%A4%A&&=&%%%');
  await page.getByTestId('message-notice').waitFor();
  assert.equal(await page.getByTestId('token-chip').count(), 12);
  assert.deepEqual(errors, []);
});

test('a link cut at the length cap inside an emoji still draws its step, with a notice', async () => {
  // 19999 letters then an emoji (two UTF-16 units): a cut at 20000 units fell
  // between the emoji's halves and the page showed only "unpaired UTF-16 surrogate".
  const hash = `#s=${'a'.repeat(19999)}${encodeURIComponent('\u{1F600} more')}&step=softmax`;
  const { page, errors } = await h.open(hash, { wait: false });
  await page.waitForFunction(() => document.querySelector('[data-testid="panel"]')?.dataset.rendered || document.querySelector('[data-testid="message-error"]'), null, { timeout: WAIT });
  assert.equal(await page.getByTestId('message-error').count(), 0, `no error: ${await page.getByTestId('message-error').allTextContents()}`);
  assert.equal(await page.getByTestId('panel').getAttribute('data-rendered'), 'softmax');
  assert.match(await page.getByTestId('message-notice').textContent(), /longer than 20000 characters, cut/);
  const s = await hashState(page);
  assert.equal(s.sentence, 'a'.repeat(19999), 'cut before the emoji, not inside it');
  assert.deepEqual(errors, []);
});
