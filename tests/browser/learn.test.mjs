// The Learn part (issue #23): the backward steps after the twelve forward ones,
// on the shipped coreference model. Every step at desktop and phone sizes (light
// and dark; screenshots saved with REVIEW_SHOTS) with no clipped number and its formula's value equal
// to its cell; one step by hand lowers the loss and Undo restores the exact
// numbers; the scale switch shows the smaller dS; a link reopens the same state;
// random weights say they have no loss; Save SVG / Save PNG on every Learn step
// export its main matrix with the page's title and numbers.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { startHarness, waitStep, artifactDir, settled, waitHash, WAIT, REVIEW_SHOTS, pageRelay } from './harness.mjs';
import { numberProblems } from './number-check.mjs';
import { LEARN_STEPS } from '../../web/app/playground/learn/steps.js';
import { formatValue } from '../../web/app/kit/format.js';

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

const HASH = '#model=coreference&layer=1&head=0&q=7&k=1&d=0';

/** A page a test is done with (release) serves the next openDefault: harness.mjs pageRelay. */
const relay = pageRelay({
  open: (hash) => h.open(hash, { model: null }),
  load: (page, hash) => h.reload(page, hash, { model: null }),
});
const release = relay.release;
const openDefault = relay.take;
const section = (step) => `section[data-step="${step}"]`;

/** The value of a cell in a heatmap's DOM readout (its selected row). */
async function cell(page, id, i, j) {
  return Number(await page.locator(`[data-testid="cell-${id}-${i}-${j}"]`).getAttribute('data-value'));
}

/** The cell each step's formula is about: a heatmap's (row, column), from the state q = 7, k = 1, d = 0. */
const CELL = {
  dout: ['learn-dout', 7, 0],
  dweights: ['learn-dweights', 7, 1],
  dsoftmax: ['learn-dscaled', 7, 1],
  dscale: ['learn-dscores', 7, 1],
  dqkv: ['learn-dq', 7, 0],
  dparams: ['learn-dwq', 0, 0],
};

async function formulaResult(page, step) {
  const r = page.locator(`${section(step)} [data-testid="formula-result"]`);
  assert.equal(await r.count(), 1, `${step} has one formula result`);
  return Number(await r.getAttribute('data-value'));
}

/** The number a step's formula must equal, read from the page's own figure. */
async function cellOf(page, step) {
  if (CELL[step]) return cell(page, ...CELL[step]);
  if (step === 'loss') {
    // dL/dlogit of the answer: the row of the top-words table marked "(answer)"
    const row = page.locator(`${section(step)} [data-testid="learn-top"] tr`, { hasText: '(answer)' });
    return Number(await row.locator('td').nth(2).getAttribute('data-value'));
  }
  // sgd: −log of p(answer) after the step, from the table of what moved
  const p = Number(await page.locator(`${section(step)} [data-testid="learn-moved"] tr`).nth(2).locator('td').nth(2).getAttribute('data-value'));
  return -Math.log(p);
}

async function openStep(page, step) {
  await page.locator(`.step-btn[data-step="${step}"]`).click();
  await waitStep(page, step);
}

