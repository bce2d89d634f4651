// A matrix as a heatmap on <canvas>: any size (T up to 2048), token labels on
// rows and columns (whole, never cut: the gutter grows, the font shrinks,
// a very long token wraps on two lines; never overlapping), the numbers in
// the cells when there is room, and every cell reachable by hover, tap or the
// arrow keys, which show its exact value and provenance in the shared tooltip.
// The selected row is also written to the DOM (a visually hidden list with
// data-value attributes) for screen readers and tests.
//
//   const hm = createHeatmap(parent, { id: 'scores', tooltip, describe, onCellClick });
//   hm.update({ matrix, title, rowLabels, colLabels, kind: 'diverging', palette, selRow, selCol });
//
// Model fields beyond those: range (the colour span), mask (T×T, 0 = blocked:
// drawn grey, value −∞), maskedZeros (0 = an exact zero the mask made: drawn
// grey, value kept), reveal ({row, count}: cells still being computed),
// colBands, shapeText, showCol, share. Weight maps (kind 'sequential') get a
// colour-scale toggle in the legend (auto / 0–1 / row max, heatmap/colors.js).
// A map wider or taller than its box scrolls, with a cue at the cut edge; the
// selected cell is kept in view.
//
// The pieces live in ./heatmap/: layout (sizes), colors (value → colour image),
// draw (cells, numbers, labels, selection), legend, readout (the DOM row),
// interaction (hover, tap, keys), text (label fitting: whole, shrunk or on two lines), memo (cache keys).
// Every cache belongs to one heatmap instance; nothing is kept at module level.

import { el } from './dom.js';
import { computeLayout, labelTexts, MAX_ASPECT, MAX_NUMBER_COLS, MAX_NUMBER_ROWS } from './heatmap/layout.js';
import { paintImage, resolveScale, anyBlocked } from './heatmap/colors.js';
import { drawCells, drawBlockedHatch, drawNumbers, drawLabels, drawSelection, cellText, numberFont } from './heatmap/draw.js';
import { createLegend } from './heatmap/legend.js';
import { createReadout } from './heatmap/readout.js';
import { attachInteraction, scrollCellIntoView } from './heatmap/interaction.js';
import { createScrollCues } from './heatmap/scrollcue.js';
import { createMeasurer, createLabelFitter, fitLabel } from './heatmap/text.js';
import { createDeps } from './heatmap/memo.js';

// label fitting, for views that draw labels the same way
export { fitLabel, createLabelFitter };

/** Drawn labels are listed in the canvas's data-row-labels / data-col-labels (JSON, for tests) up to this many. */
const MAX_LISTED_LABELS = 512;
const MAX_CANVAS_PIXELS = 24e6; // device pixels; above this the canvas is drawn at 1× (memory)
const NUM_FONT_CW = 38; // numbers are measured in the 10.5 px font of cells narrower than 46 px (46 px cells have room for 11 px)

