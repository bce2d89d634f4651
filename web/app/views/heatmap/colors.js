// Colour mapping of a heatmap: which value range the palette spans and the
// one-pixel-per-cell image of the matrix.
//   diverging: [−range, range] (range = the largest |value| unless given)
//   sequential: [0, range] (weights: range 1)
//   mask: allowed / blocked colours

import { lutIndex } from '../../palette.js';

/** The range the colours span: the model's, 1 for sequential, else the largest finite |value| not masked. */
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

/** The colour table of a kind: {lut (256×3), dark (1 where white text reads better)}. */
export function lutOf(m) {
  return m.kind === 'sequential' ? m.palette.sequential : m.palette.diverging;
}

/** LUT index of cell k (colour and text contrast agree through this one function). */
export function cellIndex(m, k, range) {
  return lutIndex(m.matrix.data[k], m.kind, range);
}

/** Paints the matrix into `image` (a canvas, cols × rows pixels). Returns the range used. */
export function paintImage(image, m) {
  const { rows, cols, data } = m.matrix;
  image.width = Math.max(1, cols);
  image.height = Math.max(1, rows);
  const ictx = image.getContext('2d');
  const img = ictx.createImageData(image.width, image.height);
  const px = img.data;
  const { lut } = lutOf(m);
  const range = valueRange(m);
  const masked = m.palette.maskedRgb;
  const allow = m.palette.allowRgb;
  for (let i = 0; i < rows * cols; i++) {
    let r;
    let g;
    let b;
    if (m.kind === 'mask') {
      [r, g, b] = data[i] ? allow : masked;
    } else if (m.mask && !m.mask[i]) {
      [r, g, b] = masked;
    } else {
      const k = cellIndex(m, i, range) * 3;
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
  return range;
}
