// The training benchmark of issue #12: steps per second of the same model, the same
// initial weights, the same fixed batch and the same optimizer, in four implementations,
// in one interleaved run. bench/train.sh builds what it needs and calls this; run it
// directly when everything is built:
//
//   node bench/train.mjs [--sizes 2,32,2,32,32/4,128,4,64,16] [--mlp 0] [--task previous-token]
//                        [--lr 3e-3] [--budget 2] [--rounds 5] [--skip wasm,native,torch,tfjs]
//                        [--out bench/results/train-latest.json] [--dumps a.json,b.json]
//
// A size is L,C,H,T,B: layers, d_model, heads, sequence length, batch. The model for every
// size: pre-LN (layernorm on), learned positions, causal mask, 1/√D scale, untied
// unembedding, attention-only (--mlp F adds an F-wide GELU MLP per layer; "--mlp 4x" = 4·C).
// The initial weights and the batch come from `build/attn grad --steps 0` on the task
// (default previous-token: its sequences are --length = T tokens long and its recipe has
// LayerNorm; the induction recipe has none, and the CLI can turn LayerNorm off but not on);
// B is --batch. Every implementation loads the same dump. --dumps uses existing dumps
// (any `attn grad --format json` output) instead, one case each.
//
// Implementations (labels in the table and JSON):
//   ours-wasm    this project, wasm SIMD128 in Node: createEngine() (web/engine.js),
//                engine.loadTrainer(a safetensors checkpoint of the dump's weights),
//                trainer.stepBatch(batch, 1) per step
//   ours-native  this project natively (build/bench/attn_train_bench: Model forward/backward
//                + AdamW), a child process kept warm between rounds
//   torch        PyTorch (Debian's python3-torch, CPU, torch.set_num_threads(1)) running
//                bench/torch_model.py --bench --serve, a child process kept warm
//   tfjs         @tensorflow/tfjs-core + tfjs-backend-wasm (SIMD, 1 thread),
//                tf.variableGrads + tf.train.adam (bench/tfjs_train.mjs), in this process
// Optimizer everywhere: Adam(W), lr --lr, betas (0.9, 0.999), eps 1e-8, weight decay 0,
// no clipping, no warm-up.
//
// Each implementation first runs 20 steps from the init and reports the loss of each
// (the loss of a step is its forward pass's, before the update); they must agree with
// ours-native within 1e-3 at every step. Then, in --rounds rounds whose order rotates,
// each implementation trains (continuing from where it is) for --budget seconds after 3
// warm-up steps; reported: the median steps/s over rounds, the ratios, the agreement.
// Writes the JSON to --out and prints a Markdown table.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH, '..');

// ---- options --------------------------------------------------------------------------
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
if (args.includes('--help') || args.includes('-h')) {
  console.log(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').filter((l) => l.startsWith('//')).map((l) => l.slice(3)).join('\n'));
  process.exit(0);
}
const SIZES = opt('sizes', '2,32,2,32,32/4,128,4,64,16').split('/').map((s) => {
  const v = s.split(',').map(Number);
  if (v.length !== 5 || v.some((x) => !Number.isInteger(x) || x < 1)) throw new Error(`--sizes: "${s}" is not L,C,H,T,B`);
  return { L: v[0], C: v[1], H: v[2], T: v[3], B: v[4] };
});
const MLP = opt('mlp', '0');
const TASK = opt('task', 'previous-token');
const LR = Number(opt('lr', '3e-3'));
const BUDGET_S = Number(opt('budget', '2'));
const ROUNDS = Number(opt('rounds', '5'));
const STEPS = 20;
const SKIP = new Set(opt('skip', '').split(',').filter(Boolean));
const OUT = path.resolve(opt('out', path.join(BENCH, 'results', 'train-latest.json')));
const ATTN = path.resolve(opt('attn', path.join(ROOT, 'build', 'attn')));
const NATIVE = path.resolve(opt('native', path.join(ROOT, 'build', 'bench', 'attn_train_bench')));
const PYTHON = opt('python', '/usr/bin/python3');
const LOSS_TOLERANCE = 1e-3;
const DUMPS = opt('dumps', '').split(',').filter(Boolean).map((f) => path.resolve(f));
const mlpOf = (C) => (MLP.endsWith('x') ? Number(MLP.slice(0, -1)) * C : Number(MLP));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};
const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

