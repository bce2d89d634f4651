// The training model of issue #12 in @tensorflow/tfjs-core + @tensorflow/tfjs-backend-wasm
// (SIMD, 1 thread): the peer bench/train.mjs times against ours. Written from the issue's
// model specification (as bench/torch_model.py), with tf.variableGrads + tf.train.adam.
//
//   x = E[ids] + P[0:T];  per layer: a = LN1(x); x = x + MHA(a); [m = LN2(x); x = x + GELU(m·W_in + b_in)·W_out + b_out]
//   logits = LN_f(x)·W_U (W_U = Eᵀ when tied);  loss = mean cross-entropy over targets >= 0
//
// Dimension letters: B sequences, T tokens, C d_model, H heads, D = C/H, F mlp width,
// V vocabulary, N = B·T rows.
//
// tfjs-backend-wasm has no UnsortedSegmentSum kernel (the gradient of tf.gather), so the
// embedding lookup is a one-hot matMul (N×V)·(V×C); the cross-entropy picks the target
// with a constant one-hot (N×V) matrix scaled by 1/(number of targets). Masks are an
// additive −1e9 bias (exp underflows to exactly 0); rows with no visible key at all are
// multiplied by 0 after the softmax.
//
// As a library (bench/train.mjs):  const t = createTfjsTrainer(tf, dump, {lr});  t.step() → loss;
//   t.run(n) (n steps, no read-back), t.dispose().
// As a command (loads tfjs itself):
//   node bench/tfjs_train.mjs DUMP.json [--lr 3e-3] [--steps 20] [--budget 2]
//        prints {"losses": [...]} (the loss of each of the first --steps steps) then {"steps", "seconds", "steps_per_s"}
//   node bench/tfjs_train.mjs DUMP.json --grads OUT.json
//        writes the dump with this model's loss and gradients at the dump's params (float32),
//        for `python3 bench/torch_model.py --check OUT.json`.

import fs from 'node:fs';
import { register } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH = path.dirname(fileURLToPath(import.meta.url));

// tfjs-core registers no gradients by itself (the @tensorflow/tfjs union package does,
// from tfjs-core's own dist/register_all_gradients.js); that file exists only as ES modules
// with extension-less relative imports, which Node resolves only with this hook (it adds
// ".js" inside tfjs-core/dist). The registries and the engine are global, so the gradients
// it registers serve the CommonJS tfjs-core that the wasm backend uses.
const RESOLVE_HOOK = `
export async function resolve(spec, ctx, next) {
  if ((spec.startsWith('./') || spec.startsWith('../')) && !/\\.[cm]?js$/.test(spec) &&
      ctx.parentURL && ctx.parentURL.includes('/@tensorflow/tfjs-core/dist/'))
    return next(spec + '.js', ctx);
  return next(spec, ctx);
}`;

/** tfjs-core with its gradients and the wasm backend (SIMD build, 1 thread), from bench/node_modules. */
export async function loadTfjs() {
  register('data:text/javascript,' + encodeURIComponent(RESOLVE_HOOK));
  const tf = await import('@tensorflow/tfjs-core');
  await import('@tensorflow/tfjs-core/dist/register_all_gradients.js');
  const tfwasm = await import('@tensorflow/tfjs-backend-wasm');
  tfwasm.setWasmPaths(path.join(BENCH, 'node_modules', '@tensorflow', 'tfjs-backend-wasm', 'dist') + path.sep);
  tfwasm.setThreadsCount?.(1);
  if (!(await tf.setBackend('wasm'))) throw new Error('tfjs: the wasm backend did not initialise');
  await tf.ready();
  return tf;
}

