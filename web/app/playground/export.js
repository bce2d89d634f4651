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
// The colours are the page's: the same colour scale (for weight maps the
// reader's choice auto / 0–1 / row max, views/heatmap/colors.js), masked cells
// grey and hatched, and a legend line that names the scale. Numbers by
// formatValue (format.js), as in the page's cells.

import { lutCss } from '../kit/palette.js';
import { resolveScale, cellIndex, SCALE_NAMES } from '../kit/heatmap/colors.js';
import { tokenLabel, excerpt, formatValue, DIGITS } from '../kit/format.js';
import { STEP_REGISTRY } from './step-registry.js';
import { LEARN_REGISTRY } from './learn/step-registry.js';

/** Every step's registry entry, the forward ones' (step-registry.js) and the Learn part's (learn/step-registry.js), by id. */
const ENTRIES = new Map([...STEP_REGISTRY, ...LEARN_REGISTRY].map((s) => [s.id, s]));

/**
 * The matrix a step is about (each step's `figure` in the registries, step-registry.js and
 * learn/step-registry.js): {title, caption, rows, cols, values, rowLabels, colLabels, kind
 * ('diverging'|'sequential'), blocked (Uint8Array or null: 1 = masked),
 * blockedAs ('minus-infinity': the value is −∞ | 'zero': an exact 0 the mask made),
 * scaleChoice (the page's colour-scale choice for weight maps: auto, fixed, row),
 * range (the colour range when the page gives one, else null: the largest |value|)},
 * or null when the step has nothing to draw (a Learn step without a backward).
 * state: {step, head, query}. options.scale: that choice (the page's heatmap;
 * 'fixed' when not given); options.learn: the backward the Learn steps show (v.learn).
 */
/** Steps whose figure is one head's; the rest show every head (concat, output) or come before the heads. */
const PER_HEAD = new Set(['projections', 'scores', 'scaled', 'masked', 'softmax', 'weighted', 'heads']);
/** Steps before every layer (the model's input): no layer to name. */
const BEFORE_LAYERS = new Set(['embeddings', 'positional']);

/**
 * The line under a figure's title that says whose numbers these are: the model, the layer
 * (a model with more than one) and the head, e.g. "coreference (trained) · layer 2 of 2 · head 1 of 4".
 */
export function figureSource(trace, step, h, model) {
  const parts = [model ?? trace.model?.name ?? 'random weights'];
  const m = trace.model;
  if (m && m.layers > 1 && !BEFORE_LAYERS.has(step)) parts.push(`layer ${m.layer + 1} of ${m.layers}`);
  const H = trace.heads.length;
  if (PER_HEAD.has(step) || (!STEP_REGISTRY.some((e) => e.id === step) && ENTRIES.has(step))) parts.push(`head ${h + 1} of ${H}`);
  else if (step === 'concat' || step === 'output') parts.push(`all ${H} head${H === 1 ? '' : 's'}`);
  return parts.join(' \u00b7 ');
}

