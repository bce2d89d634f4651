// Drawing a heatmap onto its canvas, given the layout L, the model m and the
// palette: cells, gaps, numbers, labels (row, column, bands), selection.
// Every function draws in CSS pixels (the caller sets the device-pixel transform).

import { formatValue } from '../format.js';
import { lutOf, cellIndex, isBlocked } from './colors.js';
import { labelLineH } from './layout.js';

/** Significant digits of the numbers printed in cells, when the cells are wide enough (else 2: layout.js). */
export const CELL_DIGITS = 3;
/** The font of the numbers in cells of width cw. */
export function numberFont(cw, pal) {
  return `500 ${cw >= 46 ? 11 : 10.5}px ${pal.font}`;
}

/** The text of cell k as printed in it. */
export function cellText(m, k, digits = CELL_DIGITS) {
  const v = m.matrix.data[k];
  if (m.kind === 'mask') return v ? '1' : '0';
  if (m.mask && !m.mask[k]) return '\u2212\u221e';
  return formatValue(v, digits);
}

/** The cell image scaled up, the not-yet-computed cells of an animation, and the gaps between cells. */
export function drawCells(ctx, L, m, image) {
  const { rows, cols, cw, ch, x0, y0 } = L;
  const pal = m.palette;
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(image, x0, y0, cols * cw, rows * ch);
  // cells still being computed (the score animation)
  if (m.reveal && m.reveal.row < rows) {
    ctx.fillStyle = pal.empty;
    const from = Math.max(0, m.reveal.count);
    if (from < cols) ctx.fillRect(x0 + from * cw, y0 + m.reveal.row * ch, (cols - from) * cw, ch);
  }
  if (cw >= 6 && ch >= 6) {
    ctx.fillStyle = pal.surface;
    for (let j = 1; j < cols; j++) ctx.fillRect(x0 + j * cw - 0.5, y0, 1, rows * ch);
    for (let i = 1; i < rows; i++) ctx.fillRect(x0, y0 + i * ch - 0.5, cols * cw, 1);
  }
}

/**
 * Diagonal hatching over blocked cells (cells of at least 5 px), so that a
 * masked cell reads as "masked" and not as a small value even in a palette
 * whose light end is close to the grey. One path per call: runs of blocked cells per row.
 */
export function drawBlockedHatch(ctx, L, m) {
  if (m.kind === 'mask' || !(m.mask || m.maskedZeros) || L.cw < 5 || L.ch < 5) return;
  const { rows, cols, cw, ch, x0, y0 } = L;
  const clip = new Path2D();
  let any = false;
  for (let i = 0; i < rows; i++) {
    let j = 0;
    while (j < cols) {
      if (!isBlocked(m, i * cols + j)) {
        j++;
        continue;
      }
      const start = j;
      while (j < cols && isBlocked(m, i * cols + j)) j++;
      clip.rect(x0 + start * cw, y0 + i * ch, (j - start) * cw, ch);
      any = true;
    }
  }
  if (!any) return;
  ctx.save();
  ctx.clip(clip);
  ctx.strokeStyle = m.palette.maskedText;
  ctx.globalAlpha = 0.28;
  ctx.lineWidth = 1;
  ctx.beginPath();
  const w = cols * cw;
  const h = rows * ch;
  for (let d = -h; d < w; d += 5) {
    ctx.moveTo(x0 + d, y0 + h);
    ctx.lineTo(x0 + d + h, y0);
  }
  ctx.stroke();
  ctx.restore();
}

/** The value in every cell (only when L.numbers), dark or light text by the cell's colour. */
export function drawNumbers(ctx, L, m, scale) {
  const pal = m.palette;
  const { rows, cols, cw, ch, x0, y0 } = L;
  const { data } = m.matrix;
  const { dark } = lutOf(m);
  ctx.font = numberFont(cw, pal);
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      if (m.reveal && m.reveal.row === i && j >= m.reveal.count) continue;
      const k = i * cols + j;
      let color;
      if (m.kind === 'mask') color = data[k] ? pal.text : pal.maskedText;
      else if (isBlocked(m, k)) color = pal.maskedText;
      else color = dark[cellIndex(m, k, scale)] ? pal.lightText : pal.darkText;
      const text = cellText(m, k, L.digits);
      ctx.fillStyle = color;
      ctx.fillText(text, x0 + j * cw + cw / 2, y0 + i * ch + ch / 2 + 0.5);
    }
  }
}

