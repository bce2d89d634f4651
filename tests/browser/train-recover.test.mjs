// The training lab recovers from every worker error and every file it cannot
// train: a text model or a checkpoint without its task, a request that fails in
// the worker while paused or while training. After each, the lab says what
// happened, its controls work, and the session goes on. Tests wait on the page's
// state (data-* hooks of <main id="lab">), never on time.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import zlib from 'node:zlib';
import { startHarness, artifactDir } from './harness.mjs';
import { labState, waitIdle, openLab, trainTo, gridDigests } from './train-helpers.mjs';
import { createEngine } from '../../web/engine.js';
import { poisonedReverse, withoutMetadata } from '../js/checkpoints.mjs';

let h;
let engine;
before(async () => {
  h = await startHarness();
  engine = await createEngine();
});
after(async () => { await h?.close(); });

/** Runs in the page before its scripts: keeps the lab's worker where the test can post to it. */
function keepWorker() {
  const Base = window.Worker;
  window.Worker = class extends Base {
    constructor(...args) {
      super(...args);
      window.labWorker = this;
    }
  };
}

/** Writes bytes to a file under tests/artifacts/train-recover/ and returns its path. */
function file(name, bytes) {
  const path = join(artifactDir('train-recover'), name);
  writeFileSync(path, bytes);
  return path;
}

async function upload(page, path) {
  const gen = Number((await labState(page)).gen);
  await page.getByTestId('model-file').setInputFiles(path);
  return gen;
}

const controlsUsable = (page) => page.evaluate(() => ({
  state: document.getElementById('lab').dataset.state,
  running: document.getElementById('lab').dataset.running,
  play: !document.querySelector('[data-testid="play"]').disabled,
  step: !document.querySelector('[data-testid="step"]').disabled,
  playText: document.querySelector('[data-testid="play"]').textContent,
}));

test('a text model uploaded to a lab on another task opens with the text task\'s views, and the lab keeps working', async () => {
  const corpus = 'the moon rises over the hill . the sun sets behind the hill . '.repeat(40);
  const lm = engine.createTrainer({ task: 'text', corpus, length: 8, maxVocab: 20, layers: 1, heads: 2, dModel: 16 });
  lm.step(5);
  const path = file('text-model.safetensors', lm.save());
  lm.dispose();

  const { page, errors } = await openLab(h, '#task=reverse');
  await trainTo(page, 10);
  const gen = await upload(page, path);
  await page.waitForFunction((g) => Number(document.getElementById('lab').dataset.gen) > g && document.getElementById('lab').dataset.final === '1', gen);
  const s = await labState(page);
  assert.equal(s.state, 'ready', 'the lab did not die');
  assert.equal(s.step, '5');
  assert.equal(await page.getByTestId('task-text').isChecked(), true, 'shown as a text model');
  const keys = await page.getByTestId('key-select').evaluate((sel) => [...sel.options].map((o) => o.value));
  assert.ok(keys.includes('previous-token') && keys.includes('induction'), `the text task's answer keys: ${keys}`);
  assert.equal(Object.keys(await gridDigests(page)).length, 2, 'both heads drawn');
  const words = await page.evaluate(() => [...document.querySelectorAll('[data-testid="task-example"] .tr-tok')].map((t) => t.textContent));
  assert.ok(words.length > 0, 'the probe sequence is shown');
  assert.match(await page.getByTestId('message-notice').textContent(), /Loaded .text-model\.safetensors.*probed but not trained/s);
  assert.equal(await page.getByTestId('play').isDisabled(), true, 'it cannot train without its text');
  // the file's learning rate (a float32) is shown and linked as the lab writes it, not as 0.003000000026…
  const lr = await page.getByTestId('lr').inputValue();
  assert.equal(lr, String(Number(Number(lr).toPrecision(6))), `learning rate shown as ${lr}`);
  await page.waitForFunction((x) => new URLSearchParams(location.hash.slice(1)).get('lr') === x, lr);
  assert.equal(await page.locator('[data-testid="message-error"]').count(), 0);

  // and the lab goes on: another task trains
  await page.locator('label[for="tr-task-reverse"]').click();
  await waitIdle(page);
  await trainTo(page, 5);
  assert.deepEqual(errors, []);
});

