// The playground's twelve steps, in the order the computation runs: the one
// registry that the URL (state.js), the step list and panel (views/stepper.js,
// views/panel.js), the figure export (export.js) and the tests all read.
// A new step is one entry here plus its view module, views/step-*.js.
//
// Each entry:
//   id            the URL's `step` value and the views' data-step attribute
//   short, title  the step button's label and the panel's title
//   titleFor      (optional) trace => the panel's title when it depends on the trace
//   view          (section, ctx) => {update(trace, v)}: the step's view; it touches
//                 the DOM only when called, so this module imports in Node
//   figure        (trace, h) => {matrix, title, caption, kind, mask, zeros, cols}: what the
//                 export draws for head h (cols: 'tokens' or a number of dimensions;
//                 mask: cells blocked, value −∞; zeros: cells the mask made exactly 0;
//                 range: the colour range when the page gives one)

import { figureTitle } from '../kit/notation.js';
import { createEmbeddingsStep } from './steps/step-embeddings.js';
import { createPositionalStep } from './steps/step-positional.js';
import { createInputStep } from './steps/step-input.js';
import { createProjectionsStep } from './steps/step-projections.js';
import { createScoresStep } from './steps/step-scores.js';
import { createScaledStep } from './steps/step-scaled.js';
import { createMaskedStep } from './steps/step-masked.js';
import { createSoftmaxStep } from './steps/step-softmax.js';
import { createWeightedStep } from './steps/step-weighted.js';
import { createHeadsStep } from './steps/step-heads.js';
import { createConcatStep } from './steps/step-concat.js';
import { createOutputStep } from './steps/step-output.js';

/** The largest |x| (1 when all are 0): the scaled map's colour range is the unscaled scores', as on the page. */
const maxAbs = (data) => {
  let r = 0;
  for (const x of data) r = Math.max(r, Math.abs(x));
  return r || 1;
};

/** The figure of a step: its matrix and the title the page shows above it (notation.js). */
const fig = (id, t, h, matrix, rest) => ({ matrix, title: figureTitle(id, t, h), ...rest });

export const STEP_REGISTRY = Object.freeze([
  {
    id: 'embeddings', short: 'Embed', title: 'Token embeddings X',
    view: createEmbeddingsStep,
    figure: (t, h) => fig('embeddings', t, h, t.embeddings, { caption: 'rows: tokens, columns: dimensions', kind: 'diverging', cols: t.embeddings.cols }),
  },
  {
    id: 'positional', short: 'Position', title: 'Positional encoding P',
    view: createPositionalStep,
    figure: (t, h) => fig('positional', t, h, t.positional, { caption: `${t.config.positional} positions; rows: positions, columns: dimensions`, kind: 'diverging', cols: t.positional.cols }),
  },
  {
    id: 'input', short: 'Input', title: 'Input X\u2032 = X + P',
    titleFor: (t) => (!t.model ? 'Input X\u2032 = X + P' : t.model.layernorm ? 'Input: the residual stream x, and X\u2032 = LayerNorm(x)' : 'Input: the residual stream x'),
    view: createInputStep,
    figure: (t, h) => fig('input', t, h, t.input, { caption: 'rows: tokens, columns: dimensions', kind: 'diverging', cols: t.input.cols }),
  },
  {
    id: 'projections', short: 'Q, K, V', title: 'Queries, keys and values',
    view: createProjectionsStep,
    figure: (t, h) => {
      const dk = t.config.dHead;
      return fig('projections', t, h, t.heads[h].query, { caption: `head ${h + 1} of ${t.heads.length} uses columns ${h * dk}\u2026${(h + 1) * dk - 1} of W_Q; rows: tokens, columns: the head's d_k = ${dk} dimensions`, kind: 'diverging', cols: dk });
    },
  },
  {
    id: 'scores', short: 'Q\u00b7K\u1d40', title: 'Scores S = Q\u00b7K\u1d40',
    view: createScoresStep,
    figure: (t, h) => fig('scores', t, h, t.heads[h].scores, { caption: 'rows: queries, columns: keys', kind: 'diverging', cols: 'tokens' }),
  },
  {
    id: 'scaled', short: 'Scale', title: 'Scaling by 1/\u221ad_k',
    titleFor: (t) => (t.config.scale ? 'Scaling by 1/\u221ad_k' : 'Scaling by 1/\u221ad_k: switched off, S\u2032 = S'),
    view: createScaledStep,
    figure: (t, h) => fig('scaled', t, h, t.heads[h].scaled, { caption: t.config.scale ? `S divided by \u221ad_k = \u221a${t.config.dHead}; rows: queries, columns: keys` : 'scaling is off, so these are the raw scores S; rows: queries, columns: keys', kind: 'diverging', range: maxAbs(t.heads[h].scores.data), cols: 'tokens' }),
  },
  {
    id: 'masked', short: 'Mask', title: 'Masking',
    view: createMaskedStep,
    figure: (t, h) => fig('masked', t, h, t.heads[h].scaled, { caption: `mask: ${t.config.mask}; \u2212\u221e = hidden`, kind: 'diverging', mask: t.mask, cols: 'tokens' }),
  },
  {
    id: 'softmax', short: 'Softmax', title: 'Softmax: scores become weights',
    view: createSoftmaxStep,
    figure: (t, h) => fig('softmax', t, h, t.heads[h].weights, { caption: 'rows: queries, columns: keys; each row sums to 1', kind: 'sequential', zeros: t.mask, cols: 'tokens' }),
  },
  {
    id: 'weighted', short: '\u00d7 V', title: 'Weighted sum of the values',
    view: createWeightedStep,
    figure: (t, h) => fig('weighted', t, h, t.heads[h].output, { caption: `rows: tokens, columns: the head's d_k = ${t.config.dHead} dimensions`, kind: 'diverging', cols: t.config.dHead }),
  },
  {
    id: 'heads', short: 'Heads', title: 'All heads side by side',
    view: createHeadsStep,
    figure: (t, h) => fig('heads', t, h, t.heads[h].weights, { caption: 'rows: queries, columns: keys; each row sums to 1', kind: 'sequential', zeros: t.mask, cols: 'tokens' }),
  },
  {
    id: 'concat', short: 'Concat', title: 'Concatenating the heads',
    view: createConcatStep,
    figure: (t, h) => fig('concat', t, h, t.concat, { caption: `rows: tokens, columns: C = ${t.config.dModel} dimensions, d_k = ${t.config.dHead} from each head`, kind: 'diverging', cols: t.concat.cols }),
  },
  {
    id: 'output', short: 'W_O', title: 'Output projection Y = concat\u00b7W_O',
    view: createOutputStep,
    figure: (t, h) => fig('output', t, h, t.output, { caption: 'rows: tokens, columns: dimensions', kind: 'diverging', cols: t.output.cols }),
  },
].map((s) => Object.freeze(s)));

/** The step ids in order. */
export const STEPS = Object.freeze(STEP_REGISTRY.map((s) => s.id));

const BY_ID = new Map(STEP_REGISTRY.map((s) => [s.id, s]));

/** The registry entry of a step id (undefined for an unknown id). */
export function stepEntry(id) {
  return BY_ID.get(id);
}
