// ALiBi on the playground's steps (Press et al. 2022, "Train Short, Test Long"):
// no position vectors; each head h adds −m_h·|i − j| to its scaled scores S′
// before the mask and the softmax. The engine's trace keeps S′ as it is (and the
// heads' slopes); these pure helpers give what the mask and the softmax read.
// Shared by the step views and the figure export; no DOM.

import { figureTitle } from '../kit/notation.js';

/** The heads' slopes m_h of a trace with ALiBi positions, else null. */
export function alibiSlopes(tr) {
  if (tr?.config?.positional !== 'alibi') return null;
  const s = tr.alibi?.slopes ?? tr.alibiSlopes ?? null;
  return s && s.length ? s : null;
}

/** Head h's slope, or null without ALiBi. */
export function alibiSlope(tr, head) {
  const s = alibiSlopes(tr);
  return s ? s[head] ?? null : null;
}

/** The bias of one head (T×T): −m·|i − j|, a matrix {rows, cols, data}. */
export function alibiBias(slope, T) {
  const data = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) data[i * T + j] = -slope * Math.abs(i - j);
  return { rows: T, cols: T, data };
}

/**
 * What the mask and the softmax read for head h: S′ − m_h·|i − j| with ALiBi
 * (float32 as the engine adds it), else S′ itself.
 */
export function softmaxInput(tr, head) {
  const scaled = tr.heads[head].scaled;
  const slope = alibiSlope(tr, head);
  if (slope === null) return scaled;
  const T = scaled.rows;
  const data = new Float32Array(T * scaled.cols);
  for (let i = 0; i < T; i++) for (let j = 0; j < scaled.cols; j++) data[i * scaled.cols + j] = Math.fround(scaled.data[i * scaled.cols + j] - Math.fround(slope * Math.abs(i - j)));
  return { rows: T, cols: scaled.cols, data };
}

/** "2^(−8·1/4) = 0.125": how head h's slope comes from the head count (the paper's rule). */
export function slopeRule(heads, head) {
  let n = 1; // the largest power of two ≤ H
  while (n * 2 <= heads) n *= 2;
  const k = head + 1;
  if (k <= n) return { exponent: `\u22128\u00b7${k}/${n}` };
  return { exponent: `\u22128\u00b7${2 * (k - n) - 1}/${2 * n}` };
}

/** The masked step's figure title: with ALiBi its scores carry the bias (" + bias"), on the page and in the export alike. */
export function maskedTitle(tr, head) {
  return alibiSlope(tr, head) === null ? figureTitle('masked', tr, head) : `${figureTitle('masked', tr, head)} + bias`;
}
