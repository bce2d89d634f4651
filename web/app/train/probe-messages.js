// The training worker's messages about what a model does now (worker.js,
// training-run.js): its probe as a small message (each head's attention map of
// the probe's real tokens, its answer-key scores, its predictions) and the
// 'model' message that introduces a model to the page. Pure functions of a
// Trainer; the typed arrays they make are meant to be transferred.

import { snapshotCap } from './timeline.js';

/** The top-left n×n block of a T×T row-major matrix (the probe's real tokens; padding dropped). */
function crop(m, n) {
  if (m.rows === n && m.cols === n) return m.data.slice();
  const out = new Float32Array(n * n);
  for (let i = 0; i < n; i++) out.set(m.data.subarray(i * m.cols, i * m.cols + n), i * n);
  return out;
}

/** Trainer t's probe with `options` now: {probe (the engine's), msg (the small message)}. */
export function probeMessage(t, options) {
  const p = t.probe(options);
  const n = p.length;
  const maps = [];
  const scores = [];
  for (const layer of p.layers) {
    for (const head of layer.heads) {
      maps.push(crop(head.weights, n));
      scores.push(head.scores);
    }
  }
  return {
    probe: p,
    msg: { step: t.stepCount, maps, scores, predictions: Int32Array.from(p.predictions.subarray(0, n)), correct: Array.from(p.correct).slice(0, n) },
  };
}

/** The buffers of a probe message, to transfer. */
export const buffersOf = (m) => [...m.maps.map((x) => x.buffer), m.predictions.buffer];

/** The 'model' message of trainer t probed with options, for generation gen, and its
 * transfer list (throws when t cannot be probed: then it is not adopted). */
export function modelMessage(t, { gen, name, options }) {
  const { probe, msg } = probeMessage(t, { ...options });
  const n = probe.length;
  return {
    message: {
      type: 'model',
      gen,
      name,
      settings: t.settings,
      config: t.config,
      vocabulary: t.vocabulary,
      parameterCount: t.parameterCount,
      hasTask: t.hasTask !== false,
      step: t.stepCount,
      cap: snapshotCap(msg.maps.length * n * n * 4 + n * 4),
      probe: {
        tokens: Array.from(probe.tokens).slice(0, n),
        ids: Array.from(probe.ids).slice(0, n),
        targets: Array.from(probe.targets).slice(0, n),
        length: n,
        rows: n,
      },
      keys: probe.keys.map((k) => ({ name: k.name, data: crop(k.key, n) })),
      live: msg,
    },
    transfer: buffersOf(msg),
  };
}
