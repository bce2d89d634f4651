// The twelve steps in the order the computation runs, with their titles.
// The names are the URL's `step` values and the views' data-step attributes.

import { STEPS } from './state.js';

export const STEP_INFO = Object.freeze({
  embeddings: { short: 'Embed', title: 'Token embeddings X' },
  positional: { short: 'Position', title: 'Positional encoding P' },
  input: { short: 'Input', title: 'Input X\u2032 = X + P', trainedTitle: 'Input: the residual stream x, and X\u2032 = LayerNorm(x)' },
  projections: { short: 'Q, K, V', title: 'Queries, keys and values' },
  scores: { short: 'Q\u00b7K\u1d40', title: 'Scores S = Q\u00b7K\u1d40' },
  scaled: { short: 'Scale', title: 'Scaling by 1/\u221ad_k' },
  masked: { short: 'Mask', title: 'Masking' },
  softmax: { short: 'Softmax', title: 'Softmax: scores become weights' },
  weighted: { short: '\u00d7 V', title: 'Weighted sum of the values' },
  heads: { short: 'Heads', title: 'All heads side by side' },
  concat: { short: 'Concat', title: 'Concatenating the heads' },
  output: { short: 'W\u2092', title: 'Output projection Y = concat\u00b7W\u2092' },
});

export function stepIndex(name) {
  return STEPS.indexOf(name);
}

export { STEPS };
