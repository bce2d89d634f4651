// What each of the twelve steps (steps.js) draws: its view and the figure the
// export draws. The controller's panel builds the views from here and the
// export (export.js) reads the figures; the state, the URL and the step
// buttons need only the list (steps.js). A view touches the DOM only when
// called, so this module imports in Node.
//
// Each entry is the list's (id, short, title, titleFor) plus:
//   view          (section, ctx) => {update(trace, v)}: the step's view
//   figure        (trace, h) => {matrix, title, caption, kind, mask, zeros, cols}: what the
//                 export draws for head h (cols: 'tokens' or a number of dimensions;
//                 mask: cells blocked, value −∞; zeros: cells the mask made exactly 0;
//                 range: the colour range when the page gives one)

import { figureTitle } from '../kit/notation.js';
import { formatValue } from '../kit/format.js';
import { softmaxInput, alibiSlope, maskedTitle } from './alibi.js';
import { STEP_LIST, EXTRA_STEPS } from './steps.js';
import { createEmbeddingsStep } from './steps/step-embeddings.js';
import { createPositionalStep } from './steps/step-positional.js';
import { createInputStep } from './steps/step-input.js';
import { createProjectionsStep } from './steps/step-projections.js';
import { createRopeStep } from './steps/step-rope.js';
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

const DRAWN = {
  embeddings: {
    view: createEmbeddingsStep,
    figure: (t, h) => fig('embeddings', t, h, t.embeddings, { caption: 'rows: tokens, columns: dimensions', kind: 'diverging', cols: t.embeddings.cols }),
  },
  positional: {
    view: createPositionalStep,
    figure: (t, h) => fig('positional', t, h, t.positional, { caption: `${t.config.positional} positions; rows: positions, columns: dimensions`, kind: 'diverging', cols: t.positional.cols }),
  },
  input: {
    view: createInputStep,
    figure: (t, h) => fig('input', t, h, t.input, { caption: 'rows: tokens, columns: dimensions', kind: 'diverging', cols: t.input.cols }),
  },
  projections: {
    view: createProjectionsStep,
    figure: (t, h) => {
      const dk = t.config.dHead;
      return fig('projections', t, h, t.heads[h].query, { caption: `head ${h + 1} of ${t.heads.length} uses columns ${h * dk}\u2026${(h + 1) * dk - 1} of W_Q; rows: tokens, columns: the head's d_k = ${dk} dimensions`, kind: 'diverging', cols: dk });
    },
  },
  rope: {
    view: createRopeStep,
    figure: (t, h) => fig('rope', t, h, t.heads[h].query, { caption: `each (i, i + ${t.config.dHead / 2}) pair of the query at position m turned by m\u00b7\u03b8\u1d62; rows: tokens, columns: the head's d_k = ${t.config.dHead} dimensions`, kind: 'diverging', cols: t.config.dHead }),
  },
  scores: {
    view: createScoresStep,
    figure: (t, h) => fig('scores', t, h, t.heads[h].scores, { caption: 'rows: queries, columns: keys', kind: 'diverging', cols: 'tokens' }),
  },
  scaled: {
    view: createScaledStep,
    figure: (t, h) => fig('scaled', t, h, t.heads[h].scaled, { caption: t.config.scale ? `S divided by \u221ad_k = \u221a${t.config.dHead}; rows: queries, columns: keys` : 'scaling is off, so these are the raw scores S; rows: queries, columns: keys', kind: 'diverging', range: maxAbs(t.heads[h].scores.data), cols: 'tokens' }),
  },
  masked: {
    view: createMaskedStep,
    figure: (t, h) => fig('masked', t, h, softmaxInput(t, h), { title: maskedTitle(t, h), caption: `mask: ${t.config.mask}; \u2212\u221e = hidden${alibiSlope(t, h) === null ? '' : `; ALiBi bias \u2212${formatValue(alibiSlope(t, h), 4)}\u00b7|i \u2212 j| added`}`, kind: 'diverging', mask: t.mask, cols: 'tokens' }),
  },
  softmax: {
    view: createSoftmaxStep,
    figure: (t, h) => fig('softmax', t, h, t.heads[h].weights, { caption: 'rows: queries, columns: keys; each row sums to 1', kind: 'sequential', zeros: t.mask, cols: 'tokens' }),
  },
  weighted: {
    view: createWeightedStep,
    figure: (t, h) => fig('weighted', t, h, t.heads[h].output, { caption: `rows: tokens, columns: the head's d_k = ${t.config.dHead} dimensions`, kind: 'diverging', cols: t.config.dHead }),
  },
  heads: {
    view: createHeadsStep,
    figure: (t, h) => fig('heads', t, h, t.heads[h].weights, { caption: 'rows: queries, columns: keys; each row sums to 1', kind: 'sequential', zeros: t.mask, cols: 'tokens' }),
  },
  concat: {
    view: createConcatStep,
    figure: (t, h) => fig('concat', t, h, t.concat, { caption: `rows: tokens, columns: C = ${t.config.dModel} dimensions, d_k = ${t.config.dHead} from each head`, kind: 'diverging', cols: t.concat.cols }),
  },
  output: {
    view: createOutputStep,
    figure: (t, h) => fig('output', t, h, t.output, { caption: 'rows: tokens, columns: dimensions', kind: 'diverging', cols: t.output.cols }),
  },
};

/** The twelve steps in order, then the extra ones (steps.js's EXTRA_STEPS), each with its view and figure. */
export const STEP_REGISTRY = Object.freeze([...STEP_LIST, ...EXTRA_STEPS].map((s) => Object.freeze({ ...s, ...DRAWN[s.id] })));