/** Lines of text centred on (x, y) along the baseline direction, lineH apart. */
function fillLines(ctx, lines, x, y, lineH) {
  const top = y - ((lines.length - 1) * lineH) / 2;
  lines.forEach((line, k) => ctx.fillText(line, x, top + k * lineH));
}

/** Row labels, whole (fit(ctx, text, L.rowFit): font size and lines). Returns the drawn labels [{i, px, lines}]. */
function drawRowLabels(ctx, L, m, rowTexts, fit) {
  const pal = m.palette;
  const { rows, ch, y0, labelW } = L;
  const drawn = [];
  if (labelW <= 4) return drawn;
  ctx.textAlign = 'right';
  const sel = m.selRow != null && m.selRow < rows ? m.selRow : -1;
  for (let i = 0; i < rows; i++) {
    const selected = i === sel;
    if (!selected && (i % L.rowStep !== 0 || (sel >= 0 && Math.abs(i - sel) < L.rowStep))) continue;
    const { px, lines } = fit(ctx, rowTexts[i] ?? String(i), L.rowFit);
    ctx.font = `${selected ? '600 ' : ''}${px}px ${L.family}`;
    ctx.fillStyle = selected ? pal.text : pal.muted;
    fillLines(ctx, lines, labelW - 6, y0 + i * ch + ch / 2, labelLineH(px));
    drawn.push({ i, px, lines });
  }
  return drawn;
}

/** Column bands: which head a column belongs to (the name when it fits whole, else the head's number). */
function drawBands(ctx, L, m) {
  if (!m.colBands) return;
  const pal = m.palette;
  const { cols, cw, x0, headH, bandH } = L;
  const { size, colors, names } = m.colBands;
  ctx.font = `600 10px ${pal.font}`;
  ctx.textAlign = 'center';
  for (let b = 0; b * size < cols; b++) {
    ctx.fillStyle = colors[b % colors.length];
    ctx.fillRect(x0 + b * size * cw + 1, headH, size * cw - 2, bandH - 3);
  }
  const bw = size * cw;
  for (let b = 0; b * size < cols; b++) {
    const text = [names[b], String(b + 1)].find((t) => ctx.measureText(t).width <= bw - 4);
    if (!text) continue;
    ctx.fillStyle = pal.bandText;
    ctx.fillText(text, x0 + b * bw + bw / 2, headH + (bandH - 3) / 2 + 0.5);
  }
}

/** Column labels, whole: across, or rotated (fit(ctx, text, L.colFit): size and lines). Returns the drawn labels [{j, px, lines}]. */
function drawColumnLabels(ctx, L, m, fit) {
  const pal = m.palette;
  const { cols, cw, x0, headH } = L;
  const drawn = [];
  const style = (selected, px = L.fontPx) => {
    ctx.font = `${selected ? '600 ' : ''}${px}px ${L.family}`;
    ctx.fillStyle = selected ? pal.text : pal.muted;
  };
  ctx.font = L.font;
  if (L.colMode === 'horizontal') {
    ctx.textAlign = 'center';
    for (let j = 0; j < cols; j++) {
      style(j === m.selCol);
      ctx.fillText(L.colTexts[j], x0 + j * cw + cw / 2, headH / 2);
      drawn.push({ j, px: L.fontPx, lines: [L.colTexts[j]] });
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
      const { px, lines } = fit(ctx, L.colTexts[j], L.colFit);
      style(selected, px);
      fillLines(ctx, lines, 0, 0, labelLineH(px));
      ctx.restore();
      drawn.push({ j, px, lines });
    }
  } else if (L.colMode === 'index') {
    ctx.textAlign = 'center';
    for (let j = 0; j < cols; j += L.colStep) {
      style(j === m.selCol);
      ctx.fillText(String(j), x0 + j * cw + cw / 2, headH / 2);
    }
  }
  return drawn;
}

/**
 * Row labels, column bands and column labels (the gutters left of and above the
 * cells). fit(ctx, text, opts): a label's font size and lines (text.js fitLabel).
 * Returns what was drawn: {rows: [{i, px, lines}], cols: [{j, px, lines}]}.
 */
export function drawLabels(ctx, L, m, rowTexts, fit) {
  ctx.textBaseline = 'middle';
  const rows = drawRowLabels(ctx, L, m, rowTexts, fit);
  drawBands(ctx, L, m);
  const cols = drawColumnLabels(ctx, L, m, fit);
  return { rows, cols };
}

/** The selected row (solid), column (dashed) and cell (haloed). */
export function drawSelection(ctx, L, m) {
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
