// Shared set-up for the browser tests: a static server for web/ on
// 127.0.0.1 (a free port), Debian's Chromium driven by playwright-core, and
// a page that records every console error, page error and dialog.
//
//   const h = await startHarness();
//   const { page, errors } = await h.open('#step=softmax');
//   await h.close();

import { spawn } from 'node:child_process';
import { rmSync, mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { STEPS } from '../../web/app/playground/steps.js';
import { tempDir } from '../js/helpers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(here, '..', '..');
export const WEB = join(ROOT, 'web');
export const ARTIFACTS = join(ROOT, 'tests', 'artifacts');
/** The playground's step ids, from its registry (web/app/playground/steps.js). */
export { STEPS };

/** Starts `python3 -m http.server` on port 0 (serving `directory`, web/ by default) and reads the port it printed. */
export function startServer(directory = WEB) {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-u', '-m', 'http.server', '--bind', '127.0.0.1', '--directory', directory, '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`http.server did not start: ${out}`)), 15000);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /port (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: `http://127.0.0.1:${m[1]}/`, close: () => new Promise((r) => { child.once('exit', r); child.kill(); }) });
      }
    });
    child.stderr.on('data', () => {}); // request log
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`http.server exited (${code}): ${out}`));
    });
  });
}

/**
 * How long a test waits for the page before calling it stuck. A bound on a hang, never on
 * speed: work that takes 5 s alone takes 30 s when the full run shares 2 cores with other
 * jobs, so every wait for work uses this one generous bound (short waits that a test expects
 * to fail keep their own).
 */
export const WAIT = 180000;

/**
 * Screenshots for a person to look at beyond what the tests assert: the phone passes in the dark
 * scheme (the layout is the light one's, checked; the dark palette is checked on the desktop) and
 * pages trained far enough to show their patterns. The test command leaves them out (its time is
 * the budget); `ATTN_REVIEW_SHOTS=1 node --test --test-concurrency=1 tests/browser/<file>` takes them
 * (docs/testing.md).
 */
export const REVIEW_SHOTS = process.env.ATTN_REVIEW_SHOTS === '1';

/** Makes page.waitForFunction poll every 20 ms by default (launchBrowser says why). */
const timerPolled = new WeakSet();
export function withTimerPolling(page) {
  if (timerPolled.has(page)) return page;
  const wait = page.waitForFunction.bind(page);
  page.waitForFunction = (fn, arg, options = {}) => wait(fn, arg, { polling: 20, ...options });
  timerPolled.add(page);
  return page;
}

/**
 * The Chromium features playwright-core 1.65 switches off (its own --disable-features, which a
 * second --disable-features replaces rather than extends: Chromium reads the last one), and two
 * more: the omnibox popup's WebUI pages (chrome://omnibox-popup.top-chrome), which headless
 * Chromium 156 loads into a renderer of their own at every launch although no page can show them:
 * about 2.5 CPU s a launch, a fifth of a short test file's Chromium time (measured on
 * export.test.mjs). harness.test.mjs checks that the browser runs with every feature of
 * playwright-core's list switched off and without those pages.
 */
export const DISABLED_FEATURES = [
  'AvoidUnnecessaryBeforeUnloadCheckSync', 'DestroyProfileOnBrowserClose', 'HttpsUpgrades', 'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay', 'MediaRouter', 'PaintHolding', 'ThirdPartyStoragePartitioning', 'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin', 'OptimizationHints', 'NetworkTimeServiceQuerying', 'AimEnabled', 'PreconnectToSearch',
  'msForceBrowserSignIn', 'msEdgeUpdateLaunchServicesPreferredVersion',
  'WebUIOmniboxPopup', 'WebUIOmniboxAimPopup',
];
/** Every test browser's arguments (launchBrowser's and any other launch's). */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', `--disable-features=${DISABLED_FEATURES.join(',')}`];
/** launchBrowser's viewport: a page's size unless a test asks for another. */
export const DESKTOP_VIEWPORT = { width: 1280, height: 900 };

/**
 * One page handed from test to test, for a file whose tests each open a page on a link: a test done
 * with its page gives it back (`release(opened)`), and the next `take(hash, options)` loads its own
 * link into it as a new document (`load(page, hash, options)`) at options.viewport (default
 * DESKTOP_VIEWPORT) in options.colorScheme (default light), the mouse moved to 0, 0, and every list
 * the page records (errors, dialogs, requests) emptied: the test that released it asserted them.
 * With none released, `open(hash, options)` makes a new page. About half a new page's CPU.
 */
