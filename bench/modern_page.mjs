// The Chromium half of bench/modern.sh (not a test): a Llama/Qwen2-shaped Hub folder served by
// the local stand-in for the Hub (tests/js/hub-server.mjs), in headless Chromium, through the
// page's own worker (web/app/hub/worker.js, the hub-runner protocol):
//   load    download + Cache Storage, streamed into the engine: the wasm heap after it (the
//           heap only grows, so this is its peak during the load) beside the file's bytes;
//           download_s (until the worker starts reading the file from the cache) and read_s
//           (streaming it into the engine, the tokenizer, until the model is ready)
//   trace   the first trace after the load (layer 0, the page's request), then the median of
//           --repeat, at each T; the wasm heap after the first trace
//   prefill the first generate after T tokens, which fills the KV cache
//   token   one generated token through the KV cache after T tokens (each timed one adds a token
//           to the last one's text); the wasm heap after them
//   redraw  the playground with the model (model=hf:…) at T = 16: a sentence change (the same
//           number of tokens) until the frame after the new run is painted, the median of --reps
// One JSON line per measurement, printed as it is taken: {impl: 'chromium', what, T?, wall_s,
// loadavg (/proc/loadavg's first three then), …}; and {what: 'progress', phase, file, loaded,
// total, at_s} at each file and phase of the load, every 256 MB of it and its last byte.
//
//   node bench/modern_page.mjs DIR [--lengths 16,128,512] [--repeat 5] [--reps 10] [--skip redraw] [--word the]

import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { startHarness, waitReady, allowLinkModel } from '../tests/browser/harness.mjs';
import { startHubServer, readModelFolder } from '../tests/js/hub-server.mjs';
import { benchArgs } from './pretrained_args.mjs';

const { dir, lengths: LENGTHS, repeat: REPEAT, skip: SKIP, opt } = benchArgs();
const DIR = path.resolve(dir);
const REPS = Number(opt('reps', '10'));
const ID = `bench/${path.basename(DIR)}`;
// --word the: a folder with a byte-level tokenizer (Qwen's), where "the the …" is one token a word
const WORD = opt('word', '');
/** A text of exactly T tokens: with the benchmark's tokenizer (modern_node.mjs) "▁" and T − 1 letters. */
const textOf = (T, first = 'a') => (WORD ? Array(T).fill(WORD).join(' ') : first + 'a'.repeat(T - 2));

function inWorker({ base, id, lengths, repeat, texts }) {
  return (async () => {
    const worker = new Worker('./app/hub/worker.js', { type: 'module' });
    let reading = null;  // when the worker began reading the file from the cache into the engine
    const t0 = performance.now();
    let shown = '';  // the last progress line: each phase and file, then every 256 MB
    const reply = (type) => new Promise((resolve, reject) => {
      worker.onerror = (e) => reject(new Error(`the worker failed: ${e.message}`));
      worker.onmessage = (e) => {
        if (e.data.type === 'progress' && e.data.phase === 'read' && reading === null) reading = performance.now();
        if (e.data.type === 'progress') {
          const { phase, file, loaded, total } = e.data;
          const key = `${phase} ${file} ${loaded === total ? 'all' : Math.floor(loaded / 256e6)}`;
          if (key !== shown) {
            shown = key;
            report({ what: 'progress', phase, file, loaded, total, at_s: (performance.now() - t0) / 1000 });
          }
        }
        if (e.data.type === 'error') reject(new Error(`${e.data.code}: ${e.data.message}`));
        else if (e.data.type === type) resolve(e.data);
      };
    });
    const ask = async (msg, type) => {
      const got = reply(type);
      const t0 = performance.now();
      worker.postMessage(msg);
      const r = await got;
      return { r, s: (performance.now() - t0) / 1000 };
    };
    const memory = async () => (await ask({ type: 'memory', req: 0 }, 'memory')).r.memoryBytes;
    const start = performance.now();
    const loaded = await ask({ type: 'load', source: { kind: 'hub', base, id } }, 'loaded');
    const end = performance.now();
    await report({ what: 'load', wall_s: loaded.s, download_s: (reading - start) / 1000, read_s: (end - reading) / 1000,
      memory_bytes: loaded.r.info.memoryBytes, file_bytes: loaded.r.info.fileBytes, loadavg: await loadavg() });
    for (const [i, T] of lengths.entries()) {
      const times = [];
      for (let r = 0; r <= repeat; r++) {
        const { r: got, s } = await ask({ type: 'trace', req: r, sentence: texts[i], layer: 0, allWeights: false }, 'trace');
        if (got.trace.tokens.length !== T) throw new Error(`the text for T = ${T} has ${got.trace.tokens.length} tokens`);
        if (r === 0) await report({ what: 'first trace', T, wall_s: s, memory_bytes: await memory(), loadavg: await loadavg() });
        else times.push(s);
      }
      times.sort((a, b) => a - b);
      await report({ what: 'trace', T, wall_s: times[Math.floor(times.length / 2)], loadavg: await loadavg() });
      const steps = [];
      const prefill = await ask({ type: 'generate', req: -1, sentence: texts[i], generated: [], options: {} }, 'generated');
      await report({ what: 'prefill', T, wall_s: prefill.s, loadavg: await loadavg() });
      let last = prefill.r.token;
      for (let r = 0; r < repeat; r++) {  // each adds one token to the last one's text
        const { r: next, s } = await ask({ type: 'generate', req: r, sentence: last.sentence, generated: last.generated, options: {} }, 'generated');
        // (a piece whose text retokenizes differently recomputes a row or two: counted, not refused)
        last = next.token;
        steps.push(s);
      }
      steps.sort((a, b) => a - b);
      await report({ what: 'token', T, wall_s: steps[Math.floor(steps.length / 2)], memory_bytes: await memory(), loadavg: await loadavg() });
    }
    worker.terminate();
  })();
}

