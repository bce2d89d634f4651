// Measures the training lab in headless Chromium (not a test: prints numbers
// for the notes and docs/performance.md; nothing here asserts a time).
//   node tests/browser/train-measure.mjs [--tasks reverse,induction] [--long 10000]
// For each task's defaults: steps/s while training from the page (after a
// warm-up), the time from ▶ to a held-out accuracy of 90% (live evaluation on
// 128 sequences) and main-thread long tasks (> 50 ms) while training; then the
// timeline's memory after --long steps of reverse.

import { startHarness } from './harness.mjs';
import { waitIdle } from './train-helpers.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const Q = '';
const TASKS = opt('tasks', 'copy,reverse,sort,previous-token,induction,recall,brackets,coreference,text').split(',');
const LONG = Number(opt('long', '10000'));
const BUDGET_MS = Number(opt('budget', '60000'));

const h = await startHarness();
const watch = () => {
  window.__longTasks = [];
  new PerformanceObserver((list) => { for (const e of list.getEntries()) if (e.startTime >= (window.__t0 ?? Infinity)) window.__longTasks.push(e.duration); }).observe({ type: 'longtask', buffered: true });
};
const rows = [];
try {
  for (const task of TASKS) {
    const { page } = await h.open(`train.html${Q}#task=${task}`, { wait: false, init: watch, model: null });
    await waitIdle(page);
    await page.evaluate(() => {
      window.__t90 = null;
      const lab = document.getElementById('lab');
      new MutationObserver(() => {
        if (window.__t90 == null && Number(lab.dataset.heldout) >= 0.9 && lab.dataset.running === '1') window.__t90 = performance.now() - window.__t0;
      }).observe(lab, { attributes: true });
      window.__longTasks = [];
      window.__t0 = performance.now();
    });
    await page.getByTestId('play').click();
    // steps/s: the worker's own rate after 3 s of training
    await page.waitForFunction(() => performance.now() - window.__t0 > 3000, null, { polling: 250 });
    const sps = Number(await page.evaluate(() => document.getElementById('lab').dataset.stepsPerSecond));
    await page.waitForFunction((b) => window.__t90 != null || performance.now() - window.__t0 > b, BUDGET_MS, { polling: 250, timeout: BUDGET_MS + 10000 });
    const r = await page.evaluate(() => ({ t90: window.__t90, step: Number(document.getElementById('lab').dataset.step), long: window.__longTasks.slice(), heldout: Number(document.getElementById('lab').dataset.heldout) }));
    await page.getByTestId('play').click();
    await waitIdle(page);
    rows.push({ task, stepsPerSecond: Math.round(sps), msTo90: r.t90 == null ? null : Math.round(r.t90), stepAtEnd: r.step, heldout: r.heldout, longTasksOver50ms: r.long.length, maxLongTaskMs: r.long.length ? Math.round(Math.max(...r.long)) : 0 });
    console.log(JSON.stringify(rows[rows.length - 1]));
    await page.close();
  }
  if (LONG > 0) {
    const { page } = await h.open(`train.html${Q}#task=reverse`, { wait: false, init: watch, model: null });
    await waitIdle(page);
    const t0 = Date.now();
    await page.evaluate(() => { window.__t0 = performance.now(); });
    await page.getByTestId('play').click();
    await page.waitForFunction((n) => Number(document.getElementById('lab').dataset.step) >= n, LONG, { timeout: 900000, polling: 500 });
    await page.getByTestId('play').click();
    await waitIdle(page);
    const m = await page.evaluate(() => ({ step: Number(document.getElementById('lab').dataset.step), bytes: Number(document.getElementById('lab').dataset.timelineBytes), text: document.querySelector('[data-testid="timeline-memory"]').textContent, long: window.__longTasks.length, heap: performance.memory?.usedJSHeapSize }));
    console.log(JSON.stringify({ steps: m.step, seconds: (Date.now() - t0) / 1000, timelineBytes: m.bytes, timeline: m.text, longTasksOver50ms: m.long, jsHeapBytes: m.heap }));
  }
} finally {
  await h.close();
}
