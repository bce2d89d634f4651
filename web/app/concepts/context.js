// Idea 1's controller: self-attention builds context-aware vectors, not a plain
// average. Evidence: one token's head output O[i] = Σ_j A[i,j]·V[j] beside the
// plain average (1/T)·Σ_j V[j] (the engine's attention output under uniform
// weights) and their difference; and one word in two sentences: the same input
// row, two different output rows Y.

import { createCache, uniformAttentionWeights, writeBack } from './controller.js';
import { rowOf, maxAbs, clampIndex } from './common.js';
import { createContextView } from './views/context.js';
import { createRace } from './race-view.js';

/** The engine's runs for a state: both sentences, and the first under uniform attention. */
export function runContext(engine, { a, b, pe, seed }) {
  const settings = { positional: pe, seed };
  const ta = engine.run({ ...settings, sentence: a });
  return {
    a: ta,
    b: engine.run({ ...settings, sentence: b }),
    uniform: engine.run({ ...settings, sentence: a, weights: uniformAttentionWeights(ta) }),
  };
}

/** What the view draws, from the runs and the state (token and head clamped to the trace). */
export function contextModel(runs, s) {
  const { a, b, uniform } = runs;
  const T = a.tokens.length;
  const H = a.heads.length;
  const i = clampIndex(s.q, T);
  const h = clampIndex(s.head, H);
  const head = a.heads[h];
  const out = rowOf(head.output, i);
  const avg = rowOf(uniform.heads[h].output, i);
  const weights = rowOf(head.weights, i);
  let wMin = Infinity;
  let wMax = -Infinity;
  for (const x of weights) {
    wMin = Math.min(wMin, x);
    wMax = Math.max(wMax, x);
  }
  return {
    a,
    T,
    H,
    i,
    h,
    D: head.value.cols,
    average: { out, avg, diff: out.map((x, d) => x - avg[d]), max: maxAbs(out, avg), weights, wMin, wMax },
    word: sameWord(a, b, i),
  };
}

/** The token of a in the second sentence b (its first occurrence), its input and output rows there and here, or null. */
function sameWord(a, b, i) {
  const j = b.tokens.findIndex((t) => t.id === a.tokens[i].id);
  if (j < 0) return null;
  const xa = rowOf(a.input, i);
  const xb = rowOf(b.input, j);
  const ya = rowOf(a.output, i);
  const yb = rowOf(b.output, j);
  return { j, ya, yb, diff: ya.map((x, d) => x - yb[d]), input: maxAbs(xa, xb), output: maxAbs(ya, yb) };
}

export function createContextDemo(root, { engine, onState, tooltip, palette }) {
  const view = createContextView(root, { onState, tooltip });
  const race = createRace(view.frame, 'context', { onState, tooltip, palette });
  const runs = createCache((inputs) => runContext(engine, inputs));
  return {
    hide: () => race.hide(),
    update(s) {
      race.update(s);
      const r = runs({ a: s.a, b: s.b, pe: s.pe, seed: s.seed });
      view.frame.setError(r.error);
      const model = r.value && contextModel(r.value, s);
      if (model) writeBack(onState, s, { q: model.i, head: model.h });
      view.update(s, model, palette());
    },
  };
}
