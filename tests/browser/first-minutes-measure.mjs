// Measures and screenshots for issue #40 (not a test): cold load to the first
// drawn step, a step change's redraw, a keystroke's redraw (the sentence, after the
// box's pause), the switch to the language model, at desktop and phone, and screenshots.
//   node tests/browser/first-minutes-measure.mjs <outdir> [runs]   (WEB_DIR=<a web/ folder> to measure another tree)
import { startServer, launchBrowser, waitReady, WEB } from './harness.mjs';
import { join } from 'node:path';

const out = process.argv[2] ?? '/tmp/f10';
const runs = Number(process.argv[3] ?? 3);
const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };
const server = await startServer(process.env.WEB_DIR ?? WEB);
const browser = await launchBrowser();
async function open(viewport, init) {
  const page = await browser.context.newPage();
  await page.setViewportSize(viewport);
  await page.addInitScript(init);
  await page.goto(server.url);
  return { page };
}
const mark = () => {
  // the first time the step panel says it drew a step
  new MutationObserver((_, obs) => {
    const p = document.querySelector('[data-testid="panel"]');
    if (p?.dataset.rendered && !window.__firstDrawn) { window.__firstDrawn = performance.now(); obs.disconnect(); }
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-rendered'] });
};
const results = {};
for (const [name, viewport] of Object.entries(SIZES)) {
  const loads = [];
  const changes = [];
  const keys = [];
  const switches = [];
  for (let r = 0; r < runs; r++) {
    const { page } = await open(viewport, mark);
    await waitReady(page);
    await page.waitForTimeout(400);
    loads.push(await page.evaluate(() => Math.round(window.__firstDrawn)));
    if (r === 0) {
      await page.screenshot({ path: join(out, `${name}-load.png`) });
      console.log(name, 'scrollY at load', await page.evaluate(() => scrollY));
    }
    // a step change: click → the step drawn → the next frame painted
    for (const step of ['embeddings', 'positional', 'input', 'projections', 'scores', 'softmax']) {
      const ms = await page.evaluate(async (s) => {
        const b = document.querySelector(`.step-btn[data-step="${s}"]`);
        const t0 = performance.now();
        b.click();
        while (document.querySelector('[data-testid="panel"]').dataset.rendered !== s) await new Promise((res) => setTimeout(res, 1));
        await new Promise((res) => requestAnimationFrame(() => setTimeout(res, 0)));
        return performance.now() - t0;
      }, step);
      changes.push(Math.round(ms));
      if (r === 0 && step === 'softmax') {
        await page.waitForTimeout(700);
        await page.screenshot({ path: join(out, `${name}-softmax.png`) });
      }
    }
    // a keystroke (the box sends after its 150 ms pause) → the new trace drawn → the next frame
    const untilRun = async (act) => page.evaluate(async (what) => {
      const root = document.querySelector('.ap');
      const before = Number(root.dataset.run);
      const t0 = performance.now();
      if (what === 'key') {
        const box = document.querySelector('[data-testid="sentence"]');
        box.value = box.value.replace(/\.$/, ' .');
        box.dispatchEvent(new Event('input', { bubbles: true }));
      } else {
        const picker = document.querySelector('[data-testid="model-picker"]');
        picker.value = 'language';
        picker.dispatchEvent(new Event('change', { bubbles: true }));
      }
      while (Number(root.dataset.run) === before) await new Promise((res) => setTimeout(res, 1));
      await new Promise((res) => requestAnimationFrame(() => setTimeout(res, 0)));
      return Math.round(performance.now() - t0);
    }, act);
    keys.push(await untilRun('key'));
    switches.push(await untilRun('switch'));
    await page.close();
  }
  results[name] = { loads, changes, keys, switches };
}
console.log(JSON.stringify(results));
await browser.close();
await server.close();
