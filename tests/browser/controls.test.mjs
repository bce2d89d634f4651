// Every control changes what it should: the trace (width, heads, seed,
// positional, mask, scale, batch) or only the view (query, head, theme, speed).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, runCount, waitRunAfter, waitStep, readoutValues, hashState, waitHash, clickCell, settled } from './harness.mjs';

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

const shape = (page, id) => page.locator(`[data-testid="hm-${id}"] .hm-shape`).textContent();

test('Model width changes C everywhere and keeps the heads dividing it', async () => {
  const { page, errors } = await h.open();
  const n = await runCount(page);
  await page.getByLabel('Model width', { exact: true }).selectOption('32');
  await waitRunAfter(page, n);
  assert.equal(await shape(page, 'embeddings'), '12 \u00d7 32');
  assert.equal((await hashState(page)).dModel, 32);
  // width 12 does not divide by 8 heads: the heads follow
  await page.getByLabel('Heads', { exact: true }).selectOption('8');
  await waitHash(page, 'h', '8');
  await page.getByLabel('Model width', { exact: true }).selectOption('12');
  await waitHash(page, 'c', '12');
  const s = await hashState(page);
  assert.equal(12 % s.heads, 0);
  assert.equal(s.heads, 6);
  assert.deepEqual(errors, []);
});

test('Heads changes the number of heads and the head width d_k', async () => {
  const { page } = await h.open('#step=projections');
  const n = await runCount(page);
  await page.getByLabel('Heads', { exact: true }).selectOption('2');
  await waitRunAfter(page, n);
  assert.equal(await shape(page, 'projection-q'), '12 \u00d7 8');
  const heads = await page.getByLabel('Head', { exact: true }).locator('option').allTextContents();
  assert.deepEqual(heads, ['1 of 2', '2 of 2']);
});

test('Seed changes the numbers, and the same seed gives the same numbers back', async () => {
  const { page } = await h.open();
  const first = await readoutValues(page, 'embeddings');
  let n = await runCount(page);
  await page.getByLabel('Seed', { exact: true }).fill('7');
  await page.getByLabel('Seed', { exact: true }).press('Enter');
  await waitRunAfter(page, n);
  const seven = await readoutValues(page, 'embeddings');
  assert.notDeepEqual(seven, first);
  assert.equal((await hashState(page)).seed, 7);
  n = await runCount(page);
  await page.getByLabel('Seed', { exact: true }).fill('42');
  await page.getByLabel('Seed', { exact: true }).press('Enter');
  await waitRunAfter(page, n);
  assert.deepEqual(await readoutValues(page, 'embeddings'), first);
});

