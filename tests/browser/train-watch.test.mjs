// The training lab's watchability (issue #24 item 6) in Chromium: training stops by
// itself at a plateau or a goal and says why. Waits on the page's state, never on time.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startHarness, artifactDir, WAIT } from './harness.mjs';
import { labState, waitIdle, openLab, gridDigests } from './train-helpers.mjs';

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

test('reverse stops by itself once held-out accuracy is 100%, says at which step and why, and the link keeps that step', async () => {
  const { page, errors } = await openLab(h, '#task=reverse');
  assert.equal(await page.getByTestId('stop-at').inputValue(), 'plateau', 'on by default');
  assert.equal(await page.getByTestId('stop-note').isHidden(), true);
  await page.getByTestId('play').click();
  await page.waitForFunction(() => document.getElementById('lab').dataset.stopped === '1');
  await waitIdle(page);
  const s = await labState(page);
  const note = await page.getByTestId('stop-note').textContent();
  assert.equal(note, `Stopped at step ${Number(s.step).toLocaleString('en')}: held-out accuracy 100% for the last 5 checks.`);
  assert.equal(Number(s.heldout), 1, 'the bigger evaluation after the stop agrees');
  const hash = await page.evaluate(() => location.hash);
  assert.match(hash, new RegExp(`step=${s.step}(&|$)`));
  assert.doesNotMatch(hash, /stop=/, 'the default is not written');
  await page.screenshot({ path: join(artifactDir('train'), 'stopped.png') });
  // ▶ again clears the note; "never" goes into the link
  await page.getByTestId('stop-at').selectOption('off');
  await page.waitForFunction(() => /[#&]stop=off(&|$)/.test(location.hash));
  await page.getByTestId('play').click();
  await page.waitForFunction(() => document.querySelector('[data-testid="stop-note"]').hidden);
  await page.getByTestId('play').click();
  await waitIdle(page);
  assert.equal((await labState(page)).stopped, '0');
  assert.deepEqual(errors, []);
});

// 84 words: too few for the text task's default size 32 (321 words), enough for size 8 (81)
const SHORT_TEXT = Array.from({ length: 84 }, (_, i) => ['the', 'cat', 'sat', 'on', 'a', 'mat', 'and', 'then', 'it', 'slept', 'there', 'all', 'day'][i % 13]).join(' ');

test('own text too short: said beside the text field in the form\u2019s words, the centre says why, and the fix button trains', async () => {
  const { page, errors } = await openLab(h, '#task=text');
  await page.getByTestId('corpus').fill(SHORT_TEXT);
  await page.getByTestId('corpus-apply').click();
  await page.getByTestId('corpus-short').waitFor();
  assert.equal(await page.getByTestId('corpus-short-text').textContent(),
    'Task size 32 (the default) needs at least 321 words; this text has 84: paste more text or choose a smaller task size.');
  assert.equal(await page.getByTestId('corpus-short-fix').textContent(), 'Use task size 8');
  assert.equal(await page.locator('[data-testid="message-error"]').count(), 0, 'no error at the top of the page');
  assert.match(await page.getByTestId('no-model').textContent(), /too short for this task size/);
  assert.equal(await page.getByTestId('no-model').isVisible(), true);
  await page.getByTestId('corpus-short').screenshot({ path: join(artifactDir('train'), 'text-short.png') });
  await page.getByTestId('corpus-short-fix').click();
  await waitIdle(page);
  await page.waitForFunction(() => /[#&]n=8(&|$)/.test(location.hash));
  assert.equal(await page.getByTestId('corpus-short').isHidden(), true);
  assert.equal(await page.getByTestId('length').inputValue(), '8');
  assert.equal(await page.getByTestId('play').isDisabled(), false, 'a model of size 8 trains on the text');
  assert.deepEqual(errors, []);
});

test('overfitting: a word model on 200 random words says so beside the metrics once held-out loss rises while training loss falls', async () => {
  const words = ['the', 'cat', 'sat', 'on', 'a', 'mat', 'and', 'then', 'it', 'slept', 'there', 'all', 'day', 'while', 'dog', 'ran', 'far', 'away'];
  let x = 7;
  const text = Array.from({ length: 200 }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return words[x % words.length];
  }).join(' ');
  const { page, errors } = await openLab(h, '#task=text&n=8&stop=off');
  await page.getByTestId('corpus').fill(text);
  await page.getByTestId('corpus-apply').click();
  await waitIdle(page);
  assert.equal(await page.getByTestId('overfit').isHidden(), true, 'not before training');
  await page.getByTestId('play').click();
  // the note as the page shows it, read in the same frame it is seen: it is live (training goes on,
  // stop=off) and may be gone again at the next check, which under load came before a second read
  const shown = await page.waitForFunction(() => {
    const note = document.querySelector('[data-testid="overfit"]');
    return note && !note.hidden && note.textContent ? note.textContent : null;
  }, null, { timeout: WAIT });
  assert.match(await shown.jsonValue(), /^Overfitting: held-out loss rose [\d.]+ \u2192 [\d.]+ over the last 5 checks while training loss fell [\d.]+ \u2192 [\d.]+\.$/);
  await page.getByTestId('play').click();
  await waitIdle(page);
  await page.getByTestId('reset').click();
  await waitIdle(page);
  assert.equal(await page.getByTestId('overfit').isHidden(), true, 'a reset starts a new run');
  assert.deepEqual(errors, []);
});

test('speed "watchable": the worker moves at most 3 steps per report; every step the page shows is one a report carried; the choice is in the link', async () => {
  // every report the worker posts, as it arrives (the page draws once per frame, so a busy
  // machine may show two reports in one frame: the pace is a property of the reports)
  const init = () => {
    const Base = window.Worker;
    window.reportSteps = [];
    window.anySteps = [];
    window.Worker = class extends Base {
      constructor(...args) {
        super(...args);
        this.addEventListener('message', (e) => {
          if (e.data?.type === 'progress') window.reportSteps.push(e.data.step);
          if (Number.isInteger(e.data?.step)) window.anySteps.push(e.data.step);
        });
      }
    };
  };
  const { page, errors } = await openLab(h, '#task=reverse&stop=off', { init });
  assert.equal(await page.getByTestId('speed').inputValue(), 'full');
  await page.getByTestId('speed').selectOption('watch');
  await page.waitForFunction(() => /[#&]speed=watch(&|$)/.test(location.hash));
  await page.evaluate(() => {
    window.reportSteps.length = 0;
    window.seenSteps = [];
    new MutationObserver(() => window.seenSteps.push(Number(document.getElementById('lab').dataset.step)))
      .observe(document.getElementById('lab'), { attributes: true, attributeFilter: ['data-step'] });
  });
  await page.getByTestId('play').click();
  await page.waitForFunction(() => window.reportSteps.length >= 12);
  await page.getByTestId('play').click();
  await waitIdle(page);
  const { reports, seen, any } = await page.evaluate(() => ({ reports: window.reportSteps, seen: window.seenSteps, any: window.anySteps }));
  const gaps = reports.slice(1).map((x, i) => x - reports[i]);
  assert.ok(reports[0] <= 3 && gaps.every((g) => g >= 0 && g <= 3), `at most 3 steps between reports: ${reports.join(' ')}`);
  assert.ok(seen.every((x) => x === 0 || any.includes(x)), `shown ${seen.join(' ')}; reported ${any.join(' ')}`);
  // a link with speed=watch opens watchable
  const again = await openLab(h, '#task=reverse&speed=watch');
  assert.equal(await again.page.getByTestId('speed').inputValue(), 'watch');
  assert.deepEqual(errors, []);
  assert.deepEqual(again.errors, []);
});

test('a 2-layer model shows both layers\u2019 maps on the first screen at 1280\u00d7900 (layers side by side); the phone stacks them without sideways scroll', async () => {
  const { page, errors } = await openLab(h, '#task=induction&L=2&ln=0', { viewport: { width: 1280, height: 900 } });
  const maps = await page.evaluate(() => [...document.querySelectorAll('[data-testid^="head-"] canvas')].map((c) => c.getBoundingClientRect().bottom));
  assert.equal(maps.length, 4);
  assert.ok(maps.every((b) => b <= 900), `map bottoms ${maps.map(Math.round).join(', ')}`);
  await page.screenshot({ path: join(artifactDir('train'), 'two-layers-desktop.png') });
  const phone = await openLab(h, '#task=induction&L=2&ln=0', { viewport: { width: 390, height: 844 } });
  const r = await phone.page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    tops: [...document.querySelectorAll('[data-testid^="head-"] canvas')].map((c) => c.getBoundingClientRect().top),
  }));
  assert.ok(r.scroll <= 390, `scrollWidth ${r.scroll}`);
  assert.ok(r.tops[2] > r.tops[0], 'layer 2 below layer 1 on the phone');
  await phone.page.screenshot({ path: join(artifactDir('train'), 'two-layers-phone.png'), fullPage: true });
  assert.deepEqual(errors, []);
  assert.deepEqual(phone.errors, []);
});

test('Back from "Open in playground" restores the session from the stored checkpoint instead of retraining from step 0', async () => {
  const { page, errors } = await openLab(h, '#task=reverse&stop=off&seed=11');
  await page.getByTestId('play').click();
  await page.waitForFunction(() => Number(document.getElementById('lab').dataset.step) >= 30);
  await page.getByTestId('play').click();
  await waitIdle(page);
  const before = await labState(page);
  const digests = await gridDigests(page);
  await Promise.all([page.waitForURL(/index\.html#/), page.getByTestId('open-playground').click()]);
  await page.goBack();
  await page.waitForFunction(() => document.getElementById('lab')?.dataset.restored !== undefined);
  await waitIdle(page);
  const after = await labState(page);
  assert.equal(after.restored, before.step, 'restored at the step it left');
  assert.equal(after.step, before.step);
  assert.deepEqual(await gridDigests(page), digests, 'the same weights');
  assert.match(await page.getByTestId('message-notice').first().textContent(), new RegExp(`Back at step ${Number(before.step).toLocaleString('en')}:.*nothing was retrained`, 's'));
  // the same link in a new tab restores too; a link at another step retrains as before
  const tab = await openLab(h, `#${new URL(page.url()).hash.slice(1)}`);
  assert.equal((await labState(tab.page)).restored, before.step);
  const other = await openLab(h, '#task=reverse&stop=off&seed=11&step=7');
  assert.equal((await labState(other.page)).restored, undefined);
  assert.equal((await labState(other.page)).step, '7');
  assert.deepEqual(errors, []);
  assert.deepEqual(tab.errors, []);
  assert.deepEqual(other.errors, []);
});
