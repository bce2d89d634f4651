import { WAIT } from './harness.mjs';
// Helpers for the races' browser tests (races.test.mjs): open a demo with its
// race, wait on the race card's test hooks (data-state, data-step of
// [data-testid="race-<demo>"]), and read the numbers the page prints.

/** Opens concepts.html#demo=<demo><extra> and waits until the race card is drawn. */
export async function openRace(h, demo, extra = '', options = {}) {
  const opened = await h.open(`concepts.html#demo=${demo}${extra}`, { ...options, wait: false, model: null });
  await opened.page.waitForFunction((d) => document.querySelector(`[data-testid="race-${d}"]`)?.dataset.state, demo, { timeout: WAIT });
  return opened;
}

/** The race card's hooks: {state, step, steps, elapsed, stepMs, key}. */
export function raceState(page, demo) {
  return page.evaluate((d) => ({ ...document.querySelector(`[data-testid="race-${d}"]`).dataset }), demo);
}

/** Waits until the race is in one of the states (idle, running, catching, paused, done, error). */
export async function waitRace(page, demo, states, timeout = 60000) {
  await page.waitForFunction(([d, s]) => {
    const c = document.querySelector(`[data-testid="race-${d}"]`);
    if (c?.dataset.state === 'error') throw new Error(`race ${d}: ${c.querySelector('.cx-race-status').textContent}`);
    return c && s.includes(c.dataset.state);
  }, [demo, states], { timeout });
}

/**
 * Presses the card's button (race-play, race-reset) from inside the page in the same poll that sees the
 * race at minStep or later. A race of a few hundred steps can run to its finish within a second on a fast
 * machine, between a test seeing the step and a Playwright click landing; pressed here, the press reaches
 * the worker within one chunk. (The button's own click handler runs, as for a person's click.)
 */
export async function pressAtStep(page, demo, testid, minStep, timeout = 120000) {
  await page.waitForFunction(([d, t, min]) => {
    const card = document.querySelector(`[data-testid="race-${d}"]`);
    if (!card || Number(card.dataset.step) < min) return false;
    card.querySelector(`[data-testid="${t}"]`).click();
    return true;
  }, [demo, testid, minStep], { timeout });
}

/** The results table as {"acc-0": x, "acc-1": y, …} (exact values from data-value). */
export function raceNumbers(page, demo) {
  return page.evaluate((d) => {
    const out = {};
    for (const cell of document.querySelectorAll(`[data-testid="race-${d}-results"] [data-value]`)) {
      out[cell.dataset.testid.slice(`race-${d}-`.length)] = Number(cell.dataset.value);
    }
    return out;
  }, demo);
}

/** Every number of the checks table (the numbers behind the curves), row by row. */
export function checkValues(page, demo) {
  return page.evaluate((d) => [...document.querySelectorAll(`[data-testid="race-${d}-checks"] tbody tr`)]
    .map((tr) => [tr.querySelector('th').textContent, ...[...tr.querySelectorAll('td')].map((td) => td.dataset.value)]), demo);
}

/** The URL hash's parameters once the page has written its state. */
export async function hashParams(page) {
  await page.waitForFunction(() => !document.body.dataset.urlPending, null, { timeout: WAIT });
  return page.evaluate(() => Object.fromEntries(new URLSearchParams(location.hash.slice(1)))).then((o) => new URLSearchParams(o));
}