test('Positional encoding switches between none, sinusoidal and learned', async () => {
  const { page } = await h.open('#step=positional');
  const sin = await readoutValues(page, 'positional');
  assert.match(await page.getByTestId('formula').textContent(), /sin\(7/);
  let n = await runCount(page);
  await page.getByLabel('Positional encoding', { exact: true }).selectOption('none');
  await waitRunAfter(page, n);
  assert.ok((await readoutValues(page, 'positional')).every((c) => c.value === 0));
  assert.match(await page.locator('section[data-step="positional"] [data-testid="step-explain"]').textContent(), /switched off/);
  n = await runCount(page);
  await page.getByLabel('Positional encoding', { exact: true }).selectOption('learned');
  await waitRunAfter(page, n);
  const learned = await readoutValues(page, 'positional');
  assert.notDeepEqual(learned, sin);
  assert.ok(learned.some((c) => c.value !== 0));
  assert.equal((await hashState(page)).positional, 'learned');
});

test('Mask causal blocks later keys (−∞ scores, zero weights)', async () => {
  const { page } = await h.open('#step=masked&q=3');
  const n = await runCount(page);
  await page.getByLabel('Mask', { exact: true }).selectOption('causal');
  await waitRunAfter(page, n);
  const row = await readoutValues(page, 'masked');
  assert.equal(row.length, 12);
  for (const c of row) assert.equal(c.value === -Infinity, c.col > 3, `key ${c.col}`);
  await page.locator('.step-btn[data-step="softmax"]').click();
  await waitStep(page, 'softmax');
  const w = await readoutValues(page, 'softmax');
  for (const c of w) if (c.col > 3) assert.equal(c.value, 0);
  assert.equal(Number(await page.getByTestId('softmax-sum').getAttribute('data-value')).toFixed(5), '1.00000');
});

test('Mask custom: clicking a cell of the mask toggles it and the link remembers it', async () => {
  const { page, errors } = await h.open('#step=masked&q=7&mask=causal');
  let n = await runCount(page);
  // block key 2 for query 7 (starting from the causal mask)
  await clickCell(page, 'mask', 7, 2);
  await waitRunAfter(page, n);
  assert.equal(await page.getByLabel('Mask', { exact: true }).inputValue(), 'custom');
  const s = await hashState(page);
  assert.equal(s.mask, 'custom');
  assert.ok(s.customMask.includes('7-2'));
  assert.ok(s.customMask.includes('0-1'), 'the causal cells were kept');
  let row = await readoutValues(page, 'masked');
  assert.equal(row.find((c) => c.col === 2).value, -Infinity);
  assert.notEqual(row.find((c) => c.col === 1).value, -Infinity);
  // click again: allowed again; unblock a future key too
  n = await runCount(page);
  await clickCell(page, 'mask', 7, 2);
  await waitRunAfter(page, n);
  n = await runCount(page);
  await clickCell(page, 'mask', 7, 9);
  await waitRunAfter(page, n);
  row = await readoutValues(page, 'masked');
  assert.notEqual(row.find((c) => c.col === 2).value, -Infinity);
  assert.notEqual(row.find((c) => c.col === 9).value, -Infinity);
  // keyboard: focus the mask, move to a cell and press Enter
  n = await runCount(page);
  await page.locator('[data-testid="hm-mask"] .hm-scroll').focus();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Enter');
  await waitRunAfter(page, n);
  assert.ok((await hashState(page)).customMask.length > 0);
  assert.deepEqual(errors, []);
});

test('Scale by 1/√d_k off leaves the scores unscaled', async () => {
  const { page } = await h.open('#step=scaled');
  const scaled = await readoutValues(page, 'scaled');
  const n = await runCount(page);
  await page.getByLabel('Scale by 1/\u221ad_k').uncheck();
  await waitRunAfter(page, n);
  const raw = await readoutValues(page, 'scaled');
  const scores = await readoutValues(page, 'scaled-before');
  assert.deepEqual(raw.map((c) => c.value), scores.map((c) => c.value));
  raw.forEach((c, j) => assert.ok(Math.abs(c.value / 2 - scaled[j].value) < 1e-5, 'scaled = raw / √4'));
  assert.match(await page.getByTestId('formula').textContent(), /off/);
  assert.equal((await hashState(page)).scale, false);
});

test('Batch mode pads shorter sentences with [PAD] and hides them with the padding mask', async () => {
  const { page, errors } = await h.open('#step=softmax');
  let n = await runCount(page);
  await page.getByLabel('Batch mode').check();
  await waitRunAfter(page, n);
  await page.getByLabel('Batch sentences').waitFor();
  assert.equal(await page.getByLabel('Mask', { exact: true }).inputValue(), 'padding');
  n = await runCount(page);
  await page.getByLabel('Batch sentences').fill('one two three four five\nsix seven');
  await waitRunAfter(page, n);
  await page.getByLabel('Sentence shown').selectOption('1');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="token-chip"]').length === 5
    && document.querySelectorAll('.chip.is-pad').length === 3);
  const texts = await page.getByTestId('token-chip').locator('.chip-text').allTextContents();
  assert.deepEqual(texts, ['six', 'seven', '[PAD]', '[PAD]', '[PAD]']);
  await page.getByLabel('Query token').selectOption('1');
  const w = await readoutValues(page, 'softmax');
  assert.deepEqual(w.slice(2).map((c) => c.value), [0, 0, 0], '[PAD] keys get zero weight');
  const s = await hashState(page);
  assert.equal(s.batch, true);
  assert.deepEqual(s.sentences, ['one two three four five', 'six seven']);
  assert.equal(s.shown, 1);
  assert.deepEqual(errors, []);
});

