// Idea 2's controller: Q, K and V come from the same input X′ through three
// weight matrices. For the selected entry (i, d) of Q, K or V of a head it takes
// row i of X′ and column h·D + d of W_Q, W_K or W_V from the engine's trace and
// adds up their dot product, an independent check of the engine's entry.

import { createCache, writeBack } from './controller.js';
import { rowOf, clampIndex } from './common.js';
import { createQkvView } from './views/qkv.js';

const PART = { q: 'query', k: 'key', v: 'value' };
const WEIGHT = { q: 'wQuery', k: 'wKey', v: 'wValue' };

/** Column j of a matrix as a Float32Array. */
function column(m, j) {
  const out = new Float32Array(m.rows);
  for (let c = 0; c < m.rows; c++) out[c] = m.data[c * m.cols + j];
  return out;
}

/** Σ_c a[c]·b[c], accumulated in double precision. */
function dot(a, b) {
  let s = 0;
  for (let c = 0; c < a.length; c++) s += a[c] * b[c];
  return s;
}

/** What the view draws: the selected entry of each of Q, K, V, its row of X′, the weight columns and their dot products. */
export function qkvModel(tr, s) {
  const T = tr.tokens.length;
  const H = tr.heads.length;
  const D = tr.config.dHead;
  const head = clampIndex(s.head, H);
  const i = clampIndex(s.i, T);
  const d = clampIndex(s.d, D);
  const col = head * D + d;
  const x = rowOf(tr.input, i);
  const entry = (m) => {
    const w = column(tr[WEIGHT[m]], col);
    const engine = tr.heads[head][PART[m]].data[i * D + d];
    const sum = dot(x, w);
    return { m, weights: tr[WEIGHT[m]], column: w, engine, sum, diff: Math.abs(sum - engine) };
  };
  return {
    trace: tr,
    T,
    H,
    C: tr.config.dModel,
    D,
    head,
    i,
    d,
    col,
    x,
    matrices: { q: tr.heads[head].query, k: tr.heads[head].key, v: tr.heads[head].value },
    selected: entry(s.m),
    others: ['q', 'k', 'v'].filter((m) => m !== s.m).map(entry),
  };
}

export function createQkvDemo(root, { engine, onState, tooltip, palette }) {
  const view = createQkvView(root, { onState, tooltip });
  const run = createCache((settings) => engine.run(settings));
  return {
    update(s) {
      const r = run({ sentence: s.s, positional: s.pe, seed: s.seed });
      view.frame.setError(r.error);
      const model = r.value && qkvModel(r.value, s);
      if (model) writeBack(onState, s, { i: model.i, d: model.d, head: model.head });
      view.update(s, model, palette());
    },
  };
}
