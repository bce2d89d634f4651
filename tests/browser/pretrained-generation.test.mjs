// "Next token" in the playground on a pretrained GPT-2 (the test checkpoint with
// GPT-2's real vocabulary and tokenizer, served by the local stand-in for the
// Hub): the appended token is the native CLI's argmax for the tokens on screen,
// the KV-cache view marks the earlier rows reused and the new one computed, the
// causal mask's hidden cells are shown, Undo drops the token, and sampled tokens
// with a seed come back the same from the link. And the heads step names the
// heads of gpt2-patterns (built by hand to attend to the previous and the first
// token) by those patterns.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { startHarness, waitReady, waitStep, runCount, waitRunAfter, hashState, artifactDir, allowLinkModel } from './harness.mjs';
import { startHubServer, readModelFolder } from '../js/hub-server.mjs';
import { cliTrace } from '../js/helpers.mjs';
import { hubFolders } from '../js/pretrained.mjs';

const SENTENCE = "The trophy didn't fit in the suitcase because it was too big";

let h;
let hub;
let dir;
before(async () => {
  // GPT-2's real tokenizer beside both GPT-2 folders
  dir = hubFolders(['gpt2-vocab', 'gpt2-patterns', 'bert-mlm'], { withTokenizer: ['gpt2-vocab', 'gpt2-patterns'], rename: { 'gpt2-vocab': 'gpt2' } });
  const models = { 'tiny/gpt2': 'gpt2', 'tiny/patterns': 'gpt2-patterns', 'tiny/bert': 'bert-mlm' };
  hub = await startHubServer(Object.fromEntries(Object.entries(models).map(([id, folder]) => [id, readModelFolder(join(dir, folder))])));
  h = await startHarness();
});
after(async () => {
  await Promise.all([h?.close(), hub?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The page at a link naming a model (fetched once the reader asks, unless this browser has it). */
async function openModel(hash) {
  const opened = await h.open(hash, { model: null, wait: false, init: `window.attentionPlaygroundHub = ${JSON.stringify(hub.base)};` });
  await allowLinkModel(opened.page);
  await waitReady(opened.page);
  return opened;
}

const chipIds = (page) => page.evaluate(() => [...document.querySelectorAll('[data-testid="token-chip"]')].map((x) => Number(/, id (\d+)$/.exec(x.getAttribute('aria-label'))[1])));

async function next(page) {
  const runs = await runCount(page);
  await page.getByTestId('gen-next').click();
  await waitRunAfter(page, runs);
  await page.waitForFunction(() => !document.querySelector('[data-testid="gen-next"]').disabled);
}

function argmax(row) {
  return row.reduce((best, x, i) => (x > row[best] ? i : best), 0);
}

test('Next token appends the CLI\'s argmax; the KV cache view shows the earlier rows reused, the new one computed, the hidden cells', async () => {
  const { page, errors } = await openModel(`#model=hf:tiny/gpt2&s=${encodeURIComponent(SENTENCE)}&step=softmax`);
  await waitReady(page);
  const before = await chipIds(page);
  const cli = cliTrace(['run', '--model', join(dir, 'gpt2'), '--ids', before.join(',')]);
  const expected = argmax(cli.logits.at(-1));
  await next(page);
  const after = await chipIds(page);
  assert.deepEqual(after, [...before, expected]);
  const state = await hashState(page);
  assert.deepEqual(state.gen, [expected]);
  assert.equal(state.query, before.length, 'the step views show the new row');
  const sentence = await page.getByLabel('Sentence', { exact: true }).inputValue();
  assert.equal(sentence, state.sentence);
  assert.ok(state.sentence.startsWith(SENTENCE) && state.sentence.length > SENTENCE.length, 'the token\'s text is appended to the sentence');
  // the cache: every earlier row reused, the last computed now; the cells right of the diagonal hidden
  const rows = await page.getByTestId('kv-cache').evaluate((g) => [...g.querySelectorAll('.gen-cache-row')].map((r) => ({
    row: Number(r.dataset.row), kind: r.dataset.kind, hidden: r.querySelectorAll('.gen-cell.hidden').length, cells: r.querySelectorAll('.gen-cell').length,
  })));
  const T = after.length;
  assert.deepEqual(rows.map((r) => r.kind), [...Array(T - 1).fill('cached'), 'new'].slice(-rows.length));
  const first = rows[0].row;
  for (const r of rows) assert.equal(r.hidden, T - 1 - r.row, `row ${r.row}: the cells after it are hidden`);
  assert.equal(rows.length, T - first);
  assert.match(await page.getByTestId('kv-cache-text').textContent(), new RegExp(`read the keys and values of tokens 0\u2013${T - 2} from the cache \\(${T - 1} rows in each of 2 layers\\)`));
  // a second token continues from the first
  await next(page);
  const twice = await chipIds(page);
  const cli2 = cliTrace(['run', '--model', join(dir, 'gpt2'), '--ids', after.join(',')]);
  assert.deepEqual(twice, [...after, argmax(cli2.logits.at(-1))]);
  // Undo drops the last token: its text and id
  const runs = await runCount(page);
  await page.getByTestId('gen-undo').click();
  await waitRunAfter(page, runs);
  assert.deepEqual(await chipIds(page), after);
  assert.equal((await hashState(page)).sentence, state.sentence);
  assert.deepEqual(errors, []);
  await page.close();
});

test('sampled tokens with a seed: the link with the same settings writes the same tokens', async () => {
  const hash = `#model=hf:tiny/gpt2&s=${encodeURIComponent(SENTENCE)}&pick=sample&temp=1.5&topk=0&gseed=11`;
  const written = [];
  for (let visit = 0; visit < 2; visit++) {
    const { page, errors } = await openModel(hash);
    await waitReady(page);
    await page.getByTestId('gen-seed').waitFor({ state: 'visible' });
    assert.doesNotMatch(await page.locator('.ap-messages').textContent(), /could not be used/, 'the link\'s sampling settings are all read');
    assert.equal(await page.getByTestId('gen-seed').inputValue(), '11');
    for (let i = 0; i < 3; i++) await next(page);
    const state = await hashState(page);
    assert.equal(state.gen.length, 3);
    written.push(state);
    // the link of the result reopens exactly those tokens
    const { page: again } = await openModel(`#${await page.evaluate(() => location.hash.slice(1))}`);
    await waitReady(again);
    assert.deepEqual((await chipIds(again)).slice(-3), state.gen);
    await again.close();
    assert.deepEqual(errors, []);
    await page.close();
  }
  assert.deepEqual(written[1].gen, written[0].gen);
  assert.equal(written[1].sentence, written[0].sentence);
});

test('Undo after generated tokens that split one character (\u{1F408}, three byte-level tokens): the sentence, the chips and gen= agree', async () => {
  // the cat's three ids, as GPT-2's tokenizer splits " \u{1F408}" (the last three chips)
  const { page: first } = await openModel(`#model=hf:tiny/gpt2&s=${encodeURIComponent('Hi \u{1F408}')}`);
  const all = await chipIds(first);
  const cat = all.slice(-3);
  await first.close();
  const { page, errors } = await openModel(`#model=hf:tiny/gpt2&s=${encodeURIComponent('Hi \u{1F408}')}&gen=${cat.join(',')}`);
  assert.deepEqual(await chipIds(page), all, 'the prompt\u2019s tokens, then the three of the cat');
  const undo = async () => {
    const runs = await runCount(page);
    await page.getByTestId('gen-undo').click();
    await waitRunAfter(page, runs);
    return hashState(page);
  };
  // each undo leaves what the ids before the last one write: the cat's first bytes, each U+FFFD
  let state = await undo();
  assert.deepEqual(state.gen, cat.slice(0, 2));
  assert.equal(state.sentence, 'Hi \uFFFD\uFFFD\uFFFD');
  assert.equal(await page.getByLabel('Sentence', { exact: true }).inputValue(), state.sentence);
  assert.deepEqual((await chipIds(page)).slice(-2), cat.slice(0, 2), 'the chips are the generated ids, as chosen');
  state = await undo();
  assert.deepEqual(state.gen, cat.slice(0, 1));
  assert.equal(state.sentence, 'Hi \uFFFD\uFFFD');
  state = await undo();
  assert.deepEqual(state.gen, []);
  assert.equal(state.sentence, 'Hi');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a link whose gen= holds an id past the vocabulary: a note says so, the sentence is read as typed, and Next token works', async () => {
  const { page, errors } = await openModel(`#model=hf:tiny/gpt2&s=${encodeURIComponent(SENTENCE)}&gen=464,99999&step=softmax`);
  const notice = page.getByTestId('message-notice');
  await notice.waitFor();
  assert.match(await notice.textContent(), /Some settings in the link could not be used,.*generated tokens \u201c464,99999\u201d name token 99999, past the vocabulary of tiny\/gpt2 \(Hub\) \(ids 0\u201350256\); the sentence is read as typed/);
  assert.deepEqual((await hashState(page)).gen, []);
  const before = await chipIds(page);
  assert.ok(before.length > 5, 'the sentence is traced');
  await next(page);
  assert.equal((await chipIds(page)).length, before.length + 1);
  assert.equal((await hashState(page)).gen.length, 1);
  assert.deepEqual(errors, []);
  await page.close();
});

test('BERT: no Next token, and the page says why', async () => {
  const { page } = await openModel('#model=hf:tiny/bert&s=the+cat+sat');
  await waitReady(page);
  assert.ok(await page.getByTestId('gen-next').isHidden());
  assert.match(await page.getByTestId('gen-status').textContent(), /BERT is not causal/);
  await page.close();
});

test('the heads step names gpt2-patterns\' heads by their built-in patterns: previous-token and first-token', async () => {
  const { page, errors } = await openModel(`#model=hf:tiny/patterns&s=${encodeURIComponent(SENTENCE)}&step=heads&layer=0`);
  await waitReady(page);
  await waitStep(page, 'heads');
  const patterns = await page.getByTestId('head-pattern').allTextContents();
  assert.equal(patterns.length, 2);
  assert.match(patterns[0], /^previous-token (0\.99|1\.0)$/);
  assert.match(patterns[1], /^first-token (0\.99|1\.0)$/);
  assert.deepEqual(errors, []);
  await page.close();
});

for (const [name, viewport] of [['desktop', { width: 1280, height: 800 }], ['phone', { width: 390, height: 844 }]]) {
  test(`${name}: after Next token a long token list shows the new token and says it scrolls; its probability has 3 significant digits (issue #40, item 14)`, async () => {
    const long = [SENTENCE, SENTENCE].join(' '); // 26 tokens (the test model reads at most 32)
    const { page, errors } = await h.open(`#model=hf:tiny/gpt2&s=${encodeURIComponent(long)}&step=softmax`, { model: null, viewport, init: `window.attentionPlaygroundHub = ${JSON.stringify(hub.base)};` });
    await waitReady(page);
    await next(page);
    const T = (await chipIds(page)).length;
    // the new chip (the query now) is inside the list's box, which is cut: a line says so
    const seen = await page.getByTestId('chips').evaluate((box) => {
      const b = box.getBoundingClientRect();
      const last = box.querySelector('li:last-child').getBoundingClientRect();
      return { inside: last.top >= b.top - 1 && last.bottom <= b.bottom + 1, cut: box.scrollHeight > box.clientHeight };
    });
    assert.ok(seen.cut, 'the list is taller than its box');
    assert.ok(seen.inside, 'the new token\'s chip is in view in the list');
    const cue = page.getByTestId('chips-cue');
    assert.equal(await cue.isVisible(), true);
    assert.match(await cue.textContent(), new RegExp(`^${T} tokens: scroll`));
    // the tiny model's probabilities are small: never "0.000"
    const status = await page.getByTestId('gen-status').textContent();
    const p = /probability ([^)]+)\)/.exec(status)[1];
    assert.notEqual(p, '0.000');
    assert.match(p, /^(\d\.\d\d|0\.\d*[1-9]\d\d|\d\.\d\de\u2212\d+)$/, `3 significant digits: ${p}`);
    await page.getByTestId('chips').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(artifactDir('first-minutes'), `${name}-next-token.png`) });
    assert.deepEqual(errors, []);
    await page.close();
  });
}
