// Benchmark (not a test): time from a control change to the next painted
// frame, in headless Chromium, for the real page.
//
//   node bench/page_latency.mjs [--reps 20]
//
// For T = 16 and 64 tokens (C = 256, H = 8) and T = 512, on a light step
// (embeddings, T×C) and a heavy one (softmax, T×T + bars + lines), it changes
// the seed (a compute change: engine run + render) and the query token (a pure
// view change) and reports the medians of:
//   handler  the synchronous work in the change event (engine + DOM/canvas)
//   frame    until the next requestAnimationFrame callback
//   painted  until the task after that frame (the frame has been painted)
// Results also go to bench/results/page_latency.json (git-ignored).

import { mkdirSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startHarness, waitReady } from '../tests/browser/harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const argReps = process.argv.indexOf('--reps');
const REPS = argReps > 0 ? Number(process.argv[argReps + 1]) : 20;

const CASES = [
  { T: 16, C: 256, H: 8 },
  { T: 64, C: 256, H: 8 },
  { T: 512, C: 256, H: 8 },
];
const STEPS = ['embeddings', 'softmax'];

function sentence(T) {
  return Array.from({ length: T }, (_, i) => `w${i}`).join('+');
}

/** In the page: change a control `reps` times, timing each change to the painted frame. */
function measureInPage({ reps, control }) {
  return (async () => {
    const root = document.querySelector('.ap');
    const byLabel = (text) => [...root.querySelectorAll('label')].find((l) => l.textContent === text)?.control;
    const seed = byLabel('Seed');
    const query = byLabel('Query token');
    const nextFrame = () => new Promise((res) => requestAnimationFrame(() => setTimeout(res, 0)));
    const out = { handler: [], frame: [], painted: [] };
    await nextFrame();
    for (let r = 0; r < reps; r++) {
      await nextFrame(); // start between frames, like a user's input
      const runBefore = Number(root.dataset.run);
      const t0 = performance.now();
      if (control === 'seed') {
        seed.value = String(1000 + r);
        seed.dispatchEvent(new Event('change', { bubbles: true }));
      } else {
        query.value = String(r % 2);
        query.dispatchEvent(new Event('change', { bubbles: true }));
      }
      const t1 = performance.now();
      const [t2, t3] = await new Promise((res) => requestAnimationFrame(() => {
        const tf = performance.now();
        const ch = new MessageChannel();
        ch.port1.onmessage = () => res([tf, performance.now()]);
        ch.port2.postMessage(0);
      }));
      if (control === 'seed' && Number(root.dataset.run) !== runBefore + 1) throw new Error('the engine did not run');
      out.handler.push(t1 - t0);
      out.frame.push(t2 - t0);
      out.painted.push(t3 - t0);
    }
    return out;
  })();
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const h = await startHarness();
const rows = [];
try {
  for (const c of CASES) {
    for (const step of STEPS) {
      const { page, errors } = await h.open(`#s=${sentence(c.T)}&c=${c.C}&h=${c.H}&step=${step}&q=0&k=0`, { wait: false });
      await waitReady(page);
      for (const control of ['seed', 'query']) {
        const r = await page.evaluate(measureInPage, { reps: REPS, control });
        rows.push({ T: c.T, C: c.C, H: c.H, step, control, handler: median(r.handler), frame: median(r.frame), painted: median(r.painted), reps: REPS });
      }
      if (errors.length) throw new Error(errors.join('\n'));
      await page.close();
    }
  }
} finally {
  await h.close();
}

const f = (x) => x.toFixed(1).padStart(7);
console.log(`medians over ${REPS} changes, ms (headless Chromium, ${new Date().toISOString().slice(0, 10)})`);
console.log('   T    C  H  step        change   handler    frame  painted');
for (const r of rows) {
  console.log(`${String(r.T).padStart(4)} ${String(r.C).padStart(4)} ${String(r.H).padStart(2)}  ${r.step.padEnd(10)}  ${r.control.padEnd(6)} ${f(r.handler)}  ${f(r.frame)}  ${f(r.painted)}`);
}
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(join(here, 'results', 'page_latency.json'), `${JSON.stringify(rows, null, 2)}\n`);
