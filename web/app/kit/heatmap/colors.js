// Colour mapping of a heatmap: which values the palette spans and the
// one-pixel-per-cell image of the matrix.
//   diverging: [−range, range] (range = the largest |value| unless given)
//   sequential (weights in [0, 1]): one of three colour scales, see SCALES
//   mask: allowed / blocked colours
// Cells blocked by a mask are drawn in the palette's neutral grey, never in a
// colour of the ramp: m.mask (the masked step: the value is −∞) or
// m.maskedZeros (after softmax: the value is an exact 0 that the mask made).

import { lutIndex } from '../palette.js';

/**
 * Colour scales of a weight map:
 *   fixed — 0 … 1, the same for every map;
 *   row   — 0 … the row's largest weight, each row on its own;
 *   auto  — fixed when it is readable (the typical row's largest weight reaches
 *           READABLE of the ramp), else row (long sentences: weights ≈ 1/T).
 */
export const SCALES = Object.freeze(['auto', 'fixed', 'row']);
export const SCALE_NAMES = Object.freeze({ auto: 'auto', fixed: '0\u20131', row: 'row max' });
export const READABLE = 0.25;

/** The range the colours span for diverging maps (or a given range): the largest finite |value| not masked. */
export function valueRange(m) {
  if (m.range != null) return m.range;
  if (m.kind === 'sequential') return 1;
  const d = m.matrix.data;
  let r = 0;
  for (let i = 0; i < d.length; i++) {
    if (m.mask && !m.mask[i]) continue;
    const a = Math.abs(d[i]);
    if (a > r && Number.isFinite(a)) r = a;
  }
  return r || 1;
}

/** Whether cell k is blocked by a mask (drawn grey, not by value). */
export function isBlocked(m, k) {
  return m.kind !== 'mask' && ((m.mask && !m.mask[k]) || (m.maskedZeros && !m.maskedZeros[k]));
}

/** Each row's largest value over cells not blocked (0 for a row with none). */
export function rowMaxima(m) {
  const { rows, cols, data } = m.matrix;
  const out = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    let mx = 0;
    for (let j = 0; j < cols; j++) {
      const k = i * cols + j;
      if (!isBlocked(m, k) && data[k] > mx) mx = data[k];
    }
    out[i] = mx;
  }
  return out;
}

/** The median of the positive row maxima (0 if none). */
function typicalMax(maxima) {
  const v = Array.from(maxima).filter((x) => x > 0).sort((a, b) => a - b);
  return v.length ? v[v.length >> 1] : 0;
}

/**
 * The colour scale a map is drawn with: {kind: 'range'|'fixed'|'row', choice,
 * auto (true when 'auto' picked it), range, rowMax, typical}.
 * choice is one of SCALES; it only applies to weight maps (sequential with range 1 or none).
 */
export function resolveScale(m, choice = 'fixed') {
  const weights = m.kind === 'sequential' && (m.range == null || m.range === 1);
  if (!weights || choice === 'fixed') return { kind: weights ? 'fixed' : 'range', choice: weights ? choice : 'fixed', auto: false, range: valueRange(m) };
  const rowMax = rowMaxima(m);
  const typical = typicalMax(rowMax);
  const kind = choice === 'row' || typical < READABLE ? 'row' : 'fixed';
  return { kind, choice, auto: choice === 'auto', range: 1, rowMax, typical };
}

/** The colour table of a kind: {lut (256×3), dark (1 where white text reads better)}. */
export function lutOf(m) {
  return m.kind === 'sequential' ? m.palette.sequential : m.palette.diverging;
}

/** LUT index of cell k on the scale (colour and text contrast agree through this one function). */
export function cellIndex(m, k, scale) {
  const x = m.matrix.data[k];
  if (scale.kind === 'row') {
    const mx = scale.rowMax[Math.floor(k / m.matrix.cols)];
    return lutIndex(mx > 0 ? x / mx : 0, 'sequential', 1);
  }
  return lutIndex(x, m.kind, scale.range);
}

/** Paints the matrix into `image` (a canvas, cols × rows pixels) on the given scale. */
export function paintImage(image, m, scale) {
  const { rows, cols, data } = m.matrix;
  image.width = Math.max(1, cols);
  image.height = Math.max(1, rows);
  const ictx = image.getContext('2d');
  const img = ictx.createImageData(image.width, image.height);
  const px = img.data;
  const { lut } = lutOf(m);
  const masked = m.palette.maskedRgb;
  const allow = m.palette.allowRgb;
  for (let i = 0; i < rows * cols; i++) {
    let r;
    let g;
    let b;
    if (m.kind === 'mask') {
      [r, g, b] = data[i] ? allow : masked;
    } else if (isBlocked(m, i)) {
      [r, g, b] = masked;
    } else {
      const k = cellIndex(m, i, scale) * 3;
      r = lut[k];
      g = lut[k + 1];
      b = lut[k + 2];
    }
    const o = i * 4;
    px[o] = r;
    px[o + 1] = g;
    px[o + 2] = b;
    px[o + 3] = 255;
  }
  ictx.putImageData(img, 0, 0);
}

/** Whether any cell is blocked (the legend then names the grey). */
export function anyBlocked(m) {
  const a = m.kind === 'mask' ? null : (m.mask ?? m.maskedZeros);
  if (!a) return false;
  for (let i = 0; i < a.length; i++) if (!a[i]) return true;
  return false;
}