for (const [name, viewport] of [['desktop', { width: 1280, height: 800 }], ['phone', { width: 390, height: 844 }]]) {
  test(`every Learn step renders at ${name} size: no clipped number, the formula's value is its cell's (light and dark; screenshots under REVIEW_SHOTS)`, async () => {
    const dir = artifactDir('learn');
    // one page: the dark pass is the link again as a new document after the scheme turned dark
    // (its errors go on into the same array)
    let opened;
    for (const scheme of name === 'phone' && !REVIEW_SHOTS ? ['light'] : ['light', 'dark']) {
      if (!opened) opened = await h.open(HASH, { viewport, colorScheme: scheme, model: null });
      else {
        await opened.page.emulateMedia({ colorScheme: scheme });
        await h.reload(opened.page, HASH, { model: null });
        assert.equal(await opened.page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches), scheme === 'dark');
      }
      const { page, errors } = opened;
      for (const step of LEARN_STEPS) {
        await openStep(page, step);
        assert.match(await page.getByTestId('step-counter').textContent(), /^Learn \d of 8/);
        assert.deepEqual(await numberProblems(page, section(step)), [], `${step} at ${name}`);
        const result = await formulaResult(page, step);
        const want = await cellOf(page, step);
        assert.ok(Number.isFinite(result), `${step}: a number`);
        assert.ok(Math.abs(result - want) <= 1e-6 * Math.max(1, Math.abs(want)), `${step}: formula ${result} vs cell ${want}`);
        // for a person to look at (no assertion reads them): REVIEW_SHOTS (harness.mjs)
        if (REVIEW_SHOTS) await page.screenshot({ path: join(dir, `${step}-${name}${scheme === 'dark' ? '-dark' : ''}.png`), fullPage: true });
      }
      assert.deepEqual(errors, [], scheme);
    }
    release(opened);
  });
}

test('one step by hand lowers the loss on the default sentence, and Undo restores the exact numbers', async () => {
  const opened = await openDefault(`${HASH}&step=sgd`);
  const { page, errors } = opened;
  await waitStep(page, 'sgd');
  const loss = async () => Number(await page.getByTestId('learn-loss').getAttribute('data-value'));
  const row = () => page.locator('[data-testid="learn-row"] td.num').evaluateAll((tds) => tds.map((td) => td.dataset.value));
  const before = await loss();
  const rowBefore = await row();
  await page.getByTestId('learn-step').click();
  await waitHash(page, 'sgd', '1:1.0');
  await page.waitForFunction((b) => Number(document.querySelector('[data-testid="learn-loss"]').dataset.value) !== b, before);
  const after1 = await loss();
  assert.ok(after1 < before, `loss ${before} → ${after1}`);
  assert.equal(await page.getByTestId('learn-taken').textContent(), '1 step taken');
  // the forward steps read the new weights too: the softmax row of the head moved
  await openStep(page, 'softmax');
  const moved = await cell(page, 'softmax', 7, 1);
  await openStep(page, 'sgd');
  await page.getByTestId('learn-undo').click();
  await settled(page);
  await page.waitForFunction((b) => Number(document.querySelector('[data-testid="learn-loss"]').dataset.value) === b, before);
  assert.equal(await loss(), before);
  const rowAfterUndo = await row();
  // the row before/after now shows only "after": the trained weights' row
  assert.deepEqual(rowAfterUndo, rowBefore);
  assert.equal(new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).get('sgd'), null);
  await openStep(page, 'softmax');
  assert.notEqual(await cell(page, 'softmax', 7, 1), moved);
  assert.deepEqual(errors, []);
  release(opened);
});

test('the scale switch computes the backward without 1/√d_k: the rows saturate and dS is smaller', async () => {
  const opened = await openDefault(`${HASH}&step=dscale`);
  const { page, errors } = opened;
  await waitStep(page, 'dscale');
  const compare = async () => page.locator('[data-testid="learn-compare"] tr').evaluateAll((rows) => rows.slice(1).map((r) => [...r.querySelectorAll('td.num')].map((td) => Number(td.dataset.value))));
  const [, maxRow, , dS, dWQ] = await compare();
  assert.ok(maxRow[1] > maxRow[0], `rows saturate: mean largest weight ${maxRow[0]} → ${maxRow[1]}`);
  assert.ok(dS[1] < dS[0], `‖dS‖ ${dS[0]} with the scale, ${dS[1]} without`);
  assert.ok(dWQ[1] < dWQ[0], `‖dW_Q‖ ${dWQ[0]} with the scale, ${dWQ[1]} without`);
  const withScale = await cell(page, 'learn-dscores', 7, 1);
  await page.getByTestId('learn-scale').first().click();
  await waitHash(page, 'ls', '0');
  await page.waitForFunction(() => /without/.test(document.querySelector('[data-testid="hm-learn-dscores"] .hm-title').textContent));
  assert.notEqual(await cell(page, 'learn-dscores', 7, 1), withScale);
  // the loss of that forward, said to be without the scale
  assert.match(await page.locator(`${section('dscale')} .learn-loss-line`).textContent(), /\(without 1\/\u221ad_k\)$/);
  assert.deepEqual(errors, []);
  release(opened);
});

