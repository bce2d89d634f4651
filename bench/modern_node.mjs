// The Node half of bench/modern.sh (not a test): a Llama/Qwen2-shaped Hub folder (BF16,
// make_checkpoints.py's smollm2-shape …) through
//   ours  the wasm module (web/engine.js), the load streamed as the page's worker streams it
//         (bench/pretrained_load.mjs; 16-bit weights stay 16-bit), then model.forward(ids) (the
//         whole model, logits T×V) and one generated token through the KV cache after T tokens
//         (model.generate: the first call fills the cache, the second, timed, adds one token);
//   ort   onnxruntime-web (wasm backend, 1 thread) on the same weights as ONNX (float32,
//         exported by bench/modern_torch.py --onnx from PyTorch), its forward the logits.
// Side by side in one process, interleaved: each repeat runs ours, then ort, at every T, after
// a warm-up call each (V8 tiers up late); the median of --repeat. Both forwards' logits are
// compared (max |diff| / max(1, max |ours|) ≤ 1e-3). One JSON line per measurement:
// {impl, what, T?, wall_s (median), best_s, cpu_s (the median call's process CPU time)}.
//
//   node bench/modern_node.mjs DIR [--lengths 16,128,512] [--repeat 5] [--onnx FILE]

import { closeSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createEngine } from '../web/engine.js';
import { streamCheckpoint } from './pretrained_load.mjs';
import { benchArgs } from './pretrained_args.mjs';
import { benchTokenizerJson } from './modern_tokenizer.mjs';

const { dir, lengths: LENGTHS, repeat: REPEAT, opt } = benchArgs();
const DIR = path.resolve(dir);
const ONNX = opt('onnx', '');
const config = JSON.parse(readFileSync(path.join(DIR, 'config.json'), 'utf8'));
const V = config.vocab_size;
const idsOf = (T) => Array.from({ length: T }, (_, i) => (i * 7919 + 3) % V);  // modern_torch.py's ids

async function timed(f) {
  const c0 = process.cpuUsage(), t0 = performance.now();
  const value = await f();
  const t1 = performance.now(), c1 = process.cpuUsage(c0);
  return { wall_s: (t1 - t0) / 1000, cpu_s: (c1.user + c1.system) / 1e6, value };
}

const runs = new Map();  // "impl what T" → [timed]
const keep = (key, t) => (runs.get(key) ?? runs.set(key, []).get(key)).push(t);
function report(key) {
  const [impl, what, T] = key.split(' ');
  const list = [...runs.get(key)].sort((a, b) => a.wall_s - b.wall_s);
  const med = list[Math.floor(list.length / 2)];
  console.log(JSON.stringify({ impl, what, T: Number(T), wall_s: +med.wall_s.toFixed(4), best_s: +list[0].wall_s.toFixed(4), cpu_s: +med.cpu_s.toFixed(4), n: list.length }));
}

function maxRelDiff(a, b) {
  let d = 0, m = 1;
  for (let i = 0; i < a.length; i++) {
    d = Math.max(d, Math.abs(a[i] - b[i]));
    m = Math.max(m, Math.abs(a[i]));
  }
  return d / m;
}

// ---- load both --------------------------------------------------------------------------
const tokenizerPath = path.join(DIR, 'tokenizer.json');
try { statSync(tokenizerPath); } catch { writeFileSync(tokenizerPath, benchTokenizerJson(V)); }
const engine = await createEngine();
const file = path.join(DIR, 'model.safetensors');
const fd = openSync(file, 'r');
const read = (a, b) => {
  const out = new Uint8Array(b - a);
  readSync(fd, out, 0, out.length, a);
  return out;
};
const load = await timed(() => streamCheckpoint(engine, read, readFileSync(path.join(DIR, 'config.json'), 'utf8'), readFileSync(tokenizerPath, 'utf8'), statSync(file).size));
closeSync(fd);
const model = load.value;
console.log(JSON.stringify({ impl: 'ours-wasm', what: 'load', wall_s: +load.wall_s.toFixed(3), file_bytes: statSync(file).size, wasm_bytes: engine.memoryBytes() }));
let ort = null, session = null;
if (ONNX) {
  ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  const t = await timed(() => ort.InferenceSession.create(new Uint8Array(readFileSync(ONNX)), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' }));
  session = t.value;
  console.log(JSON.stringify({ impl: 'ort', what: 'load', wall_s: +t.wall_s.toFixed(3), version: ort.env.versions?.web ?? '' }));
}
const ortForward = async (ids) => (await session.run({ ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [ids.length]) })).logits.data;

/** One token after a text of T tokens: each call adds one token to the last call's text, through
 * the cache (one untimed call filled it: the prefill and the first token). */
const lasts = new Map();
let recomputedMost = 0;
function oneToken(T) {
  if (!lasts.has(T)) lasts.set(T, model.generate('a'.repeat(T - 1)));
  return () => {
    const last = lasts.get(T);
    const r = model.generate(last.sentence, { generated: last.generated });
    recomputedMost = Math.max(recomputedMost, r.recomputed);  // a piece whose text retokenizes differently: a row or two again
    lasts.set(T, r);
    return r;
  };
}

// ---- interleaved --------------------------------------------------------------------------
for (const T of LENGTHS) {
  const ids = idsOf(T);
  model.forward(ids);  // warm-up (V8 tiers up late)
  if (session) await ortForward(ids);
  if (session) {
    const diff = maxRelDiff(model.forward(ids).logits.data, await ortForward(ids));
    if (!(diff <= 1e-3)) throw new Error(`onnxruntime-web's logits at T = ${T} differ from ours by ${diff} (relative)`);
    console.log(JSON.stringify({ check: 'logits', T, max_rel_diff: diff }));
  }
}
for (let r = 0; r < REPEAT; r++) {
  for (const T of LENGTHS) {
    const ids = idsOf(T);
    keep(`ours-wasm forward ${T}`, await timed(() => model.forward(ids)));
    if (session) keep(`ort forward ${T}`, await timed(() => ortForward(ids)));
    keep(`ours-wasm token ${T}`, await timed(oneToken(T)));
  }
}
for (const key of runs.keys()) report(key);
console.log(JSON.stringify({ impl: 'ours-wasm', what: 'end', wasm_bytes: engine.memoryBytes(), token_recomputed_most: recomputedMost }));
model.dispose();
engine.dispose();
process.exit(0);  // onnxruntime-web keeps handles open
