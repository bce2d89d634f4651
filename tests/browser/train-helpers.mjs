// Helpers for the training lab's browser tests (train.test.mjs): open the lab,
// train from the page, and read its numbers from the test hooks of
// <main id="lab"> (see web/app/train/main.js) and the grid's canvases.

/** How long a wait for training may take: generous, since the machine may be busy (run_all.sh runs
 *  two browser files at a time; a 600-step run took over 120 s at a load average of 40). */
export const TRAIN_TIMEOUT = 300000;

/** The lab's test hooks: {state, step, running, catching, final, heldout, ablated, ...}. */
export function labState(page) {
  return page.evaluate(() => ({ ...document.getElementById('lab').dataset }));
}

/** Waits until the lab has started, its model reported the final evaluation of a pause, and the URL holds it. */
export async function waitIdle(page, timeout = TRAIN_TIMEOUT) {
  await page.waitForFunction(() => {
    const d = document.getElementById('lab')?.dataset;
    return d && d.state === 'ready' && d.running === '0' && d.catching === '0' && d.final === '1' && !d.urlPending;
  }, null, { timeout });
}

/** Opens train.html#hash and waits until it is idle (a link with a step has caught up). */
export async function openLab(h, hash = '', options = {}) {
  // model: null: open the path exactly as given (the harness may otherwise prefix the hash with model=)
  const opened = await h.open(`train.html${hash}`, { ...options, wait: false, model: null });
  await waitIdle(opened.page, options.timeout ?? TRAIN_TIMEOUT);
  return opened;
}

/** Turns "Stop at" off, presses play, waits until the step count reaches n, pauses, waits for the final evaluation. */
export async function trainTo(page, n, timeout = TRAIN_TIMEOUT) {
  // to step n exactly as asked: the lab's own "Stop at" rule (a plateau by default) is turned off
  const stopAt = page.getByTestId('stop-at');
  if (await stopAt.count() && await stopAt.inputValue() !== 'off') {
    await stopAt.selectOption('off');
    await waitIdle(page, timeout);
  }
  await page.getByTestId('play').click();
  await page.waitForFunction((x) => Number(document.getElementById('lab').dataset.step) >= x, n, { timeout });
  await page.getByTestId('play').click();
  await waitIdle(page, timeout);
}

/** Digest (FNV-1a of the float bytes) of every head's map, keyed "l-h". */
export function gridDigests(page) {
  return page.evaluate(() => Object.fromEntries([...document.querySelectorAll('[data-testid^="head-"]')].map((f) => [`${f.dataset.layer}-${f.dataset.head}`, f.querySelector('canvas').dataset.digest])));
}

/** Probe and held-out answer-key scores of one head: {probe: {key: x}, heldout: {key: x}}. */
export function headScores(page, layer, head) {
  return page.evaluate(([l, h]) => {
    const root = document.querySelector(`[data-testid="scores-${l}-${h}"]`);
    const probe = {};
    const heldout = {};
    for (const s of root.querySelectorAll('.tr-score')) {
      probe[s.dataset.key] = Number(s.dataset.value);
      const held = s.querySelector('.tr-score-held');
      if (held && held.dataset.value !== undefined) heldout[s.dataset.key] = Number(held.dataset.value);
    }
    return { probe, heldout };
  }, [layer, head]);
}

/** Every head's scores: [{layer, head, probe, heldout}]. */
export async function allHeadScores(page) {
  const ids = await page.evaluate(() => [...document.querySelectorAll('[data-testid^="head-"]')].map((f) => [Number(f.dataset.layer), Number(f.dataset.head)]));
  const out = [];
  for (const [layer, head] of ids) out.push({ layer, head, ...(await headScores(page, layer, head)) });
  return out;
}

/** The predictions row of the probe: [{position, correct (1 | 0 | undefined), text}]. */
export function predictions(page) {
  return page.evaluate(() => [...document.querySelectorAll('[data-testid="predictions"] li')].map((li) => ({
    position: Number(li.dataset.position), correct: li.dataset.correct, text: li.querySelector('.tr-pred-out').textContent,
  })));
}

/** Hovers cell (i, j) of head (l, h) and returns the tooltip's exact value. */
export async function hoverWeight(page, l, h, i, j) {
  const canvas = page.locator(`[data-testid="head-${l}-${h}"] canvas`);
  const g = await canvas.evaluate((c) => ({ x0: Number(c.dataset.x0), cell: Number(c.dataset.cell) }));
  await canvas.hover({ position: { x: g.x0 + (j + 0.5) * g.cell, y: g.x0 + (i + 0.5) * g.cell } });
  await page.getByTestId('tooltip').waitFor();
  return Number(await page.getByTestId('tooltip-value').getAttribute('data-value'));
}
