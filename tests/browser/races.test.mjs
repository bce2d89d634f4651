// The concept lab's races (web/app/concepts/race-*.js) in Chromium: the real
// page, the real race worker, the real engine. Each race runs to its finish
// line from its link and shows the claimed difference in the numbers the page
// prints; a paused race's link replays to the same step and the same numbers;
// pause stops the worker; switching demos pauses; no console errors; strict
// CSP; the phone layout. Numbers and wall times go to
// tests/artifacts/races/results.json, screenshots next to it.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { startHarness, artifactDir, pageScrollWidth } from './harness.mjs';
import { openRace, raceState, raceNumbers, waitRace, checkValues, hashParams, pressAtStep } from './race-helpers.mjs';

const PHONE = { width: 390, height: 844 };
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";
const RESULTS = {};
/** The page of each race finished above, kept open for the phone test: {demo: {page, errors}}. */
const FINISHED = {};

let h;
before(async () => { h = await startHarness(); });
after(async () => {
  writeFileSync(join(artifactDir('races'), 'results.json'), `${JSON.stringify(RESULTS, null, 2)}\n`);
  await h?.close();
});

/** Runs a race from its link to the finish and returns {numbers, state, errors, page}. */
async function finish(demo, extra = '') {
  const { page, errors } = await openRace(h, demo, `&rrun=1${extra}`);
  await waitRace(page, demo, ['done'], 300000);
  const state = await raceState(page, demo);
  const numbers = await raceNumbers(page, demo);
  RESULTS[demo] = { steps: Number(state.steps), wallMs: Number(state.elapsed), stepMs: Number(state.stepMs), numbers };
  console.log(`# race ${demo}: ${state.steps} steps in ${(state.elapsed / 1000).toFixed(1)} s (${(state.stepMs / 1000).toFixed(1)} s in steps)`, JSON.stringify(numbers));
  await page.getByTestId(`race-${demo}`).screenshot({ path: join(artifactDir('races'), `${demo}.png`) });
  // the finished race is in the URL: not running, at its finish line
  const p = await hashParams(page);
  assert.equal(p.get('rrun'), '0');
  assert.equal(p.get('rat'), state.steps);
  FINISHED[demo] = { page, errors };
  return { page, errors, state, numbers };
}

// ---- each race shows its claim ------------------------------------------------------

test('order: reversing 12 digits, no positions stays near set-guessing (< 0.3), sinusoidal positions learn it (> 0.95)', async () => {
  const { page, errors, numbers: n } = await finish('order');
  assert.ok(n['acc-0'] < 0.3, `no positions: ${n['acc-0']}`);
  assert.ok(n['acc-1'] > 0.95, `sinusoidal: ${n['acc-1']}`);
  assert.ok(n['anti-1'] > 0.5 && n['anti-0'] < 0.2, `anti-diagonal: ${n['anti-1']} vs ${n['anti-0']}`);
  assert.match(await page.getByTestId('race-order').locator('.cx-race-verdict').textContent(), /sinusoidal positions 100%/);
  assert.deepEqual(errors, []);
});

