// The engine runs behind the playground: random weights (one sentence, or a
// padded batch) and a trained model's trace with the layer the steps show.
// Each throws the engine's error; the controller words it (errors.js).

import { computedSentences } from './state.js';
import { layerTrace, randomHeadPatterns } from './model-trace.js';
import { customMaskMatrix } from './rules.js';
import { SHIPPED_MODELS } from './models.js';

/** Random weights: {traces (batch mode, else null), trace (the one shown)}. */
export function runRandom(engine, state) {
  const settings = { dModel: state.dModel, heads: state.heads, seed: state.seed, positional: state.positional, mask: state.mask, scale: state.scale };
  let result;
  if (state.batch) {
    // the first MAX_BATCH lines; the rest stay in the box and the link (the box says so)
    const sentences = computedSentences(state);
    // runBatch pads every sentence to the longest: the custom mask is that many tokens square
    if (state.mask === 'custom') settings.customMask = customMaskMatrix(state.customMask, Math.max(...sentences.map((s) => engine.tokenize(s).length)));
    const traces = engine.runBatch(sentences, settings);
    result = { traces, trace: traces[Math.min(state.shown, traces.length - 1)] };
  } else {
    if (state.mask === 'custom') settings.customMask = customMaskMatrix(state.customMask, engine.tokenize(state.sentence).length);
    result = { traces: null, trace: engine.run({ ...settings, sentence: state.sentence }) };
  }
  for (const t of result.traces ?? [result.trace]) t.headPatterns = randomHeadPatterns(t);
  return result;
}

/** A trained model's result for the sentence: its whole trace (its heads' pattern scores, the
 * antecedent of a coreference model included, come with it from the engine). */
export function runTrained(entry, sentence) {
  const modelTrace = entry.trainer.trace({ text: sentence });
  return { traces: null, trace: null, modelTrace, entry };
}

/** The result with `trace` set to the given layer of its trained model's trace, as the steps read it. */
export function sliceLayer(r, layer) {
  return { ...r, trace: layerTrace(r.modelTrace, layer, r.entry, { featured: SHIPPED_MODELS[r.entry.name]?.featured ?? null }) };
}
