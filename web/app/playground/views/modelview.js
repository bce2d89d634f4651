// The whole model at a glance (BertViz's "model view"): every layer × head of
// a trained model as a small attention map, the sentence's tokens beside each
// layer's row of maps, each head's pattern name under it, the featured head
// (the one the model is shown with) marked ★ and the head on screen outlined.
// A map is a button: it opens that layer and head in the steps.
//
// Colours are on the fixed 0–1 scale, the same for every map, so a flat
// (near-uniform) row stays pale here instead of being stretched to its max.
//
//   const mv = createModelView(parent, { onOpen: (layer, head) => … });
//   mv.update({ trace, layers: trace.model.layerHeads, layer, head, q, palette, width });

import { el, clear } from '../../kit/dom.js';
import { tokenLabel, quoted } from '../../kit/format.js';
import { paintImage } from '../../kit/heatmap/colors.js';
import { patternText } from './headsgrid.js';

const GUTTER = 72; // px kept for the token labels (they may take more: the figure then scrolls)
const GAP = 6;
const MAX_MAP = 150;
const MIN_MAP = 64;

/** Maps per row of the grid and their size (px) for a panel `width` px wide and H heads. */
export function modelViewLayout(width, H) {
  let cols = H;
  let size = Math.floor((width - GUTTER - GAP * cols) / cols);
  while (cols > 1 && size < 110) {
    cols = Math.ceil(cols / 2);
    size = Math.floor((width - GUTTER - GAP * cols) / cols);
  }
  return { cols, size: Math.max(MIN_MAP, Math.min(MAX_MAP, size)) };
}

export function createModelView(parent, { onOpen }) {
  const caption = el('figcaption', 'hm-caption', {},
    el('span', 'hm-title', { text: 'The whole model' }),
    el('span', 'hm-shape', { testid: 'model-view-shape' }));
  const lead = el('p', 'figure-note mv-lead');
  const grid = el('div', 'mv-grid', { attrs: { role: 'group', 'aria-label': 'Every layer and head' } });
  const figure = el('figure', 'model-view', { testid: 'model-view' }, caption, lead, grid);
  parent.append(figure);
  const small = document.createElement('canvas');
  let key = null;

  function drawMap(canvas, weights, mask, q, palette, size) {
    const T = weights.rows;
    const dpr = Math.min(2, canvas.ownerDocument.defaultView.devicePixelRatio || 1);
    const px = Math.round(size * dpr);
    canvas.width = px;
    canvas.height = px;
    canvas.style.width = `${size}px`;
    canvas.style.height = `${size}px`;
    paintImage(small, { matrix: weights, kind: 'sequential', maskedZeros: mask?.data, palette }, { kind: 'fixed', range: 1 });
    const ctx = canvas.getContext('2d');
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(small, 0, 0, px, px);
    const cell = px / T;
    ctx.strokeStyle = palette.select;
    ctx.lineWidth = 1.5 * dpr;
    ctx.strokeRect(0.75 * dpr, q * cell + 0.75 * dpr, px - 1.5 * dpr, Math.max(1, cell - 1.5 * dpr));
  }

  function labelColumn(labels, size, q, layerName) {
    const T = labels.length;
    const rowH = size / T;
    const col = el('div', 'mv-labels', { attrs: { 'aria-hidden': 'true' } });
    col.style.height = `${size}px`;
    col.style.gridTemplateRows = `repeat(${T}, 1fr)`;
    col.style.fontSize = `${Math.max(7, Math.min(12, rowH * 0.82)).toFixed(1)}px`;
    labels.forEach((t, i) => col.append(el('bdi', `mv-label${i === q ? ' is-query' : ''}`, { text: t })));
    col.title = layerName;
    return col;
  }

  return {
    element: figure,
    update({ trace, layers, layer, head, q, palette, width, featured }) {
      const k = { trace, layer, head, q, palette, width };
      if (key && Object.keys(k).every((x) => key[x] === k[x])) return;
      key = k;
      const L = layers.length;
      const H = layers[0]?.heads.length ?? 0;
      const { cols, size } = modelViewLayout(width, H);
      const labels = trace.tokens.map((t) => tokenLabel(t.text));
      // grouped-query attention: neighbouring heads share a K/V head (query head h reads ⌊h/g⌋)
      const Hkv = trace.config.kvHeads ?? H;
      const g = Hkv < H ? H / Hkv : 0;
      caption.lastChild.textContent = `${L} layer${L === 1 ? '' : 's'} \u00d7 ${H} heads, weights A on one scale 0\u20131; rows: queries (the tokens on the left), columns: keys${g ? `; grouped by K/V head: every ${g} neighbouring heads share one (kv1 \u2026 kv${Hkv})` : ''}`;
      lead.textContent = `Each map is one head on your sentence; the outlined row is the query, ${quoted(trace.tokens[q]?.text ?? '')}.${featured ? ' \u2605 marks the head this model is shown with.' : ''} Click a map to open that head in the steps.`;
      clear(grid);
      grid.style.gridTemplateColumns = `max-content repeat(${cols}, ${size}px)`;
      for (let l = 0; l < L; l++) {
        const title = el('div', 'mv-layer', { text: `Layer ${l + 1}` });
        title.style.gridColumn = `1 / span ${cols + 1}`;
        grid.append(title);
        for (let start = 0; start < H; start += cols) {
          grid.append(labelColumn(labels, size, q, `Layer ${l + 1}`));
          const names = [];
          for (let h = start; h < Math.min(H, start + cols); h++) {
            const canvas = el('canvas', 'mv-map', { attrs: { 'aria-hidden': 'true' } });
            const p = patternText(layers[l].patterns[h]);
            const isFeatured = Boolean(featured && featured.layer === l && featured.head === h);
            const kv = g ? ` kv${Math.floor(h / g) + 1}` : '';
            const label = `L${l + 1} H${h + 1}${kv}${isFeatured ? ' \u2605' : ''}`;
            const button = el('button', `mv-card${isFeatured ? ' is-featured' : ''}`, {
              type: 'button',
              testid: 'mv-card',
              attrs: { 'aria-label': `Layer ${l + 1}, head ${h + 1}${g ? ` (K/V head ${Math.floor(h / g) + 1})` : ''}${isFeatured ? ' (featured)' : ''}: ${p}. Open it in the steps.`, 'aria-pressed': l === layer && h === head ? 'true' : 'false' },
              dataset: { layer: String(l), head: String(h), pattern: layers[l].patterns[h]?.best?.name ?? '' },
            }, canvas);
            button.addEventListener('click', () => onOpen(l, h));
            drawMap(canvas, layers[l].heads[h].weights, trace.mask, q, palette, size);
            grid.append(button);
            names.push(el('div', 'mv-name', { attrs: { 'aria-hidden': 'true' } }, el('strong', null, { text: label }), el('span', null, { text: ` ${p}` })));
          }
          for (let pad = names.length; pad < cols; pad++) grid.append(el('div', 'mv-spacer'));
          grid.append(el('div', 'mv-spacer'), ...names);
          for (let pad = names.length; pad < cols; pad++) grid.append(el('div', 'mv-spacer'));
        }
      }
    },
  };
}
