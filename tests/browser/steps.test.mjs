// Stepping: every step renders (with REVIEW_SHOTS, harness.mjs, a screenshot
// of each is saved as an artifact), the buttons and the keyboard move through
// the steps, Play animates and advances.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { startHarness, STEPS, waitStep, artifactDir, hashState, waitHash, waitFigureInView, WAIT, REVIEW_SHOTS, pageRelay, DESKTOP_VIEWPORT } from './harness.mjs';
import { stepEntry } from '../../web/app/playground/steps.js';

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

/** A page a test is done with (release) serves the next openDefault: harness.mjs pageRelay. */
const relay = pageRelay({
  open: (hash, { colorScheme = 'light' } = {}) => h.open(hash, { viewport: DESKTOP_VIEWPORT, colorScheme }),
  load: (page, hash) => h.reload(page, hash),
});
const release = relay.release;
const openDefault = relay.take;

async function checkStep(page, step) {
  await waitStep(page, step);
  // the page shows the registry's title (random weights: no trained-model title)
  assert.equal(await page.getByTestId('step-title').textContent(), stepEntry(step).title);
  const explain = await page.locator(`section[data-step="${step}"] [data-testid="step-explain"]`).textContent();
  assert.ok(explain.length > 60, `${step} explains itself`);
  const result = page.locator(`section[data-step="${step}"] [data-testid="formula-result"]`);
  assert.equal(await result.count(), 1, `${step} has a formula with a result`);
  assert.ok(!Number.isNaN(Number(await result.getAttribute('data-value'))), `${step} formula result is a number`);
  const drawn = await page.locator(`section[data-step="${step}"]`).evaluate((s) => [...s.querySelectorAll('canvas, svg')].filter((c) => c.getBoundingClientRect().width > 20).length);
  assert.ok(drawn >= 1, `${step} draws something`);
}

test('every step renders (light; dark with a causal mask), with a screenshot of each saved under REVIEW_SHOTS', async () => {
  const dir = artifactDir('steps');
  // (the dark pass is also the causal mask's: one pass over the steps less; one page, the dark
  // pass a new document in it after the scheme turned dark: its errors go on into the same array)
  const opened = await openDefault('');
  const { page, errors } = opened;
  for (const scheme of ['light', 'dark']) {
    if (scheme === 'dark') {
      await page.emulateMedia({ colorScheme: 'dark' });
      await h.reload(page, '#mask=causal');
      assert.equal(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches), true);
    }
    for (const step of STEPS) {
      await page.locator(`.step-btn[data-step="${step}"]`).click();
      await checkStep(page, step);
      // for a person to look at (no assertion reads them): REVIEW_SHOTS (harness.mjs)
      if (REVIEW_SHOTS) await page.screenshot({ path: join(dir, scheme === 'light' ? `${step}.png` : `${step}-dark.png`), fullPage: true });
    }
    assert.deepEqual(errors, [], scheme);
  }
  release(opened);
});

test('every step renders in batch mode and with one head (a causal mask: above, in the dark)', async () => {
  // one page: the second link a new document in it (its errors go on into the same array)
  let opened;
  for (const hash of ['#batch=1&bi=1&mask=padding', '#h=1&c=8']) {
    if (!opened) opened = await openDefault(hash);
    else await h.reload(opened.page, hash);
    const { page, errors } = opened;
    for (const step of STEPS) {
      await page.locator(`.step-btn[data-step="${step}"]`).click();
      await checkStep(page, step);
    }
    assert.deepEqual(errors, [], hash);
  }
  release(opened);
});

test('Next step and Previous step move through the steps and update the URL', async () => {
  const opened = await openDefault();
  const { page } = opened;
  const next = page.getByRole('button', { name: 'Next step' });
  const prev = page.getByRole('button', { name: 'Previous step' });
  assert.equal(await prev.isDisabled(), true);
  for (const step of STEPS.slice(1)) {
    await next.click();
    await waitStep(page, step);
  }
  assert.equal(await next.isDisabled(), true);
  await waitHash(page, 'step', 'output');
  await prev.click();
  await waitStep(page, 'concat');
  assert.equal((await hashState(page)).step, 'concat');
  assert.equal(await page.locator('.step-btn[aria-current="step"]').getAttribute('data-step'), 'concat');
  release(opened);
});

