// A Llama-shaped checkpoint on the page (tests/pretrained/make_checkpoints.py's llama-sp: 4 query
// heads over 2 K/V heads, RoPE, RMSNorm, SwiGLU, and a SentencePiece tokenizer.json of its own
// that adds <s>), from the local stand-in for the Hub (tests/js/hub-server.mjs) and as dropped
// files: every forward step renders with numbers (no NaN, no console error) at 1280×800 and
// 390×844, the RoPE step (4b) shows its pairs and the same-distance property on the real q and k,
// and the per-head views name the K/V head a query head reads. Qwen2 and Qwen3 run with Qwen's
// real tokenizer (make_checkpoints.py's qwen2-vocab and qwen3-vocab: the real vocabulary at
// width 8), their RoPE'd q and k and their logits checked against the float64 reference
// (tests/pretrained/golden.json). Screenshots go to tests/artifacts/pretrained-modern/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startHarness, waitReady, waitStep, waitRunAfter, runCount, artifactDir, pageScrollWidth, hashState, allowLinkModel, WAIT } from './harness.mjs';
import { startHubServer, readModelFolder } from '../js/hub-server.mjs';
import { cliTrace } from '../js/helpers.mjs';
import { hubFolders } from '../js/pretrained.mjs';
import { forwardSteps } from '../../web/app/playground/steps.js';

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const SHOTS = artifactDir('pretrained-modern');
const SENTENCE = 'The cat sat on the mat, the dog sat on it.';
const GOLDEN = JSON.parse(readFileSync(fileURLToPath(new URL('../pretrained/golden.json', import.meta.url)), 'utf8')).checkpoints;
// the sentence whose ids (by an independent encoder) the golden values of the real vocabularies are of
const GOLDEN_SENTENCE = 'The animal didn\'t cross the street because it was too tired.';
/** Before the page's scripts: every trace the Hub worker sends the page is kept, as the engine made
 * it in this browser, in window.__workerTraces. */
const KEEP_TRACES = `window.__workerTraces = [];
  const NativeWorker = window.Worker;
  window.Worker = class extends NativeWorker {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => { if (e.data?.type === 'trace') window.__workerTraces.push(e.data.trace); });
    }
  };`;