/** In the page: change the sentence `reps` times, timing each change to the painted frame after its run. */
function redraw({ reps, texts }) {
  return (async () => {
    const root = document.querySelector('.ap');
    const box = root.querySelector('[data-testid="sentence"]');
    const frame = () => new Promise((res) => requestAnimationFrame(() => res(performance.now())));
    const painted = () => new Promise((res) => requestAnimationFrame(() => {
      const ch = new MessageChannel();
      ch.port1.onmessage = () => res(performance.now());
      ch.port2.postMessage(0);
    }));
    const times = [];
    for (let r = 0; r < reps; r++) {
      await frame();
      const before = Number(root.dataset.run);
      const t0 = performance.now();
      box.value = texts[r % 2];
      box.dispatchEvent(new Event('change', { bubbles: true }));
      while (Number(root.dataset.run) === before) await frame();
      times.push((await painted()) - t0);
    }
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)];
  })();
}

statSync(path.join(DIR, 'tokenizer.json'));  // written by modern_node.mjs (benchTokenizerJson)
const hub = await startHubServer({ [ID]: readModelFolder(DIR) });
hub.ranges = true;  // as the Hub: the worker reads the weights' header alone before the download
const h = await startHarness();
const init = `window.attentionPlaygroundHub = ${JSON.stringify(hub.base)};`;
try {
  {
    const { page, errors } = await h.open('#model=random', { init });
    const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    await page.exposeFunction('loadavg', loadavg);
    // each line as it is measured (a run that stops half-way keeps what it measured)
    await page.exposeFunction('report', (r) => {
      const line = { impl: 'chromium', ...r, ...(r.memory_bytes && r.file_bytes ? { memory_per_file_byte: +(r.memory_bytes / r.file_bytes).toFixed(3) } : {}) };
      if (r.what === 'progress') line.loadavg = loadavg();
      console.log(JSON.stringify(line));
    });
    await page.evaluate(inWorker, { base: hub.base, id: ID, lengths: LENGTHS, repeat: REPEAT, texts: LENGTHS.map((T) => textOf(T)) });
    if (errors.length) throw new Error(errors.join('\n'));
    await page.close();
  }
  if (!SKIP.has('redraw')) {
    const T = 16;
    const { page, errors } = await h.open(`#model=hf:${ID}&s=${encodeURIComponent(textOf(T))}&step=softmax&layer=0`, { init, model: null, wait: false });
    await allowLinkModel(page, { timeout: 600000 });
    await page.waitForFunction((id) => document.querySelector('[data-testid="model-picker"]')?.value === `hf:${id}`, ID, { timeout: 600000 });
    await waitReady(page);
    const median = await page.evaluate(redraw, { reps: REPS, texts: [textOf(T, 'b'), textOf(T, 'c')] });
    console.log(JSON.stringify({ impl: 'chromium', what: 'redraw', T, step: 'softmax', wall_s: +(median / 1000).toFixed(4), reps: REPS }));
    if (errors.length) throw new Error(errors.join('\n'));
    await page.close();
  }
} finally {
  await h.close();
  await hub.close();
}