test('desktop (1280×900): at every step the sticky stepper and the step\'s figure are both in view', async () => {
  const opened = await openDefault('');
  const { page, errors } = opened;
  const next = page.getByRole('button', { name: 'Next step' });
  for (const step of STEPS.slice(1)) {
    await next.click();
    await waitStep(page, step);
    await waitFigureInView(page, step);
  }
  // ← and Play follow the figure too; Play starts on the figure whose row it fills
  await page.keyboard.press('ArrowLeft');
  await waitStep(page, 'concat');
  await waitFigureInView(page, 'concat');
  await page.locator('.step-btn[data-step="scores"]').click();
  await waitStep(page, 'scores');
  await page.evaluate(() => scrollTo(0, 0));
  await page.getByRole('button', { name: 'Play' }).click();
  await waitFigureInView(page, 'scores');
  await page.getByRole('button', { name: 'Pause' }).click();
  assert.deepEqual(errors, []);
  release(opened);
});

test('the page does not follow the figure when nothing asked it to: a link that opens a step stays at the top', async () => {
  const opened = await openDefault('#step=softmax');
  const { page } = opened;
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  assert.equal(await page.evaluate(() => scrollY), 0);
  release(opened);
});

test('keyboard alone steps through: arrows move, Space plays and pauses', async () => {
  const opened = await openDefault();
  const { page, errors } = opened;
  await page.keyboard.press('ArrowRight');
  await waitStep(page, 'positional');
  await page.keyboard.press('ArrowRight');
  await waitStep(page, 'input');
  await page.keyboard.press('ArrowLeft');
  await waitStep(page, 'positional');
  await page.keyboard.press('Space');
  await page.getByRole('button', { name: 'Pause' }).waitFor();
  await page.keyboard.press('Space');
  await page.getByRole('button', { name: 'Play' }).waitFor();
  // typing in the sentence box does not step or play
  await page.getByLabel('Sentence', { exact: true }).focus();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Space');
  assert.equal(await page.getByRole('button', { name: 'Play' }).count(), 1);
  assert.equal(await page.getByTestId('panel').getAttribute('data-step'), 'positional');
  // Tab reaches the step buttons and Enter activates them
  await page.locator('.step-btn[data-step="softmax"]').focus();
  await page.keyboard.press('Enter');
  await waitStep(page, 'softmax');
  assert.deepEqual(errors, []);
  release(opened);
});

test('every control can be reached with Tab', async () => {
  const opened = await openDefault('#step=softmax');
  const { page } = opened;
  const names = new Set();
  await page.locator('body').focus();
  for (let i = 0; i < 80; i++) {
    await page.keyboard.press('Tab');
    const name = await page.evaluate(() => {
      const a = document.activeElement;
      if (!a || a === document.body) return '';
      return a.labels?.[0]?.textContent || a.getAttribute('aria-label') || a.textContent.trim();
    });
    names.add(name);
  }
  for (const n of ['Sentence', 'Batch mode', 'Model width', 'Heads', 'Seed', 'Positional encoding', 'Mask', 'Scale by 1/\u221ad_k', 'Previous step', 'Next step', 'Speed', 'Query token', 'Head']) {
    assert.ok([...names].some((x) => x.trim().startsWith(n) || x.includes(n)), `${n} is reachable with Tab`);
  }
  release(opened);
});

test('Play fills the score row cell by cell and then advances to the next step', async () => {
  const opened = await openDefault('#step=scores&speed=4&s=one+two+three');
  const { page, errors } = opened;
  // while the row fills, some products are still pending and the row readout is partial: seen by
  // an observer of every change (a poll of a starved page missed the whole fill once, under load 17)
  await page.evaluate(() => {
    window.__pending = false;
    const seen = () => { if (document.querySelector('[data-testid="products"] .is-pending')) window.__pending = true; };
    new MutationObserver(seen).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['class'] });
  });
  await page.getByRole('button', { name: 'Play' }).click();
  await waitStep(page, 'scaled');
  assert.ok(await page.evaluate(() => window.__pending), 'some products were pending while the row filled');
  await page.getByRole('button', { name: 'Pause' }).click();
  await page.getByRole('button', { name: 'Play' }).waitFor();
  assert.deepEqual(errors, []);
  release(opened);
});

test('Play at the last step starts again from the first', async () => {
  const opened = await openDefault('#step=output&speed=4');
  const { page } = opened;
  // every step the panel draws, as it draws it: at this speed play may be past the first step
  // before a poll of the page sees it (a wait for the panel to show it timed out under load)
  await page.evaluate(() => {
    const panel = document.querySelector('[data-testid="panel"]');
    window.__drawn = [];
    new MutationObserver(() => window.__drawn.push(panel.dataset.rendered)).observe(panel, { attributes: true, attributeFilter: ['data-rendered'] });
  });
  await page.getByRole('button', { name: 'Play' }).click();
  await page.waitForFunction(() => window.__drawn.some((s) => s !== 'output'), null, { timeout: WAIT });
  await page.getByRole('button', { name: 'Pause' }).click();
  const drawn = await page.evaluate(() => window.__drawn);
  assert.equal(drawn.find((s) => s !== 'output'), 'embeddings', `steps drawn after Play: ${drawn}`);
  release(opened);
});

