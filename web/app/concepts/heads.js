// Idea 5's controller: multi-head attention. Each head has its own slice of
// W_Q, W_K, W_V, so the heads' weight matrices differ; with shareHeads every
// head uses head 0's weights and the difference between heads drops to exactly 0.
// It measures every pair of heads.

import { createCache } from './controller.js';
import { maxAbs } from './common.js';
import { createHeadsView } from './views/heads.js';
import { createRace } from './race-view.js';

export const MAX_HEADS = 8;
export const D_MODEL = 16;

/** Every pair of heads: max |A_a − A_b| (a table, H × H), its largest and mean over pairs, and the largest between outputs. */
export function headsModel(tr) {
  const H = tr.heads.length;
  const pair = [];
  let worst = 0;
  let meanSum = 0;
  let pairs = 0;
  let worstOut = 0;
  for (let a = 0; a < H; a++) {
    pair.push([]);
    for (let b = 0; b < H; b++) {
      const A = tr.heads[a].weights.data;
      const B = tr.heads[b].weights.data;
      const d = maxAbs(A, B);
      pair[a].push(d);
      if (b <= a) continue;
      worst = Math.max(worst, d);
      let m = 0;
      for (let x = 0; x < A.length; x++) m += Math.abs(A[x] - B[x]);
      meanSum += m / A.length;
      pairs++;
      worstOut = Math.max(worstOut, maxAbs(tr.heads[a].output.data, tr.heads[b].output.data));
    }
  }
  return { trace: tr, H, T: tr.tokens.length, pair, worst, mean: pairs ? meanSum / pairs : 0, worstOut };
}

export function createHeadsDemo(root, { engine, onState, tooltip, palette }) {
  const view = createHeadsView(root, { onState, tooltip, maxHeads: MAX_HEADS, dModel: D_MODEL });
  const race = createRace(view.frame, 'heads', { onState, tooltip, palette });
  const run = createCache((settings) => engine.run(settings));
  return {
    hide: () => race.hide(),
    update(s) {
      race.update(s);
      const r = run({ sentence: s.s, dModel: D_MODEL, heads: s.h, shareHeads: s.share, seed: s.seed });
      view.frame.setError(r.error);
      view.update(s, r.value && headsModel(r.value), palette());
    },
  };
}
