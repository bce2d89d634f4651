// The browser harness itself: its waits must not depend on the page's animation frames,
// which a renderer starved of CPU may not run for seconds (launchBrowser says why).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { startHarness, waitStep, WAIT } from './harness.mjs';

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

test('waits poll on a timer: a change on a page whose animation frames never come is still seen', async () => {
  const page = await h.context.newPage();
  await page.addInitScript(() => { window.requestAnimationFrame = () => 0; });
  await page.goto(`${h.url}#model=random`);
  await page.evaluate(() => { setTimeout(() => { window.__changed = true; }, 100); });
  await page.waitForFunction(() => window.__changed === true, null, { timeout: 5000 });
  // the step wait, on the playground: a click handled after the wait's first check
  await page.waitForFunction(() => document.querySelector('.ap')?.dataset.state === 'ready', null, { timeout: WAIT });
  await page.evaluate(() => { setTimeout(() => document.querySelector('.step-btn[data-step="softmax"]').click(), 100); });
  await waitStep(page, 'softmax');
  await page.close();
});

test('a step wait that times out says what the page shows instead', async () => {
  const { page } = await h.open('#step=scores');
  await page.evaluate(() => { document.querySelector('[data-testid="panel"]').dataset.rendered = 'never'; });
  await assert.rejects(waitStepBriefly(page, 'nonexistent'), /waiting for step nonexistent; the page shows .*"rendered":"never"/);
  await page.close();
});

/** waitStep with a short timeout (its message is the point, not its patience). */
async function waitStepBriefly(page, step) {
  return waitStep(page, step, { timeout: 500 });
}

// launchBrowser passes its own --disable-features (DISABLED_FEATURES), which replaces playwright-core's:
// every feature playwright-core switches off must still be off, and the omnibox popup's WebUI pages
// (a renderer's work at every launch, no page shows them) must not load.
test('the browser runs with every feature playwright-core switches off, and without the omnibox popup pages', async () => {
  const lists = browserSwitches(h.profile, '--disable-features=');
  assert.ok(lists.length >= 2, `the browser's command line has playwright-core's --disable-features and ours: ${lists.length}`);
  const effective = new Set(lists.at(-1).split(','));  // Chromium reads the last one
  const missing = lists.slice(0, -1).flatMap((l) => l.split(',')).filter((f) => f && !effective.has(f));
  assert.deepEqual(missing, [], 'features playwright-core switches off that DISABLED_FEATURES (harness.mjs) lacks: add them');
  const page = await h.context.newPage();
  const cdp = await h.context.newCDPSession(page);
  const { targetInfos } = await cdp.send('Target.getTargets');
  const shown = targetInfos.map((t) => t.url).filter((u) => /omnibox-popup|top-chrome/.test(u));
  assert.deepEqual(shown, [], 'top-chrome WebUI pages loaded');
  await cdp.detach();
  await page.close();
});

/** The values of `prefix` switches on the command line of the browser process that uses `profile`, in order. */
function browserSwitches(profile, prefix) {
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let args;
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    // the browser process: its arguments one by one (child processes rewrite theirs into one string), no --type
    if (args.includes(`--user-data-dir=${profile}`) && !args.some((a) => a.startsWith('--type='))) {
      return args.filter((a) => a.startsWith(prefix)).map((a) => a.slice(prefix.length));
    }
  }
  throw new Error(`no browser process with --user-data-dir=${profile}`);
}
