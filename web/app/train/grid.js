// The layers × heads grid: one attention map per head on the probe sequence,
// tokens labelled (keys across the top, queries down the side), the chosen
// answer key drawn as an outline on its cells (overlay) or as its own map at
// the start of each row (beside), each head's answer-key scores under it, and a
// button per head that ablates it (its output zeroed) or restores it.
// Every cell is reachable by hover, tap or the arrow keys (the map is
// focusable), which show its exact weight in the shared tooltip.
//
//   const grid = createGridView(root, { tooltip, onToggleHead(layer, head) });
//   grid.update({ layers, heads, tokens, T, maps, scores, keys, keyName, keyView, ablate,
//                 heldoutScores, causal, step, palette, live });

import { el, clear } from '../kit/dom.js';
import { lutIndex } from '../kit/palette.js';
import { formatValue, tokenText } from '../kit/format.js';
import { fnv1a32, hex32 } from '../kit/hash.js';

/** A head's name for the reader, layers and heads counted from 1 like the Head picker: "L1 H2". */
export const headName = (layer, head) => `L${layer + 1} H${head + 1}`;
const quoted = (t) => `\u201c${tokenText(t)}\u201d`;

/** FNV-1a (32-bit) of a Float32Array's bytes: equal digests = equal numbers. */
export function digest(array) {
  return hex32(fnv1a32(new Uint8Array(array.buffer, array.byteOffset, array.byteLength)));
}

const LABEL_FONT = 11;
/** Narrowest map (CSS px) before the grid wraps a layer's heads onto more rows. */
const MIN_MAP = 210;
/** Smallest map of a model with more layers, its layers side by side (so layer 2, where induction forms, is on the first screen). */
const MIN_SIDE_MAP = 112;
const LAYER_GAP = 16;

/** Layout of one map of T×T cells in a square of `size` CSS pixels. */
// Token labels are drawn whole: the gutter grows with the longest token (up to
// 40% of the map) and, past that, the label font shrinks (down to 7 px).
const CHAR_EM = 0.62; // advance of one monospace character, in em
function layout(T, size, tokens) {
  const labels = size / T >= 7;
  const longest = Math.max(1, ...tokens.map((t) => Array.from(tokenText(t)).length));
  if (!labels) return { x0: 0, y0: 0, cell: size / T, labels, font: LABEL_FONT };
  const room = size * 0.4 - 6;
  let font = Math.max(8, Math.min(LABEL_FONT, (size * 0.6 / T) * 0.9));
  if (longest * CHAR_EM * font > room) font = Math.max(7, room / (longest * CHAR_EM));
  const margin = Math.min(size * 0.4, 6 + longest * CHAR_EM * font);
  const cell = (size - margin) / T;
  return { x0: margin, y0: margin, cell, labels, font: Math.min(font, Math.max(7, cell * 0.9)) };
}

/** One pixel per cell: an offscreen T×T canvas drawn scaled (no smoothing) is far cheaper than T² fillRects. */
function cellImage(cache, { data, T, causal, palette, keyMap }) {
  if (!cache.canvas || cache.T !== T) {
    cache.canvas = document.createElement('canvas');
    cache.canvas.width = T;
    cache.canvas.height = T;
    cache.T = T;
    cache.image = cache.canvas.getContext('2d').createImageData(T, T);
  }
  const px = cache.image.data;
  const lut = palette.sequential.lut;
  const masked = palette.maskedRgb;
  const on = palette.textRgb;
  const off = palette.emptyRgb;
  for (let k = 0; k < T * T; k++) {
    const i = Math.floor(k / T);
    const j = k - i * T;
    let r;
    let g;
    let b;
    if (keyMap) [r, g, b] = data[k] ? on : off;
    else if (causal && j > i) [r, g, b] = masked;
    else {
      const o = lutIndex(data[k], 'sequential', 1) * 3;
      r = lut[o];
      g = lut[o + 1];
      b = lut[o + 2];
    }
    px[k * 4] = r;
    px[k * 4 + 1] = g;
    px[k * 4 + 2] = b;
    px[k * 4 + 3] = 255;
  }
  cache.canvas.getContext('2d').putImageData(cache.image, 0, 0);
  return cache.canvas;
}