export function stepFigure(trace, state, { scale = 'fixed', learn = null, model = null } = {}) {
  const h = Math.min(Math.max(0, state.head ?? 0), trace.heads.length - 1);
  const q = Math.min(Math.max(0, state.query ?? 0), trace.tokens.length - 1);
  const tokens = trace.tokens.map((t) => tokenLabel(t.text));
  const entry = ENTRIES.get(state.step) ?? STEP_REGISTRY[0];
  const f = entry.figure(trace, h, { learn, q });
  if (!f) return null;
  const { matrix: m, title, caption, kind, mask, zeros, range = null, cols } = f;
  // an entry may name its rows and columns (the Learn part's words, weight dimensions); else tokens
  const rowLabels = f.rowLabels ?? tokens;
  const colLabels = f.colLabels ?? (cols === 'tokens' ? tokens : Array.from({ length: cols }, (_, i) => String(i)));
  let blocked = null;
  const source = mask ?? zeros;
  if (source && source.data.some((x) => !x)) {
    blocked = new Uint8Array(source.data.length);
    for (let i = 0; i < blocked.length; i++) blocked[i] = source.data[i] ? 0 : 1;
  }
  const c = trace.config;
  // no line break inside "C = d_model = 16" and the like (wrapText breaks at plain spaces only)
  const keep = (text) => text.replace(/ /g, '\u00a0');
  const sizes = [keep(`C = d_model = ${c.dModel}`), keep(`H = ${c.heads} head${c.heads === 1 ? '' : 's'}`), keep(`d_k = ${c.dHead}`), trace.model ? 'trained weights' : keep(`seed ${c.seed}`)];
  return {
    title, source: figureSource(trace, state.step, h, model), caption: `${caption}. Sentence: \u201c${excerpt(trace.sentence ?? '', 60)}\u201d (${sizes.join(', ')}).`,
    step: state.step, stepTitle: ENTRIES.get(state.step)?.title,
    rows: m.rows, cols: m.cols, values: m.data, rowLabels, colLabels, kind, blocked,
    blockedAs: mask ? 'minus-infinity' : 'zero', scaleChoice: scale, range,
  };
}

/**
 * The colour scale of a figure, as the page's heatmap resolves it
 * (resolveScale in views/heatmap/colors.js), and the model it reads.
 */
export function figureScale(fig) {
  const blocked = fig.blocked ? Uint8Array.from(fig.blocked, (b) => (b ? 0 : 1)) : null;
  const model = {
    kind: fig.kind, matrix: { rows: fig.rows, cols: fig.cols, data: fig.values },
    range: fig.kind === 'sequential' ? 1 : (fig.range ?? null),
    mask: fig.blockedAs === 'minus-infinity' ? blocked : null,
    maskedZeros: fig.blockedAs === 'zero' ? blocked : null,
  };
  return { model, scale: resolveScale(model, fig.scaleChoice ?? 'fixed') };
}

