// The concept lab (web/concepts.html): each of the seven demos opens from a
// link, states its claim, and shows live numbers from the engine that refute
// its misconception; varying a setting makes the numbers respond. Also: zero
// console errors, no horizontal scroll on a 390 px phone, light and dark,
// a strict Content-Security-Policy, and user text that never becomes markup.
// Screenshots go to tests/artifacts/concepts/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startHarness, artifactDir, pageScrollWidth, clickCell, hoverCell, readoutValues, gotoAnew, WAIT, REVIEW_SHOTS, pageRelay } from './harness.mjs';
import { numberProblems, notationLegend, NOTATION_ITEMS } from './number-check.mjs';

const DEMOS = ['context', 'qkv', 'scores', 'scale', 'heads', 'order', 'masks'];
const PHONE = { width: 390, height: 844 };
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

/** A page on concepts.html#hash (a new document), recording errors as the harness does; errors and
 *  dialogs hold this document's only. A desktop page in the light scheme without the CSP route that
 *  a test is done with (release) serves the next such openConcepts: harness.mjs pageRelay. */
async function openConcepts(hash, options = {}) {
  const { viewport, colorScheme = 'light', csp = false } = options;
  return !viewport && colorScheme === 'light' && !csp ? relay.take(hash) : newConceptsPage(hash, options);
}
const relay = pageRelay({ open: (hash) => newConceptsPage(hash), load: (page, hash) => reopenConcepts(page, hash) });
const release = relay.release;

/** openConcepts in a new page. */
async function newConceptsPage(hash, { viewport, colorScheme = 'light', csp = false } = {}) {
  const page = await h.context.newPage();
  const errors = [];
  const dialogs = [];
  page.on('console', (msg) => { if (msg.type() === 'error') errors.push(`console: ${msg.text()}`); });
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  if (viewport) await page.setViewportSize(viewport);
  await page.emulateMedia({ colorScheme });
  if (csp) {
    await page.route(/\/concepts\.html(#.*)?$/, async (route) => {
      const response = await route.fetch();
      await route.fulfill({ response, headers: { ...response.headers(), 'content-security-policy': CSP } });
    });
  }
  await page.goto(`${h.url}concepts.html${hash}`);
  await waitDemo(page, linkDemo(hash));
  return { page, errors, dialogs };
}

