// The Chromium half of bench/pretrained.sh (not a test): the GPT-2-small-shaped
// Hub folder served by a local stand-in for the Hub (tests/js/hub-server.mjs), in
// headless Chromium (wasm SIMD):
//   worker  the page's own worker (web/app/hub/worker.js, the hub-runner protocol):
//           the load (download + Cache Storage the first time, then from the cache),
//           and the one-layer trace (layer 0, allWeights: false) at each T, from the
//           message to the reply (the trace's buffers transferred);
//   page    the engine in the page's main thread (web/engine.js, the same wasm module):
//           the load streamed from the fetched file (bench/pretrained_load.mjs), then
//           model.forward(ids) (the whole model, logits T×V) and the one-layer trace;
//   redraw  the playground with the model (model=hf:…) at T = 16: a sentence change
//           (a new word, the same number of tokens) until the frame after the new
//           run is painted, the median of --reps changes.
// One JSON line per measurement: {impl: 'chromium' (the worker, the redraw) or
// 'chromium-page' (the main thread), what, T?, wall_s}.
//
//   node bench/pretrained_page.mjs DIR [--lengths 16,128,512] [--repeat 3] [--reps 10] [--skip worker,page,redraw]

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startHarness, waitReady } from '../tests/browser/harness.mjs';
import { startHubServer, readModelFolder } from '../tests/js/hub-server.mjs';
import { streamCheckpoint } from './pretrained_load.mjs';
import { benchArgs } from './pretrained_args.mjs';

const { dir, lengths: LENGTHS, repeat: REPEAT, skip: SKIP, opt } = benchArgs();  // --skip worker,page,redraw
const DIR = path.resolve(dir);
const REPS = Number(opt('reps', '10'));
const ID = 'bench/gpt2-small';

/** A text of exactly T GPT-2 tokens: "the" and T − 1 times " the". */
const sentenceOf = (T) => Array(T).fill('the').join(' ');

/** In the page: the worker's load (twice: download, then cache) and its traces. */
function inWorker({ base, id, lengths, repeat, sentences }) {
  return (async () => {
    const out = [];
    const worker = new Worker('./app/hub/worker.js', { type: 'module' });
    const reply = (type) => new Promise((resolve, reject) => {
      worker.onmessage = (e) => {
        if (e.data.type === 'error') reject(new Error(`${e.data.code}: ${e.data.message}`));
        else if (e.data.type === type) resolve(e.data);
      };
    });
    for (const what of ['load (download)', 'load (cached)']) {
      const w = what === 'load (download)' ? worker : new Worker('./app/hub/worker.js', { type: 'module' });
      const t0 = performance.now();
      const done = new Promise((resolve, reject) => {
        w.onmessage = (e) => {
          if (e.data.type === 'error') reject(new Error(`${e.data.code}: ${e.data.message}`));
          else if (e.data.type === 'loaded') resolve(e.data);
        };
      });
      w.postMessage({ type: 'load', source: { kind: 'hub', base, id } });
      const info = (await done).info;
      out.push({ what, wall_s: (performance.now() - t0) / 1000, memory_bytes: info.memoryBytes });
      if (w !== worker) w.terminate();
    }
    for (const [i, T] of lengths.entries()) {
      let best = Infinity, tokens = 0;
      for (let r = 0; r < repeat; r++) {
        const t0 = performance.now();
        const got = reply('trace');
        worker.postMessage({ type: 'trace', req: r, sentence: sentences[i], layer: 0, allWeights: false });
        const { trace } = await got;
        best = Math.min(best, (performance.now() - t0) / 1000);
        tokens = trace.tokens.length;
      }
      if (tokens !== T) throw new Error(`the sentence for T = ${T} has ${tokens} tokens`);
      out.push({ what: 'trace', T, wall_s: best });
    }
    worker.terminate();
    return out;
  })();
}

