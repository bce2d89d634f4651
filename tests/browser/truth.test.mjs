// A new learner's first minutes (issue #24 items 1–4, 9), on desktop and phone:
// the page opens where the meaning is (the featured head on the heads step,
// a line saying what to look at, a tour from step 1); a sentence outside what
// the coreference model learned says so at the answer and the heads and
// points to the language model; the query follows its word into a new
// sentence; the language model's [UNK] is explained beside the words it
// knows; the model view shows every layer × head with the tokens, the
// featured head marked, a click opens it; one repeat does not name an
// induction head; the training lab link sits in the page's header.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startHarness, waitStep, waitRunAfter, runCount, hashState, artifactDir, pageScrollWidth, WAIT } from './harness.mjs';

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };
const TROPHY = 'The trophy didn\'t fit in the suitcase because it was too big.';
const CAT = 'The cat chased the dog because it was hungry.';
const BANK = 'I went to the bank to deposit money';

async function typeSentence(page, text) {
  const n = await runCount(page);
  await page.getByLabel('Sentence', { exact: true }).fill(text);
  await waitRunAfter(page, n);
}

const queryValue = (page) => page.getByLabel('Query token', { exact: true }).inputValue();

for (const [viewport, name] of [[DESKTOP, 'desktop'], [PHONE, 'phone']]) {
  test(`${name}: a fresh page opens on the featured head at the heads step, says what to look at, offers the tour`, async () => {
    const { page, errors } = await h.open('', { model: null, viewport });
    await waitStep(page, 'heads');
    const s = await hashState(page);
    assert.equal(s.step, 'heads');
    assert.equal(s.layer, 1);
    assert.equal(s.head, 0);
    assert.equal(s.query, 7);
    assert.match(await page.getByTestId('step-counter').textContent(), /^Step 10 of 12 \u00b7 layer 2 of 2$/);
    const start = await page.getByTestId('start-here').textContent();
    assert.match(start, /^Start here: in \u2605 L2 H1 \(antecedent\), the row of \u201cit\u201d puts (0\.9\d\d|1\.00) of its weight on \u201canimal\u201d/);
    // the model view comes on screen by itself (a phone scrolls to it): the learner sees a figure first
    await page.waitForFunction(() => {
      const r = document.querySelector('[data-testid="model-view"]').getBoundingClientRect();
      return r.top >= 0 && r.top < innerHeight - 100;
    }, null, { timeout: WAIT });
    // the line that says what to look at is on screen too
    await page.waitForFunction(() => {
      const r = document.querySelector('[data-testid="start-here"]').getBoundingClientRect();
      const stepper = document.querySelector('.card-stepper').getBoundingClientRect();
      return r.top >= Math.max(0, stepper.bottom) - 2 && r.bottom <= innerHeight;
    }, null, { timeout: WAIT });
    assert.equal(await page.getByTestId('fit-note').getAttribute('data-outside'), '0');
    // the tour starts at step 1 and plays; embeddings belong to no layer
    await page.getByTestId('tour-start').click();
    await waitStep(page, 'embeddings');
    assert.equal(await page.getByTestId('step-counter').textContent(), 'Step 1 of 12');
    await page.waitForFunction(() => document.querySelector('[data-testid="panel"]').dataset.rendered === 'positional', null, { timeout: WAIT });
    assert.ok(await pageScrollWidth(page) <= viewport.width);
    await page.screenshot({ path: join(artifactDir('truth'), `${name}-tour.png`) });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`${name}: sentences outside the coreference grammar say the answer is a guess, at the answer and the heads; the query follows "it"`, async () => {
    const { page, errors } = await h.open('', { model: null, viewport });
    await waitStep(page, 'heads');
    await typeSentence(page, TROPHY);
    // the query stays on "it" (position 8 here, 7 before)
    assert.equal(await queryValue(page), '8');
    const note = page.locator('section[data-step="heads"] [data-testid="fit-note"]');
    assert.equal(await note.getAttribute('data-outside'), '1');
    const text = await note.textContent();
    assert.match(text, /This sentence is outside what this model learned: its answer is a guess\./);
    assert.match(text, /4 of 13 words are unknown to it/);
    assert.match(text, /Not one of the sentence shapes it was trained on/);
    assert.match(text, /is not a word of this sentence/);
    // no headline on a guess
    assert.match(await page.getByTestId('start-here').textContent(), /^In \u2605 L2 H1, the row of \u201cit\u201d puts .*; on this sentence that is a guess/);
    await page.screenshot({ path: join(artifactDir('truth'), `${name}-trophy-heads.png`) });
    // at the answer
    await page.locator('.step-btn[data-step="output"]').click();
    await waitStep(page, 'output');
    const answerNote = page.locator('section[data-step="output"] [data-testid="fit-note"]');
    assert.equal(await answerNote.getAttribute('data-outside'), '1');
    assert.match(await page.getByTestId('prediction').textContent(), /this sentence is outside what it learned, so this answer is a guess/);
    await page.getByTestId('block').screenshot({ path: join(artifactDir('truth'), `${name}-trophy-output.png`) });
    // the cat sentence: the query moves to its "it"
    await typeSentence(page, CAT);
    assert.equal(await queryValue(page), '6');
    assert.equal(await answerNote.getAttribute('data-outside'), '1');
    assert.match(await answerNote.textContent(), /2 of 10 words are unknown/);
    // it points to the language model, which keeps the sentence and puts the query on the last token
    const n = await runCount(page);
    await answerNote.getByTestId('fit-pick').click();
    await waitRunAfter(page, n);
    assert.equal(await page.getByLabel('Model', { exact: true }).inputValue(), 'language');
    assert.equal(await page.getByLabel('Sentence', { exact: true }).inputValue(), CAT);
    assert.ok(await pageScrollWidth(page) <= viewport.width);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`${name}: the language model's next word after the sentence, [UNK] explained beside the words it knows`, async () => {
    const { page, errors } = await h.open('#model=language&step=output', { model: null, viewport });
    await waitStep(page, 'output');
    await typeSentence(page, BANK);
    // "buy" (the example's query) is not in the new sentence: the last token, "money"
    assert.equal(await queryValue(page), '7');
    assert.match(await page.getByTestId('prediction').textContent(), /Next word after \u201cmoney\u201d/);
    assert.equal(await page.locator('section[data-step="output"] [data-testid="fit-note"]').isVisible(), true);
    // "The cat chased the dog": [UNK] is the top guess; what it means, and the real words
    await typeSentence(page, 'The cat chased the dog');
    assert.equal(await queryValue(page), '4');
    assert.equal(await page.getByTestId('prediction-item').first().getAttribute('data-token'), '[UNK]');
    assert.match(await page.getByTestId('prediction').textContent(), /\[UNK\] stands for every word outside its vocabulary of 4,000 words: 0\.\d+ says the model expects a word it does not know, not which one/);
    const real = page.locator('[data-testid="prediction-real"] [data-testid="prediction-item"]');
    assert.equal(await page.getByTestId('prediction-real').isVisible(), true);
    const words = await real.evaluateAll((els) => els.map((e) => e.dataset.token));
    assert.equal(words.length, 5);
    assert.ok(!words.includes('[UNK]') && !words.includes('[PAD]'), words.join(' '));
    await page.getByTestId('block').screenshot({ path: join(artifactDir('truth'), `${name}-language-output.png`) });
    // a sentence whose top guess is a real word shows no second list
    await typeSentence(page, 'she was able to buy a car . she was able to buy');
    assert.notEqual(await page.getByTestId('prediction-item').first().getAttribute('data-token'), '[UNK]');
    assert.equal(await page.getByTestId('prediction-real').isVisible(), false);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('the query stays on its word when the sentence changes around it (random weights)', async () => {
  const { page, errors } = await h.open('#s=the+cat+sat+on+the+mat&q=1&step=softmax');
  await typeSentence(page, 'a big cat sat on the mat');
  assert.equal(await queryValue(page), '2', 'still on "cat"');
  await typeSentence(page, 'the dog sat');
  assert.equal(await queryValue(page), '2', 'no "cat": the index, inside the sentence');
  assert.deepEqual(errors, []);
});

test('model view: every layer × head with the tokens, the featured head marked, a click opens it in the steps', async () => {
  const { page, errors } = await h.open('', { model: null });
  await waitStep(page, 'heads');
  const cards = page.getByTestId('mv-card');
  assert.equal(await cards.count(), 8, '2 layers × 4 heads');
  const featured = page.locator('[data-testid="mv-card"].is-featured');
  assert.equal(await featured.count(), 1);
  assert.equal(await featured.getAttribute('data-layer'), '1');
  assert.equal(await featured.getAttribute('data-head'), '0');
  assert.match(await featured.getAttribute('aria-label'), /Layer 2, head 1 \(featured\): antecedent/);
  // the tokens label each layer's row of maps
  const labels = await page.locator('.mv-labels').first().locator('.mv-label').allTextContents();
  assert.deepEqual(labels.slice(0, 3), ['the', 'animal', 'didn\'t']);
  assert.equal(labels.length, 12);
  // a click opens layer 1, head 3 on the softmax step
  await page.locator('[data-testid="mv-card"][data-layer="0"][data-head="2"]').click();
  await waitStep(page, 'softmax');
  const s = await hashState(page);
  assert.equal(s.layer, 0);
  assert.equal(s.head, 2);
  await page.locator('.step-btn[data-step="heads"]').click();
  await waitStep(page, 'heads');
  assert.equal(await page.locator('[data-testid="mv-card"][data-layer="0"][data-head="2"]').getAttribute('aria-pressed'), 'true');
  assert.deepEqual(errors, []);
});

test('pattern evidence: "The cat chased the dog" (one repeat) names no induction head; each head shows its row spread', async () => {
  const { page, errors } = await h.open('#model=language&step=heads', { model: null });
  await waitStep(page, 'heads');
  await typeSentence(page, 'The cat chased the dog');
  const names = await page.getByTestId('head-pattern').allTextContents();
  assert.ok(!names.some((p) => /^induction/.test(p)), names.join(' | '));
  const mvPatterns = await page.getByTestId('mv-card').evaluateAll((els) => els.map((e) => e.dataset.pattern));
  assert.ok(!mvPatterns.includes('induction'), mvPatterns.join(' '));
  const spreads = await page.getByTestId('head-spread').allTextContents();
  assert.equal(spreads.length, 4);
  assert.ok(spreads.every((t) => /^row spread (0|1)\.\d\d$/.test(t) || /^row spread 0$/.test(t)), spreads.join(' | '));
  // the same head on the example (many repeats) is an induction head
  await typeSentence(page, 'she was able to buy a car . she was able to buy a car');
  const again = await page.getByTestId('head-pattern').allTextContents();
  assert.ok(again.some((p) => /^induction (0\.9\d|1\.0)$/.test(p)), again.join(' | '));
  assert.deepEqual(errors, []);
});

test('the training lab link is in the playground\'s header, beside the concepts link', async () => {
  const { page, errors } = await h.open('', { model: null });
  const link = page.getByTestId('train-link');
  assert.equal(await link.getAttribute('href'), 'train.html');
  assert.equal(await page.locator('.ap-header [data-testid="train-link"]').count(), 1);
  assert.deepEqual(errors, []);
});

test('phone: "scroll →" on the projections step sits below the column numbers, not over them', async () => {
  const { page, errors } = await h.open('#model=coreference&step=projections', { model: null, viewport: PHONE });
  await waitStep(page, 'projections');
  const cue = page.locator('.hm-cue-right:not([hidden])').first();
  await cue.waitFor();
  const { text, box } = await cue.evaluate((el) => {
    const range = document.createRange();
    range.selectNodeContents(el);
    const t = range.getBoundingClientRect();
    const b = el.parentElement.querySelector('.hm-scroll').getBoundingClientRect();
    return { text: { top: t.top, bottom: t.bottom }, box: { top: b.top, bottom: b.bottom } };
  });
  // the column numbers are the scroll box's first 20 px (12 px font + 8)
  assert.ok(text.top >= box.top + 24, `the cue's words (top ${text.top}) clear the column numbers (box top ${box.top})`);
  assert.ok(text.bottom <= box.bottom, 'inside the map');
  assert.deepEqual(errors, []);
});
