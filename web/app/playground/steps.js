// The playground's twelve steps, in the order the computation runs: the one
// list that the URL (state.js), the step buttons (views/stepper.js) and the
// tests read. Pure data: no view, no DOM, so the state sits below the views.
// What each step draws (its view and its exported figure) is in
// step-registry.js, keyed by these ids. A new step is one entry here, one in
// step-registry.js and its view module, steps/step-*.js.
//
// Each entry:
//   id            the URL's `step` value and the views' data-step attribute
//   short, title  the step button's label and the panel's title
//   titleFor      (optional) trace => the panel's title when it depends on the trace

export const STEP_LIST = Object.freeze([
  { id: 'embeddings', short: 'Embed', title: 'Token embeddings X' },
  { id: 'positional', short: 'Position', title: 'Positional encoding P' },
  {
    id: 'input', short: 'Input', title: 'Input X\u2032 = X + P',
    titleFor: (t) => (!t.model ? 'Input X\u2032 = X + P' : t.model.layernorm ? 'Input: the residual stream x, and X\u2032 = LayerNorm(x)' : 'Input: the residual stream x'),
  },
  { id: 'projections', short: 'Q, K, V', title: 'Queries, keys and values' },
  { id: 'scores', short: 'Q\u00b7K\u1d40', title: 'Scores S = Q\u00b7K\u1d40' },
  {
    id: 'scaled', short: 'Scale', title: 'Scaling by 1/\u221ad_k',
    titleFor: (t) => (t.config.scale ? 'Scaling by 1/\u221ad_k' : 'Scaling by 1/\u221ad_k: switched off, S\u2032 = S'),
  },
  { id: 'masked', short: 'Mask', title: 'Masking' },
  { id: 'softmax', short: 'Softmax', title: 'Softmax: scores become weights' },
  { id: 'weighted', short: '\u00d7 V', title: 'Weighted sum of the values' },
  { id: 'heads', short: 'Heads', title: 'All heads side by side' },
  { id: 'concat', short: 'Concat', title: 'Concatenating the heads' },
  { id: 'output', short: 'W_O', title: 'Output projection Y = concat\u00b7W_O' },
].map((s) => Object.freeze(s)));

/** The step ids in order. */
export const STEPS = Object.freeze(STEP_LIST.map((s) => s.id));

const BY_ID = new Map(STEP_LIST.map((s) => [s.id, s]));

/** The list entry of a step id (undefined for an unknown id). */
export function stepEntry(id) {
  return BY_ID.get(id);
}
