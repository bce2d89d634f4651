// Trained models in the playground: the page opens on the coreference model at
// its featured head; "it" looks at "street" when the street is too wide and at
// "animal" when the animal is too tired, read from the page; random weights
// carry the noise note; the layer picker, [UNK], the language model's
// next-word panel, a lab model by key (and a missing key), old links, the
// element's model/layer attributes, and the phone layout. Screenshots of the
// trained playground at 1280×900 and 390×844, light and dark, are saved.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startHarness, waitStep, waitRunAfter, runCount, readoutValues, hashState, settled, artifactDir, pageScrollWidth } from './harness.mjs';

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };
const TIRED = 'The animal didn\'t cross the street because it was too tired.';
const WIDE = 'The animal didn\'t cross the street because it was too wide.';

/** "“it” → “street” 1.00" on the card of head h (0-based) in the heads step. */
const headTop = (page, h) => page.locator(`.head-card[data-head="${h}"] .head-top`).textContent();
const headPattern = (page, h) => page.locator(`.head-card[data-head="${h}"] [data-testid="head-pattern"]`).textContent();

async function typeSentence(page, text) {
  const n = await runCount(page);
  await page.getByLabel('Sentence', { exact: true }).fill(text);
  await waitRunAfter(page, n);
}

test('a fresh page opens on the trained coreference model, at its featured head, controls fixed with the reason', async () => {
  const { page, errors } = await h.open('', { model: null });
  assert.equal(await page.getByLabel('Model', { exact: true }).inputValue(), 'coreference');
  assert.equal(await page.getByLabel('Layer', { exact: true }).inputValue(), '1');
  assert.equal(await page.getByLabel('Head', { exact: true }).inputValue(), '0');
  assert.match(await page.getByTestId('model-about').textContent(), /Trained here by our own engine on the coreference grammar.*2 layers \u00d7 4 heads.*parameters/);
  for (const label of ['Model width', 'Heads', 'Positional encoding', 'Seed', 'Mask']) {
    assert.equal(await page.getByLabel(label, { exact: true }).isDisabled(), true, `${label} is fixed`);
  }
  assert.equal(await page.getByLabel('Model width', { exact: true }).inputValue(), '32');
  assert.equal(await page.getByLabel('Positional encoding', { exact: true }).inputValue(), 'learned');
  assert.match(await page.getByTestId('model-fixed').textContent(), /Fixed by training.*act on random weights/);
  const s = await hashState(page);
  assert.equal(s.model, 'coreference');
  assert.equal(s.layer, 1);
  assert.deepEqual(errors, []);
});

test('"…too wide": the page shows "it" looking at "street"; "…too tired": at "animal"', async () => {
  const { page, errors } = await h.open('', { model: null });
  await page.locator('.step-btn[data-step="heads"]').click();
  await waitStep(page, 'heads');
  assert.equal(await page.getByLabel('Query token', { exact: true }).inputValue(), '7');
  assert.match(await headTop(page, 0), /^\u201cit\u201d \u2192 \u201canimal\u201d (0\.9\d|1\.0)$/);
  assert.match(await headPattern(page, 0), /^antecedent (0\.9\d|1\.0)$/);
  await typeSentence(page, WIDE);
  assert.match(await headTop(page, 0), /^\u201cit\u201d \u2192 \u201cstreet\u201d (0\.9\d|1\.0)$/);
  // and the model's own answer, after its last layer
  await page.locator('.step-btn[data-step="output"]').click();
  await waitStep(page, 'output');
  const items = page.getByTestId('prediction-item');
  assert.equal(await items.count(), 5);
  assert.equal(await items.first().getAttribute('data-token'), 'street');
  assert.ok(Number(await items.first().getAttribute('data-p')) > 0.9);
  await typeSentence(page, TIRED);
  assert.equal(await items.first().getAttribute('data-token'), 'animal');
  await page.locator('.step-btn[data-step="heads"]').click();
  await waitStep(page, 'heads');
  assert.match(await headTop(page, 0), /^\u201cit\u201d \u2192 \u201canimal\u201d/);
  assert.deepEqual(errors, []);
});

test('random weights carry the noise note where patterns are read; a trained model does not', async () => {
  const { page, errors } = await h.open('#model=random&step=softmax', { model: null });
  for (const step of ['softmax', 'weighted', 'heads']) {
    await page.locator(`.step-btn[data-step="${step}"]`).click();
    await waitStep(page, step);
    const note = page.locator(`section[data-step="${step}"] [data-testid="model-note"]`);
    assert.equal(await note.isVisible(), true, step);
    assert.equal(await note.textContent(), 'Random weights: these patterns are noise; pick a trained model to see learned ones.');
  }
  // the random playground is as before: every control works, nothing fixed
  assert.equal(await page.getByLabel('Model width', { exact: true }).isDisabled(), false);
  assert.equal(await page.getByTestId('model-fixed').isVisible(), false);
  const n = await runCount(page);
  await page.getByLabel('Model', { exact: true }).selectOption('coreference');
  await waitRunAfter(page, n);
  assert.equal(await page.locator('section[data-step="heads"] [data-testid="model-note"]').isVisible(), false);
  assert.match(await page.getByTestId('model-about').textContent(), /Trained here/);
  // picking the model jumps to its featured layer and head
  const s = await hashState(page);
  assert.equal(s.layer, 1);
  assert.equal(s.head, 0);
  assert.deepEqual(errors, []);
});