// Old notation: a head as a subscript (Q₁, O₂), dₖ, Wₒ, and D for the head width.
const OLD_NOTATION = [/[QKVO][\u2080-\u2089]/, /d\u2096/, /W\u2092/, /\bD = /];

test('one notation on every step (heads ⁽h⁾ from 1, tokens as subscripts from 0, d_k, W_O), written in the Notation legend', async () => {
  // one page: each link a new document in it (its errors go on into the same array)
  const opened = await openDefault('');
  for (const hash of ['', '#scale=0&h=2&c=8']) {
    if (hash) await h.reload(opened.page, hash);
    const { page, errors } = opened;
    for (const step of STEPS) {
      await page.locator(`.step-btn[data-step="${step}"]`).click();
      await waitStep(page, step);
      const text = await page.evaluate((s) => `${document.querySelector('[data-testid="step-title"]').textContent}\n${document.querySelector(`section[data-step="${s}"]`).innerText}`, step);
      for (const re of OLD_NOTATION) assert.doesNotMatch(text, re, `${hash} ${step}`);
    }
    const steps = await page.locator('.steps').innerText();
    assert.match(steps, /W_O/);
    assert.deepEqual(errors, []);
  }
  const { page } = opened;
  await h.reload(page, '#step=projections');
  assert.equal(await page.locator('[data-testid="hm-projection-q"] .hm-title').textContent(), 'Queries Q\u207d\u00b9\u207e');
  assert.match(await page.locator('section[data-step="projections"] [data-testid="formula"]').textContent(), /Q\u207d\u00b9\u207e\[7, 0\]/);
  const legend = page.getByTestId('notation');
  assert.equal(await legend.locator('dl').isVisible(), false, 'collapsed until opened');
  await legend.locator('summary').click();
  const said = await legend.locator('dl').innerText();
  for (const part of ['d_k', 'W_O', 'Q\u207d\u00b9\u207e', 'q\u2087', 'counted from 0', 'counted from 1']) assert.ok(said.includes(part), `the legend explains ${part}`);
  release(opened);
});

test('Scale off: step 6 labels what it shows (S, unscaled), and the export has the page\'s title and its whole caption', async () => {
  const { page, errors } = await h.open('#step=scaled&scale=0', {
    init: () => {
      // record what the PNG renderer writes, and where
      window.__texts = [];
      const fill = CanvasRenderingContext2D.prototype.fillText;
      CanvasRenderingContext2D.prototype.fillText = function (text, x, y) {
        if (this.canvas.width > 500) window.__texts.push({ text: String(text), x, right: x + this.measureText(text).width, width: this.canvas.width / 2, align: this.textAlign });
        return fill.apply(this, arguments);
      };
    },
  });
  const pageTitle = await page.locator('[data-testid="hm-scaled"] .hm-title').textContent();
  assert.match(pageTitle, /^S\u2032 = S, unscaled/);
  assert.doesNotMatch(pageTitle, /\u221ad_k/);
  assert.match(await page.getByTestId('step-title').textContent(), /switched off, S\u2032 = S$/);

  const [svgFile] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Save SVG' }).click()]);
  const svg = await readFile(await svgFile.path(), 'utf8');
  const texts = [...svg.matchAll(/<text x="16" y="(\d+)"[^>]*>([^<]*)<\/text>/g)].map((m) => m[2].replace(/&apos;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, '&'));
  assert.equal(texts[0], pageTitle, 'the SVG\'s title is the page\'s');
  const caption = texts.slice(1, -1).join(' ');
  assert.match(caption, /^scaling is off, so these are the raw scores S;/);
  assert.match(caption, /\(C\s=\sd_model\s=\s16, H\s=\s4\sheads, d_k\s=\s4, seed\s42\)\.$/, 'the whole caption, to its end');
  assert.ok(texts.length >= 4, 'the caption takes more than one line');

  await page.evaluate(() => { window.__texts.length = 0; });
  await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Save PNG' }).click()]);
  const drawn = await page.evaluate(() => window.__texts);
  const isLeft = (t) => t.align === 'left' || t.align === 'start';
  const left = drawn.filter((t) => t.x === 16 && isLeft(t));
  assert.equal(left[0].text, pageTitle, 'the PNG\'s title is the page\'s');
  assert.match(left.map((t) => t.text).join(' '), /seed\s42\)\./);
  for (const t of drawn) assert.ok(!isLeft(t) || t.right <= t.width, `\u201c${t.text}\u201d ends at ${t.right}, inside ${t.width}`);
  assert.deepEqual(errors, []);
});

