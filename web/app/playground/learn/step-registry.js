// What each Learn step (steps.js) draws: its view (learn-*.js, given v.learn,
// the source's backward) and `figure(trace, h, {learn, q})`, what the export
// draws (export.js stepFigure reads both registries the same way): the step's
// main matrix for head h of the layer on screen, from the backward `learn`
// (v.learn: {bw, now, before, targets, modelScale, …}), with the title its
// view shows above it (notation.js learnFigureTitle); null when there is no
// backward (no answer set, or a model without one). q is the selected query
// (the loss and the step by hand show its row). A view touches the DOM only
// when called, so this module imports in Node.

import { createLearnLossStep } from './learn-loss.js';
import { createLearnOutStep } from './learn-dout.js';
import { createLearnWeightsStep } from './learn-dweights.js';
import { createLearnSoftmaxStep } from './learn-dsoftmax.js';
import { createLearnScaleStep } from './learn-dscale.js';
import { createLearnQkvStep } from './learn-dqkv.js';
import { createLearnParamsStep } from './learn-dparams.js';
import { createLearnSgdStep } from './learn-sgd.js';
import { learnFigureTitle } from '../../kit/notation.js';
import { lossWords, parseSgdStep } from './learn.js';
import { LEARN_LIST } from './steps.js';
import { headColumns } from '../../kit/common.js';
import { tokenLabel, quoted, formatValue, DIGITS } from '../../kit/format.js';

/** The head and layer a figure is about, in the page's numbering (from 1). */
const where = (t, h) => `layer ${t.model.layer + 1} of ${t.model.layers}, head ${h + 1} of ${t.heads.length}`;

/** What a row of zeros in a query × key gradient means (most rows, when one position has an answer). */
const ZERO_ROWS = 'a row of zeros: that query reaches no answer';

/** Whether the mask hides any cell (a trained model's causal mask does). */
const masks = (t) => t.mask.data.some((x) => !x);

/** The backward the steps show when the scale switch differs from the model's own 1/√d_k (else ''). */
const switchNote = (L) => (L.bw.scale === L.modelScale ? '' : `; the scale switch is ${L.bw.scale ? 'on' : 'off'}: this backward (and the forward under it) runs ${L.bw.scale ? 'with' : 'without'} 1/\u221ad_k, unlike the model`);

/** Head h of the layer on screen in the backward the steps show: {layer, head, D}. */
const shown = (t, h, L) => {
  const layer = L.bw.layers[t.model.layer];
  return { layer, head: layer.heads[h], D: t.config.dHead };
};

/**
 * A Learn figure (null without a backward). The caption is the step's own text,
 * then the head and layer, then the scale switch when it is not the model's
 * (own: the step's caption says it itself, or its numbers do not follow the switch).
 */
const learnFigure = (build, { own = false } = {}) => (t, h, { learn: L = null, q = 0 } = {}) => {
  if (!L?.bw || !t.model) return null;
  const f = build(t, h, L, q);
  return { ...f, caption: `${f.caption}; ${where(t, h)}${own ? '' : switchNote(L)}` };
};

/**
 * The loss step: dL/dlogits at the selected position, over the words its table
 * lists (the five likeliest and the answer). The whole row is the vocabulary
 * (64 words for coreference, 4,002 for the language model): too wide for a slide,
 * and all but the answer are p/N ≥ 0, most of them tiny. So the figure keeps the
 * page's words, and the caption says how many it leaves out and the largest of them.
 */
