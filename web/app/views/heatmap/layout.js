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

export const COMFORT = 14; // below this cell width a map takes the whole row rather than its share
const MIN_READABLE_H = 11; // rows at least this tall get every label
const MAX_COMPACT_CELL = 16;
/** A thumbnail (compact map) is at most this many times as tall as it is wide; beyond, it scrolls. */
export const MAX_ASPECT = 2;
const COMPACT_TARGET_H = 320;

/** Colour-only cells: as wide as the space allows (2 … 30 px), rows not taller than the window allows. */
function colourCells({ rows, cols, compact, avail, labelGuess, maxH }) {
  const cw = Math.max(2, Math.min(compact ? MAX_COMPACT_CELL : 30, Math.floor((avail - labelGuess) / cols)));
  if (compact) {
    // a thumbnail: at most COMPACT_TARGET_H tall and MAX_ASPECT times its width, rows down to 2 px
    const w = labelGuess + cols * cw;
    const h = Math.min(COMPACT_TARGET_H, MAX_ASPECT * w - 24);
    return { numbers: false, cw, ch: Math.max(2, Math.min(cw, Math.floor(h / rows))) };
  }
  let ch = Math.min(cw, 24);
  if (rows > 160 && ch > 8) ch = Math.max(4, Math.min(ch, 8));
  // keep the whole map inside the scroll box's height when rows can stay readable
  const fitH = Math.floor((maxH - 90) / rows);
  if (ch > MIN_READABLE_H && fitH < ch) ch = Math.max(MIN_READABLE_H, fitH);
  return { numbers: false, cw, ch };
}

/** Cell size and whether numbers are printed in the cells. numberW: the widest number's width in px. */
function cellSize(m, env) {
  const { rows, cols, compact, avail, labelGuess } = env;
  if (m.kind === 'mask' && cols <= 48 && rows <= MAX_NUMBER_ROWS) {
    const numbers = cols <= 40;
    return { numbers, cw: numbers ? 24 : 16, ch: numbers ? 22 : 16 };
  }
  if (!compact && cols <= MAX_NUMBER_COLS && rows <= MAX_NUMBER_ROWS) {
    // as wide as fits, up to 46 px, down to the widest number (never clipped): three
    // significant digits when they fit (on a desktop: in cells up to 46 px), else two;
    // below that the matrix scrolls in its box, with a cue
    const fit = Math.floor((avail - labelGuess - 4) / cols);
    const minFor = (digits) => Math.max(30, Math.ceil(env.numberW(digits)) + 4);
    const digits = minFor(3) <= Math.max(fit, env.narrow ? 0 : NUM_W) ? 3 : 2;
    return { numbers: true, digits, cw: Math.max(minFor(digits), Math.min(NUM_W, fit)), ch: NUM_H };
  }
  return colourCells(env);
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
 *             share: the part of it this map may take, rowTexts: labelTexts(m.rowLabels),
 *             maxH: the scroll box's largest height in px, numberW(digits): the widest cell number in px}
 */
export function computeLayout(m, { measure: ctx, compact, width, share, rowTexts, maxH = 640, numberW = () => 0 }) {
  const { rows, cols } = m.matrix;
  const fontPx = compact ? 11 : 12;
  const font = `${fontPx}px ${m.palette.font}`;
  const narrow = width < 620;
  ctx.font = `600 ${font}`;
  const widest = widestOf(ctx, rowTexts, 600);
  ctx.font = font;
  const labelMax = compact || narrow ? 64 : 96;
  const labelGuess = Math.min(labelMax, widest + 10);
  const env = { rows, cols, compact, narrow, labelGuess, maxH, numberW };
  let { numbers, digits, cw, ch } = cellSize(m, { ...env, avail: Math.max(120, Math.floor(width * (narrow ? 1 : share)) - 6) });
  // a long sentence in a map's share of the row gives tiny cells: take the whole row
  // (the figure beside it wraps below) when that makes them bigger
  if (!compact && !numbers && !narrow && share < 1 && cw < COMFORT) {
    const full = cellSize(m, { ...env, avail: Math.max(120, width - 6) });
    if (full.cw > cw) ({ numbers, digits, cw, ch } = full);
  }
  const rowStep = ch >= 11 ? 1 : Math.ceil(12 / ch);
  const labelW = rowTexts.length && ch * rowStep >= 10 ? Math.ceil(labelGuess) : 4;

  const colTexts = m.colLabels ? labelTexts(m.colLabels) : null;
  const { colMode, colStep, headH } = columnHeader(ctx, { font, fontPx, compact, cw, cols, colTexts });
  const bandH = m.colBands ? 14 : 0;
  const x0 = labelW;
  const y0 = headH + bandH;
  const W = x0 + cols * cw + 2;
  const H = y0 + rows * ch + 2;
  return { rows, cols, cw, ch, numbers, digits, labelW, headH, bandH, x0, y0, W, H, font, fontPx, rowStep, colStep, colMode, colTexts };
}
