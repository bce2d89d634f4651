// Random but seeded weights: one sentence, or a padded batch of them, through
// engine.run / engine.runBatch, with every setting the controls offer (width,
// heads, seed, positional, mask, scale). Nothing was learned, so there is no
// backward to show and no text to write. The engine answers at once.

import { computedSentences } from '../state.js';
import { randomHeadPatterns } from '../model-trace.js';
import { customMaskMatrix } from '../rules.js';

export const RANDOM_ABOUT = 'Weights are random but seeded, so a link reproduces every number. Everything is computed in your browser by a C++ engine compiled to WebAssembly.';

/** What the controls and the page say of random weights (the controls act on them). */
export const RANDOM_DESCRIPTION = Object.freeze({
  about: RANDOM_ABOUT,
  line: 'Random but seeded weights: width, heads, seed and the rest below change them. Nothing here was learned.',
  fixed: null,
});

/** Random weights: {traces (batch mode, else null), trace (the one shown)}. Throws the engine's error. */
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

export function createRandomSource(engine) {
  return {
    name: 'random',
    featured: null,
    learned: false,
    batches: true,
    remote: false,
    describe: () => RANDOM_DESCRIPTION,
    trace: (state) => runRandom(engine, state),
    /** Batch mode: the sentence shown is one of the run's traces. */
    select: (result, state) => (result.traces ? { ...result, trace: result.traces[Math.min(state.shown, result.traces.length - 1)] } : result),
    learn: () => ({ unavailable: 'Random weights were never trained on anything, so there is no loss to learn from: pick the coreference or the language model to follow the backward pass.' }),
    generation: null,
    dispose() {},
  };
}
