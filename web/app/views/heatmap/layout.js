// Layout of a heatmap: cell size, label gutters, which labels are drawn.
// A pure function of the model and the space it gets; the drawing code only
// reads the result.
//
//   const L = computeLayout(m, { measure, compact, width, share, rowTexts });
//   // cell (i, j) is at (L.x0 + j·L.cw, L.y0 + i·L.ch), L.cw × L.ch pixels

import { tokenLabel } from '../../format.js';

export const NUM_W = 46; // cell size when numbers are printed
export const NUM_H = 22;
export const MAX_NUMBER_COLS = 32;
export const MAX_NUMBER_ROWS = 160;
const INDEX_STEPS = [2, 4, 5, 8, 10, 16, 20, 32, 50, 64, 100, 128, 256];

/** Token labels as drawn (control characters visible, at most 24 characters). */
export function labelTexts(labels) {
  return (labels ?? []).map((t) => tokenLabel(t, 24));
}

/** Widest of the first `limit` texts in ctx's current font. */
function widestOf(ctx, texts, limit, step = 1) {
  let w = 0;
  for (let i = 0; i < Math.min(texts.length, limit); i += step) w = Math.max(w, ctx.measureText(texts[i]).width);
  return w;
}

/** Cell size and whether numbers are printed in the cells. */
function cellSize(m, { rows, cols, compact, avail, labelGuess }) {
  if (m.kind === 'mask' && cols <= 48 && rows <= MAX_NUMBER_ROWS) {
    const numbers = cols <= 40;
    return { numbers, cw: numbers ? 24 : 16, ch: numbers ? 22 : 16 };
  }
  if (!compact && cols <= MAX_NUMBER_COLS && rows <= MAX_NUMBER_ROWS) {
    // as wide as fits, between 38 and 46 px; below that the matrix scrolls in its box
    return { numbers: true, cw: Math.max(38, Math.min(NUM_W, Math.floor((avail - labelGuess - 4) / cols))), ch: NUM_H };
  }
  let cw = Math.floor((avail - labelGuess) / cols);
  cw = Math.max(2, Math.min(compact ? 16 : 30, cw));
  if (compact) cw = Math.max(2, Math.min(cw, Math.floor(320 / rows)));
  let ch = compact ? cw : Math.min(cw, 24);
  if (rows > 160 && ch > 8) ch = Math.max(4, Math.min(ch, 8));
  return { numbers: false, cw, ch };
}

/** Column header: token names across or rotated, or column indices. */
function columnHeader(ctx, { font, fontPx, compact, cw, cols, colTexts }) {
  if (colTexts) {
    ctx.font = `600 ${font}`;
    const colWidest = cw >= 34 ? widestOf(ctx, colTexts, 64) : 0;
    ctx.font = font;
    if (cw >= 34 && colWidest <= cw - 4) return { colMode: 'horizontal', colStep: 1, headH: fontPx + 10 };
    const colStep = cw >= 12 ? 1 : Math.ceil(13 / cw);
    const w = widestOf(ctx, colTexts, 600, colStep);
    return { colMode: 'vertical', colStep, headH: Math.ceil(Math.min(compact ? 56 : 72, w + 10)) };
  }
  const digits = ctx.measureText(String(cols - 1)).width + 6;
  let colStep = Math.max(1, Math.ceil(digits / cw));
  if (colStep > 1) colStep = INDEX_STEPS.find((s) => s >= colStep) ?? colStep;
  return { colMode: 'index', colStep, headH: fontPx + 8 };
}

/**
 * @param m the heatmap model ({matrix, kind, palette, colLabels, colBands, …})
 * @param env {measure: a 2D context for measuring, compact, width: the parent's width in px,
 *             share: the part of it this map may take, rowTexts: labelTexts(m.rowLabels)}
 */
export function computeLayout(m, { measure: ctx, compact, width, share, rowTexts }) {
  const { rows, cols } = m.matrix;
  const fontPx = compact ? 11 : 12;
  const font = `${fontPx}px ${m.palette.font}`;
  const effShare = width < 620 ? 1 : share;
  const avail = Math.max(120, Math.floor(width * effShare) - 6);

  ctx.font = `600 ${font}`;
  const widest = widestOf(ctx, rowTexts, 600);
  ctx.font = font;
  const labelMax = compact ? 64 : 96;
  const labelGuess = Math.min(labelMax, widest + 10);
  const { numbers, cw, ch } = cellSize(m, { rows, cols, compact, avail, labelGuess });
  const rowStep = ch >= 11 ? 1 : Math.ceil(12 / ch);
  const labelW = rowTexts.length && ch * rowStep >= 10 ? Math.ceil(labelGuess) : 4;

  const colTexts = m.colLabels ? labelTexts(m.colLabels) : null;
  const { colMode, colStep, headH } = columnHeader(ctx, { font, fontPx, compact, cw, cols, colTexts });
  const bandH = m.colBands ? 14 : 0;
  const x0 = labelW;
  const y0 = headH + bandH;
  const W = x0 + cols * cw + 2;
  const H = y0 + rows * ch + 2;
  return { rows, cols, cw, ch, numbers, labelW, headH, bandH, x0, y0, W, H, font, fontPx, rowStep, colStep, colMode, colTexts };
}