/** Name → [rows, cols] (vectors: [cols]) of every parameter, the names. */
export function parameterShapes(cfg) {
  const { vocab: V, d_model: C, mlp: F } = cfg;
  const s = { embed: [V, C] };
  if (cfg.positional === 'learned') s.pos = [cfg.context, C];
  for (let l = 0; l < cfg.layers; l++) {
    const p = `layers.${l}.`;
    if (cfg.layernorm) { s[p + 'ln1.gain'] = [C]; s[p + 'ln1.bias'] = [C]; }
    for (const w of ['w_query', 'w_key', 'w_value', 'w_output']) s[p + w] = [C, C];
    if (F > 0) {
      if (cfg.layernorm) { s[p + 'ln2.gain'] = [C]; s[p + 'ln2.bias'] = [C]; }
      s[p + 'mlp.w_in'] = [C, F]; s[p + 'mlp.b_in'] = [F]; s[p + 'mlp.w_out'] = [F, C]; s[p + 'mlp.b_out'] = [C];
    }
  }
  if (cfg.layernorm) { s['final_ln.gain'] = [C]; s['final_ln.bias'] = [C]; }
  if (!cfg.tied) s.unembed = [C, V];
  return s;
}

/** P (T×C), interleaved: column 2i = sin(pos / 10000^(2i/C)), column 2i+1 = cos(same angle). */
function sinusoidal(T, C) {
  const p = new Float32Array(T * C);
  for (let t = 0; t < T; t++) {
    for (let j = 0; j < C; j++) {
      const angle = t / Math.pow(10000, (j - (j % 2)) / C);
      p[t * C + j] = j % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
    }
  }
  return p;
}

let instances = 0;

/**
 * A trainer for the dump's model, init (dump.params) and batch (dump.batch), on the
 * current tfjs backend. opts: {lr = 3e-3}.
 */
