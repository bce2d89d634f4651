// A 1024-token text in the playground on a pretrained GPT-2 shape (the gpt2-long test
// checkpoint: GPT-2's 50,257-token vocabulary and tokenizer, its 1024-token context and 12
// heads; C = 48, 2 layers; served by the local stand-in for the Hub). The page asks for one
// layer's trace and the top 5 per position (no T×V logits, no other layer's maps): the steps
// render without errors, and the output step's next-token top 5 are those of the full logits
// of the same ids (the engine's forward() in Node, sorted here).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync, rmSync } from 'node:fs';
import { startHarness, waitReady, waitStep, runCount, waitRunAfter, WAIT } from './harness.mjs';
import { startHubServer, readModelFolder } from '../js/hub-server.mjs';
import { hubFolders, textOfTokens } from '../js/pretrained.mjs';
import { createEngine } from '../../web/engine.js';

const NAME = 'gpt2-long';
const T = 1024;

let h;
let hub;
let dir;
let text;
let expected; // position → [{text, p}] the five likeliest next tokens of the full logits
before(async () => {
  dir = hubFolders([NAME], { withTokenizer: [NAME] });
  hub = await startHubServer({ 'tiny/long': readModelFolder(join(dir, NAME)) });
  h = await startHarness();
  // the reference: the same model in Node's engine, its full logits (Model::run, no trace)
  const engine = await createEngine();
  const bytes = new Uint8Array(readFileSync(join(dir, NAME, 'model.safetensors')));
  const loader = engine.openCheckpoint(readFileSync(join(dir, NAME, 'config.json'), 'utf8'), bytes.subarray(0, engine.safetensorsHeaderSize(bytes.subarray(0, 8))), bytes.length);
  for (const { begin, end } of loader.needed) {
    for (let a = begin; a < end; a += loader.stagingBytes) loader.feed(a, bytes.subarray(a, Math.min(end, a + loader.stagingBytes)));
  }
  const model = loader.finish({ tokenizerJson: readFileSync(join(dir, NAME, 'tokenizer.json'), 'utf8') });
  text = textOfTokens((s) => model.tokenize(s), T);
  const ids = model.tokenize(text).map((t) => t.id);
  const { logits } = model.forward(ids);
  const V = logits.cols;
  // decode one id: the trace of that single token gives its text (tokens[0].text)
  const decode = (id) => model.traceIds([id], { layer: 0, allWeights: false }).tokens[0].text;
  expected = new Map();
  for (const q of [511, T - 1]) {
    const row = Array.from(logits.data.subarray(q * V, (q + 1) * V));
    const m = Math.max(...row);
    const z = row.reduce((s, v) => s + Math.exp(v - m), 0);
    const top = row.map((v, id) => [v, id]).sort((a, b) => b[0] - a[0] || a[1] - b[1]).slice(0, 5);
    expected.set(q, top.map(([v, id]) => ({ text: decode(id), p: Math.exp(v - m) / z })));
  }
  model.dispose();
  engine.dispose();
});
after(async () => {
  await Promise.all([h?.close(), hub?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const shownTop = (page) => page.getByTestId('prediction-item').evaluateAll((items) => items.map((li) => ({ text: li.dataset.token, p: Number(li.dataset.p) })));

function checkTop(shown, q) {
  const want = expected.get(q);
  assert.equal(shown.length, 5, `position ${q}: ${shown.length} items`);
  shown.forEach((s, r) => {
    assert.equal(s.text, want[r].text, `position ${q} rank ${r}`);
    assert.ok(Math.abs(s.p - want[r].p) <= 1e-5 * want[r].p + 1e-7, `position ${q} rank ${r}: p ${s.p} vs ${want[r].p}`);
  });
}

test('a 1024-token text on a GPT-2 shape: the steps render, and the last layer\'s output step shows the full logits\' next-token top 5', async () => {
  const { page, errors } = await h.open(`#model=hf:tiny/long&s=${encodeURIComponent(text)}&step=output&layer=0&q=${T - 1}`, {
    model: null,
    wait: false,
    init: `window.attentionPlaygroundHub = ${JSON.stringify(hub.base)};`,
  });
  await waitReady(page);
  await waitStep(page, 'output');
  assert.equal(await page.getByTestId('model-picker').inputValue(), 'hf:tiny/long');
  // the sentence view shows the first 300 chips, then how many more there are
  assert.equal(await page.getByTestId('token-chip').count(), 300);
  assert.match(await page.locator('.chips-more').textContent(), new RegExp(`\\+ ${T - 300} more`));
  // layer 1 of 2: the prediction comes after the last layer
  assert.match(await page.getByTestId('next-layer-note').textContent(), /pick layer 2 to see it/);
  const runs = await runCount(page);
  await page.getByLabel('Layer', { exact: true }).selectOption('1');
  await waitRunAfter(page, runs);
  await waitStep(page, 'output');
  checkTop(await shownTop(page), T - 1);
  // another position: the prediction follows the query
  await page.evaluate(() => { location.hash = location.hash.replace(/q=\d+/, 'q=511'); });
  await page.waitForFunction((want) => document.querySelector('[data-testid="prediction-item"]')?.dataset.token === want, expected.get(511)[0].text, { timeout: WAIT });
  checkTop(await shownTop(page), 511);
  // a step with every head's 1024×1024 map of the layer on screen
  await page.locator('.step-btn[data-step="softmax"]').click();
  await waitStep(page, 'softmax');
  assert.deepEqual(errors, []);
  await page.close();
});
