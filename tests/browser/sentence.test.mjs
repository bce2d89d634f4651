// The sentence box: typing updates tokens and matrices; bad input (empty,
// 2,000 words, emoji, right-to-left) gives a message or a correct rendering.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, runCount, waitRunAfter, readoutValues, hashState } from './harness.mjs';

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

function chipTexts(page) {
  return page.getByTestId('token-chip').locator('.chip-text').allTextContents();
}

test('typing a sentence updates the token chips and the matrices', async () => {
  const { page, errors } = await h.open();
  const before = await readoutValues(page, 'embeddings');
  const n = await runCount(page);
  await page.getByLabel('Sentence', { exact: true }).fill('cats chase dogs');
  await waitRunAfter(page, n);
  assert.deepEqual(await chipTexts(page), ['cats', 'chase', 'dogs']);
  assert.match(await page.getByTestId('token-count').textContent(), /^3 tokens/);
  assert.equal(await page.locator('[data-testid="hm-embeddings"] .hm-shape').textContent(), '3 \u00d7 16');
  const afterRow = await readoutValues(page, 'embeddings');
  assert.equal(afterRow.length, 16);
  assert.equal(afterRow[0].row, 2, 'the query (7) is clamped to the last token');
  assert.notDeepEqual(afterRow.map((c) => c.value), before.map((c) => c.value));
  assert.equal((await hashState(page)).sentence, 'cats chase dogs');
  // chips carry the token ids
  assert.match(await page.getByTestId('token-chip').first().locator('.chip-id').textContent(), /^\d+$/);
  assert.deepEqual(errors, []);
});

test('the sentence box shows the whole sentence and grows with it; Enter computes at once and adds no line', async () => {
  for (const viewport of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
    const { page, errors } = await h.open('', { viewport });
    const box = page.getByLabel('Sentence', { exact: true });
    const fits = () => box.evaluate((b) => b.scrollHeight <= b.clientHeight && b.scrollWidth <= b.clientWidth);
    assert.equal(await box.inputValue(), 'The animal didn\'t cross the street because it was too tired.');
    assert.ok(await fits(), `${viewport.width}: the default sentence is not cut`);
    const oneLine = await box.evaluate((b) => b.getBoundingClientRect().height);
    await box.fill('a b');
    assert.ok(await box.evaluate((b) => b.getBoundingClientRect().height) <= oneLine, 'a short sentence takes no more room');
    const n = await runCount(page);
    await box.fill('This sentence is a good deal longer than the box is wide, so it has to wrap onto more lines to be read whole.');
    assert.ok(await fits(), `${viewport.width}: a long sentence is shown whole`);
    assert.ok(await box.evaluate((b) => b.getBoundingClientRect().height) > oneLine, 'the box grew');
    await box.press('Enter');
    await waitRunAfter(page, n);
    assert.doesNotMatch(await box.inputValue(), /\n/, 'Enter adds no line break');
    assert.equal((await hashState(page)).sentence, 'This sentence is a good deal longer than the box is wide, so it has to wrap onto more lines to be read whole.');
    // a pasted line break is a space, as in a one-line box
    await box.fill('');
    await box.evaluate((b) => { b.value = 'two\nlines'; b.dispatchEvent(new Event('input', { bubbles: true })); });
    assert.equal(await box.inputValue(), 'two lines');
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test('typing is debounced: the engine runs once, 150 ms after the last keystroke', async () => {
  const { page, errors } = await h.open();
  // installed, the fake clock still follows real time until it is paused: on a busy machine the gaps
  // between keystrokes would let the 150 ms pass while typing. Paused, only runFor moves it. The
  // clock is the whole browser context's: it flows again at the end, for the pages of later tests.
  await page.clock.install();
  await page.clock.pauseAt(await page.evaluate(() => Date.now() + 1000));
  try {
    const n = await runCount(page);
    const box = page.getByLabel('Sentence', { exact: true });
    await box.fill('');
    await box.pressSequentially('the quick brown fox');
    await page.clock.runFor(100);
    assert.equal(await runCount(page), n, 'no run while typing');
    await page.clock.runFor(100);
    assert.equal(await runCount(page), n + 1, 'one run after the pause');
    assert.equal(await page.getByTestId('token-chip').count(), 4);
    assert.deepEqual(errors, []);
  } finally {
    await page.clock.resume();
    await page.close();
  }
});

test('an empty sentence shows a clear message and the page stays usable', async () => {
  const { page, errors } = await h.open();
  await page.getByLabel('Sentence', { exact: true }).fill('');
  const msg = page.getByTestId('message-error');
  await msg.waitFor();
  assert.match(await msg.textContent(), /empty/i);
  // the last good view stays
  assert.equal(await page.getByTestId('token-chip').count(), 12);
  assert.equal(await page.locator('[data-testid="hm-embeddings"]').isVisible(), true);
  const n = await runCount(page);
  await page.getByLabel('Sentence', { exact: true }).fill('hello world');
  await waitRunAfter(page, n);
  await msg.waitFor({ state: 'detached' });
  assert.deepEqual(await chipTexts(page), ['hello', 'world']);
  assert.deepEqual(errors, []);
});

test('an empty sentence in the link shows the message instead of a blank page', async () => {
  const { page, errors } = await h.open('#s=', { wait: false });
  const msg = page.getByTestId('message-error');
  await msg.waitFor();
  assert.match(await msg.textContent(), /empty/i);
  assert.match(await page.getByTestId('panel-status').textContent(), /empty/i);
  assert.equal(await page.getByLabel('Sentence', { exact: true }).isVisible(), true);
  assert.deepEqual(errors, []);
});

test('2,000 words give a clear message without freezing the page', async () => {
  const { page, errors } = await h.open();
  const words = Array.from({ length: 2000 }, (_, i) => `word${i % 97}`).join(' ');
  await page.getByLabel('Sentence', { exact: true }).fill(words);
  const msg = page.getByTestId('message-error');
  await msg.waitFor();
  assert.match(await msg.textContent(), /too much for the page.*2000 tokens/s);
  // still responsive: a new sentence runs
  const n = await runCount(page);
  await page.getByLabel('Sentence', { exact: true }).fill('short again');
  await waitRunAfter(page, n);
  await msg.waitFor({ state: 'detached' });
  assert.deepEqual(await chipTexts(page), ['short', 'again']);
  assert.deepEqual(errors, []);
});

test('emoji and right-to-left text render as tokens', async () => {
  const { page, errors } = await h.open();
  const n = await runCount(page);
  await page.getByLabel('Sentence', { exact: true }).fill('I \u2764\ufe0f \ud83d\udc08 \u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd \u0645\u0631\u062d\u0628\u0627');
  await waitRunAfter(page, n);
  assert.deepEqual(await chipTexts(page), ['I', '\u2764\ufe0f', '\ud83d\udc08', '\u05e9\u05dc\u05d5\u05dd', '\u05e2\u05d5\u05dc\u05dd', '\u0645\u0631\u062d\u0628\u0627']);
  const rows = await readoutValues(page, 'embeddings');
  assert.equal(rows.length, 16);
  assert.ok(rows.every((c) => Number.isFinite(c.value)));
  assert.deepEqual(errors, []);
});