/** In the page's main thread: the load (from the fetched bytes), forward and trace at each T. */
function inPage({ base, id, lengths, repeat, vocab, stream }) {
  return (async () => {
    const streamCheckpoint = (0, eval)(`(${stream})`);
    const { createEngine } = await import('./engine.js');
    const engine = await createEngine();
    const get = async (f) => {
      const r = await fetch(`${base}/${id}/resolve/main/${f}`);
      if (!r.ok) throw new Error(`${f}: HTTP ${r.status}`);
      return r;
    };
    const t0 = performance.now();
    const configText = await (await get('config.json')).text();
    const tokenizerJson = await (await get('tokenizer.json')).text();
    const bytes = new Uint8Array(await (await get('model.safetensors')).arrayBuffer());
    const t1 = performance.now();
    const model = await streamCheckpoint(engine, (a, b) => bytes.subarray(a, b), configText, tokenizerJson, bytes.length);
    const out = [{ what: 'load', wall_s: (performance.now() - t1) / 1000, fetch_s: (t1 - t0) / 1000 }];
    for (const T of lengths) {
      const ids = Array.from({ length: T }, (_, i) => (i * 7919) % vocab);
      for (const what of ['forward', 'trace']) {
        let best = Infinity;
        for (let r = 0; r < repeat; r++) {
          const s = performance.now();
          if (what === 'forward') model.forward(ids);
          else model.traceIds(ids, { layer: 0, allWeights: false });
          best = Math.min(best, (performance.now() - s) / 1000);
        }
        out.push({ what, T, wall_s: best });
      }
    }
    model.dispose();
    engine.dispose();
    return out;
  })();
}

/** In the page: change the sentence `reps` times, timing each change to the painted frame after its run. */
function redraw({ reps, T }) {
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
      // another first word (never the page's first sentence, which would not rerun), the same number of tokens
      box.value = [r % 2 ? 'a' : 'an', ...Array(T - 1).fill('the')].join(' ');
      box.dispatchEvent(new Event('change', { bubbles: true }));
      while (Number(root.dataset.run) === before) await frame();
      times.push((await painted()) - t0);
    }
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)];
  })();
}

const hub = await startHubServer({ [ID]: readModelFolder(DIR) });
const h = await startHarness();
const init = `window.attentionPlaygroundHub = ${JSON.stringify(hub.base)};`;
try {
  if (!SKIP.has('worker')) {
    const { page, errors } = await h.open('#model=random', { init });
    const rows = await page.evaluate(inWorker, { base: hub.base, id: ID, lengths: LENGTHS, repeat: REPEAT, sentences: LENGTHS.map(sentenceOf) });
    for (const r of rows) console.log(JSON.stringify({ impl: 'chromium', ...r }));
    if (errors.length) throw new Error(errors.join('\n'));
    await page.close();
  }
  if (!SKIP.has('page')) {
    const { page, errors } = await h.open('#model=random', { init });
    const vocab = JSON.parse(readFileSync(path.join(DIR, 'config.json'), 'utf8')).vocab_size;
    const rows = await page.evaluate(inPage, { base: hub.base, id: ID, lengths: LENGTHS, repeat: REPEAT, vocab, stream: streamCheckpoint.toString() });
    for (const r of rows) console.log(JSON.stringify({ impl: 'chromium-page', ...r }));
    if (errors.length) throw new Error(errors.join('\n'));
    await page.close();
  }
  if (!SKIP.has('redraw')) {
    const T = 16;
    const { page, errors } = await h.open(`#model=hf:${ID}&s=${encodeURIComponent(sentenceOf(T))}&step=softmax&layer=0`, { init, model: null, wait: false });
    await page.waitForFunction((id) => document.querySelector('[data-testid="model-picker"]')?.value === `hf:${id}`, ID, { timeout: 600000 });
    await waitReady(page);
    const median = await page.evaluate(redraw, { reps: REPS, T });
    console.log(JSON.stringify({ impl: 'chromium', what: 'redraw', T, step: 'softmax', wall_s: +(median / 1000).toFixed(4), reps: REPS }));
    if (errors.length) throw new Error(errors.join('\n'));
    await page.close();
  }
} finally {
  await h.close();
  await hub.close();
}