export function createTfjsTrainer(tf, dump, opts = {}) {
  const cfg = dump.config;
  const lr = opts.lr ?? 3e-3;
  const { ids, targets } = dump.batch;
  const lengths = dump.batch.lengths ?? null;
  const B = ids.length, T = ids[0].length, N = B * T;
  const { vocab: V, d_model: C, heads: H } = cfg;
  const D = C / H;
  if (!Number.isInteger(D)) throw new Error(`d_model ${C} is not divisible by ${H} heads`);
  const scale = cfg.scale ? 1 / Math.sqrt(D) : 1;
  const prefix = `tfjs${instances++}/`;

  // ---- variables, from the dump ----
  const shapes = parameterShapes(cfg);
  const names = Object.keys(shapes);
  for (const n of Object.keys(dump.params)) if (!(n in shapes)) throw new Error(`dump has an unexpected parameter ${n}`);
  const vars = {};
  for (const n of names) {
    const value = dump.params[n];
    if (value === undefined) throw new Error(`dump lacks parameter ${n}`);
    vars[n] = tf.variable(tf.tensor(value.flat(), shapes[n], 'float32'), true, prefix + n);
  }
  const varList = names.map((n) => vars[n]);

  // ---- constants of the batch ----
  const idsOneHot = new Float32Array(N * V);     // (N, V)
  const pick = new Float32Array(N * V);          // (N, V): 1/targets at (row, target)
  let count = 0;
  for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) if (targets[b][t] >= 0) count++;
  if (count === 0) throw new Error('the batch has no targets');
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      const r = b * T + t;
      idsOneHot[r * V + ids[b][t]] = 1;
      if (targets[b][t] >= 0) pick[r * V + targets[b][t]] = 1 / count;
    }
  }
  const consts = [];
  const keep = (x) => { consts.push(x); return x; };
  const idsT = keep(tf.tensor2d(idsOneHot, [N, V]));
  const pickT = keep(tf.tensor2d(pick, [N, V]));
  const sinT = cfg.positional === 'sinusoidal' ? keep(tf.tensor2d(sinusoidal(T, C), [T, C])) : null;
  // mask bias (B, 1, T, T): 0 where query i may see key j, −1e9 elsewhere; rowKeep (B, 1, T, 1)
  let maskBias = null, rowKeep = null;
  if (cfg.causal || lengths) {
    const bias = new Float32Array(B * T * T);
    const rows = new Float32Array(B * T);
    let empty = false;
    for (let b = 0; b < B; b++) {
      const n = lengths ? lengths[b] : T;
      for (let i = 0; i < T; i++) {
        let any = false;
        for (let j = 0; j < T; j++) {
          const ok = (!cfg.causal || j <= i) && j < n;
          if (!ok) bias[(b * T + i) * T + j] = -1e9; else any = true;
        }
        rows[b * T + i] = any ? 1 : 0;
        if (!any) empty = true;
      }
    }
    maskBias = keep(tf.tensor4d(bias, [B, 1, T, T]));
    if (empty) rowKeep = keep(tf.tensor4d(rows, [B, 1, T, 1]));
  }
  const scaleT = keep(tf.scalar(scale));
  const epsT = keep(tf.scalar(1e-5));

  const layerNorm = (x, name) => {  // x (N, C)
    const { mean, variance } = tf.moments(x, -1, true);  // biased variance
    return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, epsT))), vars[name + '.gain']), vars[name + '.bias']);
  };
  const gelu = (x) => tf.mul(tf.mul(x, 0.5), tf.add(tf.erf(tf.mul(x, Math.SQRT1_2)), 1));  // exact erf form
  // 2-D products with a custom gradient: tfjs-wasm's matMul with transposeA / transposeB is
  // 3× slower than an explicit transpose + plain matMul at these sizes (measured here:
  // (1024×32)ᵀ·(1024×32) 1.25 ms vs 0.44 ms), and matMul's own gradient uses those flags.
  const mm = opts.plainMatMul ? (a, b) => tf.matMul(a, b) : tf.customGrad((a, b, save) => {
    save([a, b]);
    return {
      value: tf.matMul(a, b),
      gradFunc: (dy, [sa, sb]) => [tf.matMul(dy, tf.transpose(sb)), tf.matMul(tf.transpose(sa), dy)],
    };
  });
  // Batched products (B, H, ·, ·). tfjs-wasm's BatchMatMul with a batch dimension is slow
  // here (a 64 × (64×64 · 64×32) product: 41 ms, 0.4 GFLOP/s, against about 19 GFLOP/s for
  // its 2-D matMul), but one 2-D matMul per (sequence, head) is slower still (measured:
  // 2.6 vs 8-20 steps/s at (2, 32, 2, 32, 32)): per-op overhead. BatchMatMul is the default;
  // opts.splitAttention = true selects the per-head form.
  const bmm = !opts.splitAttention ? (a, b, transposeB) => tf.matMul(a, b, false, transposeB) : (a, b, transposeB) => {
    const [bb, hh, r] = a.shape;
    const a3 = tf.unstack(tf.reshape(a, [bb * hh, r, a.shape[3]]));
    const b3 = tf.unstack(tf.reshape(b, [bb * hh, b.shape[2], b.shape[3]]));
    const out = a3.map((x, i) => (transposeB ? mm(x, tf.transpose(b3[i])) : mm(x, b3[i])));
    return tf.reshape(tf.stack(out), [bb, hh, r, out[0].shape[1]]);
  };
  const heads = (x2) => tf.transpose(tf.reshape(x2, [B, T, H, D]), [0, 2, 1, 3]);  // (N, C) → (B, H, T, D)

  function loss() {
    let x = mm(idsT, vars.embed);                       // (N, C)
    if (cfg.positional !== 'none') {
      const p = cfg.positional === 'learned' ? tf.slice(vars.pos, [0, 0], [T, C]) : sinT;
      x = tf.reshape(tf.add(tf.reshape(x, [B, T, C]), p), [N, C]);
    }
    for (let l = 0; l < cfg.layers; l++) {
      const p = `layers.${l}.`;
      const a = cfg.layernorm ? layerNorm(x, p + 'ln1') : x;
      const q = heads(mm(a, vars[p + 'w_query']));        // (B, H, T, D)
      const k = heads(mm(a, vars[p + 'w_key']));
      const v = heads(mm(a, vars[p + 'w_value']));
      let s = tf.mul(bmm(q, k, true), scaleT);                  // (B, H, T, T)
      if (maskBias) s = tf.add(s, maskBias);
      let w = tf.softmax(s);
      if (rowKeep) w = tf.mul(w, rowKeep);
      const o = tf.reshape(tf.transpose(bmm(w, v, false), [0, 2, 1, 3]), [N, C]);  // heads side by side
      x = tf.add(x, mm(o, vars[p + 'w_output']));
      if (cfg.mlp > 0) {
        const m = cfg.layernorm ? layerNorm(x, p + 'ln2') : x;
        const h = gelu(tf.add(mm(m, vars[p + 'mlp.w_in']), vars[p + 'mlp.b_in']));  // (N, F)
        x = tf.add(x, tf.add(mm(h, vars[p + 'mlp.w_out']), vars[p + 'mlp.b_out']));
      }
    }
    if (cfg.layernorm) x = layerNorm(x, 'final_ln');
    const logits = cfg.tied ? mm(x, tf.transpose(vars.embed)) : mm(x, vars.unembed);  // (N, V)
    return tf.neg(tf.sum(tf.mul(tf.logSoftmax(logits), pickT)));
  }

  const optimizer = tf.train.adam(lr, 0.9, 0.999, 1e-8);
  function stepTensor() {
    const { value, grads } = tf.variableGrads(loss, varList);
    optimizer.applyGradients(grads);
    for (const g of Object.values(grads)) g.dispose();
    return value;
  }
  return {
    names,
    /** One Adam step; returns the loss before it. */
    step() {
      const value = stepTensor();
      const l = value.dataSync()[0];
      value.dispose();
      return l;
    },
    /** n steps without reading the loss back. */
    run(n) {
      for (let i = 0; i < n; i++) stepTensor().dispose();
    },
    /** Loss and gradients at the current weights (no update): {loss, grads: name → Float32Array}. */
    lossAndGrads() {
      const { value, grads } = tf.variableGrads(loss, varList);
      const out = { loss: value.dataSync()[0], grads: {} };
      value.dispose();
      for (const n of names) { out.grads[n] = grads[vars[n].name].dataSync().slice(); grads[vars[n].name].dispose(); }
      return out;
    },
    dispose() {
      for (const v of varList) v.dispose();
      for (const c of consts) c.dispose();
      optimizer.dispose();
    },
  };
}