/** The demo a link opens: its demo=, when that names one, else context. */
function linkDemo(hash) {
  const demo = new URLSearchParams(hash.replace(/^#/, '')).get('demo') ?? 'context';
  return DEMOS.includes(demo) ? demo : 'context';
}

/** Loads concepts.html#hash as a new document into a page openConcepts gave (harness.mjs gotoAnew:
 *  a fresh page's numbers at about half its CPU), and waits for its demo. */
async function reopenConcepts(page, hash) {
  await gotoAnew(page, `${h.url}concepts.html${hash}`);
  await waitDemo(page, linkDemo(hash));
}

/** Waits until the demo is shown and has rendered at least once (or more than `after` times). */
async function waitDemo(page, demo, afterCount = 0) {
  await page.waitForFunction(([d, n]) => {
    const s = document.querySelector(`[data-testid="demo-${d}"]`);
    return s && !s.hidden && Number(s.dataset.rendered || 0) > n && document.getElementById('concepts').dataset.demo === d;
  }, [demo, afterCount], { timeout: WAIT });
}

function renders(page, demo) {
  return page.evaluate((d) => Number(document.querySelector(`[data-testid="demo-${d}"]`)?.dataset.rendered || 0), demo);
}

/** Runs an action and waits until the demo rendered again. */
async function andRender(page, demo, action) {
  const n = await renders(page, demo);
  await action();
  await waitDemo(page, demo, n);
}

/** The exact number a data-testid element carries in data-value. */
async function value(page, testid) {
  const loc = page.locator(`[data-testid="${testid}"]`);
  await loc.first().waitFor({ state: 'attached' });
  return Number(await loc.first().getAttribute('data-value'));
}

async function waitHashParam(page, param, v) {
  await page.waitForFunction(([p, x]) => new URLSearchParams(location.hash.slice(1)).get(p) === x, [param, String(v)], { timeout: WAIT });
}

/** A full-page screenshot for a person to look at (no assertion reads it): REVIEW_SHOTS only (harness.mjs). */
async function shot(page, name) {
  if (!REVIEW_SHOTS) return;
  await page.screenshot({ path: join(artifactDir('concepts'), `${name}.png`), fullPage: true });
}

// ---- every demo opens from its link ------------------------------------------------

for (const demo of DEMOS) {
  test(`${demo}: opens from its link with its claim, live numbers and no console error`, async () => {
    const opened = await openConcepts(`#demo=${demo}`);
    const { page, errors, dialogs } = opened;
    const section = page.getByTestId(`demo-${demo}`);
    assert.equal(await section.isVisible(), true);
    assert.equal(await page.locator(`.cx-nav-link[data-demo="${demo}"]`).getAttribute('aria-current'), 'page');
    const claim = (await section.getByTestId('claim').textContent()).trim();
    assert.ok(claim.length > 60, 'a claim of a sentence or two');
    assert.match(await section.locator('.cx-myth-text').textContent(), /\u201c.+\u201d/);
    const metrics = await section.locator('.cx-metric-value').evaluateAll((els) => els.map((e) => e.dataset.value));
    assert.ok(metrics.length >= 2 && metrics.some((v) => v !== undefined && v !== 'NaN'), 'metrics carry values');
    // the page wrote the full state of this demo into the URL
    await waitHashParam(page, 'demo', demo);
    await shot(page, demo);
    assert.deepEqual(errors, []);
    assert.deepEqual(dialogs, []);
    release(opened);
  });
}

// ---- 1. context -------------------------------------------------------------------------

test('context: the output differs from the plain average, and one word gets two outputs in two sentences', async () => {
  const opened = await openConcepts('#demo=context');
  const { page, errors } = opened;
  const dAvg = await value(page, 'ctx-diff-avg');
  assert.ok(dAvg > 1e-3, `output − average = ${dAvg}`);
  assert.equal(await value(page, 'ctx-input-diff'), 0, 'the word enters both sentences as the same input row');
  const dWord = await value(page, 'ctx-diff-sentences');
  assert.ok(dWord > 1e-3, `same word, two sentences: ${dWord}`);
  // the heatmap's difference row is what the metric summarises
  const diffRow = await readoutValues(page, 'ctx-head');
  assert.equal(Math.max(...diffRow.map((c) => Math.abs(c.value))).toFixed(5), dAvg.toFixed(5));
  // vary: another token and no positions: still not the average, still two outputs
  await andRender(page, 'context', () => page.getByTestId('ctx-token-chip').nth(4).click());
  await waitHashParam(page, 'q', 4);
  await andRender(page, 'context', () => page.getByTestId('ctx-pe').selectOption('none'));
  assert.ok(await value(page, 'ctx-diff-avg') > 1e-3);
  assert.equal(await page.getByTestId('ctx-diff-sentences').getAttribute('data-value'), 'NaN', '“river” is not in the second sentence');
  await andRender(page, 'context', () => page.getByTestId('ctx-b').fill('A river of cars'));
  assert.ok(await value(page, 'ctx-diff-sentences') > 1e-3, 'different position, no positional encoding: the context alone changes the output');
  assert.deepEqual(errors, []);
  release(opened);
});

// ---- 2. Q, K, V -------------------------------------------------------------------------------

test('qkv: clicking an entry of K writes out the dot product, which equals the entry the engine computed', async () => {
  const opened = await openConcepts('#demo=qkv');
  const { page, errors } = opened;
  await andRender(page, 'qkv', () => clickCell(page, 'qkv-k', 3, 1));
  await waitHashParam(page, 'm', 'k');
  await waitHashParam(page, 'i', 3);
  await waitHashParam(page, 'd', 1);
  const entry = await value(page, 'qkv-entry');
  const sum = await value(page, 'qkv-dot');
  assert.ok(Math.abs(entry - sum) < 1e-5, `entry ${entry} vs written-out sum ${sum}`);
  // the entry is the one shown in the K heatmap (its selected row's readout)
  const kRow = await readoutValues(page, 'qkv-k');
  assert.equal(kRow.find((c) => c.row === 3 && c.col === 1).value, entry);
  // the formula has all C = 16 products; the input row 3 and column 0·D+1 of W_K are marked
  const formula = await page.getByTestId('qkv-formula').textContent();
  assert.match(formula, /K⁽¹⁾\[3, 1\] = Σ_c X′\[3, c\] · W_K\[c, 1\]/);
  assert.equal((formula.match(/\)\(/g) ?? []).length, 16, '16 products written out');
  assert.deepEqual([...new Set((await readoutValues(page, 'qkv-input')).map((c) => c.row))], [3]);
  assert.match(await page.getByTestId('hm-qkv-weight').locator('.hm-title').textContent(), /W_K, column 1 marked/);
  // a head-2 entry uses column 1·D + d of the weights; keyboard works too
  await andRender(page, 'qkv', () => page.getByTestId('qkv-head').selectOption('1'));
  await page.locator('[data-testid="hm-qkv-v"] .hm-scroll').focus();
  await page.keyboard.press('ArrowDown');
  await andRender(page, 'qkv', () => page.keyboard.press('Enter'));
  await waitHashParam(page, 'm', 'v');
  assert.match(await page.getByTestId('qkv-formula').textContent(), /V⁽²⁾\[\d+, \d+\] = Σ_c X′\[\d+, c\] · W_V\[c, [4-7]\]/);
  assert.ok(Math.abs(await value(page, 'qkv-entry') - await value(page, 'qkv-dot')) < 1e-5);
  assert.deepEqual(errors, []);
  release(opened);
});

// ---- 3. scores ---------------------------------------------------------------------------------

test('scores: a raw row has negative values and does not sum to 1; after softmax it is non-negative and sums to 1', async () => {
  const opened = await openConcepts('#demo=scores');
  const { page, errors } = opened;
  assert.ok(await value(page, 'scores-raw-min') < 0, 'a negative raw score');
  assert.ok(Math.abs(await value(page, 'scores-raw-sum') - 1) > 1e-3, 'raw sum is not 1');
  assert.ok(await value(page, 'scores-weight-min') >= 0, 'weights are non-negative');
  assert.ok(Math.abs(await value(page, 'scores-weight-sum') - 1) < 1e-6, 'weights sum to 1');
  assert.ok(await value(page, 'scores-allrows') < 1e-6, 'every row of every head sums to 1');
  // the bars show the same row: their values add up to the sums shown
  const bars = await page.locator('[data-testid="scores-weights"] .cx-bar-row[data-value]').evaluateAll((r) => r.map((x) => Number(x.dataset.value)));
  assert.ok(Math.abs(bars.reduce((a, b) => a + b, 0) - 1) < 1e-6);
  // vary: the scale off leaves the raw scores alone, the weights still sum to 1
  const rawSum = await value(page, 'scores-raw-sum');
  const w0 = await value(page, 'scores-weight-min');
  await andRender(page, 'scores', () => page.getByTestId('scores-scale').uncheck());
  await waitHashParam(page, 'scale', 0);
  assert.equal(await value(page, 'scores-raw-sum'), rawSum);
  assert.notEqual(await value(page, 'scores-weight-min'), w0);
  assert.ok(Math.abs(await value(page, 'scores-weight-sum') - 1) < 1e-6);
  // another row, picked in the heatmap
  await andRender(page, 'scores', () => clickCell(page, 'scores-weights', 2, 0));
  await waitHashParam(page, 'q', 2);
  assert.ok(Math.abs(await value(page, 'scores-weight-sum') - 1) < 1e-6);
  // hovering a cell shows its exact value, the same number the row's bar carries
  await hoverCell(page, 'scores-raw', 2, 3);
  const tip = page.getByTestId('tooltip');
  await tip.waitFor();
  assert.match(await tip.textContent(), /S⁽¹⁾\[2, 3\]/);
  const raw3 = await page.locator('[data-testid="scores-raw"] .cx-bar-row[data-index="3"]').getAttribute('data-value');
  assert.equal(await page.getByTestId('tooltip-value').getAttribute('data-value'), raw3);
  assert.deepEqual(errors, []);
  release(opened);
});

// ---- 4. scale ----------------------------------------------------------------------------------

test('scale: the score variance grows with d_k only without the scale; entropy and gradient collapse without it', async () => {
  const opened = await openConcepts('#demo=scale');
  const { page, errors } = opened;
  const dks = [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512];
  const off = {};
  for (const d of dks) {
    off[d] = await value(page, `scale-var-off-${d}`);
    const on = await value(page, `scale-var-on-${d}`);
    assert.ok(on > 0.5 && on < 2, `scaled variance at d_k=${d}: ${on}`);
    assert.ok(off[d] > d / 2 && off[d] < d * 2, `unscaled variance at d_k=${d}: ${off[d]} ≈ d_k`);
  }
  assert.ok(off[512] > 100 * off[2], `${off[512]} vs ${off[2]}`);
  assert.ok(await value(page, 'scale-entropy-off-512') < 0.25 * await value(page, 'scale-entropy-on-512'));
  assert.ok(await value(page, 'scale-jacobian-off-512') < 0.5 * await value(page, 'scale-jacobian-on-512'));
  // its words, each with a one-line gloss shown on focus (issue #40, 5)
  const terms = page.getByTestId('scale-terms').locator('dfn.gloss');
  assert.deepEqual(await terms.allTextContents(), ['nats', 'Jacobian', 'Frobenius norm']);
  await terms.nth(2).focus();
  assert.match(await terms.nth(2).evaluate((d) => getComputedStyle(d, '::after').content), /square root of the sum of every entry squared/);
  // three charts with axes, two sweeps each, and the marker at the current d_k
  for (const id of ['variance', 'entropy', 'jacobian']) {
    const chart = page.getByTestId(`scale-chart-${id}`);
    assert.ok(await chart.locator('.cx-series').count() >= 2);
    assert.equal(await chart.locator('.cx-marker').count(), 1);
    assert.ok(await chart.locator('.cx-axis-title').count() === 2);
    assert.ok((await chart.locator('.cx-tick').allTextContents()).includes('512'));
  }
  // the slider moves the current point; the toggle switches which sweep is highlighted
  const before = await value(page, 'scale-cur-var');
  await page.getByTestId('scale-dk').focus();
  await andRender(page, 'scale', () => page.keyboard.press('End'));
  await waitHashParam(page, 'dk', 512);
  const at512 = await value(page, 'scale-cur-var');
  assert.equal(at512, off[512]);
  assert.ok(at512 > before);
  assert.equal(await page.locator('[data-testid="scale-chart-variance"] .cx-series.is-active').getAttribute('class'), 'cx-series cx-s-off is-active');
  await andRender(page, 'scale', () => page.getByTestId('scale-toggle').check());
  await waitHashParam(page, 'scale', 1);
  const scaled = await value(page, 'scale-cur-var');
  assert.ok(scaled > 0.5 && scaled < 2);
  assert.equal(await page.locator('[data-testid="scale-chart-variance"] .cx-series.is-active').getAttribute('class'), 'cx-series cx-s-on is-active');
  assert.deepEqual(errors, []);
  release(opened);
});

// ---- 5. heads ----------------------------------------------------------------------------------

test('heads: the heads differ; sharing weights makes them identical (difference exactly 0)', async () => {
  const opened = await openConcepts('#demo=heads');
  const { page, errors } = opened;
  assert.equal(await page.locator('[data-testid^="hm-heads-"]:visible').count(), 4);
  assert.ok(await value(page, 'heads-diff') > 1e-3);
  assert.ok(await value(page, 'heads-pair-0-1') > 1e-3);
  await andRender(page, 'heads', () => page.getByTestId('heads-share').check());
  await waitHashParam(page, 'share', 1);
  assert.equal(await value(page, 'heads-diff'), 0);
  assert.equal(await value(page, 'heads-mean-diff'), 0);
  assert.equal(await value(page, 'heads-out-diff'), 0);
  for (let a = 0; a < 4; a++) for (let b = 0; b < 4; b++) assert.equal(await value(page, `heads-pair-${a}-${b}`), 0);
  await shot(page, 'heads-shared');
  // eight heads, shared: still identical; unshared: different
  await andRender(page, 'heads', () => page.getByTestId('heads-h').selectOption('8'));
  assert.equal(await page.locator('[data-testid^="hm-heads-"]:visible').count(), 8);
  assert.equal(await value(page, 'heads-diff'), 0);
  await andRender(page, 'heads', () => page.getByTestId('heads-share').uncheck());
  assert.ok(await value(page, 'heads-diff') > 1e-3);
  assert.deepEqual(errors, []);
  release(opened);
});

// ---- 6. order ------------------------------------------------------------------------------------

test('order: without positions the outputs are the same vectors permuted (< 1e-5); with positions they differ', async () => {
  const opened = await openConcepts('#demo=order');
  const { page, errors } = opened;
  const none = await value(page, 'order-diff-none');
  assert.ok(none < 1e-5, `none: ${none}`);
  assert.ok(await value(page, 'order-diff-sinusoidal') > 1e-5);
  assert.ok(await value(page, 'order-diff-learned') > 1e-5);
  assert.equal(await value(page, 'order-diff'), none, 'the highlighted verdict is the selected encoding');
  assert.match(await page.getByTestId('demo-order').textContent(), /perm = \[2, 1, 0\]/);
  // rotary tells the reversed sentence apart; ALiBi (|i − j| only, no mask) cannot, and the page says why
  assert.ok(await value(page, 'order-diff-rope') > 1e-5);
  assert.ok(await value(page, 'order-diff-alibi') < 1e-5);
  assert.match(await page.getByTestId('demo-order').textContent(), /ALiBi cannot tell a sentence from its reverse/);
  // the sinusoidal view: heatmap, curves and the dot products, which depend only on the distance
  await page.getByTestId('hm-order-pe-map').waitFor();
  assert.ok(await page.locator('[data-testid="order-curves"] .cx-series').count() >= 3);
  assert.ok(await value(page, 'order-shift') < 1e-4);
  await page.getByTestId('hm-order-dot').waitFor();
  // order and distance: moved 3 words right, "dog" → "cat" keeps its score with none, rotary and ALiBi only;
  // the card's sentence is read from its cells
  const moved = (k) => value(page, `order-distance-moved-${k}`);
  const at = (k) => value(page, `order-distance-at-${k}`);
  for (const k of ['none', 'rope', 'alibi']) assert.ok(Math.abs(await moved(k) - await at(k)) <= 1e-5 * Math.max(1, Math.abs(await at(k))), k);
  for (const k of ['sinusoidal', 'learned']) assert.ok(Math.abs(await moved(k) - await at(k)) > 1e-4, k);
  const said = await page.getByTestId('order-distance-verdict').textContent();
  assert.match(said, /Moved 3 words to the right, \u201cdog\u201d \u2192 \u201ccat\u201d \(distance 2\) keeps its score with none, rotary \(RoPE\) and ALiBi/);
  for (const k of ['sinusoidal', 'learned']) {
    for (const id of [`order-distance-at-${k}`, `order-distance-moved-${k}`]) assert.ok(said.includes(await page.getByTestId(id).textContent()), `${id} in: ${said}`);
  }
  await andRender(page, 'order', () => page.getByTestId('order-move').fill('0'));
  await waitHashParam(page, 'sh', '0');
  assert.match(await page.getByTestId('order-distance-verdict').textContent(), /^Move the sentence right/);
  // vary: learned positions, longer sentences typed by the learner
  await andRender(page, 'order', () => page.getByTestId('order-pe').selectOption('learned'));
  await waitHashParam(page, 'pe', 'learned');
  assert.ok(await value(page, 'order-diff') > 1e-5);
  await andRender(page, 'order', () => page.getByTestId('order-a').fill('the dog bites the man'));
  await andRender(page, 'order', () => page.getByTestId('order-b').fill('the man bites the dog'));
  assert.ok(await value(page, 'order-diff-none') < 1e-5);
  assert.ok(await value(page, 'order-diff-learned') > 1e-5);
  assert.ok(await value(page, 'order-diff-alibi') > 1e-5, 'two words swapped: distances change, so ALiBi sees it');
  assert.doesNotMatch(await page.getByTestId('demo-order').textContent(), /cannot tell a sentence from its reverse/);
  // not a permutation: said so, and no number
  await andRender(page, 'order', () => page.getByTestId('order-b').fill('the man bites the cat'));
  assert.match(await page.getByTestId('demo-order').textContent(), /not a reordering/);
  assert.equal(await page.getByTestId('order-diff-none').getAttribute('data-value'), 'NaN');
  assert.deepEqual(errors, []);
  release(opened);
});

// ---- 7. masks ------------------------------------------------------------------------------------

test('masks: with a causal mask, editing a later word leaves earlier output rows exactly unchanged', async () => {
  const opened = await openConcepts('#demo=masks');
  const { page, errors } = opened;
  for (let i = 0; i < 5; i++) assert.equal(await value(page, `masks-row-diff-${i}`), 0, `row ${i} unchanged`);
  assert.ok(await value(page, 'masks-row-diff-5') > 1e-3, 'the edited row changed');
  assert.equal(await value(page, 'masks-causal-before'), 0);
  assert.ok(await value(page, 'masks-causal-after') > 1e-3);
  assert.equal(await page.locator('[data-testid="masks-causal-row-5"]').getAttribute('class'), 'is-changed is-edit');
  // vary: edit an earlier word; then switch the mask off: the edit leaks backwards
  await andRender(page, 'masks', () => page.getByTestId('masks-b').fill('The cat ran on the mat'));
  assert.equal(await value(page, 'masks-row-diff-1'), 0);
  assert.ok(await value(page, 'masks-row-diff-2') > 1e-3);
  assert.ok(await value(page, 'masks-row-diff-5') > 1e-3);
  await andRender(page, 'masks', () => page.getByTestId('masks-causal').uncheck());
  await waitHashParam(page, 'causal', 0);
  assert.ok(await value(page, 'masks-causal-before') > 1e-3, 'without the mask earlier rows change');
  assert.deepEqual(errors, []);
  release(opened);
});

test('masks: padded keys get exactly zero weight with the padding mask and leak weight without it', async () => {
  const opened = await openConcepts('#demo=masks');
  const { page, errors } = opened;
  // sentences 2 and 3 are padded; sentence 1 is the longest
  for (const i of [1, 2]) {
    assert.equal(await value(page, `masks-pad-on-${i}`), 0, `sentence ${i + 1}, mask on`);
    assert.ok(await value(page, `masks-pad-off-${i}`) > 1e-3, `sentence ${i + 1}, mask off`);
    assert.ok(await value(page, `masks-leak-off-${i}`) > 1e-3);
  }
  assert.equal(await value(page, 'masks-pad-max'), 0);
  const rows = await page.locator('[data-testid="masks-pad-rows"] .cx-bar-row[data-value]').evaluateAll((r) => r.map((x) => Number(x.dataset.value)));
  assert.ok(rows.length === 7 && rows.every((v) => v === 0), 'every row: zero weight on [PAD]');
  await andRender(page, 'masks', () => page.getByTestId('masks-pad').uncheck());
  await waitHashParam(page, 'pad', 0);
  assert.ok(await value(page, 'masks-pad-max') > 1e-3);
  assert.ok(await value(page, 'masks-pad-leak') > 1e-3);
  await shot(page, 'masks-no-padding-mask');
  // vary: the batch, typed by the learner
  await andRender(page, 'masks', () => page.getByTestId('masks-batch').fill('Hi\nA much longer sentence than the first one'));
  await andRender(page, 'masks', () => page.getByTestId('masks-pad').check());
  await andRender(page, 'masks', () => page.getByTestId('masks-bi').selectOption('0'));
  assert.equal(await value(page, 'masks-pad-max'), 0);
  assert.ok(await value(page, 'masks-pad-off-0') > 1e-3);
  assert.deepEqual(errors, []);
  release(opened);
});

// ---- the page: URL state, navigation, notices, themes, phones --------------------------------------

test('a link reproduces a demo state; an invalid link opens defaults with a visible notice', async () => {
  const opened = await openConcepts('#demo=order&pe=learned&a=the%20dog%20bites%20the%20man&b=the%20man%20bites%20the%20dog&seed=7');
  const { page, errors } = opened;
  assert.equal(await page.getByTestId('order-a').inputValue(), 'the dog bites the man');
  assert.equal(await page.getByTestId('order-pe').inputValue(), 'learned');
  assert.equal(await page.getByTestId('seed').locator('visible=true').inputValue(), '7');
  assert.equal(await page.getByTestId('message-notice').count(), 0);
  assert.deepEqual(errors, []);
  release(opened);

  const bad = await openConcepts('#demo=order&pe=banana&seed=-3&zzz=1');
  const notice = bad.page.getByTestId('message-notice');
  await notice.waitFor();
  const text = await notice.textContent();
  assert.match(text, /positional encoding “banana” must be one of none, sinusoidal, learned/);
  assert.match(text, /seed “-3”/);
  assert.match(text, /“zzz” is not used/);
  assert.equal(await bad.page.getByTestId('order-pe').inputValue(), 'none');
  assert.ok(await value(bad.page, 'order-diff-none') < 1e-5);
  await waitHashParam(bad.page, 'pe', 'none'); // the URL is rewritten to what is shown
  assert.deepEqual(bad.errors, []);
  release(bad);

  const unknown = await openConcepts('#demo=nonsense');
  await unknown.page.getByTestId('message-notice').waitFor();
  assert.match(await unknown.page.getByTestId('message-notice').textContent(), /demo “nonsense” is not one of/);
  assert.equal(await unknown.page.getByTestId('demo-context').isVisible(), true);
  assert.deepEqual(unknown.errors, []);
  release(unknown);
});

test('the navigation switches demos, keeps each demo’s settings, and links back to the playground', async () => {
  const opened = await openConcepts('#demo=heads');
  const { page, errors } = opened;
  await andRender(page, 'heads', () => page.getByTestId('heads-share').check());
  await page.locator('.cx-nav-link[data-demo="order"]').click();
  await waitDemo(page, 'order');
  await waitHashParam(page, 'demo', 'order');
  await page.getByTestId('demo-order').locator('.cx-next').click();
  await waitDemo(page, 'masks');
  await page.locator('.cx-nav-link[data-demo="heads"]').click();
  await waitDemo(page, 'heads');
  await waitHashParam(page, 'share', 1);
  assert.equal(await value(page, 'heads-diff'), 0, 'the shared-weights setting survived the round trip');
  assert.equal(await page.getByTestId('playground-link').getAttribute('href'), 'index.html');
  assert.deepEqual(errors, []);
  release(opened);
  // and the playground links here
  const pg = await h.open('');
  assert.equal(await pg.page.getByTestId('concepts-link').getAttribute('href'), 'concepts.html');
  await pg.page.close();
});

for (const scheme of REVIEW_SHOTS ? ['light', 'dark'] : ['light']) {
  test(`phone (390 px, ${scheme}): no demo scrolls the page sideways`, async () => {
    const { page, errors } = await openConcepts('#demo=context', { viewport: PHONE, colorScheme: scheme });
    for (const demo of DEMOS) {
      await page.locator(`.cx-nav-link[data-demo="${demo}"]`).click();
      await waitDemo(page, demo);
      // a gloss shown (concept 4's Frobenius norm, issue #40, 5) wraps in its line, never widening the page
      if (demo === 'scale') await page.getByTestId('scale-terms').locator('dfn.gloss').nth(2).focus();
      const w = await pageScrollWidth(page);
      assert.ok(w <= 390, `${demo}: scrollWidth ${w} > 390`);
      await page.evaluate(() => window.scrollTo(0, 0));
      await shot(page, `${demo}-phone${scheme === 'dark' ? '-dark' : ''}`);
    }
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('dark theme: every demo draws with the dark palette, and the theme toggle follows the link', async () => {
  const { page, errors } = await openConcepts('#demo=context', { colorScheme: 'dark' });
  for (const demo of DEMOS) {
    await page.locator(`.cx-nav-link[data-demo="${demo}"]`).click();
    await waitDemo(page, demo);
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(bg, 'rgb(14, 16, 20)');
    await shot(page, `${demo}-dark`);
  }
  await page.getByTestId('theme-toggle').click(); // system → light
  await waitHashParam(page, 'theme', 'light');
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'light');
  assert.deepEqual(errors, []);
  await page.close();
});

// ---- security ---------------------------------------------------------------------------------------

test('every demo runs under the strict Content-Security-Policy, with no inline script, style or handler', async () => {
  const { page, errors } = await openConcepts('#demo=context', { csp: true });
  for (const demo of DEMOS) {
    await page.locator(`.cx-nav-link[data-demo="${demo}"]`).click();
    await waitDemo(page, demo);
  }
  await page.getByTestId('scale-dk').focus();
  await page.keyboard.press('ArrowLeft');
  const found = await page.evaluate(() => {
    const out = [];
    for (const el of document.querySelectorAll('*')) {
      for (const a of el.attributes) if (/^on/i.test(a.name)) out.push(`${el.tagName} ${a.name}`);
    }
    for (const s of document.querySelectorAll('script')) if (!s.src) out.push('inline script');
    if (document.querySelectorAll('style').length) out.push('style element');
    return out;
  });
  assert.deepEqual(found, []);
  assert.deepEqual(errors, [], 'no CSP violation or error');
  await page.close();
});

test('text from the link or the keyboard is shown as text and never runs', async () => {
  const payload = '<img src=x onerror="window.__pwned=1"> "><script>window.__pwned=2</script>';
  const enc = encodeURIComponent(payload);
  const opened = await openConcepts('#demo=scores');
  const { page, errors, dialogs } = opened;
  for (const hash of [`#demo=context&a=${enc}&b=${enc}`, `#demo=order&a=${enc}&b=${enc}`, `#demo=masks&bs=${enc}%0Aok`, `#demo=${enc}`, `#demo=qkv&${enc}=1`]) {
    await reopenConcepts(page, hash);
    assert.equal(await page.evaluate(() => window.__pwned), undefined, hash);
    assert.equal(await page.locator('.cx img, .cx-main script, .cx iframe').count(), 0, hash);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, [], hash);
  }
  await reopenConcepts(page, '#demo=scores');
  await andRender(page, 'scores', () => page.getByTestId('scores-s').fill(payload));
  const chips = (await page.getByTestId('scores-query-chip').locator('.chip-text').allTextContents()).join('');
  assert.ok(chips.includes('<img'), 'shown as tokens');
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  // an empty sentence is explained, not an error
  await page.getByTestId('scores-s').fill('');
  await page.getByTestId('demo-status').waitFor();
  assert.match(await page.getByTestId('demo-status').textContent(), /empty/);
  release(opened);
});

test('a lab link cut at 300 characters inside an emoji still runs its demo, with a notice', async () => {
  // 299 letters then an emoji: the cut at 300 units fell inside the emoji and
  // the demo showed only "unpaired UTF-16 surrogate".
  const opened = await openConcepts(`#demo=qkv&s=${'b'.repeat(299)}${encodeURIComponent('\u{1F600} tail')}`);
  const { page, errors } = opened;
  const status = page.locator('[data-testid="demo-qkv"] [data-testid="demo-status"]');
  assert.equal(await status.isVisible(), false, `no error in the demo: ${await status.textContent()}`);
  assert.match(await page.getByTestId('message-notice').textContent(), /longer than 300 characters, cut/);
  const s = await page.evaluate(async () => (await import('/app/concepts/state.js')).parseConceptHash(location.hash));
  assert.equal(s.state.s, 'b'.repeat(299));
  assert.deepEqual(errors, []);
});

test('masks: batch lines past the 6th stay in the box and the link, and the note says which are computed', async () => {
  // the 7th typed line used to vanish from the box as it was typed
  const opened = await openConcepts('#demo=masks');
  const { page, errors } = opened;
  const lines = Array.from({ length: 8 }, (_, i) => `batch line number ${i + 1}`);
  await andRender(page, 'masks', () => page.getByTestId('masks-batch').fill(lines.join('\n')));
  await page.getByTestId('masks-pad').focus();  // focus leaves the box
  assert.equal(await page.getByTestId('masks-batch').inputValue(), lines.join('\n'));
  const card = page.locator('[data-testid="demo-masks"]');
  assert.match(await card.textContent(), /Lines 7\u20138 are kept in the box and the link but not computed: the demo takes 6\./);
  assert.equal(await page.locator('[data-testid="masks-pad-table"] tbody tr').count(), 6);
  await page.waitForFunction((n) => new URLSearchParams(location.hash.slice(1)).get('bs')?.split('\n').length === n, lines.length);
  assert.deepEqual(errors, []);
  release(opened);
});

// ---- issue #16: one number format, one notation --------------------------------------------

// a 28-letter token in each demo's sentence, where the demo has one
const LONG = encodeURIComponent('the antidisestablishmentarianism cat sat');
const LONG_WORDS = { context: `&a=${LONG}`, qkv: `&s=${LONG}`, scores: `&s=${LONG}`, heads: `&s=${LONG}`, order: `&a=${LONG}`, masks: `&a=${LONG}` };

test('every demo, desktop and phone: no visible number has a hyphen-minus or is clipped, and token labels are whole', async () => {
  for (const viewport of [null, PHONE]) {
    // one page per size, each demo's link loaded into it
    const { page, errors } = await openConcepts(`#demo=${DEMOS[0]}${LONG_WORDS[DEMOS[0]] ?? ''}`, viewport ? { viewport } : {});
    for (const demo of DEMOS) {
      if (demo !== DEMOS[0]) await reopenConcepts(page, `#demo=${demo}${LONG_WORDS[demo] ?? ''}`);
      const problems = await numberProblems(page, `[data-testid="demo-${demo}"]`);
      assert.deepEqual(problems, [], `${demo} at ${viewport ? '390 px' : '1280 px'}`);
      assert.deepEqual(errors, [], demo);
    }
    await page.close();
  }
});

test('qkv: a negative exponent (its difference) and negative factors (its dot product) are written with U+2212', async () => {
  // the scores demo's bars print every raw score; a verdict difference prints e−n
  const opened = await openConcepts('#demo=qkv');
  const { page } = opened;
  const diff = await page.getByTestId('qkv-diff').textContent();
  assert.match(diff, /^(0 \(exactly\)|\d\.\d\de\u2212\d+)$/, `difference “${diff}”`);
  const formula = await page.getByTestId('qkv-formula').textContent();
  assert.ok(!/-/.test(formula.replace(/[A-Za-z]-[A-Za-z]/g, '')), `no hyphen-minus in “${formula.slice(0, 120)}”`);
  assert.match(formula, /\(\u2212\d/, 'negative factors use U+2212');
  release(opened);
});

test('concepts.html has the Notation legend, collapsed, with the playground’s items', async () => {
  const opened = await openConcepts('#demo=context');
  const { page, errors } = opened;
  const { summary, text } = await notationLegend(page);
  assert.equal(summary.trim(), 'Notation');
  assert.equal(await page.getByTestId('notation').evaluate((d) => d.open), false, 'collapsed until opened');
  for (const item of NOTATION_ITEMS) assert.match(text, item);
  await page.getByTestId('notation').locator('summary').click();
  assert.ok(await page.getByTestId('notation').locator('dl').isVisible());
  assert.deepEqual(errors, []);
  release(opened);
});