// ---- the dumps: init + batch for each size ---------------------------------------------------
fs.mkdirSync(path.dirname(OUT), { recursive: true });
function makeDump(size) {
  const F = mlpOf(size.C);
  const file = path.join(path.dirname(OUT), `train-init-${TASK}-L${size.L}-C${size.C}-H${size.H}-T${size.T}-B${size.B}-F${F}.json`);
  const cli = [
    'grad', '--task', TASK, '--length', String(size.T), '--batch', String(size.B),
    '--layers', String(size.L), '--d-model', String(size.C), '--heads', String(size.H), '--mlp', String(F),
    '--positional', 'learned', '--mask', 'causal', '--seed', '1', '--steps', '0', '--format', 'json',
  ];
  const r = spawnSync(ATTN, cli, { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`${ATTN} ${cli.join(' ')} failed (${r.status}): ${r.stderr}`);
  fs.writeFileSync(file, r.stdout);
  const dump = JSON.parse(r.stdout);
  const { ids } = dump.batch;
  const c = dump.config;
  const got = { L: c.layers, C: c.d_model, H: c.heads, T: ids[0].length, B: ids.length };
  for (const k of Object.keys(got)) {
    if (got[k] !== size[k]) throw new Error(`the dump of ${JSON.stringify(size)} has ${k} = ${got[k]} (${cli.join(' ')})`);
  }
  return { file, dump, cli: `attn ${cli.join(' ')}` };
}

/** The dump's weights as a safetensors checkpoint the trainer loads (optimizer in "train"). */
function checkpointOf(dump) {
  const tensors = Object.entries(dump.params).map(([name, value]) => {
    const shape = Array.isArray(value[0]) ? [value.length, value[0].length] : [value.length];
    return { name, shape, data: Float32Array.from(value.flat()) };
  });
  const header = {};
  let offset = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + 4 * t.data.length] };
    offset += 4 * t.data.length;
  }
  header.__metadata__ = {
    format: 'attention-playground-model/1',
    config: JSON.stringify(dump.config),
    train: JSON.stringify({ lr: LR, beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0, clip: 0, warmup: 0, batch: dump.batch.ids.length, seed: 1 }),
    step: '0',
  };
  let json = Buffer.from(JSON.stringify(header), 'utf8');
  const pad = (8 - (json.length % 8)) % 8;  // keep the tensor data 8-byte aligned, as Hugging Face does
  json = Buffer.concat([json, Buffer.alloc(pad, 0x20)]);
  const bytes = new Uint8Array(8 + json.length + offset);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
  bytes.set(json, 8);
  let at = 8 + json.length;
  for (const t of tensors) {
    const dv = new DataView(bytes.buffer, at, 4 * t.data.length);
    t.data.forEach((x, i) => dv.setFloat32(4 * i, x, true));
    at += 4 * t.data.length;
  }
  return bytes;
}