test('Mask padding on one sentence says why it changes nothing, and offers batch mode', async () => {
  const { page, errors } = await h.open('#step=softmax');
  const note = page.getByTestId('mask-note');
  assert.equal(await note.isVisible(), false, 'no note with no mask');
  const before = await readoutValues(page, 'softmax');
  let n = await runCount(page);
  await page.getByLabel('Mask', { exact: true }).selectOption('padding');
  await waitRunAfter(page, n);
  await note.waitFor();
  assert.match(await note.textContent(), /no \[PAD\] tokens, so the padding mask hides nothing/);
  assert.deepEqual((await readoutValues(page, 'softmax')).map((c) => c.value), before.map((c) => c.value), 'the weights are those of no mask');
  await page.getByLabel('Mask', { exact: true }).selectOption('causal+padding');
  await page.waitForFunction(() => /just causal/.test(document.querySelector('[data-testid="mask-note"]').textContent));
  n = await runCount(page);
  await page.getByRole('button', { name: 'Switch to batch mode' }).click();
  await waitRunAfter(page, n);
  await page.getByLabel('Batch sentences').waitFor();
  assert.equal(await note.isVisible(), false, 'batch mode has [PAD] to hide');
  const s = await hashState(page);
  assert.equal(s.batch, true);
  assert.equal(s.mask, 'causal+padding');
  assert.deepEqual(errors, []);
});

test('Batch mode never puts the query on a [PAD] token unannounced', async () => {
  // "Dogs bark." is 3 tokens of 12: query 7 (the default) would be [PAD]
  const { page, errors } = await h.open('#step=softmax&batch=1&bi=2');
  const note = page.getByTestId('pad-note');
  assert.equal(await note.isVisible(), false, 'query 7 is a real token of the long sentence');
  await page.getByLabel('Sentence shown').selectOption('1');
  await page.waitForFunction(() => document.querySelector('.control-query')?.value === '2');
  await note.waitFor();
  assert.match(await note.textContent(), /moved from 7, a \[PAD\] token in this sentence, to 2 \u201c\.\u201d, the last real token of \u201cDogs bark\.\u201d/);
  assert.equal((await hashState(page)).query, 2);
  // a [PAD] query picked on purpose stays, with what its row means
  await page.getByLabel('Query token').selectOption('7');
  await page.waitForFunction(() => /^Query 7 is \[PAD\]/.test(document.querySelector('[data-testid="pad-note"]').textContent));
  assert.match(await note.textContent(), /nothing reads it/);
  assert.equal((await hashState(page)).query, 7);
  // a link that opens on a [PAD] query explains it too
  const link = await h.open('#step=softmax&batch=1&bi=1&q=7');
  await link.page.getByTestId('pad-note').waitFor();
  assert.match(await link.page.getByTestId('pad-note').textContent(), /^Query 7 is \[PAD\]/);
  assert.deepEqual(errors, []);
});

test('Query token, token chips and Head select what the views show', async () => {
  const { page } = await h.open('#step=softmax');
  await page.getByLabel('Query token').selectOption('2');
  await page.waitForFunction(() => document.querySelector('[data-testid="cell-softmax-2-0"]'));
  assert.equal(await page.getByTestId('token-chip').nth(2).getAttribute('aria-pressed'), 'true');
  await page.getByTestId('token-chip').nth(4).click();
  await page.waitForFunction(() => document.querySelector('[data-testid="cell-softmax-4-0"]'));
  assert.equal(await page.getByLabel('Query token').inputValue(), '4');
  const head1 = await readoutValues(page, 'softmax');
  await page.getByLabel('Head', { exact: true }).selectOption('2');
  await page.waitForFunction(() => /head 3/.test(document.querySelector('[data-testid="hm-softmax"] .hm-title').textContent));
  assert.notDeepEqual(await readoutValues(page, 'softmax'), head1);
  assert.equal((await hashState(page)).head, 2);
  // the all-heads grid selects a head too
  await page.locator('.step-btn[data-step="heads"]').click();
  await waitStep(page, 'heads');
  await page.getByRole('button', { name: 'Head 4' }).click();
  await waitHash(page, 'head', '3');
  assert.equal(await page.getByRole('button', { name: 'Head 4' }).getAttribute('aria-pressed'), 'true');
  // the lines view selects a query
  await page.getByRole('button', { name: 'Query 1: animal' }).click();
  await waitHash(page, 'q', '1');
});