test('the export of every step has the title the page shows above its figure', async () => {
  const opened = await openDefault('');
  const { page } = opened;
  for (const step of STEPS) {
    if (step === 'heads') continue; // step 10's figure is the grid of heads; its export is the selected head's weights
    await page.locator(`.step-btn[data-step="${step}"]`).click();
    await waitStep(page, step);
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Save SVG' }).click()]);
    const svg = await readFile(await file.path(), 'utf8');
    const title = /<text x="16" y="28"[^>]*>([^<]*)<\/text>/.exec(svg)[1].replace(/&apos;/g, "'");
    const shown = await page.locator(`section[data-step="${step}"] .figures > .figure-row .hm-title`).allTextContents();
    assert.ok(shown.includes(title), `${step}: export title \u201c${title}\u201d is one the page shows (${shown.join(' | ')})`);
  }
  release(opened);
});

test('a step pressed while the page scrolls to the last one\'s figure is the step chosen: a press stops the scroll where it is', async () => {
  // the stepper moves with the page until it sticks: a smooth scroll that went on between
  // press and release moved the button away, and the click then chose no step (seen in CI)
  // The page's clock counts frames here (16.7 ms each, whatever the machine's load): the glide
  // then takes its ~20 frames even when a loaded machine draws 3 frames a second (it ended
  // before any press, 10 times out of 10, under load 17, with the real clock).
  // The test holds that clock (window.__hold) once the glide has begun, so that its press always
  // comes mid-glide: under load 25 the glide once ended before all ten presses, and the test had
  // nothing to check. Held, the glide's frames all get the same time and the page stands mid-way.
  const frameClock = `(() => {
    const raf = window.requestAnimationFrame.bind(window);
    window.__frame = 0;
    window.__hold = false;
    const count = () => { if (!window.__hold) window.__frame++; raf(count); };
    raf(count);
    window.requestAnimationFrame = (cb) => raf(() => cb(window.__frame * 16.667));
  })();`;
  const { page, errors } = await h.open('', { viewport: { width: 1280, height: 560 }, init: frameClock });
  await page.evaluate(() => {
    window.__press = null;
    addEventListener('pointerdown', (e) => {
      // moving: the page scrolled within the last 2 frames (a scroll event comes every frame while it moves)
      window.__press = { step: e.target.closest('[data-step]')?.dataset.step ?? null, y: scrollY, moving: window.__frame - window.__lastScroll <= 2 };
    }, true);
    addEventListener('scroll', () => { window.__scrolled = true; window.__lastScroll = window.__frame; });
  });
  const frames = (n) => page.evaluate((k) => new Promise((r) => { const f = () => (k-- > 0 ? requestAnimationFrame(f) : r()); f(); }), n);
  let inMotion = 0;
  const pairs = [['positional', 'softmax'], ['scores', 'weighted'], ['heads', 'scaled'], ['masked', 'projections'], ['positional', 'concat'], ['scores', 'softmax'],
    ['input', 'heads'], ['weighted', 'scores'], ['concat', 'positional'], ['softmax', 'masked']];
  for (const [first, second] of pairs) {
    if (inMotion >= 2) break;
    await page.evaluate(() => { scrollTo({ top: 0, behavior: 'instant' }); window.__scrolled = false; window.__lastScroll = -1e9; window.__hold = false; });
    await page.locator(`.step-btn[data-step="${first}"]`).click();
    await waitStep(page, first);
    // hold the clock at the glide's first scroll event (or at once, if it already moved on)
    await page.waitForFunction(() => { if (window.__scrolled) window.__hold = true; return window.__scrolled; }, null, { timeout: WAIT });
    const box = await page.locator(`.step-btn[data-step="${second}"]`).boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    // the clock runs again: a glide the press did not stop would move the page in these frames
    await page.evaluate(() => { window.__hold = false; });
    await frames(10);
    const still = await page.evaluate(() => scrollY);
    await page.mouse.up();
    const press = await page.evaluate(() => window.__press);
    if (!press.moving) continue; // the scroll had ended before the press: nothing to check this time
    inMotion++;
    assert.equal(still, press.y, 'the page stays where it was pressed until the release');
    // (a busy machine may move the button away between reading its place and the press)
    if (press.step) await waitStep(page, press.step);
  }
  assert.ok(inMotion >= 1, 'at least one press came while the page was still scrolling');
  assert.deepEqual(errors, []);
});

