// The grid of all heads: one small attention-weight map per head, the
// selected query row marked, each a button that selects its head. Each head
// is named by the standard pattern it matches best on this sentence
// (patterns.js: "L2 H1: antecedent 0.93"), or "no clear pattern".

import { el, clear } from '../../kit/dom.js';
import { formatValue, quoted } from '../../kit/format.js';
import { resolveScale, paintImage, READABLE } from '../../kit/heatmap/colors.js';
import { NAME_THRESHOLD } from '../../kit/patterns.js';

/**
 * "antecedent 0.93", or "no clear pattern (best: first-token 0.31)"; a repeat
 * pattern scored on too few rows adds "induction: not enough repeats on this
 * sentence (1 row)" instead of naming the head (patterns.js MIN_REPEAT_ROWS).
 */
export function patternText(p) {
  const thin = p?.thin ? `${p.thin.name}: not enough repeats on this sentence (${p.thin.rows} row${p.thin.rows === 1 ? '' : 's'})` : '';
  if (!p?.best) return thin ? `no clear pattern (${thin})` : 'no pattern applies';
  const s = `${p.best.name} ${formatValue(p.best.score, 2)}`;
  if (p.best.score >= NAME_THRESHOLD) return s;
  return `no clear pattern (best: ${s}${thin ? `; ${thin}` : ''})`;
}

/** The spread of row q of a weight matrix: its largest weight minus its smallest allowed one. */
export function rowSpread(w, q, mask = null) {
  const T = w.cols;
  let hi = -Infinity;
  let lo = Infinity;
  for (let j = 0; j < T; j++) {
    if (mask && !mask.data[q * T + j]) continue;
    const x = w.data[q * T + j];
    if (x > hi) hi = x;
    if (x < lo) lo = x;
  }
  return hi >= lo ? hi - lo : 0;
}

const MAX_HEADS = 32;

export function createHeadsGrid(parent, { onSelectHead }) {
  const scaleNote = el('span', 'hm-shape', { testid: 'heads-scale' });
  const caption = el('figcaption', 'hm-caption', {}, el('span', 'hm-title', { text: 'All heads' }), el('span', 'hm-shape', { text: 'attention weights A, one map per head' }), scaleNote);
  const grid = el('div', 'heads-grid', { attrs: { role: 'group', 'aria-label': 'All heads' } });
  const figure = el('figure', 'heads-figure', { testid: 'heads-grid' }, caption, grid);
  parent.append(figure);
  let cards = [];
  let key = null;

  function build(H) {
    clear(grid);
    cards = [];
    for (let h = 0; h < Math.min(H, MAX_HEADS); h++) {
      const canvas = el('canvas', 'head-map', { attrs: { 'aria-hidden': 'true' } });
      const name = el('span', 'head-name', { text: `Head ${h + 1}` });
      const pattern = el('span', 'head-pattern', { testid: 'head-pattern' });
      const top = el('span', 'head-top');
      const spread = el('span', 'head-spread', { testid: 'head-spread' });
      const button = el('button', 'head-card', { type: 'button', attrs: { 'aria-label': `Head ${h + 1}` }, dataset: { head: String(h) } }, canvas, name, pattern, top, spread);
      button.addEventListener('click', () => onSelectHead(h));
      grid.append(button);
      cards.push({ button, canvas, top, spread, name, pattern });
    }
  }

  // one small canvas, one pixel per cell, reused for every head
  const small = document.createElement('canvas');

  /** Head map: weights on `scale` (as the heatmap draws them: masked cells grey), the query row outlined. */
  function drawMap(canvas, m, scale, q, palette, size) {
    const T = m.matrix.rows;
    const cell = Math.max(1, Math.ceil(size / T));
    const px = cell * T;
    canvas.width = px;
    canvas.height = px;
    paintImage(small, m, scale);
    const ctx = canvas.getContext('2d');
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(small, 0, 0, px, px);
    ctx.strokeStyle = palette.select;
    ctx.lineWidth = 1.5;
    ctx.strokeRect(0.75, q * cell + 0.75, px - 1.5, Math.max(1, cell - 1.5));
  }

  return {
    element: figure,
    update({ trace, head, q, palette }) {
      const H = trace.heads.length;
      const T = trace.tokens.length;
      const size = 320; // drawing resolution; CSS scales the map to its card
      const k = { trace, head, q, palette, size };
      if (key && Object.keys(k).every((x) => key[x] === k[x])) return;
      if (!key || key.trace.heads.length !== H) build(H);
      key = k;
      // one colour scale for all heads, so they compare: 0–1 unless the typical row is nearly uniform
      const models = cards.map((_, h) => ({ matrix: trace.heads[h].weights, kind: 'sequential', maskedZeros: trace.mask?.data, palette }));
      const scales = models.map((mm) => resolveScale(mm, 'row'));
      const typical = scales.map((x) => x.typical).sort((a, b) => a - b)[scales.length >> 1] ?? 1;
      const relative = typical < READABLE;
      scaleNote.textContent = relative
        ? `scale: row max (auto: rows nearly uniform, typical max ${formatValue(typical, 3)}; each row is stretched to its own max, so read its spread: max \u2212 min)`
        : 'scale: 0\u20131 (auto)';
      scaleNote.dataset.scale = relative ? 'row' : 'fixed';
      cards.forEach((card, h) => {
        const w = trace.heads[h].weights;
        const scale = relative ? scales[h] : { kind: 'fixed', range: 1 };
        const label = trace.model ? `L${trace.model.layer + 1} H${h + 1}` : `Head ${h + 1}`;
        const p = patternText(trace.headPatterns?.[h]);
        card.name.textContent = trace.model ? `${label}:` : label;
        card.pattern.textContent = p;
        card.pattern.dataset.pattern = trace.headPatterns?.[h]?.best?.name ?? '';
        card.button.setAttribute('aria-label', `${label}: ${p}`);
        drawMap(card.canvas, models[h], scale, q, palette, size);
        let best = 0;
        for (let j = 1; j < T; j++) if (w.data[q * T + j] > w.data[q * T + best]) best = j;
        // the row's spread, printed beside it: a row-max colour scale makes a flat row look strong
        card.top.textContent = `${quoted(trace.tokens[q].text, 10)} \u2192 ${quoted(trace.tokens[best].text, 10)} ${formatValue(w.data[q * T + best], 2)}`;
        card.spread.textContent = `row spread ${formatValue(rowSpread(w, q, trace.mask), 2)}`;
        card.button.setAttribute('aria-pressed', h === head ? 'true' : 'false');
      });
      grid.dataset.more = H > MAX_HEADS ? `+${H - MAX_HEADS} more heads not shown` : '';
    },
  };
}