test('the layer picker shows each layer\'s own numbers, and model and layer live in the link', async () => {
  const { page, errors } = await h.open('#model=coreference&layer=0&step=softmax&q=7&head=0', { model: null });
  assert.equal(await page.getByLabel('Layer', { exact: true }).inputValue(), '0');
  assert.match(await page.getByTestId('step-counter').textContent(), /layer 1 of 2/);
  const first = await readoutValues(page, 'softmax');
  await page.getByLabel('Layer', { exact: true }).selectOption('1');
  await page.waitForFunction(() => /layer 2 of 2/.test(document.querySelector('[data-testid="step-counter"]').textContent));
  const second = await readoutValues(page, 'softmax');
  assert.notDeepEqual(second, first);
  assert.ok(Math.abs(second.reduce((a, c) => a + c.value, 0) - 1) < 1e-5, 'a row of weights sums to 1');
  await settled(page);
  const url = page.url();
  assert.match(url, /model=coreference/);
  assert.match(url, /layer=1/);
  const copy = await h.open(new URL(url).hash, { model: null });
  assert.deepEqual(await readoutValues(copy.page, 'softmax'), second);
  assert.deepEqual(errors, []);
  assert.deepEqual(copy.errors, []);
});

test('an old link without model= still opens random weights', async () => {
  const { page } = await h.open('#step=softmax&c=16&h=4&seed=42', { model: null });
  assert.equal(await page.getByLabel('Model', { exact: true }).inputValue(), 'random');
  assert.equal(await page.getByLabel('Layer', { exact: true }).isVisible(), false);
  assert.equal(await page.getByLabel('Model width', { exact: true }).isDisabled(), false);
});

test('words outside the vocabulary become [UNK], shown as such with a one-line note', async () => {
  const { page, errors } = await h.open(`#model=coreference&s=${encodeURIComponent('The zebra didn\'t cross the street because it was too tired.')}`, { model: null });
  const chips = await page.getByTestId('token-chip').locator('.chip-text').allTextContents();
  assert.equal(chips[1], '[UNK]');
  assert.match(await page.getByTestId('token-unknown').textContent(), /Not in this model\u2019s vocabulary, so read as \[UNK\]: \u201czebra\u201d/);
  await page.getByTestId('token-chip').nth(1).click();
  assert.match(await page.locator('section[data-step="embeddings"] [data-testid="formula"]').textContent(), /zebra.*\[UNK\]/);
  assert.match(await page.getByTestId('unknown-note').textContent(), /zebra/);
  assert.deepEqual(errors, []);
});

test('the language model loads only when picked, and shows the next word (top 5 with probabilities)', async () => {
  const { page, errors } = await h.open('', { model: null });
  const requested = [];
  page.on('request', (r) => requested.push(r.url()));
  await page.locator('.step-btn[data-step="output"]').click();
  await waitStep(page, 'output');
  assert.equal(requested.filter((u) => /language\.safetensors/.test(u)).length, 0, 'not fetched before it is picked');
  const n = await runCount(page);
  await page.getByLabel('Model', { exact: true }).selectOption('language');
  await waitRunAfter(page, n);
  assert.equal(requested.filter((u) => /language\.safetensors/.test(u)).length, 1);
  assert.match(await page.getByTestId('model-about').textContent(), /WordNet 3\.0.*each said twice/);
  // the language model brings its own example: a phrase said twice, the query on its second "buy"
  assert.equal(await page.getByLabel('Sentence', { exact: true }).inputValue(), 'she was able to buy a car . she was able to buy a car');
  assert.equal(await page.getByLabel('Query token', { exact: true }).inputValue(), '12');
  const items = page.getByTestId('prediction-item');
  assert.equal(await items.count(), 5);
  assert.equal(await items.first().getAttribute('data-token'), 'a', 'after the second "buy" comes "a" again');
  const ps = (await items.evaluateAll((els) => els.map((e) => Number(e.dataset.p))));
  assert.ok(ps.every((p, i) => p > 0 && p <= 1 && (i === 0 || p <= ps[i - 1])), `descending probabilities ${ps}`);
  assert.ok(ps.reduce((a, b) => a + b) <= 1 + 1e-6);
  assert.match(await page.getByTestId('prediction').textContent(), /Next word after/);
  assert.equal(await page.getByLabel('Mask', { exact: true }).inputValue(), 'causal');
  await page.locator('.step-btn[data-step="heads"]').click();
  await waitStep(page, 'heads');
  // layer 2 (the featured one): induction heads; the second "buy" looks at the "a" after the first
  let patterns = await page.getByTestId('head-pattern').allTextContents();
  assert.equal(patterns.length, 4);
  assert.ok(patterns.some((p) => /^induction (0\.9\d|1\.0)$/.test(p)), `an induction head: ${patterns}`);
  assert.ok(patterns.some((p) => /^first-token/.test(p)), `a head resting on the first token: ${patterns}`);
  assert.match(await headTop(page, 2), /^\u201cbuy\u201d \u2192 \u201ca\u201d/);
  await page.getByLabel('Layer', { exact: true }).selectOption('0');
  await page.waitForFunction(() => /^L1/.test(document.querySelector('.head-card .head-name').textContent));
  patterns = await page.getByTestId('head-pattern').allTextContents();
  assert.ok(patterns.some((p) => /^previous-token (0\.9\d|1\.0)$/.test(p)), `a previous-token head in layer 1: ${patterns}`);
  assert.deepEqual(errors, []);
});

