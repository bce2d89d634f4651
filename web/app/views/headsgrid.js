// The grid of all heads: one small attention-weight map per head, the
// selected query row marked, each a button that selects its head. Each head
// is named by the standard pattern it matches best on this sentence
// (patterns.js: "L2 H1: antecedent 0.93"), or "no clear pattern".

import { el, clear } from './dom.js';
import { lutIndex } from '../palette.js';
import { formatNumber, quoted } from '../format.js';
import { NAME_THRESHOLD } from '../patterns.js';

/** "antecedent 0.93", or "no clear pattern (best: first-token 0.31)". */
export function patternText(p) {
  if (!p?.best) return 'no pattern applies';
  const s = `${p.best.name} ${formatNumber(p.best.score, 2)}`;
  return p.best.score >= NAME_THRESHOLD ? s : `no clear pattern (best: ${s})`;
}

const MAX_HEADS = 32;

export function createHeadsGrid(parent, { onSelectHead }) {
  const caption = el('figcaption', 'hm-caption', {}, el('span', 'hm-title', { text: 'All heads' }), el('span', 'hm-shape', { text: 'attention weights A, one map per head' }));
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
      const button = el('button', 'head-card', { type: 'button', attrs: { 'aria-label': `Head ${h + 1}` }, dataset: { head: String(h) } }, canvas, name, pattern, top);
      button.addEventListener('click', () => onSelectHead(h));
      grid.append(button);
      cards.push({ button, canvas, top, name, pattern });
    }
  }

  function drawMap(canvas, weights, q, palette, size) {
    const T = weights.rows;
    const cell = Math.max(1, Math.ceil(size / T));
    const px = cell * T;
    const dpr = 1;
    canvas.width = px;
    canvas.height = px;
    const small = document.createElement('canvas');
    small.width = T;
    small.height = T;
    const sctx = small.getContext('2d');
    const img = sctx.createImageData(T, T);
    const lut = palette.sequential.lut;
    for (let i = 0; i < T * T; i++) {
      const k = lutIndex(weights.data[i], 'sequential', 1) * 3;
      img.data[i * 4] = lut[k];
      img.data[i * 4 + 1] = lut[k + 1];
      img.data[i * 4 + 2] = lut[k + 2];
      img.data[i * 4 + 3] = 255;
    }
    sctx.putImageData(img, 0, 0);
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
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
      cards.forEach((card, h) => {
        const w = trace.heads[h].weights;
        const label = trace.model ? `L${trace.model.layer + 1} H${h + 1}` : `Head ${h + 1}`;
        const p = patternText(trace.headPatterns?.[h]);
        card.name.textContent = trace.model ? `${label}:` : label;
        card.pattern.textContent = p;
        card.pattern.dataset.pattern = trace.headPatterns?.[h]?.best?.name ?? '';
        card.button.setAttribute('aria-label', `${label}: ${p}`);
        drawMap(card.canvas, w, q, palette, size);
        let best = 0;
        for (let j = 1; j < T; j++) if (w.data[q * T + j] > w.data[q * T + best]) best = j;
        card.top.textContent = `${quoted(trace.tokens[q].text, 10)} \u2192 ${quoted(trace.tokens[best].text, 10)} ${formatNumber(w.data[q * T + best], 2)}`;
        card.button.setAttribute('aria-pressed', h === head ? 'true' : 'false');
      });
      grid.dataset.more = H > MAX_HEADS ? `+${H - MAX_HEADS} more heads not shown` : '';
    },
  };
}
