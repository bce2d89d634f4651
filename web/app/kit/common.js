// Pieces every step view uses: the frame (explanation, formula, figures),
// token labels and row/column access into trace matrices.

import { el } from './dom.js';
import { createFormula } from './formula.js';
import { quoted } from './format.js';
import { glossed } from './glossary.js';

/**
 * The frame of one step: a short explanation next to the numbers, the formula
 * with the selected cell's numbers, and the figures.
 */
export function createStepFrame(root, name) {
  root.classList.add('step-view');
  root.dataset.step = name;
  const explain = el('div', 'step-explain', { testid: 'step-explain' });
  const formulaWrap = el('div', 'formula-wrap');
  const figures = el('div', 'figures');
  root.append(explain, formulaWrap, figures);
  const formula = createFormula(formulaWrap);
  let lastExplain = '';
  return {
    root,
    formula,
    figures,
    /** Paragraphs of explanation; only touches the DOM when the text changes. */
    explain(...paragraphs) {
      const text = paragraphs.join('\n');
      if (text === lastExplain) return;
      lastExplain = text;
      // a term's first use in the step carries its one-line gloss (glossary.js)
      const seen = new Set();
      explain.replaceChildren(...paragraphs.map((p) => el('p', null, {}, ...glossed(p, seen))));
    },
    /** A new row of figures (they wrap on narrow screens). */
    row(className = '') {
      const r = el('div', `figure-row ${className}`.trim());
      figures.append(r);
      return r;
    },
  };
}

export const NOISE_NOTE = 'Random weights: these patterns are noise; pick a trained model to see learned ones.';

/**
 * The line that says whose weights these are, where patterns are read
 * (softmax, ×V, heads): for random weights, that the patterns are noise.
 */
export function createModelNote(frame) {
  const n = el('p', 'model-note', { testid: 'model-note', attrs: { role: 'note' } });
  frame.root.insertBefore(n, frame.root.firstChild);
  let last;
  return {
    update(trace) {
      const text = trace.model ? null : NOISE_NOTE;
      if (text === last) return;
      last = text;
      n.hidden = !text;
      n.classList.toggle('is-random', !trace.model);
      n.textContent = text ?? '';
    },
  };
}

export const OUTSIDE_TITLE = 'This sentence is outside what this model learned: its answer is a guess.';

/**
 * How far the sentence is from what a trained model learned (trace.model.fit,
 * model-trace.js), where its answer and its heads are read: the measures in
 * plain words, and when it is outside, that the answer is a guess and which
 * model fits better (onPickModel(name) switches to it). Hidden for random weights.
 */
export function createFitNote(frame, { onPickModel = null, parent = null } = {}) {
  const title = el('p', 'fit-title');
  const list = el('ul', 'fit-measures');
  const pick = el('button', 'btn btn-small fit-pick', { type: 'button', testid: 'fit-pick' });
  const later = el('span', 'fit-later');
  const suggest = el('p', 'fit-suggest', {}, pick, later);
  const n = el('div', 'fit-note', { testid: 'fit-note', attrs: { role: 'note' } }, title, list, suggest);
  let target = null;
  pick.addEventListener('click', () => { if (target) onPickModel?.(target); });
  if (parent) parent.append(n);
  else frame.root.insertBefore(n, frame.root.querySelector('.step-explain') ?? frame.root.firstChild);
  let last;
  return {
    update(trace) {
      const fit = trace.model?.fit ?? null;
      const key = fit ? JSON.stringify([fit.outside, fit.measures, fit.suggest]) : '';
      if (key === last) return;
      last = key;
      n.hidden = !fit;
      if (!fit) return;
      n.classList.toggle('is-outside', fit.outside);
      n.dataset.outside = fit.outside ? '1' : '0';
      title.textContent = fit.outside ? OUTSIDE_TITLE : 'How close this sentence is to what the model learned:';
      list.replaceChildren(...fit.measures.map((m) => el('li', null, { text: m })));
      target = fit.outside && fit.suggest && onPickModel ? fit.suggest : null;
      suggest.hidden = !target;
      if (target) {
        pick.textContent = 'Try the language model \u2192';
        later.textContent = ' It was trained on everyday sentences, so it fits yours better. (A real pretrained model will come later.)';
      }
    },
  };
}

/**
 * The one line a step says when it has nothing to show on this model (a fixed scale, a mask
 * of all 1s), with a button to where it does (issue #40, 5): update(null) hides it,
 * update({text, label, patch}) shows it; a click calls onPick(patch).
 */
export function createOffer(frame, onPick) {
  const text = el('span', 'step-offer-text');
  const go = el('button', 'btn btn-small step-offer-go', { type: 'button', testid: 'step-offer-go' });
  const n = el('p', 'step-offer', { testid: 'step-offer', hidden: true, attrs: { role: 'note' } }, text, ' ', go);
  let patch = null;
  go.addEventListener('click', () => { if (patch) onPick(patch); });
  frame.root.insertBefore(n, frame.root.querySelector('.formula-wrap'));
  return {
    update(offer) {
      n.hidden = !offer;
      patch = offer?.patch ?? null;
      if (!offer) return;
      text.textContent = offer.text;
      go.textContent = offer.label;
    },
  };
}

/** "layer 2 of 2" for a trained model's trace, '' for random weights. */
export function layerName(trace) {
  return trace.model && trace.model.layers > 1 ? `, layer ${trace.model.layer + 1}` : '';
}

/** A small operator between figures ("+", "=", "×"). */
export function operator(parent, text) {
  const o = el('div', 'figure-op', { text, attrs: { 'aria-hidden': 'true' } });
  parent.append(o);
  return o;
}

/** A note under figures. */
export function note(parent, className = 'figure-note') {
  const n = el('p', className);
  parent.append(n);
  return n;
}

export function tok(trace, i) {
  return quoted(trace.tokens[i]?.text ?? '?', 14);
}

export function row(matrix, i) {
  return matrix.data.subarray(i * matrix.cols, (i + 1) * matrix.cols);
}

export function col(matrix, j) {
  const out = new Float32Array(matrix.rows);
  for (let i = 0; i < matrix.rows; i++) out[i] = matrix.data[i * matrix.cols + j];
  return out;
}

/** Element (i, j) of a {rows, cols, data} matrix. */
export function at(matrix, i, j) {
  return matrix.data[i * matrix.cols + j];
}

/** Columns h·D … (h+1)·D−1 of a C×C weight matrix, as a C×D matrix (cached). */
const sliceCache = new WeakMap();
export function headColumns(w, h, D) {
  let perW = sliceCache.get(w);
  if (!perW) {
    perW = new Map();
    sliceCache.set(w, perW);
  }
  const key = `${h}/${D}`;
  let m = perW.get(key);
  if (!m) {
    const data = new Float32Array(w.rows * D);
    for (let c = 0; c < w.rows; c++) for (let d = 0; d < D; d++) data[c * D + d] = w.data[c * w.cols + h * D + d];
    m = { rows: w.rows, cols: D, data };
    perW.set(key, m);
  }
  return m;
}

/** The step's own heatmap of a matrix in head space is T×D; clamp a column index. */
export function clampIndex(i, n) {
  return Math.max(0, Math.min(n - 1, i));
}
