// Idea 7's controller: attention masks. Causal: edit a later word and the
// output rows before it stay exactly unchanged (they cannot see it), while the
// rows from the edit on change. Padding: a batch of sentences padded to one
// length; with the padding mask the [PAD] keys get exactly zero weight, without
// it weight leaks onto them. It measures both from the engine's traces.

import { createCache, firstError, writeBack } from './controller.js';
import { rowOf, maxAbs, clampIndex } from './common.js';
import { createMasksView } from './views/masks.js';
import { createRace } from './race-view.js';
import { MAX_LINES } from './state.js';

/** Index of the first token that differs between two traces (by id), or −1. */
function firstDifference(a, b) {
  const n = Math.min(a.tokens.length, b.tokens.length);
  for (let i = 0; i < n; i++) if (a.tokens[i].id !== b.tokens[i].id) return i;
  return a.tokens.length === b.tokens.length ? -1 : n;
}

/** Padding statistics of one padded trace: largest weight on a [PAD] key over
 * every head and row, and the weight on [PAD] keys per row (mean over heads). */
function padStats(tr) {
  const T = tr.tokens.length;
  const real = tr.realTokens;
  let max = 0;
  const perRow = new Float64Array(T);
  for (const h of tr.heads) {
    for (let i = 0; i < T; i++) {
      let sum = 0;
      for (let j = real; j < T; j++) {
        const w = h.weights.data[i * T + j];
        sum += w;
        if (w > max) max = w;
      }
      perRow[i] += sum / tr.heads.length;
    }
  }
  let leak = 0;
  for (let i = 0; i < real; i++) leak += perRow[i];
  return { max, perRow, meanLeak: real ? leak / real : 0, pads: T - real };
}

/** The weight each row of one head puts on the [PAD] keys. */
function padWeightPerRow(tr, head) {
  const T = tr.tokens.length;
  const w = tr.heads[head].weights;
  return Array.from({ length: T }, (_, i) => {
    let sum = 0;
    for (let j = tr.realTokens; j < T; j++) sum += w.data[i * T + j];
    return sum;
  });
}

/** The first sentence against its edit: where they first differ, each row's change, the largest before and from there on. */
export function causalModel({ a, b }) {
  const k = firstDifference(a, b);
  const n = Math.min(a.tokens.length, b.tokens.length);
  const rowDiffs = [];
  for (let i = 0; i < n; i++) rowDiffs.push(maxAbs(rowOf(a.output, i), rowOf(b.output, i)));
  return {
    a,
    b,
    k,
    n,
    rowDiffs,
    before: k > 0 ? Math.max(0, ...rowDiffs.slice(0, k)) : NaN,
    after: k >= 0 && k < n ? Math.max(0, ...rowDiffs.slice(k)) : NaN,
  };
}

/** The batch with the padding mask on and off: statistics of every sentence, and the shown one's per-row weight on [PAD]. */
export function paddingModel(runs, { pad, bi, head }) {
  const traces = pad ? runs.on : runs.off;
  const statsOn = runs.on.map(padStats);
  const statsOff = runs.off.map(padStats);
  return { trace: traces[bi], stats: (pad ? statsOn : statsOff)[bi], statsOn, statsOff, perRow: padWeightPerRow(traces[bi], head) };
}

export function createMasksDemo(root, { engine, onState, tooltip, palette }) {
  const view = createMasksView(root, { onState, tooltip });
  const race = createRace(view.frame, 'masks', { onState, tooltip, palette });
  const causal = createCache(({ a, b, mask, seed }) => ({ a: engine.run({ sentence: a, mask, seed }), b: engine.run({ sentence: b, mask, seed }) }));
  const padding = createCache(({ batch, seed }) => ({ on: engine.runBatch(batch, { mask: 'padding', seed }), off: engine.runBatch(batch, { mask: 'none', seed }) }));
  return {
    hide: () => race.hide(),
    update(s) {
      race.update(s);
      // the first MAX_LINES lines; more are kept in the box and the link, and the note says so
      const batch = s.bs.slice(0, MAX_LINES);
      const c = causal({ a: s.a, b: s.b, mask: s.causal ? 'causal' : 'none', seed: s.seed });
      const p = padding({ batch, seed: s.seed });
      view.frame.setError(firstError(c, p));
      if (!c.value || !p.value) {
        view.update(s, null, palette());
        return;
      }
      const H = c.value.a.heads.length;
      const head = clampIndex(s.head, H);
      const bi = clampIndex(s.bi, batch.length);
      writeBack(onState, s, { head, bi });
      view.update(s, { H, head, bi, batch, causal: causalModel(c.value), padding: paddingModel(p.value, { pad: s.pad, bi, head }) }, palette());
    },
  };
}