test('a model trained in the lab opens from its key; a key this browser does not have says how to get it', async () => {
  const { page, errors } = await h.open('', { model: null });
  const key = await page.evaluate(async () => {
    const { storeModel } = await import('/app/kit/model-store.js');
    const bytes = new Uint8Array(await (await fetch('/generated/models/coreference.safetensors')).arrayBuffer());
    return storeModel(bytes, { settings: { task: 'coreference' }, step: 1500, trainLink: 'train.html#task=coreference' });
  });
  const lab = await h.open(`#model=lab:${key}&step=heads`, { model: null });
  assert.equal(await lab.page.getByLabel('Model', { exact: true }).inputValue(), `lab:${key}`);
  assert.match(await lab.page.getByTestId('model-about').textContent(), /Trained in the lab in this browser on the coreference task: 1,500 steps/);
  assert.equal(await lab.page.locator('.head-card').count(), 4);
  // the lab's hand-off link: model=lab:<key>, from=<the lab's retrain hash>, s=<its probe>
  const missing = await h.open('#model=lab:0123456789abcdef&from=task%3Dreverse%26seed%3D3&s=1+2+3', { model: null, wait: false });
  await missing.page.getByTestId('message-error').waitFor();
  assert.match(await missing.page.getByTestId('message-error').textContent(), /this model was trained in the lab in another browser; retrain it there from its link/);
  assert.equal(await missing.page.getByTestId('message-link').getAttribute('href'), 'train.html#task=reverse&seed=3');
  assert.equal(await missing.page.getByTestId('message-notice').count(), 0, 'from= is a known setting');
  // the picker still offers the other models
  const n = await runCount(missing.page);
  await missing.page.getByLabel('Model', { exact: true }).selectOption('coreference');
  await waitRunAfter(missing.page, n);
  assert.equal(await missing.page.getByTestId('message-error').count(), 0);
  assert.deepEqual([...errors, ...lab.errors, ...missing.errors.filter((e) => !/404/.test(e))], []);
});

test('the element takes model= and layer=; without model= it shows random weights, as every embed did before', async () => {
  const page = await h.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const html = `<!doctype html><meta charset="utf-8"><script src="/attention-playground.js" defer></script>
    <attention-playground id="plain" sentence="Dogs chase cats."></attention-playground>
    <attention-playground id="layer" model="coreference" layer="0" step="heads" sentence="${WIDE}"></attention-playground>
    <attention-playground id="random" d-model="8" heads="2"></attention-playground>`;
  await page.route('**/__host/models.html', (r) => r.fulfill({ contentType: 'text/html', body: html }));
  await page.goto(`${h.url}__host/models.html`);
  await page.waitForFunction(() => ['plain', 'layer', 'random'].every((id) => document.getElementById(id)?.shadowRoot?.querySelector('.ap')?.dataset.run));
  const state = (id) => page.evaluate((i) => document.getElementById(i).getState(), id);
  assert.equal((await state('plain')).model, 'random');
  assert.equal((await state('layer')).layer, 0);
  assert.equal((await state('layer')).model, 'coreference');
  assert.equal((await state('random')).model, 'random');
  assert.equal((await state('random')).dModel, 8);
  await page.evaluate(() => document.getElementById('layer').setAttribute('layer', '1'));
  await page.waitForFunction(() => document.getElementById('layer').getState().layer === 1);
  await page.waitForFunction(() => /street/.test(document.getElementById('layer').shadowRoot.querySelector('.head-card[data-head="0"] .head-top')?.textContent ?? ''));
  assert.deepEqual(errors, []);
  await page.close();
});

test('phone (390 px) and desktop: no sideways scroll at any step of the trained model; screenshots saved', async () => {
  const dir = artifactDir('models');
  for (const [viewport, name] of [[DESKTOP, 'desktop'], [PHONE, 'phone']]) {
    for (const scheme of ['light', 'dark']) {
      const { page, errors } = await h.open('', { model: null, viewport, colorScheme: scheme });
      for (const step of ['embeddings', 'input', 'softmax', 'heads', 'output']) {
        await page.locator(`.step-btn[data-step="${step}"]`).click();
        await waitStep(page, step);
        assert.ok(await pageScrollWidth(page) <= viewport.width, `${name} ${scheme} ${step}: no sideways scroll`);
        if (step === 'heads' || step === 'output') await page.screenshot({ path: join(dir, `${name}-${scheme}-${step}.png`) });
      }
      assert.deepEqual(errors, []);
      await page.close();
    }
  }
});
