// Layout of a heatmap: cell size, label gutters, which labels are drawn.
// A pure function of the model and the space it gets; the drawing code only
// reads the result.
//
//   const L = computeLayout(m, { measure, compact, width, share, rowTexts });
//   // cell (i, j) is at (L.x0 + j·L.cw, L.y0 + i·L.ch), L.cw × L.ch pixels

import { tokenText } from '../format.js';
import { fitLabel } from './text.js';

export const NUM_W = 46; // cell size when numbers are printed
export const NUM_H = 22;
export const MAX_NUMBER_COLS = 32;
export const MAX_NUMBER_ROWS = 160;
const INDEX_STEPS = [2, 4, 5, 8, 10, 16, 20, 32, 50, 64, 100, 128, 256];

/** Token labels as drawn: whole (control characters made visible), never cut. */
export function labelTexts(labels) {
  return (labels ?? []).map((t) => tokenText(t));
}

/** The smallest label font (px): labels shrink to it before they wrap. */
export const MIN_LABEL_PX = 9;
/** The line height of a label in a font of px pixels. */
export const labelLineH = (px) => Math.ceil(px * 1.2);
/** The share of a map's width its row-label gutter may take before labels shrink. */
export const GUTTER_SHARE = 0.2;
/**
 * The widest a label line may grow a gutter to (px) when even two lines at
 * MIN_LABEL_PX do not fit: beyond it (a token of hundreds of characters) the
 * label is cut, visibly, with "…"; the tooltip and the readout give it whole.
 */
export const HARD_LABEL_W = 200;

/**
 * How token labels fit a gutter whose text may be maxW wide, never cut (issue #16):
 * each label in the base font when it fits, else shrunk (down to MIN_LABEL_PX),
 * else on two lines when `room` (the slot's height, or width for rotated labels)
 * holds two, else on one line and the gutter grows to it (text.js fitLabel).
 * Returns {opts (fitLabel's options, for drawing), width: the widest label as drawn}.
 */
export function planLabels(ctx, texts, { family, basePx, maxW, room, hardMaxW = HARD_LABEL_W, fit = fitLabel }) {
  const opts = { family, basePx, minPx: MIN_LABEL_PX, maxW, twoLines: room >= 2 * labelLineH(MIN_LABEL_PX), hardMaxW: Math.max(maxW, hardMaxW) };
  let width = 0;
  for (const t of texts) width = Math.max(width, fit(ctx, t, opts).width);
  return { opts, width };
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

/** Column header: token names across or rotated (whole: see planLabels), or column indices. */
function columnHeader(ctx, { font, fontPx, family, compact, cw, cols, colTexts, fit }) {
  if (colTexts) {
    ctx.font = `600 ${font}`;
    const colWidest = cw >= 34 && cols <= 64 ? widestOf(ctx, colTexts, cols) : Infinity;
    ctx.font = font;
    if (colWidest <= cw - 4) return { colMode: 'horizontal', colStep: 1, headH: fontPx + 10, colFit: { family, basePx: fontPx, minPx: fontPx, maxW: Infinity, twoLines: false } };
    const colStep = cw >= 12 ? 1 : Math.ceil(13 / cw);
    const shown = colStep === 1 ? colTexts : colTexts.filter((_, j) => j % colStep === 0);
    const plan = planLabels(ctx, shown, { family, basePx: fontPx, maxW: (compact ? 56 : 72) - 10, room: cw * colStep, fit });
    ctx.font = font;
    return { colMode: 'vertical', colStep, headH: Math.ceil(plan.width + 10), colFit: plan.opts };
  }
  const digits = ctx.measureText(String(cols - 1)).width + 6;
  let colStep = Math.max(1, Math.ceil(digits / cw));
  if (colStep > 1) colStep = INDEX_STEPS.find((s) => s >= colStep) ?? colStep;
  return { colMode: 'index', colStep, headH: fontPx + 8, colFit: null };
}

/**
 * @param m the heatmap model ({matrix, kind, palette, colLabels, colBands, …})
 * @param env {measure: a 2D context for measuring, compact, width: the parent's width in px,
 *             share: the part of it this map may take, rowTexts: labelTexts(m.rowLabels),
 *             maxH: the scroll box's largest height in px, numberW(digits): the widest cell number in px,
 *             fit: text.js fitLabel or a cached one (createLabelFitter)}
 */
export function computeLayout(m, { measure: ctx, compact, width, share, rowTexts, maxH = 640, numberW = () => 0, fit = fitLabel }) {
  const { rows, cols } = m.matrix;
  const fontPx = compact ? 11 : 12;
  const font = `${fontPx}px ${m.palette.font}`;
  const narrow = width < 620;
  // the row-label gutter: up to GUTTER_SHARE of the map's space (at least 64 or 96 px),
  // the labels shrinking, then wrapping, to fit it; never cut
  const family = m.palette.font;
  const space = Math.floor(width * (narrow ? 1 : share));
  const labelMax = Math.max(compact || narrow ? 64 : 96, Math.floor(GUTTER_SHARE * space));
  const rowRoom = Math.max(NUM_H, Math.min(24, Math.floor((maxH - 90) / Math.max(1, rows))));
  const hardMaxW = Math.max(HARD_LABEL_W, Math.floor(0.45 * space));
  let rowPlan = planLabels(ctx, rowTexts, { family, basePx: fontPx, maxW: labelMax - 10, room: rows <= MAX_NUMBER_ROWS ? rowRoom : 0, hardMaxW, fit });
  ctx.font = font;
  const labelGuess = rowPlan.width + 10;
  const env = { rows, cols, compact, narrow, labelGuess, maxH, numberW };
  let { numbers, digits, cw, ch } = cellSize(m, { ...env, avail: Math.max(120, Math.floor(width * (narrow ? 1 : share)) - 6) });
  // a long sentence in a map's share of the row gives tiny cells: take the whole row
  // (the figure beside it wraps below) when that makes them bigger
  if (!compact && !numbers && !narrow && share < 1 && cw < COMFORT) {
    const full = cellSize(m, { ...env, avail: Math.max(120, width - 6) });
    if (full.cw > cw) ({ numbers, digits, cw, ch } = full);
  }
  const rowStep = ch >= 11 ? 1 : Math.ceil(12 / ch);
  // two-line labels need two lines' height in a row; else one line in the shrunk font, the gutter as wide as it
  if (rowPlan.opts.twoLines && ch * rowStep < 2 * labelLineH(MIN_LABEL_PX)) {
    rowPlan = planLabels(ctx, rowTexts, { family, basePx: fontPx, maxW: labelMax - 10, room: 0, hardMaxW, fit });
  }
  ctx.font = font;
  const labelW = rowTexts.length && ch * rowStep >= 10 ? Math.ceil(rowPlan.width + 10) : 4;

  const colTexts = m.colLabels ? labelTexts(m.colLabels) : null;
  const { colMode, colStep, headH, colFit } = columnHeader(ctx, { font, fontPx, family, compact, cw, cols, colTexts, fit });
  const bandH = m.colBands ? 14 : 0;
  const x0 = labelW;
  const y0 = headH + bandH;
  const W = x0 + cols * cw + 2;
  const H = y0 + rows * ch + 2;
  return { rows, cols, cw, ch, numbers, digits, labelW, headH, bandH, x0, y0, W, H, font, fontPx, rowStep, colStep, colMode, colTexts, rowFit: rowPlan.opts, colFit, family };
}