// The long race on the order demo's page finished above (no second page load), at its shortest
// finish line (100 steps; each kind's outcome there: tests/js/races.test.mjs runs the full one).
test('long: five kinds trained on 16 tokens, tested on 16, 32 and 64; learned says it has no vector past 16; the verdict reads the cells', async () => {
  const { page, errors } = FINISHED.order ?? await openRace(h, 'order');
  const card = page.getByTestId('race-long');
  await card.getByTestId('race-steps').selectOption('100');
  await card.getByTestId('race-play').click();
  await waitRace(page, 'long', ['done'], 300000);
  const state = await raceState(page, 'long');
  const n = await raceNumbers(page, 'long');
  RESULTS.long = { steps: Number(state.steps), wallMs: Number(state.elapsed), stepMs: Number(state.stepMs), numbers: n };
  console.log(`# race long: ${state.steps} steps in ${(state.elapsed / 1000).toFixed(1)} s`, JSON.stringify(n));
  await card.screenshot({ path: join(artifactDir('races'), 'long.png') });
  assert.equal(state.steps, '100');
  const p = await hashParams(page);
  assert.equal(p.get('lrun'), '0');
  assert.equal(p.get('lat'), '100');
  assert.equal(p.get('lsteps'), '100');
  // every kind at every length, as a number, except learned past 16: a note instead
  for (const L of [16, 32, 64]) {
    for (let a = 0; a < 5; a++) {
      const cell = card.getByTestId(`race-long-len${L}-${a}`);
      if (a === 2 && L > 16) {
        assert.equal(await cell.textContent(), 'no position vector past 16');
        assert.equal(n[`len${L}-${a}`], NaN);
      } else {
        assert.ok(n[`len${L}-${a}`] >= 0 && n[`len${L}-${a}`] <= 1, `len${L}-${a}: ${n[`len${L}-${a}`]}`);
      }
    }
  }
  assert.ok(n['len64-1'] < n['len16-1'] - 0.3, `sinusoidal ${n['len16-1']} → ${n['len64-1']}`);
  assert.ok(n['len64-4'] > 0.85 * n['len16-4'], `ALiBi ${n['len16-4']} → ${n['len64-4']}`);
  // the verdict states the cells' numbers as the cells print them
  const verdict = await card.locator('.cx-race-verdict').textContent();
  for (const [id, x] of Object.entries(n)) if (id.startsWith('len') && Number.isFinite(x)) assert.ok(verdict.includes(await card.getByTestId(`race-long-${id}`).textContent()), `${id} in: ${verdict}`);
  assert.match(verdict, /learned [\d.]+% at 16 tokens and no position vector past 16/);
  assert.match(verdict, /sinusoidal degrades/);
  // the accuracy-against-length chart draws the kinds it has numbers for
  assert.ok(await card.getByTestId('race-long-chart-lengths').locator('path, polyline, circle').count() > 0);
  assert.match(await card.locator('.cx-race-condition').textContent(), /Press et al\. \(2022/);
  assert.deepEqual(errors, []);
});

// The scale and context races run to their shortest finish line (150 of 150/300/600 steps): with
// their seeds every claim below already holds there, with margin (measured: scale: scaled 100%,
// unscaled 31%, entropy 0.15 vs 0.85, variance 297 vs 4.0; context: 100% vs 12.5%, some head on
// "animal" 0.73 and on "street" 0.98). Order (its verdict reads 100% only from 300 steps), masks
// (the masked copy passes 90% only after step 400) and heads (2 heads at 83% at step 400) need
// their default finish lines.
test('scale: with d_k = 64 the unscaled head saturates, its score gradient is several times smaller, and it stalls', async () => {
  const { page, errors, numbers: n } = await finish('scale', '&rsteps=150');
  assert.ok(n['acc-0'] > 0.95, `scaled: ${n['acc-0']}`);
  assert.ok(n['acc-1'] < 0.5, `not scaled: ${n['acc-1']}`);
  assert.ok(n['grad-1'] < n['grad-0'] / 3, `score gradient over steps 1–100: ${n['grad-1']} vs ${n['grad-0']}`);
  assert.ok(n['entropy-1'] < n['entropy-0'] / 4, `row entropy: ${n['entropy-1']} vs ${n['entropy-0']}`);
  assert.ok(n['variance-1'] > 10 * n['variance-0'], `score variance: ${n['variance-1']} vs ${n['variance-0']}`);
  assert.deepEqual(errors, []);
});

test('masks: the unmasked model drives its training loss below 0.1 by peeking, yet predicting without the future it is at chance', async () => {
  const { page, errors, numbers: n } = await finish('masks');
  assert.ok(n['loss-1'] < 0.1, `unmasked training loss ${n['loss-1']}`);
  assert.ok(n['future-1'] > 0.95, `unmasked, seeing the future: ${n['future-1']}`);
  assert.ok(n['causal-1'] < 0.1, `unmasked, without the future: ${n['causal-1']} (chance 1/26)`);
  assert.ok(n['causal-0'] > 0.9, `masked: ${n['causal-0']}`);
  assert.equal(n['peek-0'], 0, 'the masked model puts exactly 0 on the next letter');
  assert.ok(n['peek-1'] > 0.5, `the unmasked model looks at the next letter: ${n['peek-1']}`);
  assert.deepEqual(errors, []);
});

test('heads: the two-letter task: 1 head stays far behind, 2 heads learn it and split the letters between them', async () => {
  const { page, errors, numbers: n } = await finish('heads');
  assert.ok(n['acc-1'] > 0.95, `2 heads: ${n['acc-1']}`);
  assert.ok(n['acc-0'] < 0.6, `1 head: ${n['acc-0']}`);
  assert.ok(n['cover-1'] > 0.8, `coverage with 2 heads: ${n['cover-1']}`);
  assert.ok(n['cover-0'] <= 0.5 + 1e-6, `one head cannot cover both letters: ${n['cover-0']}`);
  // the two heads lean to different letters
  const lean = await page.evaluate(() => [0, 1].map((k) => {
    const row = document.querySelector(`[data-testid="race-heads-key-1-${k}"]`);
    const [prev, back] = [...row.querySelectorAll('td')].map((td) => Number(td.dataset.value));
    return prev - back;
  }));
  assert.ok(lean[0] * lean[1] < 0, `head leanings ${lean}`);
  RESULTS.heads.lean = lean;
  assert.deepEqual(errors, []);
});

test('context: the pronoun looks at “animal” when tired and at “street” when wide; the plain average fails on held-out sentences', async () => {
  const { page, errors, numbers: n } = await finish('context', '&rsteps=150');
  assert.ok(n['acc-0'] > 0.95, `with attention: ${n['acc-0']}`);
  assert.ok(n['acc-1'] < 0.3, `attention replaced by the plain average: ${n['acc-1']}`);
  const look = await page.evaluate(() => ({
    tired: document.querySelector('[data-testid="race-context-answer-tired"]').dataset.value,
    wide: document.querySelector('[data-testid="race-context-answer-wide"]').dataset.value,
    averageTired: document.querySelector('[data-testid="race-context-average-tired"]').dataset.value,
    averageWide: document.querySelector('[data-testid="race-context-average-wide"]').dataset.value,
    heads: [...document.querySelectorAll('[data-testid^="race-context-head-"]')].map((r) => [...r.querySelectorAll('td')].map((td) => Number(td.dataset.value))),
  }));
  assert.equal(look.tired, 'animal');
  assert.equal(look.wide, 'street');
  // the "plain average" answers are the model's under uniform attention (trace_model honours it; before, the
  // probe ignored it and showed the attention model's answers here): it does not name both nouns
  assert.ok(!(look.averageTired === 'animal' && look.averageWide === 'street'), JSON.stringify(look));
  // some head looks at "animal" for "tired" and at "street" for "wide"
  assert.ok(look.heads.some(([tiredAnimal, , , wideStreet]) => tiredAnimal > 0.5 && wideStreet > 0.5), JSON.stringify(look.heads));
  RESULTS.context.heads = look.heads;
  assert.deepEqual(errors, []);
});

// ---- pause, links, switching --------------------------------------------------------

// (600 steps, the order race's longest length: rsteps takes only its choices, 150/300/600; on a fast
// machine the default 300 ran to the finish line, 1.3 s, before the pause landed)
test('pause stops the worker; the paused link replays to the same step with exactly the same numbers; resume finishes', async () => {
  const { page, errors } = await openRace(h, 'order', '&rrun=1&rsteps=600');
  await pressAtStep(page, 'order', 'race-play', 60); // (after two checks, every 25 steps)
  await waitRace(page, 'order', ['paused']);
  const paused = await raceState(page, 'order');
  await page.waitForFunction((s) => new URLSearchParams(location.hash.slice(1)).get('rat') === s, paused.step);
  const p = await hashParams(page);
  assert.equal(p.get('rrun'), '0');
  // the step holds while paused
  await page.waitForTimeout(1500);
  assert.equal((await raceState(page, 'order')).step, paused.step);
  const numbers = await raceNumbers(page, 'order');
  const checks = await checkValues(page, 'order');
  assert.ok(checks.length >= 2, 'checks recorded');
  const url = page.url();

  const again = await h.context.newPage();
  const errors2 = [];
  again.on('console', (m) => { if (m.type() === 'error') errors2.push(m.text()); });
  again.on('pageerror', (e) => errors2.push(e.message));
  await again.goto(url);
  await waitRace(again, 'order', ['paused'], 120000);
  const replay = await raceState(again, 'order');
  assert.equal(replay.step, paused.step, 'replayed to the paused step');
  assert.deepEqual(await raceNumbers(again, 'order'), numbers, 'the same numbers');
  assert.deepEqual(await checkValues(again, 'order'), checks, 'the same numbers at every check');
  assert.equal(new URL(again.url()).hash, new URL(url).hash, 'the link is unchanged by the replay');
  // resume runs on to the finish line
  await again.getByTestId('race-order').getByTestId('race-play').click();
  await waitRace(again, 'order', ['done'], 200000);
  assert.equal((await raceState(again, 'order')).step, '600');
  assert.equal((await hashParams(again)).get('rat'), '600');
  // reset goes back to an empty race
  await again.getByTestId('race-order').getByTestId('race-reset').click();
  await waitRace(again, 'order', ['idle']);
  assert.equal((await hashParams(again)).get('rat'), '0');
  assert.deepEqual([...errors, ...errors2], []);
  await page.close();
  await again.close();
});

test('switching to another demo pauses a running race at its step; the seed and the variant are in the link', async () => {
  const { page, errors } = await openRace(h, 'heads', '&rrun=1&rh=4&rseed=3');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="race-heads"]').dataset.step) >= 20, null, { timeout: 120000 });
  assert.equal(await page.getByTestId('race-heads').getByTestId('race-variant').inputValue(), '4');
  assert.equal(await page.getByTestId('race-heads').getByTestId('race-seed').inputValue(), '3');
  assert.match(await page.getByTestId('race-heads').locator('thead').first().textContent(), /4 heads \(d_k = 8 each\)/);
  await page.locator('.cx-nav-link[data-demo="order"]').click();
  await waitRace(page, 'heads', ['paused'], 30000);
  const at = (await raceState(page, 'heads')).step;
  await page.waitForTimeout(1000);
  assert.equal((await raceState(page, 'heads')).step, at, 'no steps while hidden');
  await page.locator('.cx-nav-link[data-demo="heads"]').click();
  await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).get('demo') === 'heads');
  const p = await hashParams(page);
  assert.equal(p.get('rat'), at);
  assert.equal(p.get('rrun'), '0');
  assert.equal(p.get('rh'), '4');
  assert.equal(p.get('rseed'), '3');
  assert.deepEqual(errors, []);
  await page.close();
});