function lossFigure(t, h, L, q) {
  const P = L.bw.probabilities;
  const V = P.cols;
  const y = L.targets[q];
  const voc = L.vocabulary ?? t.model.vocabulary;
  const items = lossWords(P, q, voc, y);
  const dL = L.bw.dLogits.data;
  const values = Float32Array.from(items, (it) => dL[q * V + it.id]);
  const kept = new Set(items.map((it) => it.id));
  let rest = 0;
  for (let j = 0; j < V; j++) if (!kept.has(j)) rest = Math.max(rest, Math.abs(dL[q * V + j]));
  const N = L.targets.filter((x) => x >= 0).length;
  const columns = `columns: the five likeliest words${y >= 0 && items.length > 5 ? ' and the answer' : ''}, ${items.length} of the ${V.toLocaleString('en-US')}-word vocabulary`;
  const caption = y >= 0
    ? `dL/dlogits = (softmax \u2212 one-hot)/N, N = ${N} position${N === 1 ? '' : 's'} with an answer; the row of position ${q}, whose answer is ${quoted(voc[y])}: (p \u2212 1)/N there (negative: the loss wants that logit larger), p/N for every other word; ${columns}; the ${(V - items.length).toLocaleString('en-US')} left out are at most ${formatValue(rest, DIGITS.legend)} each`
    : `position ${q} has no answer, so its gradient is 0 for every word (pick a position with an answer); ${columns}`;
  return {
    matrix: { rows: 1, cols: items.length, data: values },
    title: learnFigureTitle('loss', t, h, { q }),
    caption, kind: 'diverging', cols: items.length,
    rowLabels: [`${q} ${tokenLabel(t.tokens[q]?.text ?? '')}`],
    colLabels: items.map((it) => `${tokenLabel(it.text)}${it.id === y ? ' (answer)' : ''}`),
  };
}

/** "learning rate 1, on head 1 of layer 2" for a step by hand's link text (learn.js). */
function stepText(text, t) {
  const st = parseSgdStep(text);
  return `learning rate ${st.lr}, on ${st.scope === 'all' ? (t.model.pretrained ? `every head of layer ${t.model.layer + 1}` : 'every parameter') : `head ${st.head + 1} of layer ${st.layer + 1}`}`;
}

/**
 * The step by hand: the attention row of the selected query before and after the last
 * step (one row before any), on the model's own 1/√d_k as the steps are (not the switch's).
 */
function sgdFigure(t, h, L, q) {
  const { now, before } = L;
  const l = t.model.layer;
  const T = t.tokens.length;
  const rowOf = (bw) => bw.layers[l].heads[h].weights.data.subarray(q * T, (q + 1) * T);
  const rows = before ? [rowOf(before), rowOf(now)] : [rowOf(now)];
  const data = new Float32Array(rows.length * T);
  rows.forEach((r, i) => data.set(r, i * T));
  const maskRow = t.mask.data.subarray(q * T, (q + 1) * T);
  const zeros = { rows: rows.length, cols: T, data: Uint8Array.from({ length: rows.length * T }, (_, i) => maskRow[i % T]) };
  const n = L.history.length;
  const y = L.targets[q];
  const lossText = before ? `the loss L went from ${formatValue(before.loss, DIGITS.formula)} to ${formatValue(now.loss, DIGITS.formula)}` : `the loss L is ${formatValue(now.loss, DIGITS.formula)}`;
  const caption = `${before ? `rows: the weights before and after the last of ${n} step${n === 1 ? '' : 's'} by hand (${stepText(L.history[n - 1], t)})` : 'no step by hand taken yet: the trained weights\u2019 row'}; columns: keys; each row sums to 1; ${lossText}${y >= 0 ? ` (the answer at position ${q}: ${quoted((L.vocabulary ?? t.model.vocabulary)[y])})` : ''}; the steps use the model\u2019s own 1/\u221ad_k`;
  return {
    matrix: { rows: rows.length, cols: T, data },
    title: learnFigureTitle('sgd', t, h, { q }),
    caption, kind: 'sequential', zeros: masks(t) ? zeros : null, cols: 'tokens',
    rowLabels: before ? ['before', 'after'] : ['trained'],
  };
}