// ---- implementations: {label, name, losses: number[], time(seconds) → Promise<{steps, seconds}>, close()} --------
/** A child that prints its 20 losses, then answers "time S" lines with one JSON line each. */
async function server(label, name, command, argv) {
  const child = spawn(command, argv, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const lines = readline.createInterface({ input: child.stdout });
  const queue = [];
  const waiting = [];
  lines.on('line', (l) => (waiting.length ? waiting.shift().resolve(l) : queue.push(l)));
  child.on('exit', (code) => { for (const w of waiting.splice(0)) w.reject(new Error(`${label} exited (${code}): ${stderr}`)); });
  const next = () => (queue.length ? Promise.resolve(queue.shift())
    : new Promise((resolve, reject) => waiting.push({ resolve, reject })));
  const first = JSON.parse(await next());
  if (!first.losses) throw new Error(`${label}: ${JSON.stringify(first)} ${stderr}`);
  return {
    label, name: name(first), losses: first.losses,
    async time(seconds) {
      child.stdin.write(`time ${seconds}\n`);
      return JSON.parse(await next());
    },
    close() { child.stdin.end('quit\n'); },
  };
}

/** Times an in-process step function (after 3 warm-up steps) for `seconds`. */
function timeInProcess(run, seconds) {
  run(3);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  let el = 0;
  do {
    run(1);
    n++;
    el = (performance.now() - t0) / 1000;
  } while (el < seconds);
  const cpu = process.cpuUsage(c0);
  return { steps: n, seconds: el, steps_per_s: n / el, cpu_seconds: (cpu.user + cpu.system) / 1e6 };
}

let engine = null;
let tf = null;
async function ourWasm(dump) {
  if (!engine) {
    const { createEngine } = await import(path.join(ROOT, 'web', 'engine.js'));
    engine = await createEngine();
    if (typeof engine.loadTrainer !== 'function') throw new Error('web/engine.js has no loadTrainer: rebuild the wasm module (./build_wasm.sh)');
  }
  const trainer = engine.loadTrainer(checkpointOf(dump));
  const { ids, targets, lengths } = dump.batch;
  const B = ids.length, T = ids[0].length;
  const batch = { ids: Int32Array.from(ids.flat()), targets: Int32Array.from(targets.flat()), batch: B, length: T, ...(lengths ? { lengths } : {}) };
  const losses = Array.from({ length: STEPS }, () => trainer.stepBatch(batch, 1).loss);
  return {
    label: 'ours-wasm', name: 'this project, wasm SIMD128 (Node, engine.loadTrainer + trainer.stepBatch)', losses,
    time: async (s) => timeInProcess((n) => trainer.stepBatch(batch, n), s),
    close() { trainer.dispose(); },
  };
}

async function tfjsImpl(dump) {
  const { loadTfjs, createTfjsTrainer } = await import('./tfjs_train.mjs');
  if (!tf) tf = await loadTfjs();
  const trainer = createTfjsTrainer(tf, dump, { lr: LR });
  const losses = Array.from({ length: STEPS }, () => trainer.step());
  return {
    label: 'tfjs', name: `@tensorflow/tfjs-backend-wasm ${tf.version_core} (SIMD, 1 thread), tf.variableGrads + tf.train.adam`, losses,
    time: async (s) => timeInProcess((n) => trainer.run(n), s),
    close() { trainer.dispose(); },
  };
}

const IMPLS = [
  { label: 'ours-wasm', make: ourWasm },
  { label: 'ours-native', make: (dump, file) => server('ours-native', () => 'this project natively (g++ -O3, x86-64 baseline, attn_train_bench)', NATIVE, [file, '--lr', String(LR), '--steps', String(STEPS), '--serve']) },
  { label: 'torch', make: (dump, file) => server('torch', (f) => `PyTorch ${f.torch} (CPU, ${f.threads} thread, BLAS: ${f.blas})`, PYTHON, [path.join(BENCH, 'torch_model.py'), '--bench', file, '--lr', String(LR), '--steps', String(STEPS), '--serve']) },
  { label: 'tfjs', make: tfjsImpl },
].filter((i) => !SKIP.has(i.label) && !SKIP.has(i.label.replace('ours-', '')));

// ---- the run -----------------------------------------------------------------------------------
const startLoad = loadavg();
console.error(`machine: ${os.cpus()[0]?.model} × ${os.cpus().length}, load ${startLoad}, node ${process.version}`);
if (Number(startLoad.split(' ')[0]) > 0.5) console.error('warning: the machine is busy (1-minute load > 0.5); the numbers will be noisy');

const cases = [];
const inputs = DUMPS.length ? DUMPS.map((file) => {
  const dump = JSON.parse(fs.readFileSync(file, 'utf8'));
  const c = dump.config;
  return { size: { L: c.layers, C: c.d_model, H: c.heads, T: dump.batch.ids[0].length, B: dump.batch.ids.length }, file, dump, cli: `(${path.relative(ROOT, file)})` };
}) : SIZES.map((size) => ({ size, ...makeDump(size) }));
for (const { size, file, dump, cli } of inputs) {
  const F = dump.config.mlp;
  console.error(`== L ${size.L}, C ${size.C}, H ${size.H}, T ${size.T}, B ${size.B}, mlp ${F}: ${cli}`);
  const impls = [];
  for (const i of IMPLS) {
    try {
      impls.push(await i.make(dump, file));
    } catch (e) {
      console.error(`  ${i.label}: not run: ${e.message}`);
    }
  }
  const runs = Object.fromEntries(impls.map((i) => [i.label, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < impls.length; k++) {
      const impl = impls[(k + r) % impls.length];
      const res = await impl.time(BUDGET_S);
      runs[impl.label].push(res);
    }
    console.error(`  round ${r + 1}/${ROUNDS}: ` + impls.map((i) => `${i.label} ${runs[i.label].at(-1).steps_per_s.toFixed(2)}`).join(', ') + ` steps/s (load ${loadavg()})`);
  }
  for (const i of impls) i.close();
  const reference = impls.find((i) => i.label === 'ours-native') ?? impls[0];
  const result = {
    size: { ...size, mlp: F }, task: TASK, config: dump.config, dump: path.relative(ROOT, file), cli,
    parameters: Object.values(dump.params).reduce((n, v) => n + v.flat().length, 0),
    dump_loss: dump.loss, reference: reference?.label,
    impls: impls.map((i) => {
      const sps = runs[i.label].map((x) => x.steps_per_s);
      const diff = Math.max(...i.losses.map((l, s) => Math.abs(l - reference.losses[s])));
      return {
        label: i.label, name: i.name, steps_per_s: median(sps), min: Math.min(...sps), max: Math.max(...sps),
        cpu_per_wall: median(runs[i.label].map((x) => x.cpu_seconds / x.seconds)),
        steps_per_cpu_s: median(runs[i.label].map((x) => x.steps / x.cpu_seconds)),
        rounds: runs[i.label], losses: i.losses, loss_max_diff: diff, loss_agrees: diff <= LOSS_TOLERANCE,
        first_loss_vs_dump: Math.abs(i.losses[0] - dump.loss),
      };
    }),
  };
  const sps = Object.fromEntries(result.impls.map((x) => [x.label, x.steps_per_s]));
  result.ratios = {
    'ours-wasm/tfjs': sps['ours-wasm'] / sps.tfjs,
    'ours-wasm/torch': sps['ours-wasm'] / sps.torch,
    'ours-native/torch': sps['ours-native'] / sps.torch,
  };
  // the same ratios from CPU time (steps per CPU-second): less sensitive to a shared machine
  const cps = Object.fromEntries(result.impls.map((x) => [x.label, x.steps_per_cpu_s]));
  result.cpu_ratios = {
    'ours-wasm/tfjs': cps['ours-wasm'] / cps.tfjs,
    'ours-wasm/torch': cps['ours-wasm'] / cps.torch,
    'ours-native/torch': cps['ours-native'] / cps.torch,
  };
  cases.push(result);
}
const endLoad = loadavg();

// ---- report ------------------------------------------------------------------------------------
const fmt = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '—');
const lines = [];
lines.push(`Training steps per second (median of ${ROUNDS} interleaved rounds of ${BUDGET_S} s; AdamW lr ${LR}, one fixed batch; ` +
  (DUMPS.length ? `models and batches from ${DUMPS.map((f) => path.relative(ROOT, f)).join(', ')}). `
    : `model: pre-LN, learned positions, causal, untied, ${MLP === '0' ? 'attention-only' : `mlp ${MLP}`}; task ${TASK}). `) +
  `Load ${startLoad} at the start, ${endLoad} at the end.`);
lines.push('');
lines.push('| L, C, H, T, B | params | ' + IMPLS.map((i) => i.label).join(' | ') + ' | ours-wasm/tfjs | ours-wasm/torch | ours-native/torch | 20-step loss, max diff vs ours-native |');
lines.push('|---|---|' + IMPLS.map(() => '---|').join('') + '---|---|---|---|');
for (const c of cases) {
  const by = Object.fromEntries(c.impls.map((x) => [x.label, x]));
  const cells = IMPLS.map((i) => (by[i.label] ? `${fmt(by[i.label].steps_per_s, 1)} (${fmt(1000 / by[i.label].steps_per_s, 1)} ms)` : '—'));
  const agree = c.impls.filter((x) => x.label !== c.reference).map((x) => `${x.label} ${x.loss_max_diff.toExponential(1)}${x.loss_agrees ? '' : ' ✗'}`).join(', ');
  lines.push(`| ${c.size.L}, ${c.size.C}, ${c.size.H}, ${c.size.T}, ${c.size.B} | ${c.parameters} | ${cells.join(' | ')} | ` +
    `${fmt(c.ratios['ours-wasm/tfjs'])}× | ${fmt(c.ratios['ours-wasm/torch'])}× | ${fmt(c.ratios['ours-native/torch'])}× | ${agree} |`);
}
lines.push('');
lines.push('The same in steps per CPU-second of each process (robust to other load on the machine, not to shared caches):');
lines.push('');
lines.push('| L, C, H, T, B | ' + IMPLS.map((i) => i.label).join(' | ') + ' | ours-wasm/tfjs | ours-wasm/torch | ours-native/torch |');
lines.push('|---|' + IMPLS.map(() => '---|').join('') + '---|---|---|');
for (const c of cases) {
  const by = Object.fromEntries(c.impls.map((x) => [x.label, x]));
  lines.push(`| ${c.size.L}, ${c.size.C}, ${c.size.H}, ${c.size.T}, ${c.size.B} | ` +
    IMPLS.map((i) => (by[i.label] ? `${fmt(by[i.label].steps_per_cpu_s, 1)} (${fmt(1000 / by[i.label].steps_per_cpu_s, 1)} ms)` : '—')).join(' | ') +
    ` | ${fmt(c.cpu_ratios['ours-wasm/tfjs'])}× | ${fmt(c.cpu_ratios['ours-wasm/torch'])}× | ${fmt(c.cpu_ratios['ours-native/torch'])}× |`);
}
lines.push('');
lines.push('CPU time / wall time of the timed steps (1.00 = a core to itself; lower = the machine was shared): ' +
  cases.map((c) => `(${[c.size.L, c.size.C, c.size.H, c.size.T, c.size.B].join(', ')}) ` +
    c.impls.map((x) => `${x.label} ${fmt(x.cpu_per_wall)}`).join(', ')).join('; ') + '.');
lines.push('');
lines.push('Targets: ours-wasm ≥ 3× tfjs at every size and > torch at the smallest; ours-native ≥ torch at every size; every 20-step loss within 1e-3 of ours-native.');
const verdicts = [];
cases.forEach((c, k) => {
  const name = `(${[c.size.L, c.size.C, c.size.H, c.size.T, c.size.B].join(', ')})`;
  const check = (what, ok) => verdicts.push(`${ok ? 'met' : 'MISSED'}: ${what} at ${name}`);
  if (Number.isFinite(c.ratios['ours-wasm/tfjs'])) check(`ours-wasm ≥ 3× tfjs (${fmt(c.ratios['ours-wasm/tfjs'])}×)`, c.ratios['ours-wasm/tfjs'] >= 3);
  if (k === 0 && Number.isFinite(c.ratios['ours-wasm/torch'])) check(`ours-wasm > torch (${fmt(c.ratios['ours-wasm/torch'])}×)`, c.ratios['ours-wasm/torch'] > 1);
  if (Number.isFinite(c.ratios['ours-native/torch'])) check(`ours-native ≥ torch (${fmt(c.ratios['ours-native/torch'])}×)`, c.ratios['ours-native/torch'] >= 1);
  check('20-step losses agree within 1e-3', c.impls.every((x) => x.loss_agrees));
  const first = Math.max(...c.impls.map((x) => x.first_loss_vs_dump / Math.max(1, Math.abs(c.dump_loss))));
  check(`every first-step loss equals the dump's (same init and batch; max rel diff ${first.toExponential(1)})`, first <= 1e-5);
});
for (const v of verdicts) lines.push(`- ${v}`);
const table = lines.join('\n');
console.log(table);

const out = {
  date: new Date().toISOString(),
  machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, load_start: startLoad, load_end: endLoad, node: process.version },
  options: { sizes: inputs.map((i) => i.size), mlp: MLP, task: TASK, lr: LR, budget_s: BUDGET_S, rounds: ROUNDS, steps: STEPS, loss_tolerance: LOSS_TOLERANCE },
  cases, verdicts, table,
};
fs.writeFileSync(OUT, JSON.stringify(out, null, 1));
console.error(`wrote ${path.relative(process.cwd(), OUT)}`);
process.exit(0);