test('a link reopens the same backward state: answer, scale switch, learning rate, scope and the steps taken', async () => {
  const opened = await openDefault(`${HASH}&step=loss`);
  const { page, errors } = opened;
  await waitStep(page, 'loss');
  const right = Number(await page.getByTestId('learn-loss').getAttribute('data-value'));
  // another answer at "it": the obstacle
  const target = page.locator(`${section('loss')} [data-testid="learn-target"]`);
  const street = await target.locator('option', { hasText: /^street$/ }).getAttribute('value');
  await target.selectOption(street);
  await waitHash(page, 'tg', `7:${street}`);
  const wrong = Number(await page.getByTestId('learn-loss').getAttribute('data-value'));
  assert.ok(wrong > right, `the loss rises with another answer: ${right} → ${wrong}`);
  await openStep(page, 'sgd');
  await page.locator(`${section('sgd')} [data-testid="learn-lr"]`).selectOption('0.3');
  await page.locator(`${section('sgd')} [data-testid="learn-scope"]`).selectOption('all');
  await page.getByTestId('learn-step').click();
  await waitHash(page, 'sgd', '0.3:a');
  await page.locator(`${section('sgd')} [data-testid="learn-scale"]`).click();
  await waitHash(page, 'ls', '0');
  await settled(page);
  const hash = await page.evaluate(() => location.hash);
  const read = (p) => p.locator(section('sgd')).evaluate((s) => ({
    loss: s.querySelector('[data-testid="learn-loss"]').dataset.value,
    row: [...s.querySelectorAll('[data-testid="learn-row"] td.num')].map((td) => td.dataset.value),
    moved: [...s.querySelectorAll('[data-testid="learn-moved"] td.num')].map((td) => td.dataset.value),
    taken: s.querySelector('[data-testid="learn-taken"]').textContent,
  }));
  const first = await read(page);
  const { page: again, errors: errors2 } = await h.open(hash, { model: null });
  await waitStep(again, 'sgd');
  assert.deepEqual(await read(again), first);
  assert.equal(await again.locator(`${section('sgd')} [data-testid="learn-scale"]`).isChecked(), false);
  assert.deepEqual([...errors, ...errors2], []);
  release(opened);
});

/** Clicks a Save button and returns the downloaded file's bytes. */
async function save(page, name) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name }).click()]);
  return readFileSync(await download.path());
}

/** An exported SVG parsed: its title (the 600-weight lines), every text, each cell's fill and printed number, the legend. */
function parseSvg(page, text) {
  return page.evaluate((svgText) => {
    const doc = new DOMParser().parseFromString(svgText, 'image/svg+xml');
    const rects = [...doc.querySelectorAll('rect')].slice(1); // the first is the background
    return {
      parses: !doc.querySelector('parsererror'),
      title: [...doc.querySelectorAll('text[font-weight="600"]')].map((t) => t.textContent).join(' '),
      texts: [...doc.querySelectorAll('text')].map((t) => t.textContent),
      fills: rects.map((r) => r.getAttribute('fill')),
      labels: rects.map((r) => (r.nextElementSibling?.tagName === 'text' ? r.nextElementSibling.textContent : null)),
      legend: [...doc.querySelectorAll('text.legend')].map((t) => t.textContent).join(' '),
      hatch: doc.querySelector('path.masked-hatch')?.getAttribute('d') ?? '',
    };
  }, text);
}

/** The title the page shows above a Learn step's main figure (a heatmap's, or the loss and step tables'). */
function pageTitle(page, step) {
  const table = { loss: 'learn-top', sgd: 'learn-row' }[step];
  const where = table ? `${section(step)} figure:has([data-testid="${table}"]) .hm-title` : `${section(step)} [data-testid="hm-${CELL[step][0]}"] .hm-title`;
  return page.locator(where).textContent();
}