test('reset while running discards the run: the card goes back to step 0 and stays there; start runs it again', async () => {
  const { page, errors } = await openRace(h, 'context');
  const card = page.getByTestId('race-context');
  assert.equal((await raceState(page, 'context')).state, 'idle');
  await card.getByTestId('race-play').click();
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="race-context"]').dataset.step) >= 30, null, { timeout: 120000 });
  assert.equal((await hashParams(page)).get('rrun'), '1');
  await card.getByTestId('race-reset').click();
  await waitRace(page, 'context', ['idle']);
  await page.waitForTimeout(1200); // messages still in flight from the dropped run are ignored
  const s = await raceState(page, 'context');
  assert.equal(s.state, 'idle');
  assert.equal(s.step, '0');
  assert.deepEqual(await checkValues(page, 'context'), []);
  const p = await hashParams(page);
  assert.equal(p.get('rrun'), '0');
  assert.equal(p.get('rat'), '0');
  await card.getByTestId('race-play').click();
  await pressAtStep(page, 'context', 'race-play', 25);
  await waitRace(page, 'context', ['paused']);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a bad race setting in the link falls back to its default with a notice', async () => {
  const { page, errors } = await openRace(h, 'order', '&rsteps=7&rpe=banana&rat=-1', { wait: false });
  const notice = page.getByTestId('message-notice');
  await notice.waitFor();
  const text = await notice.textContent();
  assert.match(text, /race length “7” must be one of 150, 300, 600/);
  assert.match(text, /positions of the second model “banana”/);
  assert.match(text, /race step “-1”/);
  await waitRace(page, 'order', ['idle']);
  assert.equal(await page.getByTestId('race-order').getByTestId('race-steps').inputValue(), '300');
  assert.deepEqual(errors, []);
  await page.close();
});

