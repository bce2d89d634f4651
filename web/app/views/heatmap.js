// A matrix as a heatmap on <canvas>: any size (T up to 2048), token labels on
// rows and columns (cut with an ellipsis, never overlapping), the numbers in
// the cells when there is room, and every cell reachable by hover, tap or the
// arrow keys, which show its exact value and provenance in the shared tooltip.
// The selected row is also written to the DOM (a visually hidden list with
// data-value attributes) for screen readers and tests.
//
//   const hm = createHeatmap(parent, { id: 'scores', tooltip, describe, onCellClick });
//   hm.update({ matrix, title, rowLabels, colLabels, kind: 'diverging', palette, selRow, selCol });

import { el } from './dom.js';
import { lutIndex } from '../palette.js';
import { formatCell, formatExact, tokenLabel } from '../format.js';

const NUM_W = 46; // cell size when numbers are printed
const NUM_H = 22;
const MAX_NUMBER_COLS = 32;
const MAX_NUMBER_ROWS = 160;

let measureContext = null;
function measurer() {
  if (!measureContext) measureContext = document.createElement('canvas').getContext('2d');
  return measureContext;
}

/** Longest prefix of text (plus …) at most maxW pixels wide in ctx's font. */
const fitCache = new Map();
export function fitText(ctx, text, maxW) {
  if (maxW <= 0) return '';
  const key = `${ctx.font}|${Math.floor(maxW)}|${text}`;
  let out = fitCache.get(key);
  if (out === undefined) {
    out = fitTextUncached(ctx, text, maxW);
    if (fitCache.size > 20000) fitCache.clear();
    fitCache.set(key, out);
  }
  return out;
}

function fitTextUncached(ctx, text, maxW) {
  if (ctx.measureText(text).width <= maxW) return text;
  const chars = Array.from(text);
  let lo = 0;
  let hi = chars.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(`${chars.slice(0, mid).join('')}\u2026`).width <= maxW) lo = mid;
    else hi = mid - 1;
  }
  return lo > 0 ? `${chars.slice(0, lo).join('')}\u2026` : '';
}

