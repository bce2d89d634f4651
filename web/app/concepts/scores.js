// Idea 3's controller: scaled dot-product attention. Raw scores Q·Kᵀ can be
// negative and their rows sum to anything; after the 1/√D scale and the row
// softmax every row is a distribution (non-negative, sums to 1). It measures one
// row (and writes its softmax out with the engine's numbers) and every row of
// every head.

import { createCache, writeBack } from './controller.js';
import { rowOf, clampIndex } from './common.js';
import { createScoresView } from './views/scores.js';

function rowStats(values) {
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  for (const x of values) {
    min = Math.min(min, x);
    max = Math.max(max, x);
    sum += x;
  }
  return { min, max, sum };
}

/** Over every row of every head: the largest |row sum − 1| of the weights, and the negative entries. */
function allRows(tr) {
  const T = tr.tokens.length;
  let worst = 0;
  let negRaw = 0;
  let negWeights = 0;
  let rows = 0;
  for (const h of tr.heads) {
    for (let r = 0; r < T; r++) {
      let sum = 0;
      for (let x = 0; x < T; x++) {
        const a = h.weights.data[r * T + x];
        sum += a;
        if (a < 0) negWeights++;
        if (h.scores.data[r * T + x] < 0) negRaw++;
      }
      worst = Math.max(worst, Math.abs(sum - 1));
      rows++;
    }
  }
  return { worst, negRaw, negWeights, rows, entries: tr.heads.length * T * T };
}

/** What the view draws: query row i of head h before and after softmax, key j's softmax written out, every row's check. */
export function scoresModel(tr, s) {
  const T = tr.tokens.length;
  const H = tr.heads.length;
  const head = clampIndex(s.head, H);
  const i = clampIndex(s.q, T);
  const j = clampIndex(s.k, T);
  const h = tr.heads[head];
  const raw = rowOf(h.scores, i);
  const scaled = rowOf(h.scaled, i);
  const weights = rowOf(h.weights, i);
  const ss = rowStats(scaled);
  // the softmax of key j, with the engine's scaled scores substituted
  let total = 0;
  for (const x of scaled) total += Math.exp(x - ss.max);
  return {
    trace: tr,
    T,
    H,
    D: tr.config.dHead,
    head,
    i,
    j,
    raw: { values: raw, ...rowStats(raw) },
    scaled: { values: scaled, ...ss },
    weights: { values: weights, ...rowStats(weights) },
    softmax: { total, mine: Math.exp(scaled[j] - ss.max) },
    all: allRows(tr),
  };
}

export function createScoresDemo(root, { engine, onState, tooltip, palette }) {
  const view = createScoresView(root, { onState, tooltip });
  const run = createCache((settings) => engine.run(settings));
  return {
    update(s) {
      const r = run({ sentence: s.s, scale: s.scale, seed: s.seed });
      view.frame.setError(r.error);
      const model = r.value && scoresModel(r.value, s);
      if (model) writeBack(onState, s, { q: model.i, k: model.j, head: model.head });
      view.update(s, model, palette());
    },
  };
}
