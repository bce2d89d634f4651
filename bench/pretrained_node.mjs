// The Node half of bench/pretrained_all.sh (not a test): a GPT-2-small-shaped Hub
// folder (attn_pretrained_bench --write, plus GPT-2's tokenizer.json) through
//   ours  the wasm module (web/engine.js): the load streamed the way the page's worker
//         streams it (bench/pretrained_load.mjs), then
//         model.forward(ids) (the whole model, logits T×V), model.traceIds(ids,
//         {layer: 0, allWeights: false}) (the page's trace: every intermediate of one layer,
//         the top 5 per position) and the same with logits: true (the T×V logits too, or
//         why that is refused), with the wasm heap's size and the process's peak (VmHWM);
//   ort   onnxruntime-web (wasm backend, 1 thread) on the same weights as an ONNX
//         graph written by bench/pretrained_onnx.mjs: its load is reading the file,
//         building the graph and creating the session; its forward the logits.
// Both forwards' logits are compared (max |diff| / max(1, max |ours|) ≤ 1e-3).
// One JSON line per measurement: {impl, what, T?, wall_s, cpu_s} (best of --repeat;
// cpu_s is the process's CPU time over the same call, which waiting for a core
// on a loaded machine does not inflate).
//
//   node bench/pretrained_node.mjs DIR [--lengths 16,128,512] [--repeat 3] [--skip ort]

import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEngine } from '../web/engine.js';
import { readSafetensors } from '../tests/js/safetensors-reader.mjs';
import { gpt2Onnx } from './pretrained_onnx.mjs';
import { streamCheckpoint } from './pretrained_load.mjs';
import { benchArgs } from './pretrained_args.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { dir, lengths: LENGTHS, repeat: REPEAT, skip: SKIP } = benchArgs();
const DIR = path.resolve(dir);
const TOLERANCE = 1e-3;

const config = JSON.parse(readFileSync(path.join(DIR, 'config.json'), 'utf8'));
const idsOf = (T) => Array.from({ length: T }, (_, i) => (i * 7919) % config.vocab_size);  // pretrained_bench.cpp's ids

/** {wall_s, cpu_s, value} of one call of f (async or not). */
async function timed(f) {
  const c0 = process.cpuUsage(), t0 = performance.now();
  const value = await f();
  const t1 = performance.now(), c1 = process.cpuUsage(c0);
  return { wall_s: (t1 - t0) / 1000, cpu_s: (c1.user + c1.system) / 1e6, value };
}

/** The best of REPEAT calls (by wall time), and the last call's value. */
async function best(f) {
  let out = null;
  for (let r = 0; r < REPEAT; r++) {
    const t = await timed(f);
    if (!out || t.wall_s < out.wall_s) out = { ...t, value: t.value };
  }
  return out;
}

/** The process's peak resident memory so far (VmHWM, bytes; the wasm heap never shrinks). */
const vmHwm = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024;

const report = (impl, what, T, t, extra = {}) =>
  console.log(JSON.stringify({ impl, what, ...(T ? { T } : {}), wall_s: +t.wall_s.toFixed(4), cpu_s: +t.cpu_s.toFixed(4), ...extra }));

function maxRelDiff(a, b) {
  let d = 0, m = 1;
  for (let i = 0; i < a.length; i++) {
    d = Math.max(d, Math.abs(a[i] - b[i]));
    m = Math.max(m, Math.abs(a[i]));
  }
  return d / m;
}

// ---- ours: the wasm module ------------------------------------------------------------
const ours = new Map();  // T → logits (Float32Array)
{
  const engine = await createEngine();
  const file = path.join(DIR, 'model.safetensors');
  const fd = openSync(file, 'r');
  const read = (a, b) => {
    const out = new Uint8Array(b - a);
    readSync(fd, out, 0, out.length, a);
    return out;
  };
  const load = await timed(() => streamCheckpoint(engine, read, readFileSync(path.join(DIR, 'config.json'), 'utf8'),
    readFileSync(path.join(DIR, 'tokenizer.json'), 'utf8'), statSync(file).size));
  closeSync(fd);
  const model = load.value;
  report('ours-wasm', 'load', 0, load, { wasm_bytes: engine.memoryBytes() });
  for (const T of LENGTHS) {
    const ids = idsOf(T);
    const f = await best(() => model.forward(ids));
    ours.set(T, f.value.logits.data);
    report('ours-wasm', 'forward', T, f);
    const t = await best(() => model.traceIds(ids, { layer: 0, allWeights: false }));
    report('ours-wasm', 'trace', T, t, { wasm_bytes: engine.memoryBytes(), vm_hwm_bytes: vmHwm() });
    // with the T×V logits as well (logits: true), or why that is refused
    try {
      const full = await best(() => model.traceIds(ids, { layer: 0, allWeights: false, logits: true }));
      report('ours-wasm', 'trace+logits', T, full, { wasm_bytes: engine.memoryBytes(), vm_hwm_bytes: vmHwm() });
    } catch (e) {
      if (e.code !== 'too_large') throw e;
      console.log(JSON.stringify({ impl: 'ours-wasm', what: 'trace+logits', T, refused: e.message.split(' (')[0] }));
    }
  }
  model.dispose();
  engine.dispose();
}

// ---- onnxruntime-web --------------------------------------------------------------------
if (!SKIP.has('ort')) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  const load = await timed(async () => {
    const { tensors } = readSafetensors(new Uint8Array(readFileSync(path.join(DIR, 'model.safetensors'))));
    const graph = gpt2Onnx(tensors, config);
    return ort.InferenceSession.create(graph, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  });
  const session = load.value;
  report('ort', 'load', 0, load, { version: ort.env.versions?.web ?? '' });
  for (const T of LENGTHS) {
    const feeds = {
      ids: new ort.Tensor('int64', BigInt64Array.from(idsOf(T), BigInt), [T]),
      positions: new ort.Tensor('int64', BigInt64Array.from({ length: T }, (_, i) => BigInt(i)), [T]),
      bias: new ort.Tensor('float32', Float32Array.from({ length: T * T }, (_, k) => (k % T > Math.floor(k / T) ? -Infinity : 0)), [T, T]),
    };
    const f = await best(async () => (await session.run(feeds)).logits.data);
    const diff = ours.has(T) ? maxRelDiff(ours.get(T), f.value) : null;
    if (diff !== null && !(diff <= TOLERANCE)) throw new Error(`onnxruntime-web's logits at T = ${T} differ from ours by ${diff} (relative)`);
    report('ort', 'forward', T, f, { max_rel_diff_to_ours: diff });
  }
}
process.exit(0);  // onnxruntime-web keeps handles open