export function pageRelay({ open, load }) {
  let spare = null;
  return {
    release(opened) { spare = opened; },
    async take(hash = '', options = {}) {
      if (!spare || spare.page.isClosed()) return open(hash, options);
      const opened = spare;
      spare = null;
      for (const list of Object.values(opened)) if (Array.isArray(list)) list.length = 0;
      await opened.page.bringToFront();
      await opened.page.mouse.move(0, 0);
      await opened.page.setViewportSize(options.viewport ?? DESKTOP_VIEWPORT);
      await opened.page.emulateMedia({ colorScheme: options.colorScheme ?? 'light' });
      await load(opened.page, hash, options);
      return opened;
    },
  };
}

export const CHROMIUM_PATH = process.env.CHROMIUM ?? '/usr/bin/chromium';

export async function launchBrowser() {
  const profile = tempDir('ap-chromium-');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    viewport: DESKTOP_VIEWPORT,
    args: CHROMIUM_ARGS,
  });
  // Every page's waitForFunction polls on a 20 ms timer unless a test asks otherwise.
  // Playwright's default polls on requestAnimationFrame, which a renderer starved of
  // frames under load may not run for seconds: the predicate is then true on the page
  // but never evaluated again (a known flake class; our step waits timed out at 30 s,
  // once per full run, each test passing alone).
  context.setDefaultTimeout(WAIT);
  const newPage = context.newPage.bind(context);
  context.newPage = async (...args) => withTimerPolling(await newPage(...args));
  for (const page of context.pages()) withTimerPolling(page);
  return {
    context,
    profile,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Loads `url` into an open page as a new document, even when only its hash differs from the
 * page's URL (a change of the hash alone would not load the page again): by about:blank first.
 * The page keeps its listeners, viewport, scheme and init scripts; about half a new page's CPU.
 */
export async function gotoAnew(page, url) {
  await page.goto('about:blank');
  await page.goto(url);
}

/** `hash` with model=<model> first when it names no model (open()'s `model` option); model null: as given. */
function withModel(hash, model) {
  if (!model || /[#&]model=/.test(hash)) return hash;
  return hash.startsWith('#') && hash.length > 1 ? `#model=${model}&${hash.slice(1)}` : `#model=${model}`;
}

/** Server + browser; open(hash, options) gives a fresh page on the playground, reload(page, hash) loads another in it. */
export async function startHarness() {
  const server = await startServer();
  const browser = await launchBrowser();
  const pages = [];
  return {
    url: server.url,
    context: browser.context,
    /** The browser's profile directory (its processes' --user-data-dir). */
    profile: browser.profile,
    /**
     * @param {string} hash e.g. '#step=softmax&q=2'
     * @param {{viewport?: {width, height}, colorScheme?: 'light'|'dark', wait?: boolean,
     *          init?: Function (runs in the page before its scripts), before?: (page) => Promise (before navigation),
     *          model?: string|null}} options
     *   model: a hash without model= gets model=<this> first ('random' by default: the
     *   tests written before the model picker are about random weights, which an empty
     *   hash no longer opens); null opens the hash exactly as given.
     */
    async open(hash = '', { viewport, colorScheme = 'light', wait = true, init, before, model = 'random' } = {}) {
      const page = await browser.context.newPage();
      pages.push(page);
      const errors = [];
      const dialogs = [];
      pageErrors.set(page, errors);
      page.on('console', (msg) => {
        if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
      });
      page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
      page.on('dialog', (d) => {
        dialogs.push(d.message());
        d.dismiss().catch(() => {});
      });
      // the last pointer events and scrolls, for waitStep's message when a step never renders
      await page.addInitScript(() => {
        const log = [];
        window.__apEvents = log;
        const what = (t) => (t instanceof Element ? `${t.tagName.toLowerCase()}${t.closest("[data-step]") ? `[${t.closest("[data-step]").dataset.step}]` : ''}.${String(t.className).slice(0, 30)}` : String(t));
        for (const type of ['pointerdown', 'pointerup', 'click']) {
          window.addEventListener(type, (e) => {
            log.push(`${Math.round(performance.now())} ${type} ${what(e.target)} @${Math.round(e.clientX)},${Math.round(e.clientY)} scrollY=${Math.round(window.scrollY)}`);
            if (log.length > 12) log.shift();
          }, true);
        }
      });
      if (viewport) await page.setViewportSize(viewport);
      await page.emulateMedia({ colorScheme });
      if (init) await page.addInitScript(init);
      if (before) await before(page);
      await page.goto(server.url + withModel(hash, model));
      if (wait) await waitReady(page);
      return { page, errors, dialogs };
    },
    /**
     * Loads the playground at `hash` as a new document in a page open() gave, and waits until it
     * is ready (gotoAnew): what open() gives at about half the CPU of a new page (a new tab and its
     * renderer are most of a page's cost). Its errors and dialogs go on into the same arrays.
     */
    async reload(page, hash = '', { model = 'random' } = {}) {
      await gotoAnew(page, server.url + withModel(hash, model));
      await waitReady(page);
    },
    async close() {
      for (const p of pages) await p.close().catch(() => {});
      await browser.close();
      await server.close();
    },
  };
}

/** Waits until the engine ran once and the current step is drawn. */
export async function waitReady(page) {
  await page.waitForFunction(() => {
    const root = document.querySelector('.ap');
    return root && root.dataset.state === 'ready' && root.dataset.run && document.querySelector('[data-testid="panel"]')?.dataset.rendered;
  }, null, { timeout: WAIT });
}

/**
 * A link that names a pretrained model waits for the reader (web/app/playground/ask.js): clicks
 * "Check its size", then "Download …". Returns false, clicking nothing, when the model ran
 * without asking (its files were in this browser's cache).
 */
export async function allowLinkModel(page, { timeout = WAIT } = {}) {
  const seen = await page.waitForFunction(() => (document.querySelector('[data-testid="ask-look"]') ? 'ask'
    : document.querySelector('.ap')?.dataset.run ? 'ran' : null), null, { timeout });
  if (await seen.jsonValue() !== 'ask') return false;
  await page.getByTestId('ask-look').click();
  await page.getByTestId('ask-download').click({ timeout });
  return true;
}

/** The run counter: changes every time the engine produced a new trace. */
export function runCount(page) {
  return page.evaluate(() => Number(document.querySelector('.ap').dataset.run || 0));
}

export async function waitRunAfter(page, before) {
  await page.waitForFunction((b) => Number(document.querySelector('.ap').dataset.run || 0) > b, before, { timeout: WAIT });
}

/** Waits until the page has written its latest state into the URL. */
export async function settled(page) {
  await page.waitForFunction(() => !document.getElementById('app').dataset.urlPending, null, { timeout: WAIT });
}

/** The state in the URL hash (once written), parsed by the page's own state module. */
export async function hashState(page) {
  await settled(page);
  return page.evaluate(async () => {
    const { parseHash } = await import('/app/playground/state.js');
    return parseHash(location.hash).state;
  });
}

/** Each open page's console errors and page errors (waitStep's message names them). */
const pageErrors = new WeakMap();

export async function waitStep(page, step, { timeout = 30000 } = {}) {
  try {
    await page.waitForFunction((s) => document.querySelector('[data-testid="panel"]')?.dataset.rendered === s, step, { timeout });
  } catch (e) {
    // say what the page shows instead: which step it rendered, its status line, its URL
    const seen = await page.evaluate(() => {
      const p = document.querySelector('[data-testid="panel"]');
      const st = document.querySelector('[data-testid="panel-status"]');
      return { events: window.__apEvents, now: Math.round(performance.now()), scrollY: window.scrollY, step: p?.dataset.step, rendered: p?.dataset.rendered, status: st && !st.hidden ? st.textContent : null, hash: location.hash, active: document.activeElement?.outerHTML.slice(0, 120) };
    }).catch(() => null);
    e.message += ` (waiting for step ${step}; the page shows ${JSON.stringify(seen)}; its errors: ${JSON.stringify(pageErrors.get(page) ?? [])})`;
    throw e;
  }
}

export function artifactDir(...parts) {
  const dir = join(ARTIFACTS, ...parts);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The page's horizontal overflow: scrollWidth of the document. */
export function pageScrollWidth(page) {
  return page.evaluate(() => document.scrollingElement.scrollWidth);
}

/** Where cell (i, j) of a heatmap's canvas is, in the canvas's own pixels (its data-x0/y0/cw/ch), and where the canvas is on screen. */
function cellAt(canvas, i, j) {
  return canvas.evaluate((c, [a, b]) => {
    const d = c.dataset;
    const r = c.getBoundingClientRect();
    return {
      position: { x: Number(d.x0) + (b + 0.5) * Number(d.cw), y: Number(d.y0) + (a + 0.5) * Number(d.ch) },
      box: `${Math.round(r.left)},${Math.round(r.top)},${Math.round(r.width)},${Math.round(r.height)}`,
    };
  }, [i, j]);
}

/** Clicks cell (i, j) of the heatmap with the given data-testid id (e.g. 'mask'). */
export async function clickCell(page, id, i, j) {
  const canvas = page.locator(`[data-testid="hm-${id}"] canvas`);
  await canvas.click({ position: (await cellAt(canvas, i, j)).position });
}

/**
 * Moves the mouse over cell (i, j) of a heatmap, and again (up to 5 times) when the canvas moved
 * within 250 ms after: a page that begins to glide (web/app/playground/follow.js) or to re-lay out just after
 * Playwright found it still carries the cell away from the pointer, and no tooltip of that cell shows.
 */
export async function hoverCell(page, id, i, j) {
  const canvas = page.locator(`[data-testid="hm-${id}"] canvas`);
  for (let attempt = 1; ; attempt += 1) {
    await canvas.hover({ position: (await cellAt(canvas, i, j)).position });
    const { box } = await cellAt(canvas, i, j);
    await page.waitForTimeout(250);
    if ((await cellAt(canvas, i, j)).box === box || attempt === 5) return;
  }
}

/** Values of the DOM readout of a heatmap's selected row: [{row, col, value}]. */
export function readoutValues(page, id) {
  return page.evaluate((x) => [...document.querySelectorAll(`[data-testid="row-${x}"] li`)].map((li) => {
    const m = /-(\d+)-(\d+)$/.exec(li.dataset.testid);
    return { row: Number(m[1]), col: Number(m[2]), value: Number(li.dataset.value) };
  }), id);
}

/** Waits until the hash holds `param=value`. */
export async function waitHash(page, param, value) {
  await page.waitForFunction(([p, v]) => new URLSearchParams(location.hash.slice(1)).get(p) === v, [param, String(value)], { timeout: WAIT });
}

/**
 * Waits until the sticky stepper is wholly on screen, the step's heading and its first line of
 * text are in view 8 px below it (issue #40: a step change showed the figure and hid its own
 * explanation under the stepper), and the step's main figure (its first row of figures) too when
 * heading, text and figure fit together between the stepper and the window's bottom (8 px clear);
 * else the heading is at the top, 8 px below the stepper (the rule of revealOffset in
 * web/app/playground/views/panel.js).
 */
export async function waitFigureInView(page, step) {
  await page.waitForFunction((s) => {
    const card = document.querySelector('.card-stepper');
    const fig = document.querySelector(`section[data-step="${s}"] .figures > .figure-row:not([hidden])`);
    const head = document.querySelector('.panel-header');
    const line = firstLine(document.querySelector(`section[data-step="${s}"]`));
    if (!card || !fig || !head || !line) return false;
    const c = card.getBoundingClientRect();
    const r = fig.getBoundingClientRect();
    const t = head.getBoundingClientRect();
    const H = innerHeight;
    if (c.top < -1 || c.bottom > H + 1) return false;
    const top = c.bottom + 8;
    const bottom = H - 8;
    if (t.top < top - 2 || line.bottom > bottom + 2) return false;
    const end = Math.max(r.bottom, line.bottom);
    if (end - t.top <= bottom - top) return r.top >= top - 2 && end <= bottom + 2;
    return Math.abs(t.top - top) <= 2;
    function firstLine(section) {
      const walk = document.createTreeWalker(section, NodeFilter.SHOW_TEXT);
      for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        if (!n.data.trim()) continue;
        const range = document.createRange();
        range.selectNodeContents(n);
        const box = range.getClientRects()[0];
        if (box && box.height > 0) return box;
      }
      return null;
    }
  }, step, { timeout: WAIT });
}