let h;
let hub;
let dir;
before(async () => {
  dir = hubFolders(['llama-sp', 'qwen2-vocab', 'qwen3-vocab']);
  hub = await startHubServer({
    'tiny/llama': readModelFolder(join(dir, 'llama-sp')),
    'tiny/qwen2': readModelFolder(join(dir, 'qwen2-vocab')),
    'tiny/qwen3': readModelFolder(join(dir, 'qwen3-vocab')),
  });
  h = await startHarness();
});
after(async () => {
  await h?.close();
  await hub?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The page on a link to the Hub model: the reader's click loads it (a link's model waits for it). */
async function openModel(hash, { id = 'tiny/llama', sentence = SENTENCE, init = '', ...options } = {}) {
  const opened = await h.open(`#model=hf:${id}&s=${encodeURIComponent(sentence)}&${hash}`, {
    ...options, model: null, wait: false, init: `window.attentionPlaygroundHub = ${JSON.stringify(hub.base)};${init}`,
  });
  await allowLinkModel(opened.page);
  await waitReady(opened.page);
  return opened;
}

/** The panel's text has numbers where it should: no NaN, no undefined, no Infinity. */
async function panelText(page) {
  return page.getByTestId('panel').evaluate((p) => p.innerText);
}

test('the Llama-shaped model: every forward step, RoPE (4b) included, renders real numbers at desktop and phone size', async () => {
  const steps = forwardSteps({ config: { positional: 'rope' } });
  assert.deepEqual(steps.slice(3, 6), ['projections', 'rope', 'scores']);
  for (const [name, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
    const { page, errors } = await openModel('step=embeddings&layer=0&q=5&k=2', { viewport });
    await waitReady(page);
    // the stepper shows the RoPE step between Q, K, V and Q·Kᵀ, numbered 4b
    const rope = page.locator('.steps [data-step="rope"]');
    assert.equal(await rope.isVisible(), true);
    assert.match(await rope.getAttribute('aria-label'), /^Step 4b: Rotary positions/);
    for (const step of steps) {
      await page.locator(`.steps [data-step="${step}"]`).click();
      await waitStep(page, step, { timeout: WAIT });
      const text = await panelText(page);
      assert.doesNotMatch(text, /NaN|undefined|Infinity/, `${name} ${step}: ${text.slice(0, 400)}`);
      assert.ok(await pageScrollWidth(page) <= viewport.width, `${name} ${step}: no sideways scrolling`);
      if (['positional', 'input', 'projections', 'rope', 'heads', 'output'].includes(step)) {
        await page.getByTestId('panel').screenshot({ path: join(SHOTS, `${step}-${name}.png`) });
      }
    }
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test('RoPE step: one tile per (i, i + D/2) pair, the engine\'s turned q in the formula, and the same distance gives the same score', async () => {
  const { page, errors } = await openModel('step=rope&layer=0&q=7&k=3&head=1&d=1', { viewport: DESKTOP });
  await waitReady(page);
  await waitStep(page, 'rope', { timeout: WAIT });
  assert.equal(await page.locator('[data-testid="rope-pairs"] .rope-tile').count(), 4, 'D = 8: 4 pairs');
  // the numbers of the table: where they stand (checked against the engine's S), moved, closer, farther
  const values = async () => page.locator('[data-testid="rope-table"] td.num').evaluateAll((tds) => tds.map((td) => Number(td.dataset.value)));
  const shown = await page.evaluate(() => [...document.querySelectorAll('[data-testid="token-chip"]')].map((x) => Number(/, id (\d+)$/.exec(x.getAttribute('aria-label'))[1])));
  const cli = cliTrace(['run', '--model', join(dir, 'llama-sp'), '--ids', shown.join(','), '--layer', '0']);
  const [here, moved, closer, farther] = await values();
  assert.ok(Math.abs(here - cli.layers[0].heads[1].scores[7][3]) <= 1e-4, `q′·k′ at (7, 3) = ${here}, the CLI's S = ${cli.layers[0].heads[1].scores[7][3]}`);
  assert.ok(Math.abs(moved - here) <= 1e-4 * Math.max(1, Math.abs(here)), `same distance: ${moved} vs ${here}`);
  assert.ok(Math.abs(closer - here) > 1e-3 && Math.abs(farther - here) > 1e-3, `another distance, another score: ${closer}, ${farther} vs ${here}`);
  // the slider moves both tokens: the score stays
  await page.getByTestId('rope-shift').fill('40');
  await page.waitForFunction(() => /40 positions/.test(document.querySelector('[data-testid="rope-shift-value"]').textContent), null, { timeout: WAIT });
  const [, far] = await values();
  assert.ok(Math.abs(far - here) <= 1e-4 * Math.max(1, Math.abs(here)), `moved by 40: ${far} vs ${here}`);
  assert.match(await page.getByTestId('rope-note').textContent(), /computed here in JavaScript/);
  // the formula's turned q is the engine's (after RoPE), the CLI's too
  const q = Number(await page.locator('section[data-step="rope"] [data-testid="formula-result"]').first().getAttribute('data-value'));
  if (Number.isFinite(q)) assert.ok(Math.abs(q - cli.layers[0].heads[1].query[7][1]) <= 1e-4, `q′[7, 1] = ${q}`);
  await page.getByTestId('panel').screenshot({ path: join(SHOTS, 'rope-table-desktop.png') });
  assert.deepEqual(errors, []);
  await page.close();
});

test('grouped-query attention in the steps: head 2 reads K/V head 1, shared with head 1; the model view groups the heads by K/V head', async () => {
  const { page, errors } = await openModel('step=projections&layer=0&q=2&head=1', { viewport: DESKTOP });
  await waitReady(page);
  await waitStep(page, 'projections', { timeout: WAIT });
  const explain = await page.locator('section[data-step="projections"] [data-testid="step-explain"]').textContent();
  assert.match(explain, /only 2 K\/V heads exist: K and V here are K\/V head 1\u2019s, shared with head 1/);
  assert.match(await page.locator('section[data-step="projections"]').innerText(), /Keys K.*\(K\/V head 1\)/);
  // the model view groups the heads by their K/V head
  await page.locator('.steps [data-step="heads"]').click();
  await waitStep(page, 'heads', { timeout: WAIT });
  const cards = await page.getByTestId('mv-card').evaluateAll((bs) => bs.slice(0, 4).map((b) => b.getAttribute('aria-label')));
  assert.deepEqual(cards.map((c) => /\(K\/V head (\d)\)/.exec(c)[1]), ['1', '1', '2', '2']);
  assert.match(await page.locator('section[data-step="heads"] [data-testid="step-explain"]').textContent(), /heads 1 and 2 share K\/V head 1; heads 3 and 4 share K\/V head 2/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('dropped files (config.json, model.safetensors, tokenizer.json) load the model; <s> is shown and marked as added', async () => {
  const { page, errors } = await h.open(`#s=${encodeURIComponent(SENTENCE)}&step=embeddings`, { viewport: DESKTOP });
  const runs = await runCount(page);
  await page.getByTestId('model-picker').selectOption('load:');
  await page.getByTestId('hub-loader').waitFor({ state: 'visible', timeout: WAIT });
  await page.getByTestId('hub-files').setInputFiles(['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => ({
    name: f, mimeType: 'application/octet-stream', buffer: readFileSync(join(dir, 'llama-sp', f)),
  })));
  await page.waitForFunction(() => document.querySelector('[data-testid="model-picker"]').value.startsWith('local:'), null, { timeout: WAIT });
  // the dropped model's own trace (the page is "ready" with the last model's until it comes)
  await waitRunAfter(page, runs);
  await waitReady(page);
  const chips = await page.evaluate(() => [...document.querySelectorAll('[data-testid="token-chip"]')].map((x) => x.getAttribute('aria-label')));
  assert.match(chips[0], /^Token 0: <s>.*, id 1$/);
  assert.match((await hashState(page)).model, /^local:/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('Qwen2 (q, k, v biases, BF16) and Qwen3 (q/k norms, F16) with Qwen\'s real tokenizer: the page\'s RoPE\'d q, k and logits are the float64 reference\'s', async () => {
  // qwen2-vocab on layer 0, qwen3-vocab on layer 1: the trace the page draws is of that layer
  for (const [id, name, layer] of [['tiny/qwen2', 'qwen2-vocab', 0], ['tiny/qwen3', 'qwen3-vocab', 1]]) {
    const golden = GOLDEN[name].sequences[0];
    const { page, errors } = await openModel(`step=rope&layer=${layer}&q=5&k=2`, { id, sentence: GOLDEN_SENTENCE, init: KEEP_TRACES, viewport: DESKTOP });
    await waitReady(page);
    const tr = await page.evaluate((l) => {
      const t = window.__workerTraces.at(-1);
      const m = (x) => ({ cols: x.cols, data: Array.from(x.data) });
      return { ids: t.tokens.map((x) => x.id), heads: t.layers[l].heads.map((hd) => ({ query: m(hd.query), key: m(hd.key) })), k: t.top.k, top: Array.from(t.top.ids), p: Array.from(t.top.p) };
    }, layer);
    // the page's tokenizer gave the independent encoder's ids (Qwen adds no BOS)
    assert.deepEqual(tr.ids, golden.ids, name);
    let worst = 0;
    const rope = golden.rope.filter((r) => r.layer === layer);
    assert.equal(rope.length, 2, `${name}: both heads of layer ${layer}`);
    for (const r of rope) {
      for (const [got, want] of [[tr.heads[r.head].query, r.query], [tr.heads[r.head].key, r.key]]) {
        r.rows.forEach((t, i) => want[i].forEach((x, d) => {
          const diff = Math.abs(got.data[t * got.cols + d] - x);
          worst = Math.max(worst, diff);
          assert.ok(diff <= 1e-4, `${name}: layer ${layer} head ${r.head} [${t}][${d}]: ${got.data[t * got.cols + d]} vs ${x}`);
        }));
      }
    }
    // the logits, through each row's five likeliest tokens over the whole vocabulary: the same ids,
    // log p (= logit − logsumexp) within 1e-4
    assert.ok(tr.k >= 5, `${name}: top ${tr.k}`);
    golden.top.forEach((ids, t) => ids.forEach((want, j) => {
      assert.equal(tr.top[t * tr.k + j], want, `${name}: row ${t}, rank ${j}`);
      const diff = Math.abs(Math.log(tr.p[t * tr.k + j]) - Math.log(golden.top_p[t][j]));
      worst = Math.max(worst, diff);
      assert.ok(diff <= 1e-4, `${name}: row ${t}, log p of ${want}: ${tr.p[t * tr.k + j]} vs ${golden.top_p[t][j]}`);
    }));
    assert.match(await panelText(page), /\u03b8/, `${name}: the RoPE step renders`);
    await page.getByTestId('panel').screenshot({ path: join(SHOTS, `rope-${name}-desktop.png`) });
    assert.deepEqual(errors, []);
    await page.close();
  }
});