const DRAWN = {
  loss: { view: createLearnLossStep, figure: learnFigure(lossFigure) },
  dout: {
    view: createLearnOutStep,
    figure: learnFigure((t, h, L) => ({ matrix: shown(t, h, L).head.dOutput, title: learnFigureTitle('dout', t, h), caption: `dO = \u2202L/\u2202O, the gradient arriving at the head\u2019s output; rows: tokens, columns: the head\u2019s d_k = ${t.config.dHead} dimensions; a row of zeros: that token\u2019s output reaches no answer`, kind: 'diverging', cols: t.config.dHead })),
  },
  dweights: {
    view: createLearnWeightsStep,
    figure: learnFigure((t, h, L) => ({ matrix: shown(t, h, L).head.dWeights, title: learnFigureTitle('dweights', t, h), caption: `the gradient of each attention weight; rows: queries, columns: keys; negative: the loss wants that weight larger; ${ZERO_ROWS}${masks(t) ? '; a weight the causal mask hides stays 0, so its dP goes no further (dS\u2032 is exactly 0 there)' : ''}`, kind: 'diverging', cols: 'tokens' })),
  },
  dsoftmax: {
    view: createLearnSoftmaxStep,
    figure: learnFigure((t, h, L) => ({ matrix: shown(t, h, L).head.dScaled, title: learnFigureTitle('dsoftmax', t, h), caption: `back through the softmax, dS\u2032\u1d62 = P\u1d62 \u2299 (dP\u1d62 \u2212 \u03a3\u2096 P\u1d62\u2096 dP\u1d62\u2096); rows: queries, columns: keys; ${ZERO_ROWS}${masks(t) ? '; a key the causal mask hides gets exactly 0 gradient' : ''}`, kind: 'diverging', zeros: t.mask, cols: 'tokens' })),
  },
  dscale: {
    view: createLearnScaleStep,
    figure: learnFigure((t, h, L) => ({
      matrix: shown(t, h, L).head.dScores, title: learnFigureTitle('dscale', t, h, { scale: L.bw.scale }),
      caption: `${L.bw.scale ? `the scale switch is on: 1/\u221ad_k on the backward too, dS = dS\u2032/\u221a${t.config.dHead}` : 'the scale switch is off: the same weights\u2019 forward and backward without 1/\u221ad_k, so dS = dS\u2032'}; the gradient of the scores Q\u00b7K\u1d40; rows: queries, columns: keys; ${ZERO_ROWS}${masks(t) ? '; a key the causal mask hides gets exactly 0 gradient' : ''}`,
      kind: 'diverging', zeros: t.mask, cols: 'tokens',
    }), { own: true }),
  },
  dqkv: {
    view: createLearnQkvStep,
    figure: learnFigure((t, h, L) => ({ matrix: shown(t, h, L).head.dQuery, title: learnFigureTitle('dqkv', t, h), caption: `how each query should move; rows: tokens, columns: the head\u2019s d_k = ${t.config.dHead} dimensions (dK = dS\u1d40\u00b7Q and dV = P\u1d40\u00b7dO are beside it on the page)`, kind: 'diverging', cols: t.config.dHead })),
  },
  dparams: {
    view: createLearnParamsStep,
    figure: learnFigure((t, h, L) => {
      const { layer, D } = shown(t, h, L);
      const C = t.config.dModel;
      return {
        matrix: headColumns(layer.dWQuery, h, D), title: learnFigureTitle('dparams', t, h),
        caption: `dW_Q = X\u2032\u1d40\u00b7dQ, the gradient of the head\u2019s columns ${h * D}\u2026${(h + 1) * D - 1} of W_Q; rows: the C = ${C} input dimensions, columns: those ${D} columns of W_Q`,
        kind: 'diverging', cols: D,
        rowLabels: Array.from({ length: C }, (_, c) => String(c)),
        colLabels: Array.from({ length: D }, (_, d) => String(h * D + d)),
      };
    }),
  },
  sgd: { view: createLearnSgdStep, figure: learnFigure(sgdFigure, { own: true }) },
};

/** The Learn steps in order, each with its view and figure. */
export const LEARN_REGISTRY = Object.freeze(LEARN_LIST.map((s) => Object.freeze({ ...s, ...DRAWN[s.id] })));