function drawMap(canvas, cache, { data, T, size, tokens, keyData, overlay, causal, palette, ablated, keyMap }) {
  const dpr = Math.min(2, window.devicePixelRatio || 1);
  const w = Math.round(size * dpr);
  if (canvas.width !== w) {
    canvas.width = w;
    canvas.height = w;
    canvas.style.width = `${size}px`;
    canvas.style.height = `${size}px`;
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, size, size);
  const g = layout(T, size, tokens);
  const c = g.cell;
  ctx.globalAlpha = ablated ? 0.35 : 1;
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(cellImage(cache, { data, T, causal, palette, keyMap }), g.x0, g.y0, c * T, c * T);
  ctx.globalAlpha = 1;
  if (overlay && keyData && !keyMap) {
    // the answer key: a ring (dark line in a light halo) inside each key cell, one path per colour
    const inset = Math.max(1, c * 0.14);
    const s = c - 2 * inset;
    const path = new Path2D();
    for (let k = 0; k < T * T; k++) {
      if (!keyData[k]) continue;
      const i = Math.floor(k / T);
      const j = k - i * T;
      path.rect(g.x0 + j * c + inset, g.y0 + i * c + inset, s, s);
    }
    ctx.lineWidth = Math.max(2, c * 0.16);
    ctx.strokeStyle = palette.selectHalo;
    ctx.stroke(path);
    ctx.lineWidth = Math.max(1, c * 0.07);
    ctx.strokeStyle = palette.select;
    ctx.stroke(path);
  }
  if (g.labels) ctx.drawImage(labelImage(cache, { T, size, tokens, palette, g, dpr }), 0, 0, size, size);
  if (ablated) {
    ctx.font = `600 ${Math.max(11, size * 0.08)}px ${palette.font}`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.lineWidth = 4;
    ctx.strokeStyle = palette.surface;
    ctx.strokeText('ablated', g.x0 + (size - g.x0) / 2, g.y0 + (size - g.y0) / 2);
    ctx.fillStyle = palette.text;
    ctx.fillText('ablated', g.x0 + (size - g.x0) / 2, g.y0 + (size - g.y0) / 2);
  }
  return g;
}

/** The token labels (keys rotated across the top, queries down the side), drawn once per tokens, size and theme. */
function labelImage(cache, { T, size, tokens, palette, g, dpr }) {
  const key = `${size}|${dpr}|${palette.muted}|${tokens.join('\u0001')}`;
  if (cache.labelKey === key) return cache.labels;
  cache.labelKey = key;
  const canvas = cache.labels ?? document.createElement('canvas');
  cache.labels = canvas;
  canvas.width = Math.round(size * dpr);
  canvas.height = Math.round(size * dpr);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, size, size);
  const c = g.cell;
  ctx.fillStyle = palette.muted;
  ctx.font = `${g.font}px ${palette.mono}`;
  const step = Math.max(1, Math.ceil(g.font / c));
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'right';
  for (let i = 0; i < T; i += step) ctx.fillText(tokenText(tokens[i] ?? ''), g.x0 - 3, g.y0 + (i + 0.5) * c);
  ctx.textAlign = 'left';
  for (let j = 0; j < T; j += step) {
    ctx.save();
    ctx.translate(g.x0 + (j + 0.5) * c, g.y0 - 3);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(tokenText(tokens[j] ?? ''), 0, 0);
    ctx.restore();
  }
  return canvas;
}

function rgb(text) {
  const m = /^#([0-9a-f]{6})$/i.exec(text.trim());
  if (m) {
    const n = parseInt(m[1], 16);
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  }
  const r = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)/i.exec(text);
  return r ? [Number(r[1]), Number(r[2]), Number(r[3])] : [128, 128, 128];
}