export function createHeatmap(parent, { id, tooltip, describe, onCellClick, compact = false, share = 1, getWidth = null }) {
  const title = el('span', 'hm-title');
  const shape = el('span', 'hm-shape');
  const legend = createLegend({ id, onScale: (choice) => { scaleChoice = choice; if (m) render(); } });
  const caption = el('figcaption', 'hm-caption', {}, title, shape, legend.element);
  const canvas = el('canvas', 'hm-canvas');
  const hover = el('div', 'hm-hover', { hidden: true });
  const scroll = el('div', 'hm-scroll', { tabIndex: 0, attrs: { role: 'group' } }, canvas, hover);
  const cues = createScrollCues(scroll, id);
  const readout = createReadout(id);
  const figure = el('figure', `hm${compact ? ' hm-compact' : ''}`, { testid: `hm-${id}` }, caption, cues.element, readout.element);
  parent.append(figure);

  // ---- what this instance owns ---------------------------------------------------
  const measure = createMeasurer();
  const labelFit = createLabelFitter(); // this map's cached text.js fitLabel
  const image = document.createElement('canvas'); // one pixel per cell
  const imageDeps = createDeps();
  const labelCanvas = document.createElement('canvas'); // the label gutters, redrawn when their inputs change
  const labelDeps = createDeps();
  const rowTextDeps = createDeps();
  const numberDeps = createDeps();
  let numberW = new Map(); // digits → the widest number printed in a cell, px
  const selectionDeps = createDeps();
  let rowTexts = [];
  // the colour scale of weight maps: the reader's choice (view-local, not in the URL);
  // compact maps have no legend to name it, so they stay on 0–1
  let scaleChoice = compact ? 'fixed' : 'auto';
  let scale = null; // resolveScale's result for the last painted image
  let blocked = false; // whether the last model had masked cells
  let m = null; // the model of the last update
  let L = null; // its layout
  let shareNow = share;

  const interaction = attachInteraction({ canvas, scroll, hover, figure }, () => ({ m, L }), { tooltip, describe, onCellClick });

  /** Width of the widest number the cells would print (measured once per matrix; only small matrices print numbers). */
  function widestNumber(digits) {
    if (numberDeps.changed([m.matrix, m.mask, m.kind, m.palette])) numberW = new Map();
    if (!numberW.has(digits)) {
      let w = 0;
      const { rows, cols } = m.matrix;
      if (rows <= MAX_NUMBER_ROWS && cols <= MAX_NUMBER_COLS) {
        measure.font = numberFont(NUM_FONT_CW, m.palette);
        const seen = new Set();
        for (let k = 0; k < rows * cols; k++) {
          const t = cellText(m, k, digits);
          if (seen.has(t)) continue;
          seen.add(t);
          w = Math.max(w, measure.measureText(t).width);
        }
      }
      numberW.set(digits, w);
    }
    return numberW.get(digits);
  }

  function layout() {
    if (rowTextDeps.changed([m.rowLabels, m.matrix.rows])) rowTexts = labelTexts(m.rowLabels);
    const width = (getWidth ? getWidth() : figure.parentElement?.clientWidth) || 600;
    const win = figure.ownerDocument.defaultView;
    const maxH = Math.round(0.72 * (win.innerHeight || 900)); // .hm-scroll's max-height: 72vh
    return computeLayout(m, { measure, compact, width, share: shareNow, rowTexts, maxH, numberW: widestNumber, fit: labelFit });
  }

  /** Thumbnails taller than MAX_ASPECT × their width scroll; the selected cell stays in view when the selection moves. */
  function fitBox() {
    scroll.style.maxHeight = compact && L.H > MAX_ASPECT * L.W ? `${Math.max(120, MAX_ASPECT * L.W)}px` : '';
    if (selectionDeps.changed([m.selRow, m.selCol, m.matrix.rows, m.matrix.cols, L.cw, L.ch])) {
      const i = m.selRow != null && m.selRow < L.rows ? m.selRow : null;
      const j = m.selCol != null && m.selCol < L.cols ? m.selCol : null;
      if (i != null || j != null) {
        const keepTop = scroll.scrollTop;
        const keepLeft = scroll.scrollLeft;
        scrollCellIntoView(scroll, L, i ?? 0, j ?? 0);
        if (i == null) scroll.scrollTop = keepTop;
        if (j == null) scroll.scrollLeft = keepLeft;
      }
    }
    cues.update();
  }

  function sizeCanvas() {
    const { W, H } = L;
    const win = figure.ownerDocument.defaultView;
    let dpr = Math.min(2, win.devicePixelRatio || 1);
    if (W * H * dpr * dpr > MAX_CANVAS_PIXELS) dpr = 1;
    const pw = Math.round(W * dpr);
    const ph = Math.round(H * dpr);
    if (canvas.width !== pw || canvas.height !== ph) {
      canvas.width = pw;
      canvas.height = ph;
    }
    canvas.style.width = `${W}px`;
    canvas.style.height = `${H}px`;
    // geometry for hit-testing from outside (tests): cell (i, j) is at x0 + j·cw, y0 + i·ch
    const { x0, y0, cw, ch, rows, cols } = L;
    Object.assign(canvas.dataset, { x0: String(x0), y0: String(y0), cw: String(cw), ch: String(ch), rows: String(rows), cols: String(cols) });
    return { dpr, pw, ph };
  }

  /** The label gutters, from the cached label canvas (labels change only with tokens, layout or selection). */
  function drawGutters(ctx, { dpr, pw, ph }) {
    const { W, H, x0, y0, cw, ch } = L;
    if (labelDeps.changed([W, H, dpr, x0, y0, cw, ch, m.rowLabels, m.colLabels, m.selRow, m.selCol, m.palette, m.colBands?.size])) {
      labelCanvas.width = pw;
      labelCanvas.height = ph;
      const lctx = labelCanvas.getContext('2d');
      lctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      lctx.clearRect(0, 0, W, H);
      const drawn = drawLabels(lctx, L, m, rowTexts, labelFit);
      // what the gutters show, for tests: the label texts (lines joined by \n), their fonts and room
      // (data-row-labels: [[index, font px, line, …], …]; data-label-w, data-head-h: the gutters' sizes)
      const list = (items, key) => (items.length <= MAX_LISTED_LABELS ? JSON.stringify(items.map((d) => [d[key], d.px, ...d.lines])) : '');
      Object.assign(canvas.dataset, {
        rowLabels: list(drawn.rows, 'i'), colLabels: list(drawn.cols, 'j'), labelW: String(L.labelW), headH: String(L.headH),
        labelFont: L.family, colMode: L.colMode,
      });
    }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    const sx = Math.round(x0 * dpr);
    const sy = Math.round(y0 * dpr);
    if (sx > 0) ctx.drawImage(labelCanvas, 0, sy, sx, ph - sy, 0, sy, sx, ph - sy);
    if (sy > 0) ctx.drawImage(labelCanvas, 0, 0, pw, sy, 0, 0, pw, sy);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  }

  function draw() {
    const px = sizeCanvas();
    const ctx = canvas.getContext('2d');
    ctx.setTransform(px.dpr, 0, 0, px.dpr, 0, 0);
    ctx.clearRect(0, 0, L.W, L.H);
    if (imageDeps.changed([m.matrix, m.mask, m.maskedZeros, m.kind, m.range, m.palette, scaleChoice])) {
      scale = resolveScale(m, scaleChoice);
      blocked = anyBlocked(m);
      paintImage(image, m, scale);
    }
    drawCells(ctx, L, m, image);
    drawBlockedHatch(ctx, L, m);
    if (L.numbers) drawNumbers(ctx, L, m, scale);
    drawGutters(ctx, px);
    drawSelection(ctx, L, m);
  }

  function render() {
    L = layout();
    draw();
    fitBox();
    legend.update(m, scale, blocked);
    readout.update(m);
    interaction.afterUpdate();
  }

  return {
    element: figure,
    /** Redraws with a new model; cheap when only the selection changed. */
    update(model) {
      m = model;
      if (model.share != null) shareNow = model.share;
      title.textContent = model.title;
      shape.textContent = model.shapeText ?? `${model.matrix.rows} \u00d7 ${model.matrix.cols}`;
      scroll.setAttribute('aria-label', `${model.title}, ${model.matrix.rows} by ${model.matrix.cols}. Arrow keys move between cells${onCellClick ? ', Enter selects' : ''}.`);
      render();
    },
    set hidden(value) {
      figure.hidden = value;
    },
    /** The colour scale the reader picked (one of SCALES: auto, fixed, row), for the export. */
    get scaleChoice() {
      return scaleChoice;
    },
  };
}
