// The benchmark: every implementation of multi-head self-attention, on the
// same inputs, in one Node process and one interleaved run. bench/run.sh
// builds what it needs and calls this; run it directly when everything is built:
//
//   node bench/run.mjs [--sizes 16,64,4/128,256,8] [--budget 1.5] [--rounds 5]
//                      [--skip js,scalar,...] [--out bench/results/latest.json]
//                      [--baseline path/to/attention_core.node.cjs]
//
// Implementations (labels used in the table and JSON):
//   ours-simd      this project's fast path, wasm SIMD128 (engine.forward)
//   ours-kept      the same with the weights kept in the engine (engine.keepWeights once per
//                  case, then forward({x, weights: kept}): x alone is copied per call)
//   ours-scalar    the same fast path, scalar wasm build
//   ours-relaxed   the relaxed-SIMD flavour (build_wasm.sh --relaxed: products fused, last bits
//                  differ), weights kept as ours-kept; needs a Node that runs relaxed SIMD
//   ours-eigen     the Eigen reference path, wasm SIMD128 build (engine.forwardReference)
//   ours-base      with --baseline: the fast path of another build of the Node module
//                  (e.g. a copy of web/generated/attention_core.node.cjs made before a
//                  change), so a before/after comparison comes from one interleaved run
//   native         the fast path natively, x86-64 baseline (SSE2), spawned (build/bench/attn_bench)
//   native-sse42   the same code with -msse4.2 (build/bench/attn_bench_sse42)
//   ort            onnxruntime-web (wasm backend, numThreads = 1), fastest of three graph forms
//   tfjs           @tensorflow/tfjs-core + tfjs-backend-wasm (1 thread), per-head 2-D matMuls
//   js             plain JavaScript over Float32Arrays (js_reference.mjs)
//
// Each implementation is warmed up (V8 tiers code up only after several
// calls), then timed in rounds that alternate between implementations, so
// a burst of load on the machine hits all of them alike. Reported: the
// median call time, GFLOP/s, peak memory, agreement with the JS reference
// (max |diff| / max(1, max |ref|) ≤ 1e-4), and the ratios against each peer.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { prng, relativeError } from './numeric.mjs';

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH, '..');
const require = createRequire(import.meta.url);

// ---- options --------------------------------------------------------------------
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const SIZES = opt('sizes', '16,64,4/128,256,8/512,512,8/2048,512,8/128,768,12/1024,768,12/512,1024,16').split('/').map((s) => s.split(',').map(Number));
const BUDGET_MS = 1000 * Number(opt('budget', '1.5'));  // timed time per implementation per case
const ROUNDS = Number(opt('rounds', '5'));
const SKIP = new Set(opt('skip', '').split(',').filter(Boolean));
const OUT = path.resolve(opt('out', path.join(BENCH, 'results', 'latest.json')));
const BASELINE = opt('baseline', null);
const NATIVE_DIR = path.resolve(opt('native-dir', path.join(ROOT, 'build', 'bench')));
const TOLERANCE = 1e-4;

// ---- wasm memory of the peers: remember every Memory their modules use ------------
const memories = new Map();  // label → Set<WebAssembly.Memory>
let loadingLabel = null;
function remember(imports, instance) {
  if (!loadingLabel) return;
  const set = memories.get(loadingLabel) ?? new Set();
  for (const ns of Object.values(imports ?? {})) for (const v of Object.values(ns ?? {})) if (v instanceof WebAssembly.Memory) set.add(v);
  for (const v of Object.values(instance?.exports ?? {})) if (v instanceof WebAssembly.Memory) set.add(v);
  memories.set(loadingLabel, set);
}
const origInstantiate = WebAssembly.instantiate;
WebAssembly.instantiate = async function instantiate(source, imports) {
  const result = await origInstantiate.call(this, source, imports);
  remember(imports, result.instance ?? result);
  return result;
};
const origStreaming = WebAssembly.instantiateStreaming;
if (origStreaming) {
  WebAssembly.instantiateStreaming = async function instantiateStreaming(source, imports) {
    const result = await origStreaming.call(this, source, imports);
    remember(imports, result.instance);
    return result;
  };
}
const wasmBytes = (label) => Math.max(0, ...[...(memories.get(label) ?? [])].map((m) => m.buffer.byteLength));