// ALiBi on random weights, one page: the mask step shows head h's bias −m_h·|i − j| with its slope
// written out, the masked scores carry it, and the softmax reads them (its weights are the
// engine's: the row computed here from the page's own masked scores matches them).
test('ALiBi: the picker offers it; the mask step shows each head\u2019s bias and slope, its formula adds them, and the softmax reads the biased scores', async () => {
  const { page, errors } = await h.open('#pe=alibi&h=4&step=masked&mask=causal&q=5&k=2&head=1');
  await waitStep(page, 'masked');
  const options = await page.locator('select').evaluateAll((ss) => ss.flatMap((s) => [...s.options].map((o) => o.value)));
  assert.ok(options.includes('alibi'), 'the positional picker offers alibi');
  // head 2 of 4: m = 2^(−8·2/4) = 1/16
  const slope = 2 ** (-8 * 2 / 4);
  const box = page.getByTestId('alibi-bias');
  assert.ok(await box.isVisible());
  assert.match(await page.getByTestId('alibi-slope').textContent(), /Head 2\u2019s slope m = 0\.0625/);
  const formula = await page.locator('section[data-step="masked"] [data-testid="formula"]').textContent();
  assert.match(formula, /S\u2032\[5, 2\] \u2212 m\u2082\u00b7\|5 \u2212 2\|/);
  assert.match(formula, /0\.06250 \u00d7 3/);
  assert.match(formula, /m = 2\^\(\u22128\u00b72\/4\) = 0\.06250 times the distance/);
  const result = Number(await page.locator('section[data-step="masked"] [data-testid="formula-result"]').getAttribute('data-value'));
  const terms = await page.locator('section[data-step="masked"] [data-testid="formula"] .num').evaluateAll((xs) => xs.map((x) => Number(x.title.replace(/\u2212/g, '-').replace(/\s/g, ''))));
  assert.ok(Math.abs(result - (terms[0] - slope * 3)) < 1e-5, `masked S′ ${result} = S′ ${terms[0]} − 0.0625·3`);
  assert.equal(new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).get('pe'), 'alibi', 'the link holds the kind');
  // the softmax of that row, from the formula's own numbers: exp(s − max) / Σ = the engine's weight
  await page.locator('.step-btn[data-step="softmax"]').click();
  await waitStep(page, 'softmax');
  const sm = await page.locator('section[data-step="softmax"] [data-testid="formula"] .num').evaluateAll((xs) => xs.map((x) => Number(x.title.replace(/\u2212/g, '-').replace(/\s/g, ''))));
  const w = Number(await page.locator('section[data-step="softmax"] [data-testid="formula-result"]').getAttribute('data-value'));
  assert.ok(Math.abs(sm[0] - result) < 1e-5, `the softmax reads the biased score ${sm[0]} (mask step: ${result})`);
  assert.ok(Math.abs(Math.exp(sm[0] - sm[1]) / sm[2] - w) < 1e-5, `exp(${sm[0]} − ${sm[1]}) / ${sm[2]} = ${w}`);
  if (REVIEW_SHOTS) await page.screenshot({ path: join(artifactDir('steps'), 'alibi-softmax.png'), fullPage: false });
  // the scale step says the bias comes next, with the head's slope
  await page.locator('.step-btn[data-step="scaled"]').click();
  await waitStep(page, 'scaled');
  assert.match(await page.getByTestId('scaled-spread').textContent(), /ALiBi: the next step adds head 2\u2019s bias \u22120\.06250\u00b7\|i \u2212 j\|/);
  await page.locator('.step-btn[data-step="masked"]').click();
  await waitStep(page, 'masked');
  // the export's title is the page's, bias included
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Save SVG' }).click()]);
  const exported = /<text x="16" y="28"[^>]*>([^<]*)<\/text>/.exec(await readFile(await file.path(), 'utf8'))[1].replace(/&apos;/g, "'");
  assert.match(exported, / \+ bias$/, exported);
  assert.ok((await page.locator('section[data-step="masked"] .figures > .figure-row .hm-title').allTextContents()).includes(exported), exported);
  if (REVIEW_SHOTS) await page.screenshot({ path: join(artifactDir('steps'), 'alibi-masked.png'), fullPage: true });
  // the phone: the bias map scrolls inside its figure like the others, the page does not scroll sideways
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForFunction(() => innerWidth === 390);
  await page.waitForFunction(() => document.documentElement.scrollWidth <= 390, null, { timeout: WAIT });
  if (REVIEW_SHOTS) await page.locator('section[data-step="masked"]').screenshot({ path: join(artifactDir('steps'), 'alibi-masked-phone.png') });
  assert.deepEqual(errors, []);
});