export function createHeatmap(parent, { id, tooltip, describe, onCellClick, compact = false, share = 1, getWidth = null }) {
  const title = el('span', 'hm-title');
  const shape = el('span', 'hm-shape');
  const legendLo = el('span', 'hm-legend-text');
  const legendBar = el('span', 'hm-legend-bar');
  const legendHi = el('span', 'hm-legend-text');
  const legend = el('span', 'hm-legend', { attrs: { 'aria-hidden': 'true' } }, legendLo, legendBar, legendHi);
  const caption = el('figcaption', 'hm-caption', {}, title, shape, legend);
  const canvas = el('canvas', 'hm-canvas');
  const hover = el('div', 'hm-hover', { hidden: true });
  const scroll = el('div', 'hm-scroll', { tabIndex: 0, attrs: { role: 'group' } }, canvas, hover);
  const readout = el('ol', 'sr-only hm-readout', { testid: `row-${id}` });
  const figure = el('figure', `hm${compact ? ' hm-compact' : ''}`, { testid: `hm-${id}` }, caption, scroll, readout);
  parent.append(figure);

  let m = null; // the model of the last update
  let L = null; // layout
  let image = null; // offscreen canvas, one pixel per cell
  let imageKey = null;
  const labelCanvas = document.createElement('canvas');
  let labelKey = null;
  let usedRange = 1;
  let labelsKey = null;
  let rowLabelTexts = [];
  let readoutKey = null;
  let cursor = null; // keyboard cursor {i, j}
  let pointerInside = false;
  let shareNow = share;

  // ---- layout -----------------------------------------------------------------

  function computeLayout() {
    const { rows, cols } = m.matrix;
    const pal = m.palette;
    const ctx = measurer();
    const fontPx = compact ? 11 : 12;
    const font = `${fontPx}px ${pal.font}`;
    ctx.font = font;
    const parentW = (getWidth ? getWidth() : figure.parentElement?.clientWidth) || 600;
    const effShare = parentW < 620 ? 1 : shareNow;
    const avail = Math.max(120, Math.floor(parentW * effShare) - 6);

    // cell size
    let cw;
    let ch;
    let numbers = false;
    const key = `${rows}|${m.rowLabels?.length}|${pal.font}`;
    if (labelsKey !== key || m.rowLabels !== L?.rowLabelsRef) {
      rowLabelTexts = (m.rowLabels ?? []).map((t) => tokenLabel(t, 24));
      labelsKey = key;
    }
    ctx.font = `600 ${font}`;
    let widest = 0;
    const probe = Math.min(rowLabelTexts.length, 600);
    for (let i = 0; i < probe; i++) widest = Math.max(widest, ctx.measureText(rowLabelTexts[i]).width);
    ctx.font = font;
    const labelMax = compact ? 64 : 96;
    if (m.kind === 'mask' && cols <= 48 && rows <= MAX_NUMBER_ROWS) {
      numbers = cols <= 40;
      cw = numbers ? 24 : 16;
      ch = numbers ? 22 : 16;
    } else if (!compact && cols <= MAX_NUMBER_COLS && rows <= MAX_NUMBER_ROWS) {
      // as wide as fits, between 38 and 46 px; below that the matrix scrolls in its box
      numbers = true;
      const labelGuess = Math.min(labelMax, widest + 10);
      cw = Math.max(38, Math.min(NUM_W, Math.floor((avail - labelGuess - 4) / cols)));
      ch = NUM_H;
    } else {
      const labelGuess = Math.min(labelMax, widest + 10);
      cw = Math.floor((avail - labelGuess) / cols);
      cw = Math.max(2, Math.min(compact ? 16 : 30, cw));
      if (compact) cw = Math.max(2, Math.min(cw, Math.floor(320 / rows)));
      ch = compact ? cw : Math.min(cw, 24);
      if (rows > 160 && ch > 8) ch = Math.max(4, Math.min(ch, 8));
    }
    const rowStep = ch >= 11 ? 1 : Math.ceil(12 / ch);
    const labelW = rowLabelTexts.length && ch * rowStep >= 10 ? Math.ceil(Math.min(labelMax, widest + 10)) : 4;

    // column labels
    let colMode = 'none';
    let colStep = 1;
    let headH = 4;
    const colTexts = m.colLabels ? m.colLabels.map((t) => tokenLabel(t, 24)) : null;
    if (colTexts) {
      ctx.font = `600 ${font}`;
      let colWidest = 0;
      if (cw >= 34) for (let j = 0; j < Math.min(colTexts.length, 64); j++) colWidest = Math.max(colWidest, ctx.measureText(colTexts[j]).width);
      ctx.font = font;
      if (cw >= 34 && colWidest <= cw - 4) {
        colMode = 'horizontal';
        headH = fontPx + 10;
      } else {
        colStep = cw >= 12 ? 1 : Math.ceil(13 / cw);
        colMode = 'vertical';
        let w = 0;
        for (let j = 0; j < Math.min(colTexts.length, 600); j += colStep) w = Math.max(w, ctx.measureText(colTexts[j]).width);
        headH = Math.ceil(Math.min(compact ? 56 : 72, w + 10));
      }
    } else {
      const digits = ctx.measureText(String(cols - 1)).width + 6;
      colStep = Math.max(1, Math.ceil(digits / cw));
      if (colStep > 1) colStep = [2, 4, 5, 8, 10, 16, 20, 32, 50, 64, 100, 128, 256].find((s) => s >= colStep) ?? colStep;
      colMode = 'index';
      headH = fontPx + 8;
    }
    const bandH = m.colBands ? 14 : 0;
    const x0 = labelW;
    const y0 = headH + bandH;
    const W = x0 + cols * cw + 2;
    const H = y0 + rows * ch + 2;
    return { rows, cols, cw, ch, numbers, labelW, headH, bandH, x0, y0, W, H, font, fontPx, rowStep, colStep, colMode, colTexts, rowLabelsRef: m.rowLabels };
  }

  // ---- colours ------------------------------------------------------------------

  function rangeOf() {
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

  function ensureImage() {
    const key = [m.matrix, m.mask, m.kind, m.range, m.palette].map(identity).join(':');
    if (image && key === imageKey) return;
    imageKey = key;
    const { rows, cols, data } = m.matrix;
    if (!image) image = document.createElement('canvas');
    image.width = Math.max(1, cols);
    image.height = Math.max(1, rows);
    const ictx = image.getContext('2d');
    const img = ictx.createImageData(image.width, image.height);
    const px = img.data;
    const lut = m.kind === 'sequential' ? m.palette.sequential.lut : m.palette.diverging.lut;
    const range = rangeOf();
    usedRange = range;
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
        const k = lutIndex(data[i], m.kind, range) * 3;
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

  // ---- drawing ------------------------------------------------------------------

  function draw() {
    const pal = m.palette;
    const { rows, cols, cw, ch, x0, y0, W, H } = L;
    const win = figure.ownerDocument.defaultView;
    let dpr = Math.min(2, win.devicePixelRatio || 1);
    if (W * H * dpr * dpr > 24e6) dpr = 1;
    const pw = Math.round(W * dpr);
    const ph = Math.round(H * dpr);
    if (canvas.width !== pw || canvas.height !== ph) {
      canvas.width = pw;
      canvas.height = ph;
    }
    canvas.style.width = `${W}px`;
    canvas.style.height = `${H}px`;
    // geometry for hit-testing from outside (tests): cell (i, j) is at x0 + j·cw, y0 + i·ch
    Object.assign(canvas.dataset, { x0: String(x0), y0: String(y0), cw: String(cw), ch: String(ch), rows: String(rows), cols: String(cols) });
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);

    ensureImage();
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(image, x0, y0, cols * cw, rows * ch);

    // cells still being computed (the score animation)
    if (m.reveal && m.reveal.row < rows) {
      ctx.fillStyle = pal.empty;
      const from = Math.max(0, m.reveal.count);
      if (from < cols) ctx.fillRect(x0 + from * cw, y0 + m.reveal.row * ch, (cols - from) * cw, ch);
    }

    // gaps between cells
    if (cw >= 6 && ch >= 6) {
      ctx.fillStyle = pal.surface;
      for (let j = 1; j < cols; j++) ctx.fillRect(x0 + j * cw - 0.5, y0, 1, rows * ch);
      for (let i = 1; i < rows; i++) ctx.fillRect(x0, y0 + i * ch - 0.5, cols * cw, 1);
    }

    if (L.numbers) drawNumbers(ctx);
    // labels change only with the tokens, the layout or the selection: cache them
    const key = [W, H, dpr, x0, y0, L.cw, L.ch, m.rowLabels, m.colLabels, m.selRow, m.selCol, m.palette, m.colBands?.size].map(identity).join(':');
    if (key !== labelKey) {
      labelKey = key;
      labelCanvas.width = pw;
      labelCanvas.height = ph;
      const lctx = labelCanvas.getContext('2d');
      lctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      lctx.clearRect(0, 0, W, H);
      drawLabels(lctx);
    }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    const sx = Math.round(x0 * dpr);
    const sy = Math.round(y0 * dpr);
    if (sx > 0) ctx.drawImage(labelCanvas, 0, sy, sx, ph - sy, 0, sy, sx, ph - sy);
    if (sy > 0) ctx.drawImage(labelCanvas, 0, 0, pw, sy, 0, 0, pw, sy);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    drawSelection(ctx);
  }

  function drawNumbers(ctx) {
    const pal = m.palette;
    const { rows, cols, cw, ch, x0, y0 } = L;
    const { data } = m.matrix;
    const lutDark = m.kind === 'sequential' ? pal.sequential.dark : pal.diverging.dark;
    const range = usedRange;
    ctx.font = `500 ${cw >= 42 ? 11 : 10.5}px ${pal.font}`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) {
        if (m.reveal && m.reveal.row === i && j >= m.reveal.count) continue;
        const k = i * cols + j;
        let text;
        let color;
        if (m.kind === 'mask') {
          text = data[k] ? '1' : '0';
          color = data[k] ? pal.text : pal.maskedText;
        } else if (m.mask && !m.mask[k]) {
          text = '\u2212\u221e';
          color = pal.maskedText;
        } else {
          text = formatCell(data[k]);
          color = lutDark[lutIndex(data[k], m.kind, range)] ? pal.lightText : pal.darkText;
        }
        ctx.fillStyle = color;
        ctx.fillText(text, x0 + j * cw + cw / 2, y0 + i * ch + ch / 2 + 0.5);
      }
    }
  }

  function drawLabels(ctx) {
    const pal = m.palette;
    const { rows, cols, cw, ch, x0, y0, labelW, headH, bandH } = L;
    ctx.textBaseline = 'middle';
    // row labels
    if (labelW > 4) {
      ctx.textAlign = 'right';
      const sel = m.selRow != null && m.selRow < rows ? m.selRow : -1;
      for (let i = 0; i < rows; i++) {
        const selected = i === sel;
        if (!selected && (i % L.rowStep !== 0 || (sel >= 0 && Math.abs(i - sel) < L.rowStep))) continue;
        ctx.font = `${selected ? '600 ' : ''}${L.font}`;
        ctx.fillStyle = selected ? pal.text : pal.muted;
        ctx.fillText(fitText(ctx, rowLabelTexts[i] ?? String(i), labelW - 8), labelW - 6, y0 + i * ch + ch / 2);
      }
    }
    // column bands (which head a column belongs to)
    if (m.colBands) {
      const { size, colors, names } = m.colBands;
      ctx.font = `600 10px ${pal.font}`;
      ctx.textAlign = 'center';
      for (let b = 0; b * size < cols; b++) {
        ctx.fillStyle = colors[b % colors.length];
        ctx.fillRect(x0 + b * size * cw + 1, headH, size * cw - 2, bandH - 3);
      }
      const bw = size * cw;
      for (let b = 0; b * size < cols; b++) {
        const text = fitText(ctx, names[b], bw - 4);
        if (!text) continue;
        ctx.fillStyle = pal.bandText;
        ctx.fillText(text, x0 + b * bw + bw / 2, headH + (bandH - 3) / 2 + 0.5);
      }
    }
    // column labels
    ctx.font = L.font;
    if (L.colMode === 'horizontal') {
      ctx.textAlign = 'center';
      for (let j = 0; j < cols; j++) {
        const selected = j === m.selCol;
        ctx.font = `${selected ? '600 ' : ''}${L.font}`;
        ctx.fillStyle = selected ? pal.text : pal.muted;
        ctx.fillText(fitText(ctx, L.colTexts[j], cw - 4), x0 + j * cw + cw / 2, headH / 2);
      }
    } else if (L.colMode === 'vertical') {
      ctx.textAlign = 'left';
      const selC = m.selCol != null && m.selCol < cols ? m.selCol : -1;
      for (let j = 0; j < cols; j++) {
        const selected = j === selC;
        if (!selected && (j % L.colStep !== 0 || (selC >= 0 && Math.abs(j - selC) < L.colStep))) continue;
        ctx.save();
        ctx.translate(x0 + j * cw + cw / 2, headH - 4);
        ctx.rotate(-Math.PI / 2);
        ctx.font = `${selected ? '600 ' : ''}${L.font}`;
        ctx.fillStyle = selected ? pal.text : pal.muted;
        ctx.fillText(fitText(ctx, L.colTexts[j], headH - 8), 0, 0);
        ctx.restore();
      }
    } else if (L.colMode === 'index') {
      ctx.textAlign = 'center';
      for (let j = 0; j < cols; j += L.colStep) {
        const selected = j === m.selCol;
        ctx.font = `${selected ? '600 ' : ''}${L.font}`;
        ctx.fillStyle = selected ? pal.text : pal.muted;
        ctx.fillText(String(j), x0 + j * cw + cw / 2, headH / 2);
      }
    }
  }

  function drawSelection(ctx) {
    const pal = m.palette;
    const { rows, cols, cw, ch, x0, y0 } = L;
    const hasRow = m.selRow != null && m.selRow < rows;
    const hasCol = m.selCol != null && m.selCol < cols;
    ctx.lineJoin = 'miter';
    if (hasRow) {
      ctx.strokeStyle = pal.select;
      ctx.lineWidth = ch >= 6 ? 1.5 : 1;
      ctx.strokeRect(x0 + 0.75, y0 + m.selRow * ch + 0.75, cols * cw - 1.5, ch - 1.5);
    }
    if (hasCol && m.showCol !== false) {
      ctx.save();
      ctx.setLineDash([3, 3]);
      ctx.strokeStyle = pal.select;
      ctx.lineWidth = 1;
      ctx.strokeRect(x0 + m.selCol * cw + 0.5, y0 + 0.5, cw - 1, rows * ch - 1);
      ctx.restore();
    }
    if (hasRow && hasCol) {
      const x = x0 + m.selCol * cw;
      const y = y0 + m.selRow * ch;
      ctx.strokeStyle = pal.selectHalo;
      ctx.lineWidth = 4;
      ctx.strokeRect(x + 1, y + 1, cw - 2, ch - 2);
      ctx.strokeStyle = pal.select;
      ctx.lineWidth = 2;
      ctx.strokeRect(x + 1, y + 1, cw - 2, ch - 2);
    }
  }

  function updateLegend() {
    const pal = m.palette;
    if (m.kind === 'mask') {
      legendLo.textContent = '0 = blocked';
      legendHi.textContent = '1 = allowed';
      legendBar.style.background = `linear-gradient(90deg, rgb(${pal.maskedRgb.join(',')}) 0 50%, rgb(${pal.allowRgb.join(',')}) 50% 100%)`;
      return;
    }
    const lut = m.kind === 'sequential' ? pal.sequential : pal.diverging;
    const stops = [];
    for (let k = 0; k <= 8; k++) {
      const o = Math.round((k / 8) * 255) * 3;
      stops.push(`rgb(${lut.lut[o]},${lut.lut[o + 1]},${lut.lut[o + 2]})`);
    }
    legendBar.style.background = `linear-gradient(90deg, ${stops.join(', ')})`;
    legendLo.textContent = m.kind === 'sequential' ? '0' : formatCell(-usedRange);
    legendHi.textContent = m.kind === 'sequential' ? formatCell(usedRange) : formatCell(usedRange);
  }

  // ---- the selected row in the DOM --------------------------------------------

  function updateReadout() {
    const row = m.selRow;
    const key = [m.matrix, m.mask, row, m.reveal ? `${m.reveal.row}/${m.reveal.count}` : ''].map(identity).join(':');
    if (key === readoutKey) return;
    readoutKey = key;
    if (row == null || row >= m.matrix.rows) {
      readout.replaceChildren();
      return;
    }
    const { cols, data } = m.matrix;
    let n = Math.min(cols, 2048);
    if (m.reveal && m.reveal.row === row) n = Math.min(n, Math.max(0, m.reveal.count));
    // reuse the list items: only their text and data change
    while (readout.children.length > n) readout.lastChild.remove();
    while (readout.children.length < n) readout.append(document.createElement('li'));
    const items = readout.children;
    for (let j = 0; j < n; j++) {
      const blocked = m.mask && !m.mask[row * cols + j];
      const v = blocked ? -Infinity : data[row * cols + j];
      const colName = m.colLabels ? tokenLabel(m.colLabels[j], 24) : `dimension ${j}`;
      const li = items[j];
      li.textContent = `${colName}: ${formatExact(v)}`;
      li.dataset.testid = `cell-${id}-${row}-${j}`;
      li.dataset.value = String(v);
    }
    readout.setAttribute('aria-label', `${m.title}, row ${row}`);
  }

  // ---- hover, tap, keyboard ------------------------------------------------------

  function cellAt(x, y) {
    if (!L) return null;
    const j = Math.floor((x - L.x0) / L.cw);
    const i = Math.floor((y - L.y0) / L.ch);
    if (i < 0 || j < 0 || i >= L.rows || j >= L.cols) return null;
    return { i, j };
  }

  function info(i, j) {
    const k = i * m.matrix.cols + j;
    const raw = m.matrix.data[k];
    const blocked = m.kind !== 'mask' && m.mask && !m.mask[k];
    const value = blocked ? -Infinity : raw;
    const d = describe ? describe(i, j, value) : {};
    return { name: d.name ?? `${m.title}[${i}][${j}]`, value, provenance: d.provenance ?? '' };
  }

  function showHover(i, j) {
    hover.hidden = false;
    hover.style.left = `${L.x0 + j * L.cw}px`;
    hover.style.top = `${L.y0 + i * L.ch}px`;
    hover.style.width = `${L.cw}px`;
    hover.style.height = `${L.ch}px`;
  }

  function showTip(i, j, clientX, clientY) {
    showHover(i, j);
    tooltip?.show(figure, clientX, clientY, info(i, j));
  }

  function hideTip() {
    hover.hidden = true;
    tooltip?.hide(figure);
  }

  function cellClientPoint(i, j) {
    const r = canvas.getBoundingClientRect();
    return { x: r.left + L.x0 + (j + 1) * L.cw, y: r.top + L.y0 + (i + 1) * L.ch };
  }

  canvas.addEventListener('pointermove', (e) => {
    if (!m || e.pointerType === 'touch') return;
    pointerInside = true;
    const c = cellAt(e.offsetX, e.offsetY);
    if (c) showTip(c.i, c.j, e.clientX, e.clientY);
    else hideTip();
  });
  canvas.addEventListener('pointerleave', () => {
    pointerInside = false;
    if (!cursor) hideTip();
  });
  canvas.addEventListener('click', (e) => {
    if (!m) return;
    const c = cellAt(e.offsetX, e.offsetY);
    if (!c) return;
    showTip(c.i, c.j, e.clientX, e.clientY);
    onCellClick?.(c.i, c.j);
  });

  scroll.addEventListener('focus', () => {
    if (!m) return;
    cursor = { i: Math.min(m.selRow ?? 0, L.rows - 1), j: Math.min(m.selCol ?? 0, L.cols - 1) };
    moveCursor(0, 0);
  });
  scroll.addEventListener('blur', () => {
    cursor = null;
    if (!pointerInside) hideTip();
  });
  scroll.addEventListener('keydown', (e) => {
    if (!m || !cursor) return;
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    if (moves[e.key]) {
      e.preventDefault();
      e.stopPropagation();
      moveCursor(...moves[e.key]);
    } else if (e.key === 'Home' || e.key === 'End') {
      e.preventDefault();
      e.stopPropagation();
      cursor.j = e.key === 'Home' ? 0 : L.cols - 1;
      moveCursor(0, 0);
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      e.stopPropagation();
      onCellClick?.(cursor.i, cursor.j);
    } else if (e.key === 'Escape') {
      hideTip();
    }
  });

  function moveCursor(di, dj) {
    cursor.i = Math.max(0, Math.min(L.rows - 1, cursor.i + di));
    cursor.j = Math.max(0, Math.min(L.cols - 1, cursor.j + dj));
    const { i, j } = cursor;
    // keep the cell in view inside the scroll container
    const left = L.x0 + j * L.cw;
    const top = L.y0 + i * L.ch;
    if (left < scroll.scrollLeft + L.x0) scroll.scrollLeft = Math.max(0, left - L.x0);
    else if (left + L.cw > scroll.scrollLeft + scroll.clientWidth) scroll.scrollLeft = left + L.cw - scroll.clientWidth;
    if (top < scroll.scrollTop + L.y0) scroll.scrollTop = Math.max(0, top - L.y0);
    else if (top + L.ch > scroll.scrollTop + scroll.clientHeight) scroll.scrollTop = top + L.ch - scroll.clientHeight;
    const p = cellClientPoint(i, j);
    showTip(i, j, p.x, p.y);
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
      L = computeLayout();
      draw();
      updateLegend();
      updateReadout();
      if (cursor) {
        cursor.i = Math.min(cursor.i, L.rows - 1);
        cursor.j = Math.min(cursor.j, L.cols - 1);
        showHover(cursor.i, cursor.j);
      } else if (!pointerInside) {
        hover.hidden = true;
      }
    },
    set hidden(value) {
      figure.hidden = value;
    },
  };
}

const ids = new WeakMap();
let nextId = 1;
function identity(x) {
  if (x === null || x === undefined) return '-';
  if (typeof x !== 'object') return String(x);
  if (!ids.has(x)) ids.set(x, nextId++);
  return `#${ids.get(x)}`;
}