test('a checkpoint without a task is refused in one line, and the previous session stays intact', async () => {
  const t = engine.createTrainer({ task: 'copy' });
  t.step(3);
  const path = file('no-task.safetensors', withoutMetadata(t.save(), 'task'));
  t.dispose();

  const { page, errors } = await openLab(h, '#task=reverse');
  await trainTo(page, 15);
  const before = { step: (await labState(page)).step, digests: await gridDigests(page), hash: await page.evaluate(() => location.hash) };
  await upload(page, path);
  await page.waitForFunction(() => document.getElementById('lab').dataset.fileError === '1');
  const msg = await page.getByTestId('message-error').textContent();
  assert.match(msg, /could not be loaded as a model:.*names no task.*The model you had is unchanged/s);
  assert.equal((await labState(page)).state, 'ready');
  assert.equal((await labState(page)).step, before.step);
  assert.deepEqual(await gridDigests(page), before.digests, 'the model shown is the one trained before');
  assert.equal(await page.evaluate(() => location.hash), before.hash);
  await trainTo(page, Number(before.step) + 5);
  assert.deepEqual(errors, []);
});

test('a request that fails in the worker while paused gives a message beside the model, and every control still works', async () => {
  const { page, errors } = await openLab(h, '#task=reverse', { init: keepWorker });
  await trainTo(page, 10);
  await page.evaluate(() => window.labWorker.postMessage({ type: 'ablate', heads: [[99, 0]] }));
  await page.waitForFunction(() => document.querySelector('[data-testid="message-error"]'));
  assert.match(await page.getByTestId('message-error').textContent(), /could not be ablated:.*99-0.*not in this model/s);
  assert.deepEqual(await controlsUsable(page), { state: 'ready', running: '0', play: true, step: true, playText: '\u25b6 Play' });
  const step = Number((await labState(page)).step);
  await page.getByTestId('step').click();
  await page.waitForFunction((x) => Number(document.getElementById('lab').dataset.step) === x + 1 && document.getElementById('lab').dataset.final === '1', step);
  // the heads the page asks for are still ablated correctly
  await page.getByTestId('ablate-0-0').click();
  await page.waitForFunction(() => document.getElementById('lab').dataset.ablated !== '');
  assert.deepEqual(errors, []);
});

test('a request that fails in the worker while training leaves the lab in control: it pauses and steps again', async () => {
  const { page, errors } = await openLab(h, '#task=reverse', { init: keepWorker });
  await page.getByTestId('play').click();
  await page.waitForFunction(() => Number(document.getElementById('lab').dataset.step) >= 20);
  await page.evaluate(() => window.labWorker.postMessage({ type: 'ablate', heads: [[99, 0]] }));
  await page.waitForFunction(() => document.querySelector('[data-testid="message-error"]'));
  const at = Number((await labState(page)).step);
  // training goes on past the failed request, and pause stops it
  await page.waitForFunction((x) => Number(document.getElementById('lab').dataset.step) > x, at);
  await page.getByTestId('play').click();
  await waitIdle(page, 60000);
  assert.deepEqual(await controlsUsable(page), { state: 'ready', running: '0', play: true, step: true, playText: '\u25b6 Play' });
  const step = Number((await labState(page)).step);
  await page.getByTestId('step').click();
  await page.waitForFunction((x) => Number(document.getElementById('lab').dataset.step) === x + 1 && document.getElementById('lab').dataset.final === '1', step);
  assert.deepEqual(errors, []);
});

