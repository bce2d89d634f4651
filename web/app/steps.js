// The playground's twelve steps, in the order the computation runs: the one
// registry that the URL (state.js), the step list and panel (views/stepper.js,
// views/panel.js), the figure export (export.js) and the tests all read.
// A new step is one entry here plus its view module, views/step-*.js.
//
// Each entry:
//   id            the URL's `step` value and the views' data-step attribute
//   short, title  the step button's label and the panel's title
//   trainedTitle  (optional) the title for a trained model's trace
//   view          (section, ctx) => {update(trace, v)}: the step's view; it touches
//                 the DOM only when called, so this module imports in Node
//   figure        (trace, h) => {matrix, title, caption, kind, mask, cols}: what the
//                 export draws for head h (cols: 'tokens' or a number of dimensions)

import { subscript } from './format.js';
import { createEmbeddingsStep } from './views/step-embeddings.js';
import { createPositionalStep } from './views/step-positional.js';
import { createInputStep } from './views/step-input.js';
import { createProjectionsStep } from './views/step-projections.js';
import { createScoresStep } from './views/step-scores.js';
import { createScaledStep } from './views/step-scaled.js';
import { createMaskedStep } from './views/step-masked.js';
import { createSoftmaxStep } from './views/step-softmax.js';
import { createWeightedStep } from './views/step-weighted.js';
import { createHeadsStep } from './views/step-heads.js';
import { createConcatStep } from './views/step-concat.js';
import { createOutputStep } from './views/step-output.js';

/** " (head 2 of 4)" when there is more than one head. */
const headNote = (trace, h) => (trace.heads.length > 1 ? ` (head ${h + 1} of ${trace.heads.length})` : '');

export const STEP_REGISTRY = Object.freeze([
  {
    id: 'embeddings', short: 'Embed', title: 'Token embeddings X',
    view: createEmbeddingsStep,
    figure: (t) => ({ matrix: t.embeddings, title: 'Token embeddings X', caption: 'rows: tokens, columns: dimensions', kind: 'diverging', cols: t.embeddings.cols }),
  },
  {
    id: 'positional', short: 'Position', title: 'Positional encoding P',
    view: createPositionalStep,
    figure: (t) => ({ matrix: t.positional, title: `Positional encoding P (${t.config.positional})`, caption: 'rows: positions, columns: dimensions', kind: 'diverging', cols: t.positional.cols }),
  },
  {
    id: 'input', short: 'Input', title: 'Input X\u2032 = X + P', trainedTitle: 'Input: the residual stream x, and X\u2032 = LayerNorm(x)',
    view: createInputStep,
    figure: (t) => ({ matrix: t.input, title: 'Input X\u2032 = X + P', caption: 'rows: tokens, columns: dimensions', kind: 'diverging', cols: t.input.cols }),
  },
  {
    id: 'projections', short: 'Q, K, V', title: 'Queries, keys and values',
    view: createProjectionsStep,
    figure: (t, h) => {
      const D = t.config.dHead;
      return { matrix: t.heads[h].query, title: `Queries Q${subscript(h + 1)} = X\u2032\u00b7W_Q${headNote(t, h)}`, caption: `columns ${h * D}\u2026${(h + 1) * D - 1} of W_Q`, kind: 'diverging', cols: D };
    },
  },
  {
    id: 'scores', short: 'Q\u00b7K\u1d40', title: 'Scores S = Q\u00b7K\u1d40',
    view: createScoresStep,
    figure: (t, h) => ({ matrix: t.heads[h].scores, title: `Scores S = Q\u00b7K\u1d40${headNote(t, h)}`, caption: 'rows: queries, columns: keys', kind: 'diverging', cols: 'tokens' }),
  },
  {
    id: 'scaled', short: 'Scale', title: 'Scaling by 1/\u221ad_k',
    view: createScaledStep,
    figure: (t, h) => ({ matrix: t.heads[h].scaled, title: `Scaled scores S / \u221ad_k${headNote(t, h)}`, caption: t.config.scale ? `divided by \u221a${t.config.dHead}` : 'scale switched off', kind: 'diverging', cols: 'tokens' }),
  },
  {
    id: 'masked', short: 'Mask', title: 'Masking',
    view: createMaskedStep,
    figure: (t, h) => ({ matrix: t.heads[h].scaled, title: `Masked scores${headNote(t, h)}`, caption: `mask: ${t.config.mask}; \u2212\u221e = hidden`, kind: 'diverging', mask: t.mask, cols: 'tokens' }),
  },
  {
    id: 'softmax', short: 'Softmax', title: 'Softmax: scores become weights',
    view: createSoftmaxStep,
    figure: (t, h) => ({ matrix: t.heads[h].weights, title: `Attention weights A = softmax(S)${headNote(t, h)}`, caption: 'each row sums to 1', kind: 'sequential', cols: 'tokens' }),
  },
  {
    id: 'weighted', short: '\u00d7 V', title: 'Weighted sum of the values',
    view: createWeightedStep,
    figure: (t, h) => ({ matrix: t.heads[h].output, title: `Head output O = A\u00b7V${headNote(t, h)}`, caption: 'rows: tokens, columns: head dimensions', kind: 'diverging', cols: t.config.dHead }),
  },
  {
    id: 'heads', short: 'Heads', title: 'All heads side by side',
    view: createHeadsStep,
    figure: (t, h) => ({ matrix: t.heads[h].weights, title: `Attention weights${headNote(t, h)}`, caption: 'each row sums to 1', kind: 'sequential', cols: 'tokens' }),
  },
  {
    id: 'concat', short: 'Concat', title: 'Concatenating the heads',
    view: createConcatStep,
    figure: (t) => ({ matrix: t.concat, title: 'Concatenated heads [O\u2081 \u2026 O_H]', caption: 'rows: tokens, columns: dimensions', kind: 'diverging', cols: t.concat.cols }),
  },
  {
    id: 'output', short: 'W\u2092', title: 'Output projection Y = concat\u00b7W\u2092',
    view: createOutputStep,
    figure: (t) => ({ matrix: t.output, title: 'Output Y = concat\u00b7W_O', caption: 'rows: tokens, columns: dimensions', kind: 'diverging', cols: t.output.cols }),
  },
].map((s) => Object.freeze(s)));

/** The step ids in order. */
export const STEPS = Object.freeze(STEP_REGISTRY.map((s) => s.id));

const BY_ID = new Map(STEP_REGISTRY.map((s) => [s.id, s]));

/** The registry entry of a step id (undefined for an unknown id). */
export function stepEntry(id) {
  return BY_ID.get(id);
}
