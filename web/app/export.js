// Export of the current view as a figure for slides and papers: the step's main
// matrix with its token labels, colour scale and title, as SVG text or a PNG.
// One layout (figureLayout) feeds both renderers, so the two always agree.
//
//   const fig = stepFigure(trace, state);            // what the step shows
//   const svg = figureToSvg(fig, readPalette(root), { doc: document });  // string, standalone SVG
//   const blob = await figureToPng(fig, palette, document);
//
// The title is the one the page shows above the matrix (notation.js); the
// caption is wrapped to the figure's width, measured with the page's font
// when a document is given (a canvas measures it), else estimated.

import { lutIndex, lutCss } from './palette.js';
import { tokenLabel, excerpt, formatValue, DIGITS } from './format.js';
import { stepEntry, STEP_REGISTRY } from './steps.js';

/**
 * The matrix a step is about (each step's `figure` in the registry, steps.js):
 * {title, caption, rows, cols, values, rowLabels, colLabels, kind
 * ('diverging'|'sequential'), blocked (Uint8Array or null)}.
 */
export function stepFigure(trace, state) {
  const h = Math.min(Math.max(0, state.head ?? 0), trace.heads.length - 1);
  const tokens = trace.tokens.map((t) => tokenLabel(t.text, 12));
  const entry = stepEntry(state.step) ?? STEP_REGISTRY[0];
  const { matrix: m, title, caption, kind, mask, cols } = entry.figure(trace, h);
  const colLabels = cols === 'tokens' ? tokens : Array.from({ length: cols }, (_, i) => String(i));
  let blocked = null;
  if (mask) {
    blocked = new Uint8Array(mask.data.length);
    for (let i = 0; i < blocked.length; i++) blocked[i] = mask.data[i] ? 0 : 1;
  }
  const c = trace.config;
  // no line break inside "C = d_model = 16" and the like (wrapText breaks at plain spaces only)
  const keep = (text) => text.replace(/ /g, '\u00a0');
  const sizes = [keep(`C = d_model = ${c.dModel}`), keep(`H = ${c.heads} head${c.heads === 1 ? '' : 's'}`), keep(`d_k = ${c.dHead}`), trace.model ? 'trained weights' : keep(`seed ${c.seed}`)];
  return {
    title, caption: `${caption}. Sentence: \u201c${excerpt(trace.sentence ?? '', 60)}\u201d (${sizes.join(', ')}).`,
    step: state.step, stepTitle: stepEntry(state.step)?.title,
    rows: m.rows, cols: m.cols, values: m.data, rowLabels: tokens, colLabels, kind, blocked,
  };
}

const TITLE_PX = 18;
const TEXT_PX = 12;