test('a link whose text is a deflate bomb: the page stays responsive, says so beside the text field, and keeps the link\'s other settings', async () => {
  // 128 MB of one letter deflated to about 130 KB: before the cap, the page inflated all of it
  const bomb = `z${zlib.deflateRawSync(Buffer.alloc(128 << 20, 0x61), { level: 9 }).toString('base64url')}`;
  const { page, errors } = await h.open(`train.html#task=text&L=1&H=4&seed=5&text=${bomb}`, { wait: false, model: null });
  await page.waitForFunction(() => {
    const p = document.querySelector('[data-testid="corpus-problem"]');
    return p && !p.hidden && p.getBoundingClientRect().height > 0;
  });
  const problem = await page.getByTestId('corpus-problem').textContent();
  assert.match(problem, /This link\u2019s text is damaged or too long, so the sample text is shown instead/);
  // beside the text field: in the same box, right under it
  const box = await page.evaluate(() => {
    const area = document.querySelector('[data-testid="corpus"]').getBoundingClientRect();
    const p = document.querySelector('[data-testid="corpus-problem"]').getBoundingClientRect();
    return { gap: Math.max(p.top - area.bottom, area.top - p.bottom), same: document.querySelector('[data-testid="corpus-box"]').contains(document.querySelector('[data-testid="corpus-problem"]')) };
  });
  assert.ok(box.same && box.gap >= 0 && box.gap < 72, `the message sits next to the text field (only its label between) (${JSON.stringify(box)})`);
  assert.equal(await page.getByTestId('corpus').getAttribute('aria-invalid'), 'true');
  await waitIdle(page);
  assert.equal(await page.getByTestId('layers').inputValue(), '1');
  assert.equal(await page.getByTestId('heads').inputValue(), '4');
  assert.equal(await page.getByTestId('seed').inputValue(), '5');
  assert.ok((await page.getByTestId('corpus').inputValue()).length > 100, 'the sample text is in the field');
  await page.screenshot({ path: join(artifactDir('train-recover'), 'bomb-link.png') });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByTestId('corpus-problem').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(artifactDir('train-recover'), 'bomb-link-phone.png') });
  await page.setViewportSize({ width: 1280, height: 900 });
  // the lab works, and applying a text clears the message
  await trainTo(page, 3);
  await page.getByTestId('corpus').fill('the moon rises over the hill . the sun sets behind the hill . '.repeat(40));
  await page.getByTestId('corpus-apply').click();
  await page.waitForFunction(() => document.querySelector('[data-testid="corpus-problem"]').hidden && document.getElementById('lab').dataset.final === '1' && /[&#]text=z/.test(location.hash));
  assert.deepEqual(errors, []);
});

test('training that carries a weight out of the range the lab can show stops with a message, and every control works after it', async () => {
  // w_key just inside ±1e6 with lr 10: the first updates carry it out (the engine stops there,
  // or the probe refuses the weights); before, the lab stayed "running" with Step +1 disabled
  const bytes = poisonedReverse(engine, 1e6 - 5);
  const path = file('edge.safetensors', bytes);

  const { page, errors } = await openLab(h, '#task=reverse');
  const gen = await upload(page, path);
  await page.waitForFunction((g) => Number(document.getElementById('lab').dataset.gen) > g && document.getElementById('lab').dataset.final === '1', gen);
  await page.getByTestId('play').click();
  await page.waitForFunction(() => document.querySelector('[data-testid="message-error"]'));
  assert.match(await page.getByTestId('message-error').textContent(), /Training stopped at step \d+:.*lower learning rate/s);
  await page.waitForFunction(() => document.getElementById('lab').dataset.running === '0');
  assert.deepEqual(await controlsUsable(page), { state: 'ready', running: '0', play: true, step: true, playText: '\u25b6 Play' });
  const shown = Number(await page.getByTestId('step-count').getAttribute('data-value'));
  assert.equal(Number((await labState(page)).step), shown);
  // Reset starts a fresh model of these settings, which trains
  await page.getByTestId('reset').click();
  await waitIdle(page);
  assert.equal((await labState(page)).step, '0');
  await page.getByTestId('step').click();
  await page.waitForFunction(() => document.getElementById('lab').dataset.step === '1' && document.getElementById('lab').dataset.final === '1');
  assert.deepEqual(errors, []);
});
