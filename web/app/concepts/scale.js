// Idea 4's controller: why the scores are divided by √d_k. For random q, k with
// unit-variance entries, q·k has variance d_k. The engine's scaleExperiment
// measures, for each d_k from 2 to 512, the score variance, the mean entropy of
// the softmax rows and the mean norm of the softmax Jacobian, with the scale off
// and on; the view charts both sweeps, the toggle picks which one is highlighted.

import { createCache } from './controller.js';
import { DK_VALUES } from './state.js';
import { createScaleView } from './views/scale.js';
import { createRace } from './race-view.js';

/** Samples of T queries × T keys per point. */
export const SAMPLES = 32;

/** Both sweeps over DK_VALUES: {off: [result…], on: [result…]}. */
export function runScaleSweeps(engine, { t, seed }) {
  const sweep = (scale) => DK_VALUES.map((dK) => engine.scaleExperiment({ dK, tokens: t, samples: SAMPLES, seed, scale }));
  return { off: sweep(false), on: sweep(true) };
}

export function createScaleDemo(root, { engine, onState, tooltip, palette }) {
  const view = createScaleView(root, { onState, samples: SAMPLES });
  const race = createRace(view.frame, 'scale', { onState, tooltip, palette });
  const sweeps = createCache((inputs) => runScaleSweeps(engine, inputs));
  return {
    hide: () => race.hide(),
    update(s) {
      race.update(s);
      const r = sweeps({ t: s.t, seed: s.seed });
      view.frame.setError(r.error);
      const idx = Math.max(0, DK_VALUES.indexOf(s.dk));
      view.update(s, r.value && { sweep: r.value, at: { off: r.value.off[idx], on: r.value.on[idx] } });
    },
  };
}