// ---- inputs ----------------------------------------------------------------------
function inputs(t, c) {
  const rand = prng(t * 131 + c);
  const fill = (n, scale) => Float32Array.from({ length: n }, () => (2 * rand() - 1) * scale);
  const limit = Math.sqrt(6 / (2 * c));  // Glorot, like the playground's weights
  return { x: fill(t * c, Math.sqrt(3)), w: { wQuery: fill(c * c, limit), wKey: fill(c * c, limit), wValue: fill(c * c, limit), wOutput: fill(c * c, limit) } };
}
const flops = (t, c, causal) => 8 * t * c * c + (causal ? 2 : 4) * t * t * c;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

// ---- implementations ------------------------------------------------------------------
// Each: {label, name, prepare(kase) → {call(): Float32Array | Promise}, peakBytes(kase), note}
const impls = [];

const { createEngine } = await import(path.join(ROOT, 'web', 'engine.js'));
async function ourEngine(file) {
  const factory = require(file);
  return createEngine({ moduleFactory: factory });  // a module instance (and wasm heap) of its own
}
const SIMD_MODULE = path.join(ROOT, 'web', 'generated', 'attention_core.node.cjs');
const SCALAR_MODULE = path.join(ROOT, 'web', 'generated', 'scalar', 'attention_core.node.cjs');
const RELAXED_DIR = path.join(ROOT, 'web', 'generated', 'relaxed');
/** The relaxed-SIMD flavour: its Node glue with the rewritten .wasm (build_wasm.sh --relaxed). */
async function relaxedEngine() {
  const factory = require(path.join(RELAXED_DIR, 'attention_core.node.cjs'));
  const wasmBinary = fs.readFileSync(path.join(RELAXED_DIR, 'attention_core.wasm'));
  return createEngine({ moduleFactory: (options) => factory({ ...options, wasmBinary }) });
}

function engineImpl(label, name, engine, method) {
  return {
    label, name,
    prepare(k) {
      const mat = (rows, cols, data) => ({ rows, cols, data });
      const x = mat(k.t, k.c, k.x);
      const weights = { wQuery: mat(k.c, k.c, k.w.wQuery), wKey: mat(k.c, k.c, k.w.wKey), wValue: mat(k.c, k.c, k.w.wValue), wOutput: mat(k.c, k.c, k.w.wOutput) };
      let mask = k.causal ? 'causal' : null;
      if (method === 'forwardReference' && k.causal) {  // the Eigen path takes the T×T matrix
        const m = new Uint8Array(k.t * k.t);
        for (let i = 0; i < k.t; i++) m.fill(1, i * k.t, i * k.t + i + 1);
        mask = mat(k.t, k.t, m);
      }
      if (method === 'keepWeights') {  // the weights uploaded once (as a model keeps them), x alone per call
        const kept = engine.keepWeights(weights);
        return { call: () => engine.forward({ x, weights: kept, heads: k.heads, mask, scale: true }).data };
      }
      return { call: () => engine[method]({ x, weights, heads: k.heads, mask, scale: true }).data };
    },
    peakBytes: () => engine.memoryBytes(),
    memoryKind: 'wasm heap',
  };
}

if (!SKIP.has('ours-simd')) impls.push(engineImpl('ours-simd', 'this project, wasm SIMD128 (fast path)', await ourEngine(SIMD_MODULE), 'forward'));
if (!SKIP.has('ours-kept')) impls.push(engineImpl('ours-kept', 'this project, wasm SIMD128 (fast path), weights kept in the engine (keepWeights)', await ourEngine(SIMD_MODULE), 'keepWeights'));
if (!SKIP.has('ours-scalar')) {
  if (fs.existsSync(SCALAR_MODULE)) impls.push(engineImpl('ours-scalar', 'this project, scalar wasm (fast path)', await ourEngine(SCALAR_MODULE), 'forward'));
  else console.error('bench: no scalar build (./build_wasm.sh --scalar); skipping ours-scalar');
}
if (!SKIP.has('ours-relaxed')) {
  if (!fs.existsSync(path.join(RELAXED_DIR, 'attention_core.wasm'))) console.error('bench: no relaxed-SIMD build (./build_wasm.sh --relaxed); skipping ours-relaxed');
  else if (!WebAssembly.validate(fs.readFileSync(path.join(RELAXED_DIR, 'attention_core.wasm')))) console.error('bench: this Node does not run relaxed SIMD (Node 20: --experimental-wasm-relaxed-simd); skipping ours-relaxed');
  else impls.push(engineImpl('ours-relaxed', 'this project, wasm relaxed SIMD (fused multiply-add), weights kept in the engine', await relaxedEngine(), 'keepWeights'));
}
if (BASELINE) impls.push(engineImpl('ours-base', `this project, wasm SIMD128 (fast path), baseline build ${path.basename(path.dirname(path.resolve(BASELINE)))}/${path.basename(BASELINE)}`, await ourEngine(path.resolve(BASELINE)), 'forward'));
if (!SKIP.has('ours-eigen')) impls.push(engineImpl('ours-eigen', 'this project, Eigen reference path, wasm SIMD128', await ourEngine(SIMD_MODULE), 'forwardReference'));

