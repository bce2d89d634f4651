// Pieces every step view uses: the frame (explanation, formula, figures),
// token labels and row/column access into trace matrices.

import { el } from './dom.js';
import { createFormula } from './formula.js';
import { quoted } from '../format.js';
import { at } from '../../engine.js';

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
      explain.replaceChildren(...paragraphs.map((p) => el('p', null, { text: p })));
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

export { at };

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