test('races run under the strict Content-Security-Policy, worker included', async () => {
  const { page, errors } = await openRace(h, 'context', '&rat=50', {
    before: (p) => p.route('**/*', async (route) => {
      const response = await route.fetch();
      await route.fulfill({ response, headers: { ...response.headers(), 'content-security-policy': CSP } });
    }),
  });
  await waitRace(page, 'context', ['paused'], 120000);
  assert.equal((await raceState(page, 'context')).step, '50');
  assert.deepEqual(errors, [], 'no CSP violation or error');
  await page.close();
});

/** Resolves after the page has drawn two more frames (a resize's ResizeObserver → rAF redraw included). */
const nextFrames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

test('phone (390 px) light and dark, desktop dark: every race card fits without sideways scroll', async () => {
  for (const demo of ['order', 'scale', 'masks', 'heads', 'context']) {
    // the page of the race finished above (no second run), shown three ways: narrowed to the phone in
    // light, then the system scheme turned dark, then widened to the desktop (its desktop light shot is above)
    assert.ok(FINISHED[demo], `the ${demo} race finished above`);
    const { page, errors } = FINISHED[demo];
    await page.bringToFront(); // (a tab behind the newest one draws about one frame a second)
    for (const [scheme, viewport] of [['light', PHONE], ['dark', PHONE], ['dark', { width: 1280, height: 900 }]]) {
      if (scheme === 'dark' && viewport === PHONE) await page.emulateMedia({ colorScheme: 'dark' });
      else await page.setViewportSize(viewport);
      await page.waitForFunction((wd) => innerWidth === wd, viewport.width);
      await nextFrames(page);
      const w = await pageScrollWidth(page);
      assert.ok(w <= viewport.width, `${demo} ${scheme}: scrollWidth ${w} > ${viewport.width}`);
      await page.getByTestId(`race-${demo}`).screenshot({ path: join(artifactDir('races'), `${demo}-${viewport === PHONE ? 'phone' : 'desktop'}-${scheme}.png`) });
      // the order demo also holds the long race (finished above on this page)
      if (demo === 'order' && RESULTS.long) await page.getByTestId('race-long').screenshot({ path: join(artifactDir('races'), `long-${viewport === PHONE ? 'phone' : 'desktop'}-${scheme}.png`) });
      assert.deepEqual(errors, [], `${demo} ${scheme}`);
    }
    await page.close();
  }
});