test('a click on a score cell selects its query and key', async () => {
  const { page } = await h.open('#step=scores');
  await clickCell(page, 'scores', 3, 5);
  await waitHash(page, 'q', '3');
  await waitHash(page, 'k', '5');
  assert.match(await page.getByTestId('formula').textContent(), /S\[3, 5\]/);
});

test('Theme toggles light, dark and system, and the colours follow', async () => {
  const { page } = await h.open('', { colorScheme: 'light' });
  const bg = () => page.evaluate(() => getComputedStyle(document.querySelector('.ap')).backgroundColor);
  const light = await bg();
  const toggle = page.getByRole('button', { name: /Theme/ });
  assert.match(await toggle.textContent(), /System/);
  await toggle.click(); // → light
  await waitHash(page, 'theme', 'light');
  assert.equal(await bg(), light);
  await toggle.click(); // → dark
  await waitHash(page, 'theme', 'dark');
  assert.equal(await page.locator('.ap').getAttribute('data-theme'), 'dark');
  assert.notEqual(await bg(), light);
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
  await toggle.click(); // → system
  await waitHash(page, 'theme', 'system');
  assert.equal(await bg(), light);
});

test('Speed is a setting of the animation and lives in the link', async () => {
  const { page } = await h.open();
  await page.getByLabel('Speed').selectOption('2');
  await waitHash(page, 'speed', '2');
  assert.equal((await hashState(page)).speed, 2);
});

test('Batch mode keeps typed lines past the 8th, says which are computed, and the link keeps them all', async () => {
  // 10 typed lines used to become 8 on the next click, in the box and in the link, without a word.
  const { page, errors } = await h.open('#batch=1&mask=padding&step=softmax');
  const box = page.getByLabel('Batch sentences');
  await box.waitFor();
  const lines = Array.from({ length: 10 }, (_, i) => `sentence number ${i + 1}`);
  const n = await runCount(page);
  await box.fill(lines.join('\n'));
  await waitRunAfter(page, n);
  await page.getByLabel('Model width', { exact: true }).click();  // focus leaves the box: the page writes the state back into it
  await page.keyboard.press('Escape');
  await settled(page);
  assert.equal(await box.inputValue(), lines.join('\n'), 'every typed line is still in the box');
  const status = await page.getByTestId('batch-status').textContent();
  assert.match(status, /10 sentences: the first 8 are computed\. Lines 9\u201310 are kept here and in the link, not computed\./);
  assert.equal(await page.getByLabel('Sentence shown').locator('option').count(), 8, 'the 8 computed sentences can be shown');
  const s = await hashState(page);
  assert.deepEqual(s.sentences, lines, 'the link keeps all 10');
  // the link reopens with all 10 lines, the same notice and no complaint about the link
  const copy = await h.open(new URL(page.url()).hash);
  assert.equal(await copy.page.getByLabel('Batch sentences').inputValue(), lines.join('\n'));
  assert.match(await copy.page.getByTestId('batch-status').textContent(), /Lines 9\u201310 are kept/);
  assert.equal(await copy.page.getByTestId('message-notice').count(), 0);
  // the limit is said before it bites
  assert.match(await page.locator('.field-hint').filter({ hasText: 'One sentence per line' }).textContent(), /the first 8 are computed/);
  assert.deepEqual(errors, []);
  assert.deepEqual(copy.errors, []);
});