/** The legend line: what the colours mean, naming the scale as the page does, and the masked cells. */
export function legendText(fig, scale) {
  let text;
  if (scale.kind === 'range') text = `colour: ${formatValue(-scale.range, DIGITS.legend)} (blue) \u2026 0 \u2026 ${formatValue(scale.range, DIGITS.legend)} (orange)`;
  else if (scale.kind === 'row') text = `colour scale: ${SCALE_NAMES.row}${scale.auto ? ' (auto)' : ''}, 0 \u2026 each row\u2019s largest weight (darkest)`;
  else text = `colour scale: ${SCALE_NAMES.fixed}${scale.auto ? ' (auto)' : ''}, 0 \u2026 1`;
  if (fig.blocked) text += `; grey hatched = masked (${fig.blockedAs === 'zero' ? 'exactly 0' : '\u2212\u221e'})`;
  return text;
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
 * weight) gives text widths (estimateWidth when none is given). A cell is
 * `cell` px tall and `cellW` px wide: square, widened when its widest number
 * would not fit (a gradient's "−1.0e−7"), so a number is never clipped, as on the page.
 */
export function figureLayout(fig, measure = (t, px) => estimateWidth(t, px)) {
  const cell = fig.rows * fig.cols > 4096 ? 8 : fig.cols > 32 ? 14 : 44;
  const showNumbers = cell >= 40;
  // numbers as in the page's cells: DIGITS.cell digits when the widest fits a cell, else DIGITS.cellNarrow
  let digits = DIGITS.cell;
  let cellW = cell;
  if (showNumbers) {
    const widest = (d) => {
      const seen = new Set();
      let w = 0;
      for (let i = 0; i < fig.values.length; i++) {
        const t = formatValue(fig.values[i], d);
        if (seen.has(t)) continue;
        seen.add(t);
        w = Math.max(w, measure(t, CELL_PX));
      }
      return w;
    };
    if (widest(DIGITS.cell) > cell - 4) digits = DIGITS.cellNarrow;
    // a number that does not fit gets its width and 4 px each side (the forward steps' fit: cells stay square)
    const w = widest(digits);
    if (w > cell - 4) cellW = Math.ceil(w) + 8;
  }
  const labelW = 16 + 7 * Math.max(3, ...fig.rowLabels.map((l) => l.length));
  const colLabelH = fig.colLabels.length && cell >= 14 ? 10 + 7 * Math.max(2, ...fig.colLabels.map((l) => l.length)) : 12;
  const gridX = labelW;
  const width = Math.max(gridX + fig.cols * cellW + 24, 560);
  // the title alone is weight 600 (a reader of the SVG finds it so); the source line under it 500
  const titleLines = wrapText(fig.title, width - 32, measure, TITLE_PX, 600);
  const sourceLines = fig.source ? wrapText(fig.source, width - 32, measure, TEXT_PX, 500) : [];
  const captionLines = wrapText(fig.caption, width - 32, measure, TEXT_PX, 400);
  // title baselines 28, 50, …; the source line(s) then the caption lines 16 px apart below it
  const titleY = titleLines.map((_, i) => 28 + i * 22);
  const sourceY = sourceLines.map((_, i) => titleY[titleY.length - 1] + 20 + i * 16);
  const captionY = captionLines.map((_, i) => (sourceY.length ? sourceY[sourceY.length - 1] : titleY[titleY.length - 1]) + 20 + i * 16);
  const top = captionY[captionY.length - 1] + 16;
  const gridY = top + colLabelH;
  const { model, scale } = figureScale(fig);
  // the legend line(s) under the grid, wrapped like the caption
  const legendLines = wrapText(`${legendText(fig, scale)} \u00b7 Attention Playground`, width - 32, measure, TEXT_PX, 400);
  const legendY = legendLines.map((_, i) => gridY + fig.rows * cell + 38 + i * 16);
  const height = legendY[legendY.length - 1] + 18;
  return { cell, cellW, showNumbers, digits, labelW, colLabelH, top, gridX, gridY, width, height, model, scale, titleLines, titleY, sourceLines, sourceY, captionLines, captionY, legendLines, legendY };
}

const CELL_PX = 11;

/** Fill, text colour and printed label of cell i, coloured on the page's scale; blocked cells grey. */
function cellStyle(fig, L, palette, i) {
  if (fig.blocked && fig.blocked[i]) return { fill: palette.masked, text: palette.maskedText, label: fig.blockedAs === 'zero' ? '0' : '\u2212\u221e', blocked: true };
  const lut = fig.kind === 'sequential' ? palette.sequential : palette.diverging;
  const k = cellIndex(L.model, i, L.scale);
  return { fill: lutCss(lut, k), text: lut.dark[k] ? palette.lightText : palette.darkText, label: formatValue(fig.values[i], L.digits), blocked: false };
}

/** Diagonal hatching (every 5 px, at 45°) over a w × h cell at (x, y), as [x1, y1, x2, y2] segments. */
function hatchSegments(x, y, w, h = w) {
  const out = [];
  for (let d = 5; d < w + h; d += 5) {
    // the line u + v = d (u from the left, v from the top), clipped to the cell
    const u0 = Math.max(0, d - h);
    const u1 = Math.min(d, w);
    out.push([x + u0, y + d - u0, x + u1, y + d - u1]);
  }
  return out;
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
  L.sourceLines.forEach((line, i) => out.push(`<text class="source" x="16" y="${L.sourceY[i]}" font-size="${TEXT_PX}" font-weight="500" fill="${escapeXml(palette.text)}">${escapeXml(line)}</text>`));
  L.captionLines.forEach((line, i) => out.push(`<text x="16" y="${L.captionY[i]}" font-size="${TEXT_PX}" fill="${escapeXml(palette.muted)}">${escapeXml(line)}</text>`));
  for (let r = 0; r < fig.rows; r++) {
    const y = L.gridY + r * L.cell + L.cell / 2;
    out.push(`<text x="${L.gridX - 6}" y="${y}" font-size="12" text-anchor="end" dominant-baseline="middle" fill="${escapeXml(palette.text)}">${escapeXml(fig.rowLabels[r] ?? r)}</text>`);
  }
  if (L.cell >= 14) {
    for (let c = 0; c < fig.cols; c++) {
      const x = L.gridX + c * L.cellW + L.cellW / 2;
      const y = L.gridY - 6;
      out.push(`<text x="${x}" y="${y}" font-size="12" transform="rotate(-90 ${x} ${y})" dominant-baseline="middle" fill="${escapeXml(palette.text)}">${escapeXml(fig.colLabels[c] ?? c)}</text>`);
    }
  }
  const hatch = [];
  for (let r = 0; r < fig.rows; r++) {
    for (let c = 0; c < fig.cols; c++) {
      const i = r * fig.cols + c;
      const s = cellStyle(fig, L, palette, i);
      const x = L.gridX + c * L.cellW;
      const y = L.gridY + r * L.cell;
      out.push(`<rect x="${x}" y="${y}" width="${L.cellW}" height="${L.cell}" fill="${s.fill}"/>`);
      if (s.blocked && L.cell >= 5) hatch.push(...hatchSegments(x, y, L.cellW, L.cell));
      if (L.showNumbers) out.push(`<text x="${x + L.cellW / 2}" y="${y + L.cell / 2}" font-size="${CELL_PX}" text-anchor="middle" dominant-baseline="middle" fill="${s.text}">${escapeXml(s.label)}</text>`);
    }
  }
  // masked cells hatched, as on the page (one path: the rect count stays one per cell)
  if (hatch.length) out.push(`<path class="masked-hatch" d="${hatch.map(([a, b, c, d]) => `M${a} ${b}L${c} ${d}`).join('')}" stroke="${escapeXml(palette.maskedText)}" stroke-opacity="0.28" stroke-width="1" fill="none"/>`);
  L.legendLines.forEach((line, i) => out.push(`<text x="16" y="${L.legendY[i]}" class="legend" font-size="${TEXT_PX}" fill="${escapeXml(palette.muted)}">${escapeXml(line)}</text>`));
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
  ctx.font = `500 ${TEXT_PX}px ${palette.font}`;
  L.sourceLines.forEach((line, i) => ctx.fillText(line, 16, L.sourceY[i]));
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
      ctx.translate(L.gridX + c * L.cellW + L.cellW / 2, L.gridY - 6);
      ctx.rotate(-Math.PI / 2);
      ctx.fillText(String(fig.colLabels[c] ?? c), 0, 0);
      ctx.restore();
    }
  }
  ctx.textAlign = 'center';
  ctx.font = `${CELL_PX}px ${palette.font}`;
  const hatch = new Path2D();
  for (let r = 0; r < fig.rows; r++) {
    for (let c = 0; c < fig.cols; c++) {
      const s = cellStyle(fig, L, palette, r * fig.cols + c);
      const x = L.gridX + c * L.cellW;
      const y = L.gridY + r * L.cell;
      ctx.fillStyle = s.fill;
      ctx.fillRect(x, y, L.cellW, L.cell);
      if (s.blocked && L.cell >= 5) {
        for (const [a, b, e, d] of hatchSegments(x, y, L.cellW, L.cell)) {
          hatch.moveTo(a, b);
          hatch.lineTo(e, d);
        }
      }
      if (L.showNumbers) {
        ctx.fillStyle = s.text;
        ctx.fillText(s.label, x + L.cellW / 2, y + L.cell / 2);
      }
    }
  }
  ctx.save();
  ctx.strokeStyle = palette.maskedText;
  ctx.globalAlpha = 0.28;
  ctx.lineWidth = 1;
  ctx.stroke(hatch);
  ctx.restore();
  ctx.textAlign = 'left';
  ctx.fillStyle = palette.muted;
  ctx.font = `12px ${palette.font}`;
  L.legendLines.forEach((line, i) => ctx.fillText(line, 16, L.legendY[i]));
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
