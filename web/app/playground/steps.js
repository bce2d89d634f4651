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
    titleFor: (t) => (!t.model ? 'Input X\u2032 = X + P' : t.model.rmsnorm ? 'Input: the residual stream x, and X\u2032 = RMSNorm(x)' : t.model.layernorm ? 'Input: the residual stream x, and X\u2032 = LayerNorm(x)' : 'Input: the residual stream x'),
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

/**
 * Steps only some models have, each placed after a step of the twelve and shown (in the
 * stepper, Previous/Next, Play) only when `applies(trace)`. They keep the twelve's numbers
 * (the views' texts say "step 3", "step 12" for every model): RoPE is step 4b. A link to one
 * on a model without it opens it anyway, and the step says why there is nothing to turn.
 *   after    the step it follows;  number  the stepper's label
 */
export const EXTRA_STEPS = Object.freeze([
  {
    id: 'rope', short: 'RoPE', title: 'Rotary positions: Q and K turned by their position', after: 'projections', number: '4b',
    applies: (t) => t?.config?.positional === 'rope',
  },
].map((s) => Object.freeze(s)));

/** The extra steps' ids: the URL takes them as well. */
export const EXTRA_STEP_IDS = Object.freeze(EXTRA_STEPS.map((s) => s.id));

/** The forward steps a trace shows, in order: the twelve and the extra steps that apply to it. */
export function forwardSteps(trace) {
  const out = [];
  for (const id of STEPS) {
    out.push(id);
    for (const x of EXTRA_STEPS) if (x.after === id && x.applies(trace)) out.push(x.id);
  }
  return out;
}

const BY_ID = new Map([...STEP_LIST, ...EXTRA_STEPS].map((s) => [s.id, s]));

/** The list entry of a step id (undefined for an unknown id). */
export function stepEntry(id) {
  return BY_ID.get(id);
}