// native: one process per round, inputs through a file
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-bench-'));
function nativeImpl(label, name, binary) {
  return {
    label, name, native: true,
    prepare(k) {
      const input = path.join(tmp, `in-${k.t}-${k.c}.bin`);
      if (!fs.existsSync(input)) {
        const fd = fs.openSync(input, 'w');
        for (const a of [k.x, k.w.wQuery, k.w.wKey, k.w.wValue, k.w.wOutput]) fs.writeSync(fd, new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
        fs.closeSync(fd);
      }
      const output = path.join(tmp, `out-${label}.bin`);
      let last = null;
      const run = (warmup, reps, cpu = []) => {
        const r = spawnSync(binary, ['--tokens', k.t, '--d-model', k.c, '--heads', k.heads, '--mask', k.causal ? 'causal' : 'none',
          '--warmup', warmup, '--reps', reps, '--input', input, '--output', output].map(String), { encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`${binary}: ${r.stderr || r.error}`);
        last = JSON.parse(r.stdout);
        cpu.push(...last.cpu_ms);
        return last.times_ms;
      };
      return {
        run,
        output: () => new Float32Array(fs.readFileSync(output).buffer.slice(0)),
        peakBytes: () => last?.peak_rss_bytes ?? 0,
      };
    },
    memoryKind: 'peak RSS',
  };
}
for (const [label, name, bin] of [['native', 'native g++ -O3, x86-64 baseline (SSE2), same kernels', 'attn_bench'],
  ['native-sse42', 'native g++ -O3 -msse4.2, same kernels', 'attn_bench_sse42']]) {
  if (SKIP.has(label)) continue;
  const file = path.join(NATIVE_DIR, bin);
  if (fs.existsSync(file)) impls.push(nativeImpl(label, name, file));
  else console.error(`bench: ${file} is missing (bench/run.sh builds it); skipping ${label}`);
}

// onnxruntime-web
let ort = null;
if (!SKIP.has('ort')) {
  loadingLabel = 'ort';
  ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  const { attentionModel } = await import('./onnx.mjs');
  const sessions = new Map();
  impls.push({
    label: 'ort', name: `onnxruntime-web ${ort.env.versions?.web ?? ''} (wasm backend, 1 thread)`, async: true,
    async prepare(k) {
      loadingLabel = 'ort';  // its wasm module is instantiated by the first session
      // Three graph forms; the fastest on this case is the one timed (chosen below).
      const forms = {};
      for (const form of ['ops', 'mha', 'attention']) {
        const session = await ort.InferenceSession.create(attentionModel(form, { t: k.t, c: k.c, heads: k.heads, causal: k.causal, scale: 1 / Math.sqrt(k.c / k.heads), w: k.w }),
          { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
        const dims = form === 'ops' ? [k.t, k.c] : [1, k.t, k.c];
        forms[form] = async () => (await session.run({ x: new ort.Tensor('float32', k.x, dims) })).y.data;
        sessions.set(`${k.t}-${k.causal}-${form}`, session);
      }
      let best = null;
      for (const [form, call] of Object.entries(forms)) {
        const times = [];
        for (let i = 0; i < 6; i++) {
          const s = performance.now();
          await call();
          times.push(performance.now() - s);
          if (i >= 2 && times.reduce((a, b) => a + b, 0) > 3 * BUDGET_MS) break;
        }
        const m = median(times.slice(2).length ? times.slice(2) : times);
        if (!best || m < best.m) best = { form, m, call };
      }
      for (const [key, session] of sessions) if (!key.endsWith(best.form) && key.startsWith(`${k.t}-${k.causal}-`)) { await session.release(); sessions.delete(key); }
      loadingLabel = null;
      return { call: best.call, form: best.form };
    },
    peakBytes: () => wasmBytes('ort'),
    memoryKind: 'wasm heap',
  });
  loadingLabel = null;
}

// tfjs-backend-wasm
if (!SKIP.has('tfjs')) {
  loadingLabel = 'tfjs';
  const tf = await import('@tensorflow/tfjs-core');
  const tfwasm = await import('@tensorflow/tfjs-backend-wasm');
  tfwasm.setWasmPaths(path.join(BENCH, 'node_modules', '@tensorflow', 'tfjs-backend-wasm', 'dist') + path.sep);
  tfwasm.setThreadsCount?.(1);
  if (!(await tf.setBackend('wasm'))) throw new Error('tfjs: the wasm backend did not initialise');
  await tf.ready();
  loadingLabel = null;
  let held = [];
  impls.push({
    label: 'tfjs', name: `@tensorflow/tfjs-backend-wasm ${tf.version_core} (SIMD, 1 thread), per-head 2-D matMuls`,
    prepare(k) {
      for (const t of held) t.dispose();
      const d = k.c / k.heads;
      const columns = (wm, h) => {  // W[:, hD .. hD+D) as (C, D)
        const out = new Float32Array(k.c * d);
        for (let r = 0; r < k.c; r++) out.set(wm.subarray(r * k.c + h * d, r * k.c + h * d + d), r * d);
        return out;
      };
      const rowsOf = (m, rows, cols) => {  // (rows, cols) → its transpose (cols, rows)
        const out = new Float32Array(rows * cols);
        for (let r = 0; r < rows; r++) for (let j = 0; j < cols; j++) out[j * rows + r] = m[r * cols + j];
        return out;
      };
      // Per head: W_Q_h, W_V_h (C, D) and W_K_hᵀ (D, C), so that K_hᵀ = W_K_hᵀ·xᵀ comes out
      // of a plain matMul: tfjs-wasm's matMul(q, k, false, true) is 2.6× slower (measured).
      const wq = [], wkT = [], wv = [];
      for (let h = 0; h < k.heads; h++) {
        wq.push(tf.tensor2d(columns(k.w.wQuery, h), [k.c, d]));
        wkT.push(tf.tensor2d(rowsOf(columns(k.w.wKey, h), k.c, d), [d, k.c]));
        wv.push(tf.tensor2d(columns(k.w.wValue, h), [k.c, d]));
      }
      const wo = tf.tensor2d(k.w.wOutput, [k.c, k.c]);
      const scale = tf.scalar(1 / Math.sqrt(d));
      const bias = k.causal ? (() => {
        const b = new Float32Array(k.t * k.t);
        for (let i = 0; i < k.t; i++) b.fill(-Infinity, i * k.t + i + 1, (i + 1) * k.t);
        return tf.tensor2d(b, [k.t, k.t]);
      })() : null;
      held = [...wq, ...wkT, ...wv, wo, scale, ...(bias ? [bias] : [])];
      return {
        call: () => {
          const y = tf.tidy(() => {
            const x = tf.tensor2d(k.x, [k.t, k.c]);
            const xT = tf.transpose(x);
            const heads = [];
            for (let h = 0; h < k.heads; h++) {
              const q = tf.matMul(x, wq[h]);        // (T, D)
              const keyT = tf.matMul(wkT[h], xT);   // (D, T)
              const v = tf.matMul(x, wv[h]);        // (T, D)
              let s = tf.mul(tf.matMul(q, keyT), scale);
              if (bias) s = tf.add(s, bias);
              heads.push(tf.matMul(tf.softmax(s), v));
            }
            return tf.matMul(tf.concat(heads, 1), wo);
          });
          const out = y.dataSync();
          y.dispose();
          return out;
        },
      };
    },
    peakBytes: () => wasmBytes('tfjs'),
    memoryKind: 'wasm heap',
  });
}

// plain JavaScript
if (!SKIP.has('js')) {
  const { jsAttention } = await import('./js_reference.mjs');
  let bytes = 0;
  impls.push({
    label: 'js', name: 'plain JavaScript, Float32Array loops',
    prepare(k) {
      return { call: () => { const r = jsAttention(k.x, k.w, k.t, k.c, k.heads, k.causal, 1 / Math.sqrt(k.c / k.heads)); bytes = r.bytes; return r.y; } };
    },
    peakBytes: () => bytes,
    memoryKind: 'arrays',
  });
}

// ---- the run ---------------------------------------------------------------------
/** n timed calls: wall time of each; the batch's CPU time (this process, all
 * threads) divided evenly over its calls is pushed into `cpu`. */
async function timeCalls(p, n, cpu = []) {
  const times = [];
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    const r = p.call();
    if (r && typeof r.then === 'function') await r;
    times.push(performance.now() - s);
  }
  const c1 = process.cpuUsage(c0);
  for (let i = 0; i < n; i++) cpu.push((c1.user + c1.system) / 1000 / n);
  return times;
}

const results = [];
const started = Date.now();
console.error(`bench: ${impls.map((i) => i.label).join(', ')}; sizes ${SIZES.map((s) => `(${s})`).join(' ')}; ${ROUNDS} rounds, ~${BUDGET_MS / 1000} s timed per implementation and case`);
for (const [t, c, heads] of SIZES) {
  const { x, w } = inputs(t, c);
  for (const causal of [false, true]) {
    const k = { t, c, heads, causal, x, w };
    const caseName = `(${t},${c},${heads})${causal ? ' causal' : ''}`;
    // prepare + warm up + calibrate each implementation; its first output is checked
    const prepared = [];
    let reference = null;
    for (const impl of impls) {
      const p = await impl.prepare(k);
      let warm = [];
      let output;
      let firstMs = 0;
      if (impl.native) {
        warm = p.run(1, 1);
        output = p.output();
      } else {
        const first = performance.now();
        output = await p.call();
        firstMs = performance.now() - first;
        // the first call warms up too; a call over 2 s needs no more (its code tiered up at smaller sizes)
        for (let i = 0; i < 30 && firstMs < 2000; i++) {
          warm.push(...(await timeCalls(p, 1)));
          const spent = warm.reduce((a, b) => a + b, 0);
          if ((warm.length >= 5 && spent > 200) || (warm.length >= 2 && spent > 2000)) break;
        }
      }
      output = Float32Array.from(output);
      if (impl.label === 'js') reference = output;
      const perCall = warm.length ? median(warm.slice(-3)) : firstMs;
      const reps = Math.max(3, Math.min(500, Math.round(BUDGET_MS / Math.max(perCall, 1e-3))));
      prepared.push({ impl, p, output, reps, times: [], cpu: [], warmup: impl.native ? Math.max(2, Math.min(20, Math.ceil(100 / Math.max(perCall, 0.01)))) : 0 });
    }
    if (!reference) reference = prepared.find((q) => q.impl.label === 'ours-eigen')?.output ?? prepared[0].output;
    // interleaved rounds, each implementation's batch in a rotating order
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < prepared.length; i++) {
        const q = prepared[(i + r) % prepared.length];
        const n = Math.floor(q.reps / ROUNDS) + (r < q.reps % ROUNDS ? 1 : 0);
        if (n === 0) continue;
        q.times.push(...(q.impl.native ? q.p.run(q.warmup, n, q.cpu) : await timeCalls(q.p, n, q.cpu)));
      }
    }
    for (const q of prepared) {
      const ms = median(q.times);
      const row = {
        impl: q.impl.label, name: q.impl.name, tokens: t, d_model: c, heads, mask: causal ? 'causal' : 'none',
        median_ms: ms, gflops: flops(t, c, causal) / ms / 1e6, reps: q.times.length, times_ms: q.times,
        cpu_median_ms: median(q.cpu), cpu_gflops: flops(t, c, causal) / median(q.cpu) / 1e6,
        peak_bytes: q.p.peakBytes ? q.p.peakBytes() : q.impl.peakBytes(k), memory_kind: q.impl.memoryKind,
        max_rel_error: relativeError(q.output, reference),
      };
      if (q.p.form) row.ort_form = q.p.form;
      row.agrees = row.max_rel_error <= TOLERANCE;
      results.push(row);
    }
    const line = prepared.map((q) => `${q.impl.label} ${median(q.times).toFixed(3)}`).join('  ');
    console.error(`bench: ${caseName}: ${line} ms  [${((Date.now() - started) / 1000).toFixed(0)} s]`);
  }
}

// ---- report ----------------------------------------------------------------------
const cases = [];
for (const [t, c, h] of SIZES) for (const mask of ['none', 'causal']) cases.push({ t, c, h, mask });
const cell = (label, cs) => results.find((r) => r.impl === label && r.tokens === cs.t && r.d_model === cs.c && r.heads === cs.h && r.mask === cs.mask);
const fmtMs = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms >= 0.1 ? ms.toFixed(3) : ms.toFixed(4));
const head = `| implementation | ${cases.map((cs) => `(${cs.t},${cs.c},${cs.h})${cs.mask === 'causal' ? ' causal' : ''}`).join(' | ')} |`;
const sep = `|---|${cases.map(() => '---:').join('|')}|`;
const lines = [];
lines.push('Median time per call in ms [GFLOP/s]; * = disagrees with the JS reference by more than 1e-4.');
lines.push('');
lines.push(head, sep);
for (const impl of impls) {
  lines.push(`| ${impl.label}: ${impl.name} | ${cases.map((cs) => {
    const r = cell(impl.label, cs);
    return r ? `${fmtMs(r.median_ms)} [${r.gflops.toFixed(1)}]${r.agrees ? '' : '*'}` : '—';
  }).join(' | ')} |`);
}
lines.push('', 'The same run in CPU time per call (ms) [GFLOP/s] of the process doing the work (immune to waiting for a core', 'on a busy machine; for the in-process rows it includes V8\'s helper threads):', '', head, sep);
for (const impl of impls) {
  lines.push(`| ${impl.label} | ${cases.map((cs) => {
    const r = cell(impl.label, cs);
    return r ? `${fmtMs(r.cpu_median_ms)} [${r.cpu_gflops.toFixed(1)}]` : '—';
  }).join(' | ')} |`);
}
const ratios = [];
const ratioRow = (title, num, den, key = 'median_ms', into = ratios) => {
  if (!impls.some((i) => i.label === num) || !impls.some((i) => i.label === den)) return;
  into.push(`| ${title} | ${cases.map((cs) => {
    const a = cell(num, cs), b = cell(den, cs);
    return a && b ? `${(a[key] / b[key]).toFixed(2)}×` : '—';
  }).join(' | ')} |`);
};
ratioRow('ours-simd / ort', 'ours-simd', 'ort');
ratioRow('ours-simd / tfjs', 'ours-simd', 'tfjs');
ratioRow('ours-simd / native-sse42', 'ours-simd', 'native-sse42');
ratioRow('ours-simd / native', 'ours-simd', 'native');
ratioRow('ours-simd / ours-base', 'ours-simd', 'ours-base');
ratioRow('ours-kept / ort', 'ours-kept', 'ort');
ratioRow('ours-kept / tfjs', 'ours-kept', 'tfjs');
ratioRow('ours-kept / ours-simd', 'ours-kept', 'ours-simd');
ratioRow('ours-relaxed / ort', 'ours-relaxed', 'ort');
ratioRow('ours-relaxed / tfjs', 'ours-relaxed', 'tfjs');
ratioRow('ours-relaxed / ours-kept', 'ours-relaxed', 'ours-kept');
ratioRow('ours-base / ort', 'ours-base', 'ort');
ratioRow('ours-base / tfjs', 'ours-base', 'tfjs');
ratioRow('ours-simd / ours-eigen', 'ours-simd', 'ours-eigen');
ratioRow('ours-simd / ours-scalar', 'ours-simd', 'ours-scalar');
ratioRow('ours-simd / js', 'ours-simd', 'js');
lines.push('', 'Time ratios (below 1: ours is faster).', '', head.replace('implementation', 'ratio'), sep, ...ratios);
const cpuRatios = [];
ratioRow('ours-simd / ort', 'ours-simd', 'ort', 'cpu_median_ms', cpuRatios);
ratioRow('ours-simd / tfjs', 'ours-simd', 'tfjs', 'cpu_median_ms', cpuRatios);
ratioRow('ours-simd / native-sse42', 'ours-simd', 'native-sse42', 'cpu_median_ms', cpuRatios);
ratioRow('ours-simd / ours-base', 'ours-simd', 'ours-base', 'cpu_median_ms', cpuRatios);
ratioRow('ours-kept / ort', 'ours-kept', 'ort', 'cpu_median_ms', cpuRatios);
ratioRow('ours-kept / tfjs', 'ours-kept', 'tfjs', 'cpu_median_ms', cpuRatios);
ratioRow('ours-kept / ours-simd', 'ours-kept', 'ours-simd', 'cpu_median_ms', cpuRatios);
ratioRow('ours-relaxed / ort', 'ours-relaxed', 'ort', 'cpu_median_ms', cpuRatios);
ratioRow('ours-relaxed / tfjs', 'ours-relaxed', 'tfjs', 'cpu_median_ms', cpuRatios);
ratioRow('ours-relaxed / ours-kept', 'ours-relaxed', 'ours-kept', 'cpu_median_ms', cpuRatios);
ratioRow('ours-base / ort', 'ours-base', 'ort', 'cpu_median_ms', cpuRatios);
ratioRow('ours-base / tfjs', 'ours-base', 'tfjs', 'cpu_median_ms', cpuRatios);
if (cpuRatios.length) lines.push('', 'The same ratios in CPU time:', '', head.replace('implementation', 'ratio (CPU time)'), sep, ...cpuRatios);
const causalVsNone = SIZES.map(([t, c, h]) => {
  const a = cell('ours-simd', { t, c, h, mask: 'causal' }), b = cell('ours-simd', { t, c, h, mask: 'none' });
  return a && b ? `(${t},${c},${h}) ${(a.median_ms / b.median_ms).toFixed(2)}×` : null;
}).filter(Boolean);
if (causalVsNone.length) lines.push('', `ours-simd, causal / no mask: ${causalVsNone.join(', ')}`);
const memHead = `| peak memory (MB) | ${SIZES.map(([t, c, h]) => `(${t},${c},${h})`).join(' | ')} |`;
lines.push('', memHead, `|---|${SIZES.map(() => '---:').join('|')}|`);
for (const impl of impls) {
  lines.push(`| ${impl.label} (${impl.memoryKind}) | ${SIZES.map(([t, c, h]) => {
    const rs = results.filter((r) => r.impl === impl.label && r.tokens === t && r.d_model === c && r.heads === h);
    return rs.length ? (Math.max(...rs.map((r) => r.peak_bytes)) / 2 ** 20).toFixed(1) : '—';
  }).join(' | ')} |`);
}
const ortForms = results.filter((r) => r.ort_form).map((r) => `(${r.tokens},${r.d_model},${r.heads})${r.mask === 'causal' ? ' causal' : ''}: ${r.ort_form}`);
lines.push('');
lines.push('GFLOP/s counts 8·T·C² + 4·T²·C without a mask and 8·T·C² + 2·T²·C with the causal mask (only the visible half is');
lines.push('work; ours and the JS reference skip the hidden half, onnxruntime-web and tfjs compute it and add −∞ to it), the same');
lines.push('count for every row of a column. Every implementation is single-threaded. Memory: wasm heap = the wasm memory of the');
lines.push('implementation\'s module (grows, never shrinks); peak RSS of the native process; arrays = the JS reference\'s typed arrays.');
if (ortForms.length) lines.push(`onnxruntime-web graph form used (fastest of ops / com.microsoft MultiHeadAttention / Attention): ${ortForms.join('; ')}.`);
const disagreeing = results.filter((r) => !r.agrees);
lines.push(disagreeing.length
  ? `DISAGREEMENT above 1e-4: ${disagreeing.map((r) => `${r.impl} (${r.tokens},${r.d_model},${r.heads}) ${r.mask}: ${r.max_rel_error.toExponential(2)}`).join('; ')}`
  : `All outputs agree with the JS reference within 1e-4 (largest: ${Math.max(...results.map((r) => r.max_rel_error)).toExponential(2)}).`);
const table = lines.join('\n');
console.log(table);

const cpu = os.cpus()[0]?.model ?? 'unknown';
fs.mkdirSync(path.dirname(OUT), { recursive: true });
fs.writeFileSync(OUT, JSON.stringify({
  date: new Date().toISOString(), node: process.version, cpu, cores: os.cpus().length, loadavg_at_end: os.loadavg(),
  sizes: SIZES, rounds: ROUNDS, budget_s: BUDGET_MS / 1000, tolerance: TOLERANCE,
  flops: '8*T*C^2 + 4*T^2*C (causal: 8*T*C^2 + 2*T^2*C)',
  implementations: impls.map((i) => ({ label: i.label, name: i.name, memory: i.memoryKind })),
  results, table,
}, null, 1));
console.error(`bench: wrote ${path.relative(process.cwd(), OUT)} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
fs.rmSync(tmp, { recursive: true, force: true });
process.exit(0);  // onnxruntime-web keeps handles open