/** A width estimate (px) of text in a sans font of `px` pixels, on the generous side. */
export function estimateWidth(text, px) {
  let w = 0;
  for (const ch of text) w += /[mwMW@%\u2014]/.test(ch) ? 0.95 : /[A-Z\u221a\u2211\u03a3]/.test(ch) ? 0.72 : /[\s.,:;'\u2019il|]/.test(ch) ? 0.34 : 0.6;
  return w * px;
}

/** measure(text, px) with a canvas of the document, in the palette's font. */
export function canvasMeasure(doc, font) {
  const ctx = doc.createElement('canvas').getContext('2d');
  return (text, px, weight = 400) => {
    ctx.font = `${weight} ${px}px ${font}`;
    return ctx.measureText(text).width;
  };
}

/** Lines of at most maxWidth (a word longer than that is cut at characters). */
export function wrapText(text, maxWidth, measure, px, weight) {
  const lines = [];
  let line = '';
  for (const word of String(text).split(/[ \t\n]+/).filter(Boolean)) {
    const next = line ? `${line} ${word}` : word;
    if (measure(next, px, weight) <= maxWidth) {
      line = next;
      continue;
    }
    if (line) lines.push(line);
    line = '';
    let rest = word;
    while (measure(rest, px, weight) > maxWidth) {
      const chars = Array.from(rest);
      let n = chars.length - 1;
      while (n > 1 && measure(chars.slice(0, n).join(''), px, weight) > maxWidth) n--;
      lines.push(chars.slice(0, n).join(''));
      rest = chars.slice(n).join('');
    }
    line = rest;
  }
  if (line) lines.push(line);
  return lines.length ? lines : [''];
}

/**
 * Sizes and positions shared by the SVG and PNG renderers. measure(text, px,
 * weight) gives text widths (estimateWidth when none is given).
 */
export function figureLayout(fig, measure = (t, px) => estimateWidth(t, px)) {
  const cell = fig.rows * fig.cols > 4096 ? 8 : fig.cols > 32 ? 14 : 44;
  const showNumbers = cell >= 40;
  const labelW = 16 + 7 * Math.max(3, ...fig.rowLabels.map((l) => l.length));
  const colLabelH = fig.colLabels.length && cell >= 14 ? 10 + 7 * Math.max(2, ...fig.colLabels.map((l) => l.length)) : 12;
  const gridX = labelW;
  const width = Math.max(gridX + fig.cols * cell + 24, 560);
  const titleLines = wrapText(fig.title, width - 32, measure, TITLE_PX, 600);
  const captionLines = wrapText(fig.caption, width - 32, measure, TEXT_PX, 400);
  // title baselines 28, 50, …; caption lines 16 px apart below it
  const titleY = titleLines.map((_, i) => 28 + i * 22);
  const captionY = captionLines.map((_, i) => titleY[titleY.length - 1] + 20 + i * 16);
  const top = captionY[captionY.length - 1] + 16;
  const gridY = top + colLabelH;
  const height = gridY + fig.rows * cell + 56;
  let range = 0;
  for (let i = 0; i < fig.values.length; i++) {
    if (fig.blocked && fig.blocked[i]) continue;
    const a = Math.abs(fig.values[i]);
    if (a > range && Number.isFinite(a)) range = a;
  }
  if (fig.kind === 'sequential') range = Math.max(range, 1e-9);
  return { cell, showNumbers, labelW, colLabelH, top, gridX, gridY, width, height, range, titleLines, titleY, captionLines, captionY };
}

function cellStyle(fig, L, palette, i) {
  if (fig.blocked && fig.blocked[i]) return { fill: palette.masked, text: palette.maskedText, label: '\u2212\u221e' };
  const lut = fig.kind === 'sequential' ? palette.sequential : palette.diverging;
  const k = lutIndex(fig.values[i], fig.kind, L.range);
  return { fill: lutCss(lut, k), text: lut.dark[k] ? palette.lightText : palette.darkText, label: formatValue(fig.values[i]) };
}

// Characters XML 1.0 forbids in a document, even as &#x…; references: C0
// controls but tab, newline and return; lone surrogates; U+FFFE and U+FFFF.
// eslint-disable-next-line no-control-regex
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Text for an SVG text node or attribute: markup escaped, characters XML forbids as U+FFFD. */
export function escapeXml(text) {
  return String(text)
    .replace(NOT_XML, '\ufffd')
    .replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' }[c]));
}

/** A standalone SVG document (string). Every text is escaped. doc: measure the text with its canvas. */
export function figureToSvg(fig, palette, { doc = null } = {}) {
  const L = figureLayout(fig, doc ? canvasMeasure(doc, palette.font) : undefined);
  const font = escapeXml(palette.font);
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${L.width}" height="${L.height}" viewBox="0 0 ${L.width} ${L.height}" font-family="${font}">`);
  out.push(`<rect width="100%" height="100%" fill="${escapeXml(palette.surface)}"/>`);
  L.titleLines.forEach((line, i) => out.push(`<text x="16" y="${L.titleY[i]}" font-size="${TITLE_PX}" font-weight="600" fill="${escapeXml(palette.text)}">${escapeXml(line)}</text>`));
  L.captionLines.forEach((line, i) => out.push(`<text x="16" y="${L.captionY[i]}" font-size="${TEXT_PX}" fill="${escapeXml(palette.muted)}">${escapeXml(line)}</text>`));
  for (let r = 0; r < fig.rows; r++) {
    const y = L.gridY + r * L.cell + L.cell / 2;
    out.push(`<text x="${L.gridX - 6}" y="${y}" font-size="12" text-anchor="end" dominant-baseline="middle" fill="${escapeXml(palette.text)}">${escapeXml(fig.rowLabels[r] ?? r)}</text>`);
  }
  if (L.cell >= 14) {
    for (let c = 0; c < fig.cols; c++) {
      const x = L.gridX + c * L.cell + L.cell / 2;
      const y = L.gridY - 6;
      out.push(`<text x="${x}" y="${y}" font-size="12" transform="rotate(-90 ${x} ${y})" dominant-baseline="middle" fill="${escapeXml(palette.text)}">${escapeXml(fig.colLabels[c] ?? c)}</text>`);
    }
  }
  for (let r = 0; r < fig.rows; r++) {
    for (let c = 0; c < fig.cols; c++) {
      const i = r * fig.cols + c;
      const s = cellStyle(fig, L, palette, i);
      const x = L.gridX + c * L.cell;
      const y = L.gridY + r * L.cell;
      out.push(`<rect x="${x}" y="${y}" width="${L.cell}" height="${L.cell}" fill="${s.fill}"/>`);
      if (L.showNumbers) out.push(`<text x="${x + L.cell / 2}" y="${y + L.cell / 2}" font-size="11" text-anchor="middle" dominant-baseline="middle" fill="${s.text}">${escapeXml(s.label)}</text>`);
    }
  }
  const note = fig.kind === 'sequential' ? `colour: 0 \u2026 ${formatValue(L.range)}` : `colour: \u2212${formatValue(L.range)} (blue) \u2026 0 \u2026 +${formatValue(L.range)} (orange)`;
  out.push(`<text x="16" y="${L.height - 18}" font-size="12" fill="${escapeXml(palette.muted)}">${escapeXml(note)} \u00b7 Attention Playground</text>`);
  out.push('</svg>');
  return out.join('\n');
}

/** Draws the figure on a new canvas (2× for sharp slides). */
export function figureToCanvas(fig, palette, doc, scale = 2) {
  const L = figureLayout(fig, canvasMeasure(doc, palette.font));
  const canvas = doc.createElement('canvas');
  canvas.width = Math.ceil(L.width * scale);
  canvas.height = Math.ceil(L.height * scale);
  const ctx = canvas.getContext('2d');
  ctx.scale(scale, scale);
  ctx.fillStyle = palette.surface;
  ctx.fillRect(0, 0, L.width, L.height);
  ctx.fillStyle = palette.text;
  ctx.font = `600 ${TITLE_PX}px ${palette.font}`;
  ctx.textBaseline = 'alphabetic';
  L.titleLines.forEach((line, i) => ctx.fillText(line, 16, L.titleY[i]));
  ctx.fillStyle = palette.muted;
  ctx.font = `400 ${TEXT_PX}px ${palette.font}`;
  L.captionLines.forEach((line, i) => ctx.fillText(line, 16, L.captionY[i]));
  ctx.fillStyle = palette.text;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (let r = 0; r < fig.rows; r++) ctx.fillText(String(fig.rowLabels[r] ?? r), L.gridX - 6, L.gridY + r * L.cell + L.cell / 2);
  if (L.cell >= 14) {
    ctx.textAlign = 'left';
    for (let c = 0; c < fig.cols; c++) {
      ctx.save();
      ctx.translate(L.gridX + c * L.cell + L.cell / 2, L.gridY - 6);
      ctx.rotate(-Math.PI / 2);
      ctx.fillText(String(fig.colLabels[c] ?? c), 0, 0);
      ctx.restore();
    }
  }
  ctx.textAlign = 'center';
  ctx.font = `11px ${palette.font}`;
  for (let r = 0; r < fig.rows; r++) {
    for (let c = 0; c < fig.cols; c++) {
      const s = cellStyle(fig, L, palette, r * fig.cols + c);
      const x = L.gridX + c * L.cell;
      const y = L.gridY + r * L.cell;
      ctx.fillStyle = s.fill;
      ctx.fillRect(x, y, L.cell, L.cell);
      if (L.showNumbers) {
        ctx.fillStyle = s.text;
        ctx.fillText(s.label, x + L.cell / 2, y + L.cell / 2);
      }
    }
  }
  ctx.textAlign = 'left';
  ctx.fillStyle = palette.muted;
  ctx.font = `12px ${palette.font}`;
  const note = fig.kind === 'sequential' ? `colour: 0 \u2026 ${formatValue(L.range)}` : `colour: \u2212${formatValue(L.range)} (blue) \u2026 0 \u2026 +${formatValue(L.range)} (orange)`;
  ctx.fillText(`${note} \u00b7 Attention Playground`, 16, L.height - 18);
  return canvas;
}

/** PNG bytes of the figure. */
export function figureToPng(fig, palette, doc) {
  const canvas = figureToCanvas(fig, palette, doc);
  return new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('the PNG could not be encoded'))), 'image/png'));
}

/** Offers a Blob as a file download. */
export function download(doc, blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = doc.createElement('a');
  a.href = url;
  a.download = filename;
  a.hidden = true;
  (doc.body ?? doc.documentElement).append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