export function createGridView(root, { tooltip, onToggleHead }) {
  const title = el('h2', 'card-title', { text: 'Attention of every head on the probe' });
  const note = el('p', 'tr-grid-note', { testid: 'grid-note' });
  const grid = el('div', 'tr-grid', { testid: 'heads-grid' });
  root.append(title, note, grid);
  let shapeKey = '';
  let cells = []; // per head: {card, canvas, caption, scores, button, layer, head, geom, data}
  let keyCards = [];
  let model = null;
  let cursor = null; // {card, i, j}

  function build(m) {
    clear(grid);
    cells = [];
    keyCards = [];
    const beside = m.keyView === 'beside';
    for (let l = 0; l < m.layers; l++) {
      const row = el('div', 'tr-grid-row', { attrs: { role: 'group', 'aria-label': `Layer ${l + 1}` } });
      row.append(el('p', 'tr-layer-label', { text: `Layer ${l + 1}` }));
      const maps = el('div', 'tr-grid-maps');
      row.append(maps);
      if (beside) {
        const canvas = el('canvas', 'tr-map', { attrs: { 'aria-hidden': 'true' } });
        const cap = el('p', 'tr-head-name', { text: 'Answer key' });
        const card = el('figure', 'tr-head is-key', { testid: `key-${l}` }, cap, canvas, el('p', 'tr-head-scores tr-key-name'));
        maps.append(card);
        keyCards.push({ card, canvas, name: card.lastChild, cache: {} });
      }
      for (let h = 0; h < m.heads; h++) {
        const canvas = el('canvas', 'tr-map', { tabIndex: 0, attrs: { role: 'img' } });
        const button = el('button', 'btn btn-quiet tr-ablate', { type: 'button', testid: `ablate-${l}-${h}` });
        button.addEventListener('click', () => onToggleHead(l, h));
        const name = el('span', 'tr-head-name', { text: headName(l, h) });
        const head = el('div', 'tr-head-top', {}, name, button);
        const scores = el('p', 'tr-head-scores', { testid: `scores-${l}-${h}` });
        const card = el('figure', 'tr-head', { testid: `head-${l}-${h}`, dataset: { layer: String(l), head: String(h) } }, head, canvas, scores);
        maps.append(card);
        const c = { card, canvas, button, scores, layer: l, head: h, geom: null, data: null, cache: {}, drawn: '', scoresKey: '' };
        wire(c);
        cells.push(c);
      }
      grid.append(row);
    }
  }

  function cellAt(c, clientX, clientY) {
    if (!c.geom || !model) return null;
    const r = c.canvas.getBoundingClientRect();
    const x = clientX - r.left - c.geom.x0;
    const y = clientY - r.top - c.geom.y0;
    const j = Math.floor(x / c.geom.cell);
    const i = Math.floor(y / c.geom.cell);
    if (i < 0 || j < 0 || i >= model.T || j >= model.T) return null;
    return { i, j };
  }

  function show(c, i, j, clientX, clientY) {
    const m = model;
    const k = i * m.T + j;
    const value = c.data[k];
    const key = m.keys.find((x) => x.name === m.keyName);
    const masked = m.causal && j > i;
    const inKey = key ? Boolean(key.data[k]) : false;
    tooltip.show(c.canvas, clientX, clientY, {
      name: `${headName(c.layer, c.head)} \u00b7 query ${i} ${quoted(m.tokens[i] ?? '')} \u2192 key ${j} ${quoted(m.tokens[j] ?? '')}`,
      value,
      provenance: `${masked ? 'hidden by the causal mask \u00b7 ' : ''}${key ? `answer key \u201c${key.name}\u201d: ${inKey ? 'yes' : 'no'} \u00b7 ` : ''}${m.live ? 'step' : 'snapshot at step'} ${m.step}`,
    });
    c.canvas.dataset.hoverValue = String(value);
  }

  function wire(c) {
    c.canvas.addEventListener('pointermove', (e) => {
      const at = cellAt(c, e.clientX, e.clientY);
      if (at) show(c, at.i, at.j, e.clientX, e.clientY);
      else tooltip.hide(c.canvas);
    });
    c.canvas.addEventListener('click', (e) => {
      const at = cellAt(c, e.clientX, e.clientY);
      if (at) show(c, at.i, at.j, e.clientX, e.clientY);
    });
    c.canvas.addEventListener('pointerleave', () => tooltip.hide(c.canvas));
    c.canvas.addEventListener('blur', () => {
      tooltip.hide(c.canvas);
      cursor = null;
    });
    c.canvas.addEventListener('keydown', (e) => {
      if (!model) return;
      const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1], Home: [0, -1e6], End: [0, 1e6] };
      if (e.key === 'Escape') {
        tooltip.hide(c.canvas);
        return;
      }
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        onToggleHead(c.layer, c.head);
        return;
      }
      const mv = moves[e.key];
      if (!mv) return;
      e.preventDefault();
      if (!cursor || cursor.card !== c) cursor = { card: c, i: 0, j: 0 };
      else {
        cursor.i = Math.max(0, Math.min(model.T - 1, cursor.i + mv[0]));
        cursor.j = Math.max(0, Math.min(model.T - 1, cursor.j + mv[1]));
      }
      const r = c.canvas.getBoundingClientRect();
      const g = c.geom;
      show(c, cursor.i, cursor.j, r.left + g.x0 + (cursor.j + 0.5) * g.cell, r.top + g.y0 + (cursor.i + 0.5) * g.cell);
    });
  }

  /** {size, cols, side}: maps per row so that none is narrower than MIN_MAP (when the width allows it);
   * side: a model of 2 or more layers shows its layers side by side when every map stays at least MIN_SIDE_MAP. */
  function mapSize(m) {
    const width = grid.clientWidth || 600;
    const n = m.heads + (m.keyView === 'beside' ? 1 : 0);
    const gap = 12;
    if (m.layers > 1) {
      const size = Math.floor((width - LAYER_GAP * (m.layers - 1) - gap * (m.layers * (n - 1))) / (m.layers * n));
      if (size >= MIN_SIDE_MAP) return { size: Math.min(size, 340), cols: n, side: true };
    }
    const fit = (cols) => Math.floor((width - gap * (cols - 1)) / cols);
    // beside: the key map belongs next to its heads, so the maps may be smaller before a row wraps
    const min = m.keyView === 'beside' ? MIN_MAP * 0.72 : MIN_MAP;
    let cols = n;
    while (cols > 1 && fit(cols) < min) cols -= 1;
    return { size: Math.max(96, Math.min(fit(cols), 340)), cols, side: false };
  }

  return {
    /** m: see the comment at the top; maps/scores in layer-major order (l·H + h). */
    update(m) {
      model = m;
      const key = `${m.layers}x${m.heads}:${m.keyView}`;
      if (key !== shapeKey) {
        shapeKey = key;
        build(m);
      }
      const { size, cols, side } = mapSize(m);
      grid.classList.toggle('is-side', side);
      grid.style.setProperty('--tr-cols', String(cols));
      grid.style.setProperty('--tr-map', `${size}px`);
      const answer = m.keys.find((x) => x.name === m.keyName) ?? null;
      note.textContent = m.live
        ? `Step ${m.step}: each map shows where every query token (row) puts its attention over the key tokens (columns) of the probe sequence.`
        : `Snapshot at step ${m.step} (scrubbed back on the timeline): the heads as they were then.`;
      const palette = { ...m.palette, textRgb: rgb(m.palette.text), emptyRgb: rgb(m.palette.empty) };
      for (const k of keyCards) {
        if (answer) drawMap(k.canvas, k.cache, { data: answer.data, T: m.T, size, tokens: m.tokens, palette, keyMap: true });
        k.name.textContent = answer ? `\u201c${answer.name}\u201d` : 'none';
      }
      const ablated = new Set(m.ablate.map(([l, h]) => `${l}-${h}`));
      for (const c of cells) {
        const idx = c.layer * m.heads + c.head;
        const data = m.maps[idx];
        if (!data) continue;
        c.data = data;
        const isAblated = ablated.has(`${c.layer}-${c.head}`);
        const drawKey = `${m.step}|${m.live}|${size}|${m.keyName}|${m.keyView}|${isAblated}|${m.palette.text}|${data.length}`;
        if (drawKey !== c.drawn || c.data !== data) {
          c.geom = drawMap(c.canvas, c.cache, { data, T: m.T, size, tokens: m.tokens, keyData: answer?.data, overlay: m.keyView === 'overlay', causal: m.causal, palette, ablated: isAblated });
          c.drawn = drawKey;
          c.canvas.dataset.digest = digest(data);
        }
        c.canvas.dataset.x0 = String(c.geom.x0);
        c.canvas.dataset.cell = String(c.geom.cell);
        c.card.classList.toggle('is-ablated', isAblated);
        c.button.textContent = isAblated ? 'Restore' : 'Ablate';
        c.button.setAttribute('aria-pressed', String(isAblated));
        c.button.setAttribute('aria-label', `${isAblated ? 'Restore' : 'Ablate'} layer ${c.layer + 1} head ${c.head + 1}`);
        if (cursor?.card === c && document.activeElement === c.canvas) {
          const r = c.canvas.getBoundingClientRect();
          show(c, cursor.i, cursor.j, r.left + c.geom.x0 + (cursor.j + 0.5) * c.geom.cell, r.top + c.geom.y0 + (cursor.i + 0.5) * c.geom.cell);
        }
        const s = m.scores[idx] ?? {};
        const held = m.heldoutScores?.find((x) => x.layer === c.layer && x.head === c.head)?.scores ?? null;
        const sk = JSON.stringify([s, held, m.keyName, m.live, isAblated]);
        if (sk === c.scoresKey) continue;
        c.scoresKey = sk;
        // one row per key, built once per set of keys; later updates only change their text
        const rowsKey = m.keys.map((k) => k.name).join('|');
        if (c.rowsKey !== rowsKey) {
          c.rowsKey = rowsKey;
          c.rows = m.keys.map((k) => {
            const value = el('span', 'tr-score-value num');
            const heldEl = el('span', 'tr-score-held num');
            const item = el('span', 'tr-score', { dataset: { key: k.name } }, el('span', 'tr-score-name', { text: k.name }), value, heldEl);
            return { name: k.name, item, value, heldEl };
          });
          c.scores.replaceChildren(...c.rows.map((r) => r.item));
        }
        for (const r of c.rows) {
          const v = s[r.name];
          r.item.classList.toggle('is-key', r.name === m.keyName);
          r.item.dataset.value = String(v);
          r.value.textContent = v == null ? '\u2014' : formatValue(v, 3);
          const hv = held && m.live ? held[r.name] : null;
          r.heldEl.hidden = hv == null;
          r.heldEl.textContent = hv == null ? '' : `held-out ${formatValue(hv, 3)}`;
          if (hv == null) delete r.heldEl.dataset.value;
          else r.heldEl.dataset.value = String(hv);
        }
        const best = answer && s[answer.name] != null ? `${answer.name} score ${formatValue(s[answer.name], 3)}` : '';
        c.canvas.setAttribute('aria-label', `Layer ${c.layer + 1} head ${c.head + 1} attention map${isAblated ? ', ablated' : ''}${best ? `, ${best}` : ''}. Arrow keys read cells; Enter ablates or restores.`);
      }
    },
  };
}
