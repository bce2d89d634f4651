// The lines view: the selected query token on the left, every key on the
// right, one line to each key whose thickness is the attention weight.
// The SVG is built once per sentence and width; a new query or new weights
// only move attributes. Above MAX_TOKENS tokens (a line per key would be a
// blur) it shows the selected query and its TOP_K keys by weight, and says so.

import { el, svgEl, clear } from '../../kit/dom.js';
import { createMeasurer, createLabelFitter } from '../../kit/heatmap/text.js';
import { formatValue, tokenLabel } from '../../kit/format.js';

const MAX_TOKENS = 64;
const ROW_H = 22;
export const TOP_K = 12;
const DIGITS = 2; // significant digits of the weights (format.js: formatValue)
/** The width of the band the lines cross: 30% of the view, 20% on a phone (the labels need the room), at least 64 px. */
const midWidth = (width) => Math.max(64, Math.round(width * (width < 480 ? 0.2 : 0.3)));

export function createLinesView(parent, { onSelectQuery, getWidth = null }) {
  const shape = el('span', 'hm-shape', { text: 'thickness = weight' });
  const caption = el('figcaption', 'hm-caption', {}, el('span', 'hm-title', { text: 'Who the query looks at' }), shape);
  const msg = el('p', 'figure-note lines-topk', { hidden: true, testid: 'lines-note' });
  const holder = el('div', 'lines-holder');
  const figure = el('figure', 'lines-view', { testid: 'lines-view' }, caption, msg, holder);
  parent.append(figure);
  const measurer = createMeasurer(); // this view's own: no module-level state
  const fitLabel = createLabelFitter(2000);
  /**
   * A token label as tspans, whole (issue #16): in 12 px, or shrunk down to 9 px,
   * or on two lines (a row holds two at 9 px) to fit maxW (heatmap/text.js fitLabel);
   * only a token too long for two such lines is cut, with "…" (its aria-label is whole).
   * lead: tspans before the label on its first line; x: where a second line starts.
   */
  const labelSpans = (family, text, maxW, x, lead = []) => {
    const { px, lines } = fitLabel(measurer, text, { family, basePx: 12, minPx: 9, maxW, twoLines: true, hardMaxW: maxW });
    const size = px !== 12 ? { 'font-size': px } : {};
    if (lines.length === 1) return [...lead, svgEl('tspan', size, lines[0])];
    const lh = Math.ceil(px * 1.2);
    const first = [...lead, svgEl('tspan', size, lines[0])];
    first[0].setAttribute('dy', String(-lh / 2));
    return [...first, svgEl('tspan', { ...size, x, dy: lh }, lines[1])];
  };
  let skeleton = null; // {labels, width, font, svg, lines[], keyTexts[], weights[], queries[], geometry}
  let last = null;

  function build(labels, width, font) {
    clear(holder);
    const T = labels.length;
    const mid = midWidth(width);
    const side = Math.floor((width - mid) / 2);
    const numW = 34;
    const top = 22;
    const height = top + T * ROW_H + 4;
    const yOf = (i) => top + i * ROW_H + ROW_H / 2;
    const svg = svgEl('svg', { viewBox: `0 0 ${width} ${height}`, width, height, class: 'lines-svg', role: 'group' });
    svg.append(
      svgEl('text', { x: side - 8, y: 12, 'text-anchor': 'end', class: 'lines-head' }, 'query'),
      svgEl('text', { x: side + mid + 8, y: 12, class: 'lines-head' }, 'key \u00b7 weight'),
    );
    const lineGroup = svgEl('g', { class: 'lines-lines' });
    svg.append(lineGroup);
    const lines = [];
    const keyTexts = [];
    const weights = [];
    const queries = [];
    for (let j = 0; j < T; j++) {
      const line = svgEl('line', { x1: side, x2: side + mid, y2: yOf(j), class: 'lines-line' });
      lineGroup.append(line);
      lines.push(line);
      const w = svgEl('tspan', { class: 'lines-w', dx: 6 });
      const text = svgEl('text', { x: side + mid + 8, y: yOf(j), 'dominant-baseline': 'central', class: 'lines-key' });
      text.append(...labelSpans(font, tokenLabel(labels[j]), side - numW - 12, side + mid + 8), w);
      svg.append(text);
      keyTexts.push(text);
      weights.push(w);
    }
    for (let i = 0; i < T; i++) {
      const g = svgEl('g', { class: 'lines-q', role: 'button', tabindex: 0, 'aria-pressed': 'false', 'aria-label': `Query ${i}: ${tokenLabel(labels[i])}` });
      g.append(svgEl('rect', { x: 0, y: top + i * ROW_H + 1, width: side - 2, height: ROW_H - 2, rx: 4, class: 'lines-hit' }));
      const qText = svgEl('text', { x: side - 8, y: yOf(i), 'text-anchor': 'end', 'dominant-baseline': 'central' });
      qText.append(...labelSpans(font, tokenLabel(labels[i]), side - 14, side - 8));
      g.append(qText);
      g.addEventListener('click', () => onSelectQuery(i));
      g.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          e.stopPropagation();
          onSelectQuery(i);
        }
      });
      svg.append(g);
      queries.push(g);
    }
    holder.append(svg);
    skeleton = { labels, width, font, svg, lines, keyTexts, weights, queries, yOf };
    last = null;
  }

  /**
   * Long sentences: the query on the left, its TOP_K keys by weight on the right
   * (in sentence order, each with its position), lines as thick as weight ÷ the largest.
   */
  function drawTopK({ labels, weights, mask, q, head, palette }, width) {
    const T = weights.rows;
    const order = [];
    for (let j = 0; j < T; j++) if (!mask || mask.data[q * T + j]) order.push(j);
    order.sort((a, b) => weights.data[q * T + b] - weights.data[q * T + a] || a - b);
    const keys = order.slice(0, TOP_K).sort((a, b) => a - b);
    let share = 0;
    let maxW = 0;
    for (const j of keys) {
      share += weights.data[q * T + j];
      maxW = Math.max(maxW, weights.data[q * T + j]);
    }
    msg.hidden = false;
    msg.textContent = keys.length
      ? `${T} tokens: the ${keys.length} keys with the largest weights for query ${q} (${formatValue(share * 100, 2)}% of its weight). The heatmap shows all ${T}.`
      : `${T} tokens: query ${q} may look at no key (every key is masked).`;
    shape.textContent = `top ${TOP_K} of ${T} keys \u00b7 thickness = weight \u00f7 the largest`;
    const mid = midWidth(width);
    const side = Math.floor((width - mid) / 2);
    const top = 22;
    const n = Math.max(1, keys.length);
    const height = top + n * ROW_H + 4;
    const yOf = (r) => top + r * ROW_H + ROW_H / 2;
    const svg = svgEl('svg', { viewBox: `0 0 ${width} ${height}`, width, height, class: 'lines-svg', role: 'group', 'aria-label': `Head ${head + 1}: the ${keys.length} keys ${tokenLabel(labels[q])} attends to most` });
    svg.append(
      svgEl('text', { x: side - 8, y: 12, 'text-anchor': 'end', class: 'lines-head' }, 'query'),
      svgEl('text', { x: side + mid + 8, y: 12, class: 'lines-head' }, 'key \u00b7 weight'),
    );
    const qy = yOf((n - 1) / 2);
    const g = svgEl('g', { class: 'lines-lines' });
    svg.append(g);
    keys.forEach((j, r) => {
      const w = weights.data[q * T + j];
      g.append(svgEl('line', { x1: side, x2: side + mid, y1: qy, y2: yOf(r), class: 'lines-line', 'stroke-width': (0.6 + 7 * (maxW > 0 ? w / maxW : 0)).toFixed(2), 'stroke-opacity': (0.25 + 0.75 * (maxW > 0 ? w / maxW : 0)).toFixed(3) }));
      const wText = svgEl('tspan', { class: 'lines-w', dx: 6 }, formatValue(w, DIGITS));
      wText.dataset.testid = `cell-lines-${q}-${j}`;
      wText.dataset.value = String(w);
      const text = svgEl('text', { x: side + mid + 8, y: yOf(r), 'dominant-baseline': 'central', class: 'lines-key' });
      text.append(...labelSpans(palette.font, tokenLabel(labels[j]), side - 70, side + mid + 8, [svgEl('tspan', { class: 'lines-pos' }, `${j} `)]), wText);
      svg.append(text);
    });
    const qText = svgEl('text', { x: side - 8, y: qy, 'text-anchor': 'end', 'dominant-baseline': 'central', class: 'lines-q-only' });
    qText.append(...labelSpans(palette.font, `${q} ${tokenLabel(labels[q])}`, side - 14, side - 8));
    svg.append(qText);
    holder.replaceChildren(svg);
    skeleton = null;
  }

  return {
    element: figure,
    /** {labels, weights (T×T), mask (T×T or null), q, head, palette} */
    update({ labels, weights, mask, q, head, palette }) {
      const T = weights.rows;
      const width = Math.max(260, Math.min(440, ((getWidth ? getWidth() : figure.parentElement?.clientWidth) || 440) - 4));
      if (T > MAX_TOKENS) {
        if (last && last.topK && last.data === weights.data && last.q === q && last.mask === mask && last.width === width) return;
        drawTopK({ labels, weights, mask, q, head, palette }, width);
        last = { topK: true, data: weights.data, q, mask, width };
        return;
      }
      msg.hidden = true;
      shape.textContent = 'thickness = weight';
      if (last?.topK) last = null;
      if (!skeleton || skeleton.labels !== labels || skeleton.width !== width || skeleton.font !== palette.font) build(labels, width, palette.font);
      if (last && last.data === weights.data && last.q === q && last.mask === mask) return;
      last = { data: weights.data, q, mask };
      const { lines, keyTexts, weights: wTexts, queries, svg, yOf } = skeleton;
      svg.setAttribute('aria-label', `Attention of head ${head + 1} from ${tokenLabel(labels[q])} to every key`);
      for (let j = 0; j < T; j++) {
        const w = weights.data[q * T + j];
        const allowed = !mask || mask.data[q * T + j];
        const line = lines[j];
        if (allowed && w > 0.001) {
          line.removeAttribute('visibility');
          line.setAttribute('y1', yOf(q));
          line.setAttribute('stroke-width', (0.6 + 11 * w).toFixed(2));
          line.setAttribute('stroke-opacity', (0.25 + 0.75 * w).toFixed(3));
        } else {
          line.setAttribute('visibility', 'hidden');
        }
        keyTexts[j].setAttribute('class', allowed ? 'lines-key' : 'lines-key is-masked');
        wTexts[j].textContent = allowed ? formatValue(w, DIGITS) : 'masked';
        wTexts[j].dataset.testid = `cell-lines-${q}-${j}`;
        wTexts[j].dataset.value = String(w);
      }
      queries.forEach((g, i) => {
        const sel = i === q;
        g.setAttribute('class', sel ? 'lines-q is-selected' : 'lines-q');
        g.setAttribute('aria-pressed', sel ? 'true' : 'false');
      });
    },
  };
}