const HYPHEN_NUMBER = /(^|[\s(=:,[/])-\d|\de-\d/;
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

test('Save SVG and Save PNG on every Learn step: the step\u2019s matrix under the page\u2019s title, numbers with \u2212, a PNG', async () => {
  const dir = artifactDir('learn-export');
  const opened = await openDefault(`${HASH}&sgd=1:1.0`);
  const { page, errors } = opened;
  for (const step of LEARN_STEPS) {
    await openStep(page, step);
    const svgText = (await save(page, 'Save SVG')).toString('utf8');
    assert.equal(await page.locator('.export-status').textContent(), 'SVG saved.', step);
    writeFileSync(join(dir, `${step}.svg`), svgText);
    const svg = await parseSvg(page, svgText);
    assert.ok(svg.parses, step);
    assert.equal(svg.title, await pageTitle(page, step), step);
    assert.deepEqual(svg.texts.filter((t) => HYPHEN_NUMBER.test(t)), [], step);
    // a gradient has negative entries (the step by hand shows attention weights, all ≥ 0)
    if (step !== 'sgd') assert.ok(svg.texts.some((t) => /\u2212\d/.test(t)), `${step}: some negative number printed with \u2212`);
    if (CELL[step]) {
      // the selected row of the page's heatmap, printed in the export's cells (3 or 2 digits, as the cells fit)
      const [id, i] = CELL[step];
      const cols = svg.fills.length / Number(await page.locator(`[data-testid="hm-${id}"] canvas`).getAttribute('data-rows'));
      for (let j = 0; j < cols; j++) {
        const v = await cell(page, id, i, j);
        assert.ok([formatValue(v, 3), formatValue(v, 2)].includes(svg.labels[i * cols + j]), `${step} [${i}, ${j}]: ${svg.labels[i * cols + j]} vs ${v}`);
      }
    }
    const png = await save(page, 'Save PNG');
    assert.equal(await page.locator('.export-status').textContent(), 'PNG saved.', step);
    assert.ok(png.length > 1000, `${step}: PNG of ${png.length} bytes`);
    assert.deepEqual([...png.subarray(0, 8)], PNG_SIGNATURE, step);
    writeFileSync(join(dir, `${step}.png`), png);
  }
  // the scale switch: the dS export says it is off, and its title is the page's
  await openStep(page, 'dscale');
  await page.locator(`${section('dscale')} [data-testid="learn-scale"]`).click();
  await waitHash(page, 'ls', '0');
  await page.waitForFunction(() => /without/.test(document.querySelector('[data-testid="hm-learn-dscores"] .hm-title').textContent));
  const off = await parseSvg(page, (await save(page, 'Save SVG')).toString('utf8'));
  assert.equal(off.title, await pageTitle(page, 'dscale'));
  assert.match(off.title, /without 1\/\u221ad_k/);
  assert.match(off.texts.join(' '), /scale switch is off/);
  assert.deepEqual(errors, []);
  release(opened);
});

test('the exported dS\u2032 and dS of the causal language model mark the masked keys, whose gradient is exactly 0', async () => {
  const dir = artifactDir('learn-export');
  const opened = await openDefault('#model=language&layer=1&head=0&q=7&k=1&d=0');
  const { page, errors } = opened;
  for (const [step, id] of [['dsoftmax', 'learn-dscaled'], ['dscale', 'learn-dscores']]) {
    await openStep(page, step);
    const text = (await save(page, 'Save SVG')).toString('utf8');
    writeFileSync(join(dir, `language-${step}.svg`), text);
    const svg = await parseSvg(page, text);
    const T = Number(await page.locator(`[data-testid="hm-${id}"] canvas`).getAttribute('data-rows'));
    assert.equal(svg.fills.length, T * T);
    const grey = svg.fills[1]; // row 0, key 1: hidden by the causal mask
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < T; j++) {
        if (j > i) {
          assert.equal(svg.fills[i * T + j], grey, `${step} masked ${i}, ${j}`);
          assert.equal(svg.labels[i * T + j], '0', `${step} masked ${i}, ${j}`);
        } else assert.notEqual(svg.fills[i * T + j], grey, `${step} ${i}, ${j}`);
      }
    }
    // the masked keys' page values: exactly 0
    for (let j = 8; j < T; j++) assert.equal(await cell(page, id, 7, j), 0, `${step} page [7, ${j}]`);
    assert.ok(svg.hatch.length > 0);
    assert.match(svg.legend, /grey hatched = masked \(exactly 0\)/);
    assert.match(svg.texts.join(' '), /causal mask hides gets exactly 0 gradient/);
  }
  assert.deepEqual(errors, []);
  release(opened);
});

