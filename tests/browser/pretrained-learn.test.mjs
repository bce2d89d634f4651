// The Learn part on pretrained models (issue #23): GPT-2 and BERT fixtures (random
// weights in the Hub's layout, from the local Hub stand-in) loaded by a link; the
// page asks the model's worker for the backward of the layer on screen. Every Learn
// step renders with numbers and its formula's value equal to its cell; one step by
// hand lowers the loss at the selected position, and Undo gives the same loss
// exactly; the scale switch changes dS; a BERT sentence without [MASK] says why. A Llama
// (RoPE, grouped-query attention, RMSNorm, SwiGLU): every step, RoPE's backward (dQ turned
// back by −m·θᵢ) and dW_Q equal to the native backward (attn grad --model, itself checked
// against central finite differences in tests/core/test_pretrained_backward.cpp).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { startHarness, waitStep, waitHash, runCount, allowLinkModel, artifactDir, WAIT } from './harness.mjs';
import { numberProblems } from './number-check.mjs';
import { startHubServer, readModelFolder } from '../js/hub-server.mjs';
import { hubFolders } from '../js/pretrained.mjs';
import { cliRun } from '../js/helpers.mjs';
import { LEARN_STEPS } from '../../web/app/playground/learn/steps.js';

let h;
let hub;
let dir;
before(async () => {
  dir = hubFolders(['gpt2-vocab', 'bert-mlm', 'llama-sp'], { withTokenizer: ['gpt2-vocab'], rename: { 'gpt2-vocab': 'gpt2' } });
  hub = await startHubServer({
    'tiny/gpt2': readModelFolder(join(dir, 'gpt2')),
    'tiny/bert': readModelFolder(join(dir, 'bert-mlm')),
    'tiny/llama': readModelFolder(join(dir, 'llama-sp')),
  });
  h = await startHarness();
});
after(async () => {
  await h?.close();
  await hub?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const GPT2 = { model: 'hf:tiny/gpt2', sentence: 'the cat sat on the mat', q: 2 };
// [CLS] the cat [MASK] on the mat [SEP]: the answer is at position 3
const BERT = { model: 'hf:tiny/bert', sentence: 'the cat [MASK] on the mat', q: 3 };
// llama-sp: 4 query heads of D = 8 over 2 K/V heads, RoPE base 10000, a SentencePiece tokenizer that adds <s>
const LLAMA = { model: 'hf:tiny/llama', sentence: 'the cat sat on the mat', q: 3 };
const section = (step) => `section[data-step="${step}"]`;

/** The page at a link naming a model (fetched once the reader asks, unless this browser has it). */
async function openModel(m, extra = '') {
  const opened = await h.open(`#model=${m.model}&s=${encodeURIComponent(m.sentence)}&layer=0&head=0&q=${m.q}&k=1&d=0${extra}`, {
    model: null,
    wait: false,
    init: `window.attentionPlaygroundHub = ${JSON.stringify(hub.base)};`,
  });
  await allowLinkModel(opened.page);
  return opened;
}

/** Waits until the Learn step shows the worker's backward (no status line, its loss set). */
async function learnShown(page, step) {
  await waitStep(page, step, { timeout: WAIT });
  await page.waitForFunction((s) => {
    const st = document.querySelector('[data-testid="panel-status"]');
    const loss = document.querySelector(`section[data-step="${s}"] [data-testid="learn-loss"]`);
    return (!st || st.hidden) && loss?.dataset.value && !loss.closest('[hidden]');
  }, step, { timeout: WAIT });
}

async function openStep(page, step) {
  await page.locator(`.step-btn[data-step="${step}"]`).click();
  await learnShown(page, step);
}

const loss = async (page) => Number(await page.locator(`[data-testid="learn-loss"]:visible`).first().getAttribute('data-value'));

async function cell(page, id, i, j) {
  return Number(await page.locator(`[data-testid="cell-${id}-${i}-${j}"]`).getAttribute('data-value'));
}

/** The number each step's formula is about, read from its own figure (q: the selected query, k = 1, d = 0). */
async function cellOf(page, step, q) {
  const CELL = { dout: ['learn-dout', q, 0], dweights: ['learn-dweights', q, 1], dsoftmax: ['learn-dscaled', q, 1], dscale: ['learn-dscores', q, 1], dqkv: ['learn-dq', q, 0], dparams: ['learn-dwq', 0, 0] };
  if (CELL[step]) return cell(page, ...CELL[step]);
  if (step === 'loss') {
    const row = page.locator(`${section(step)} [data-testid="learn-top"] tr`, { hasText: '(answer)' });
    return Number(await row.locator('td').nth(2).getAttribute('data-value'));
  }
  return -Math.log(await movedP(page, 'after'));
}

/** p(answer) at the selected position in the step by hand's table ('before' or 'after'). */
async function movedP(page, which) {
  const td = page.locator(`${section('sgd')} [data-testid="learn-moved"] tr`).nth(2).locator('td').nth(which === 'before' ? 1 : 2);
  return Number(await td.getAttribute('data-value'));
}

/** Opens every Learn step in turn: numbers only, and each formula's value its figure's cell. */
async function everyStep(page, m) {
  for (const step of LEARN_STEPS) {
    await openStep(page, step);
    assert.deepEqual(await numberProblems(page, section(step)), [], step);
    const r = page.locator(`${section(step)} [data-testid="formula-result"]`);
    assert.equal(await r.count(), 1, `${step} has one formula result`);
    const result = Number(await r.getAttribute('data-value'));
    const want = await cellOf(page, step, m.q);
    assert.ok(Number.isFinite(result) && Number.isFinite(want), `${step}: numbers (${result}, ${want})`);
    assert.ok(Math.abs(result - want) <= 1e-6 * Math.max(1, Math.abs(want)), `${step}: formula ${result} vs cell ${want}`);
  }
  assert.ok(Number.isFinite(await loss(page)) && (await loss(page)) > 0);
}

for (const m of [GPT2, BERT]) {
  test(`${m.model}: every Learn step renders the worker's backward with numbers, each formula's value its cell's`, async () => {
    const { page, errors } = await openModel(m, '&step=loss');
    await learnShown(page, 'loss');
    await everyStep(page, m);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`${m.model}: one step by hand lowers the loss at the selected position, Undo gives the same loss exactly`, async () => {
    const { page, errors } = await openModel(m, '&step=sgd');
    await learnShown(page, 'sgd');
    const L0 = await loss(page);
    const p0 = await movedP(page, 'after');
    const runs = await runCount(page);
    // every status line the panel shows from here on (it is set before the worker can answer)
    await page.evaluate(() => {
      window.__statuses = [];
      const st = document.querySelector('[data-testid="panel-status"]');
      new MutationObserver(() => { if (!st.hidden) window.__statuses.push(st.textContent); }).observe(st, { childList: true, subtree: true, attributes: true, characterData: true });
    });
    await page.getByTestId('learn-step').click();
    await page.waitForFunction(() => /^1 step taken$/.test(document.querySelector('[data-testid="learn-taken"]').textContent));
    await page.waitForFunction((b) => {
      const el = document.querySelector('section[data-step="sgd"] [data-testid="learn-loss"]');
      const st = document.querySelector('[data-testid="panel-status"]');
      return (!st || st.hidden) && el?.dataset.value && Number(el.dataset.value) !== b;
    }, L0, { timeout: WAIT });
    const L1 = await loss(page);
    const p1 = await movedP(page, 'after');
    assert.equal(await movedP(page, 'before'), p0, 'the table\u2019s "before" is the trained weights\u2019 p(answer)');
    assert.ok(p1 > p0, `p(answer) at position ${m.q}: ${p0} \u2192 ${p1}`);
    assert.ok(L1 < L0, `loss ${L0} \u2192 ${L1}`);
    assert.ok(await runCount(page) > runs, 'the forward trace was asked again on the new weights');
    const statuses = await page.evaluate(() => window.__statuses);
    assert.ok(statuses.some((s) => /^Computing the backward of layer 1 of /.test(s)), `a status while it computes: ${JSON.stringify(statuses)}`);
    await waitHash(page, 'sgd', '1:0.0');
    await page.getByTestId('learn-undo').click();
    await page.waitForFunction(() => /trained weights/.test(document.querySelector('[data-testid="learn-taken"]').textContent));
    await page.waitForFunction((b) => {
      const el = document.querySelector('section[data-step="sgd"] [data-testid="learn-loss"]');
      const st = document.querySelector('[data-testid="panel-status"]');
      return (!st || st.hidden) && Number(el?.dataset.value) === b;
    }, L0, { timeout: WAIT });
    assert.equal(await loss(page), L0);
    assert.equal(await movedP(page, 'after'), p0);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('the scale switch on a pretrained model: the worker\u2019s backward without 1/\u221ad_k changes dS', async () => {
  const { page, errors } = await openModel(BERT, '&step=dscale');
  await learnShown(page, 'dscale');
  const withScale = await cell(page, 'learn-dscores', BERT.q, 1);
  await page.getByTestId('learn-scale').first().click();
  await waitHash(page, 'ls', '0');
  await page.waitForFunction(() => /without/.test(document.querySelector('[data-testid="hm-learn-dscores"] .hm-title').textContent));
  const without = await cell(page, 'learn-dscores', BERT.q, 1);
  assert.ok(Number.isFinite(without));
  assert.notEqual(without, withScale);
  assert.match(await page.locator(`${section('dscale')} .learn-loss-line`).textContent(), /\(without 1\/\u221ad_k\)$/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a BERT sentence without [MASK]: the Learn step says why, with no figure', async () => {
  const { page, errors } = await openModel({ ...BERT, sentence: 'the cat sat on the mat', q: 2 }, '&step=loss');
  await waitStep(page, 'loss', { timeout: WAIT });
  const problem = page.locator(`${section('loss')} [data-testid="learn-problem"]`);
  await problem.waitFor({ state: 'visible', timeout: WAIT });
  assert.match(await problem.textContent(), /no \[MASK\]/);
  assert.match(await problem.textContent(), /Pick a word as the answer/);
  assert.equal(await page.locator(`${section('loss')} .learn-loss-line`).isHidden(), true);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a link with a step by hand on GPT-2: the worker takes it again, the table shows the loss before and after it', async () => {
  const { page, errors } = await openModel(GPT2, '&step=sgd&sgd=1:0.0');
  await learnShown(page, 'sgd');
  assert.equal(await page.getByTestId('learn-taken').textContent(), '1 step taken');
  const rows = await page.locator(`${section('sgd')} [data-testid="learn-moved"] tr`).nth(1).locator('td').evaluateAll((tds) => tds.map((td) => Number(td.dataset.value)));
  const [, before, after] = rows;
  assert.ok(before > after, `loss ${before} \u2192 ${after}`);
  assert.equal(await loss(page), after);
  // Undo: the trained weights' loss, the same as a page opened without the step
  await page.getByTestId('learn-undo').click();
  await page.waitForFunction((b) => Number(document.querySelector('section[data-step="sgd"] [data-testid="learn-loss"]')?.dataset.value) === b, before, { timeout: WAIT });
  assert.deepEqual(errors, []);
  await page.close();
});

test('the answer picker on GPT-2: another word of the sentence as the next token changes the loss, and the link keeps it', async () => {
  const { page, errors } = await openModel(GPT2, '&step=loss');
  await learnShown(page, 'loss');
  const L0 = await loss(page);
  const target = page.locator(`${section('loss')} [data-testid="learn-target"]`);
  const options = await target.locator('option').evaluateAll((os) => os.map((o) => [o.value, o.textContent]));
  // the default at "sat" (position 2) is the next token, " on"
  assert.match(options[0][1], /^the next token: .*on/);
  const mat = options.find(([, text]) => /mat/.test(text) && !/likely/.test(text));
  assert.ok(mat, `a choice for " mat": ${JSON.stringify(options)}`);
  await target.selectOption(mat[0]);
  await waitHash(page, 'tg', `2:${mat[0]}`);
  await page.waitForFunction((b) => {
    const el = document.querySelector('section[data-step="loss"] [data-testid="learn-loss"]');
    const st = document.querySelector('[data-testid="panel-status"]');
    return (!st || st.hidden) && el?.dataset.value && Number(el.dataset.value) !== b;
  }, L0, { timeout: WAIT });
  const row = page.locator(`${section('loss')} [data-testid="learn-top"] tr`, { hasText: '(answer)' });
  assert.match(await row.textContent(), /mat/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a one-token GPT-2 sentence: the Learn step says there is no next token; an answer picked at position 0 starts the backward', async () => {
  const { page, errors } = await openModel({ ...GPT2, sentence: 'cat', q: 0 }, '&step=loss');
  await waitStep(page, 'loss', { timeout: WAIT });
  const problem = page.locator(`${section('loss')} [data-testid="learn-problem"]`);
  await problem.waitFor({ state: 'visible', timeout: WAIT });
  const text = await problem.textContent();
  assert.match(text, /one-token sentence has no next token/);
  assert.doesNotMatch(text, /--target/, 'no CLI flag on the page');
  const target = page.locator(`${section('loss')} [data-testid="learn-target"]`);
  const cat = await target.locator('option').evaluateAll((os) => os.find((o) => /cat/.test(o.textContent) && o.value !== 'task')?.value);
  assert.ok(cat);
  await target.selectOption(cat);
  await learnShown(page, 'loss');
  assert.equal(await problem.isHidden(), true);
  assert.ok(Number.isFinite(await loss(page)));
  assert.deepEqual(errors, []);
  await page.close();
});

test('hf:tiny/llama: every Learn step on a RoPE model; RoPE\u2019s backward turns dQ back by \u2212m\u00b7\u03b8\u1d62; dW_Q is the native backward\u2019s', async () => {
  const { page, errors } = await openModel(LLAMA, '&step=loss');
  await learnShown(page, 'loss');
  await everyStep(page, LLAMA);
  // RoPE's backward at token m = q, d = 0: the pair (0, D/2) turned back by −m·θ₀ (θ₀ = 1)
  await openStep(page, 'dqkv');
  const [m, D] = [LLAMA.q, 8];
  const dq = await cell(page, 'learn-dq', m, 0), partner = await cell(page, 'learn-dq', m, D / 2);
  const back = Number(await page.getByTestId('learn-rope-back').getAttribute('data-value'));
  const want = dq * Math.cos(m) + partner * Math.sin(m);
  assert.ok(Math.abs(back - want) <= 1e-5 * Math.max(1e-3, Math.abs(want)), `dq before RoPE: ${back}, turned back here ${want}`);
  assert.ok(Math.abs(back - dq) > 1e-4 * Math.abs(dq), 'the turn changes dq');
  assert.match(await page.locator(`${section('dqkv')} [data-testid="step-explain"]`).textContent(), /RoPE\u2019s backward is the rotation back/);
  // dW_Q of head 0 (columns 0 … 7 of W_Q) against the native backward of the same sentence and answers
  await openStep(page, 'dparams');
  const r = cliRun(['grad', '--model', join(dir, 'llama-sp'), '--sentence', LLAMA.sentence, '--layer', '0', '--format', 'json']);
  assert.equal(r.status, 0, r.stderr);
  const native = JSON.parse(r.stdout).grads['layers.0.w_query'];
  for (let d = 0; d < D; d++) {  // row 0 of the head's columns: the row on screen (the selected dimension)
    const got = await cell(page, 'learn-dwq', 0, d);
    const ref = native[0][d];
    assert.ok(Math.abs(got - ref) <= 1e-5 * Math.max(1e-3, Math.abs(ref)), `dW_Q[0, ${d}]: page ${got}, native ${ref}`);
  }
  await page.getByTestId('panel').screenshot({ path: join(artifactDir('pretrained-learn'), 'llama-dparams-desktop.png') });
  assert.deepEqual(errors, []);
  await page.close();
});