/** A flat Float32Array back into the dump's nested shape. */
function nested(data, shape) {
  if (shape.length === 1) return Array.from(data);
  const [r, c] = shape;
  return Array.from({ length: r }, (_, i) => Array.from(data.subarray(i * c, (i + 1) * c)));
}

// ---- command line ----
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = (name, fallback) => { const i = args.indexOf(`--${name}`); return i >= 0 ? args[i + 1] : fallback; };
  if (!args[0] || args[0].startsWith('--')) {
    console.error('usage: node bench/tfjs_train.mjs DUMP.json [--lr 3e-3] [--steps 20] [--budget 2] [--grads OUT.json]');
    process.exit(2);
  }
  const dump = JSON.parse(fs.readFileSync(args[0], 'utf8'));
  const tf = await loadTfjs();
  const trainer = createTfjsTrainer(tf, dump, { lr: Number(opt('lr', '3e-3')) });
  const gradsOut = opt('grads', null);
  if (gradsOut) {
    const { loss, grads } = trainer.lossAndGrads();
    const shapes = parameterShapes(dump.config);
    const out = { ...dump, loss, grads: Object.fromEntries(trainer.names.map((n) => [n, nested(grads[n], shapes[n])])) };
    fs.writeFileSync(gradsOut, JSON.stringify(out));
    console.log(JSON.stringify({ wrote: gradsOut, loss }));
  } else {
    const steps = Number(opt('steps', '20'));
    const losses = Array.from({ length: steps }, () => trainer.step());
    console.log(JSON.stringify({ impl: 'tfjs', version: tf.version_core, losses }));
    trainer.run(3);  // warm-up
    const budget = 1000 * Number(opt('budget', '2'));
    const t0 = performance.now();
    let n = 0;
    while (performance.now() - t0 < budget) { trainer.run(1); n++; }
    const s = (performance.now() - t0) / 1000;
    console.log(JSON.stringify({ steps: n, seconds: s, steps_per_s: n / s }));
  }
  trainer.dispose();
}