test('random weights have no loss: the Learn part says so', async () => {
  const { page, errors } = await h.open('#step=loss', { wait: false });
  const status = page.getByTestId('panel-status');
  await page.waitForFunction(() => /no loss/.test(document.querySelector('[data-testid="panel-status"]')?.textContent ?? ''), null, { timeout: WAIT });
  assert.match(await status.textContent(), /no loss to learn from/);
  assert.deepEqual(errors, []);
});

test('the concept lab\'s 1/√d_k demo links to the scale step of the Learn part, which opens on the trained head', async () => {
  const page = await h.context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`${h.url}concepts.html#demo=scale`);
  const link = page.getByTestId('scale-learn-link');
  await link.waitFor();
  await link.click();
  await page.waitForURL(/index\.html#/);
  await waitStep(page, 'dscale');
  assert.match(await page.getByTestId('step-counter').textContent(), /^Learn 5 of 8/);
  await page.locator('[data-testid="learn-compare"] td.num').first().waitFor();
  assert.deepEqual(errors, []);
  await page.close();
});

test('a sentence the task sets no answer on says so, and an answer picked by hand starts the backward', async () => {
  const opened = await openDefault('#model=coreference&s=the+dog+was+tired+.&step=loss&q=1');
  const { page, errors } = opened;
  await waitStep(page, 'loss');
  assert.match(await page.getByTestId('learn-problem').textContent(), /sets no answer on this sentence/);
  assert.equal(await page.locator(`${section('loss')} [data-testid="learn-positions"]`).isVisible(), false);
  const target = page.locator(`${section('loss')} [data-testid="learn-target"]`);
  await target.selectOption(await target.locator('option', { hasText: /^dog$/ }).getAttribute('value'));
  await page.locator(`${section('loss')} [data-testid="learn-positions"] td`).first().waitFor();
  assert.equal(await page.getByTestId('learn-problem').isVisible(), false);
  const loss = Number(await page.getByTestId('learn-loss').getAttribute('data-value'));
  assert.ok(Number.isFinite(loss) && loss > 0, `loss ${loss}`);
  assert.deepEqual(await numberProblems(page, section('loss')), []);
  // with an answer picked there is a backward, and so a figure to save
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Save PNG' }).click()]);
  assert.ok(readFileSync(await download.path()).length > 0);
  assert.equal(await page.locator('.export-status').textContent(), 'PNG saved.');
  assert.deepEqual(errors, []);
  release(opened);
});

test('a link whose step by hand names a head the model does not have takes the steps before it and says why', async () => {
  const opened = await openDefault('#model=coreference&layer=1&head=0&q=7&step=sgd&sgd=1:1.0,1:5.0,1:a');
  const { page, errors } = opened;
  await waitStep(page, 'sgd');
  assert.equal(await page.getByTestId('learn-taken').textContent(), '1 step taken');
  await page.getByText('A step by hand in the link could not be taken:').waitFor();
  assert.match(await page.locator('body').innerText(), /step 2 names layer 6, head 1, which this model does not have; the steps before it were/);
  await waitHash(page, 'sgd', '1:1.0');
  assert.deepEqual(errors, []);
  release(opened);
});
