// Step 4b (models with rotary positions only: Llama, Qwen, SmolLM, or random weights with
// positional = rope): RoPE turns each query and key by its position before Q·Kᵀ.
// Dimension i of a head is paired with i + D/2 (Hugging Face's rotate_half layout) and the
// pair (a, b) at position m becomes (a·cos mθᵢ − b·sin mθᵢ, b·cos mθᵢ + a·sin mθᵢ).
//
// The view draws, for the selected query m and key n, every pair as a 2-D arrow before and
// after its turn, and shows the property RoPE is for: the score q′·k′ depends on m − n only.
// Those scores at other positions are computed here, in JavaScript, by turning the trace's own
// pre-RoPE q and k with the trace's θᵢ (the engine never placed these tokens there); the
// first row, the tokens where they stand, is checked against the engine's own score.

import { createStepFrame, tok, at, row, clampIndex } from '../../kit/common.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { el, svgEl } from '../../kit/dom.js';
import { formatValue } from '../../kit/format.js';
import { headSup, figureTitle } from '../../kit/notation.js';

/** θᵢ of the trace (a pretrained model's or random weights'), as a plain array, or null. */
export function ropeFrequencies(tr) {
  const f = tr.rope?.frequencies ?? tr.ropeFrequencies ?? null;
  if (!f) return null;
  return Array.from(f.data ?? f);
}

/** x (D numbers) turned as at position m: pair (i, i + D/2) by m·θᵢ (rotate_half). */
export function rotate(x, m, theta) {
  const half = x.length / 2;
  const out = new Array(x.length);
  for (let i = 0; i < half; i++) {
    const a = m * theta[i];
    const c = Math.cos(a);
    const s = Math.sin(a);
    out[i] = x[i] * c - x[i + half] * s;
    out[i + half] = x[i + half] * c + x[i] * s;
  }
  return out;
}

/** q at position m and k at position n, turned, then their dot product (the unscaled score). */
export function ropeScore(q, k, m, n, theta) {
  const a = rotate(q, m, theta);
  const b = rotate(k, n, theta);
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

const deg = (rad) => `${formatValue((rad * 180) / Math.PI, 3)}\u00b0`;
const ARROW = 34; // the longest arrow of a tile, px

export function createRopeStep(root, ctx) {
  const f = createStepFrame(root, 'rope');
  let trace = null;
  let head = 0;
  let shift = 3; // the relative-position demo: how far both tokens are moved
  const select = (i, j) => ctx.select({ query: i, dim: j });

  const none = el('p', 'model-note', { testid: 'rope-none', attrs: { role: 'note' } });
  f.root.insertBefore(none, f.figures);

  // every (i, i + D/2) pair of q (at m) and k (at n), before and after the turn
  const pairsRow = f.row('rope-pairs-row');
  const pairsTitle = el('h3', 'figure-title');
  const tiles = el('div', 'rope-tiles', { testid: 'rope-pairs' });
  const legend = el('p', 'rope-legend');
  pairsRow.append(el('div', 'figure rope-figure', {}, pairsTitle, legend, tiles));

  // the relative-position property, live
  const relRow = f.row('rope-rel-row');
  const relTitle = el('h3', 'figure-title', { text: 'Same distance, same score' });
  const slider = el('input', 'rope-shift', { type: 'range', min: '0', max: '64', step: '1', value: String(shift), testid: 'rope-shift' });
  const sliderLabel = el('label', 'field field-inline', {}, el('span', null, { text: 'Move both tokens by ' }), slider, el('output', 'rope-shift-value', { testid: 'rope-shift-value' }));
  const table = el('table', 'rope-table', { testid: 'rope-table' });
  const relNote = el('p', 'rope-note', { testid: 'rope-note' });
  relRow.append(el('div', 'figure rope-figure', {}, relTitle, sliderLabel, table, relNote));
  slider.addEventListener('input', () => {
    shift = Number(slider.value);
    if (trace) drawRelative(trace, last);
  });

  // Q after RoPE: the map the next step multiplies
  const mapRow = f.row();
  const hmQ = createHeatmap(mapRow, {
    id: 'rope-q', share: 0.48, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: select,
    describe: (i, j) => ({ name: `Q${headSup(head + 1)}[${i}, ${j}] after RoPE  ${tok(trace, i)}`, provenance: `pair ${j % (trace.config.dHead / 2)} turned by ${i}\u00b7\u03b8` }),
  });
  const hmK = createHeatmap(mapRow, {
    id: 'rope-k', share: 0.48, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: (i, j) => ctx.select({ key: i, dim: j }),
    describe: (i, j) => ({ name: `K${headSup(head + 1)}[${i}, ${j}] after RoPE  ${tok(trace, i)}`, provenance: `pair ${j % (trace.config.dHead / 2)} turned by ${i}\u00b7\u03b8` }),
  });

  let last = null;

  function tile(i, half, qa, qb, ka, kb, m, n, theta, selected) {
    const size = 96;
    const c = size / 2;
    const len = Math.max(1e-12, Math.hypot(qa[0], qa[1]), Math.hypot(ka[0], ka[1]));
    const svg = svgEl('svg', { viewBox: `0 0 ${size} ${size}`, width: size, height: size, role: 'img', 'aria-label': `pair ${i} and ${i + half}: the query turned by ${deg(m * theta)}, the key by ${deg(n * theta)}` });
    svg.append(svgEl('circle', { cx: c, cy: c, r: ARROW, class: 'rope-circle' }));
    svg.append(svgEl('line', { x1: c - ARROW - 6, y1: c, x2: c + ARROW + 6, y2: c, class: 'rope-axis' }));
    svg.append(svgEl('line', { x1: c, y1: c - ARROW - 6, x2: c, y2: c + ARROW + 6, class: 'rope-axis' }));
    const arrow = (v, cls) => {
      const x = c + (v[0] / len) * ARROW;
      const y = c - (v[1] / len) * ARROW; // up is +b
      svg.append(svgEl('line', { x1: c, y1: c, x2: x, y2: y, class: cls }));
      svg.append(svgEl('circle', { cx: x, cy: y, r: 2.6, class: `${cls} rope-tip` }));
    };
    arrow(qb, 'rope-q rope-before');
    arrow(kb, 'rope-k rope-before');
    arrow(qa, 'rope-q');
    arrow(ka, 'rope-k');
    const box = el('button', `rope-tile${selected ? ' is-selected' : ''}`, { type: 'button', dataset: { pair: String(i) }, title: `Select dimension ${i}` }, svg,
      el('span', 'rope-tile-text', { text: `pair ${i}, ${i + half}` }),
      el('span', 'rope-tile-text', { text: `\u03b8 = ${formatValue(theta, 3)}` }),
      el('span', 'rope-tile-text', { text: `q: ${deg(m * theta)}` }),
      el('span', 'rope-tile-text', { text: `k: ${deg(n * theta)}` }));
    box.addEventListener('click', () => ctx.select({ dim: i }));
    return box;
  }

  function drawRelative(tr, v) {
    const theta = ropeFrequencies(tr);
    const h = tr.heads[v.head];
    const m = v.q;
    const n = v.k;
    const q = row(h.queryBeforeRope, m);
    const k = row(h.keyBeforeRope, n);
    const context = tr.model?.context ?? 512;
    const room = Math.max(0, context - 2 - Math.max(m, n));
    slider.max = String(Math.min(room, 4096));
    if (shift > room) shift = room;
    slider.value = String(shift);
    sliderLabel.querySelector('output').textContent = ` ${shift} position${shift === 1 ? '' : 's'}`;
    const engine = at(h.scores, m, n);
    const here = ropeScore(q, k, m, n, theta);
    const moved = ropeScore(q, k, m + shift, n + shift, theta);
    const closer = ropeScore(q, k, m + shift, n + shift + 1, theta);
    const farther = ropeScore(q, k, m + shift + 1, n + shift, theta);
    const rows = [
      ['where they stand', m, n, here],
      [`both moved by ${shift}`, m + shift, n + shift, moved],
      ['key one closer', m + shift, n + shift + 1, closer],
      ['key one farther', m + shift + 1, n + shift, farther],
    ];
    const headRow = el('tr', null, {}, ...['', 'query at', 'key at', 'distance', 'score q\u2032\u00b7k\u2032'].map((t) => el('th', null, { text: t })));
    const body = rows.map(([what, a, b, s], r) => el('tr', r === 1 ? 'is-same' : null, { dataset: { row: String(r) } },
      el('th', null, { text: what, attrs: { scope: 'row' } }),
      el('td', null, { text: String(a) }),
      el('td', null, { text: String(b) }),
      el('td', null, { text: String(a - b) }),
      el('td', 'num', { text: formatValue(s, 5), dataset: { value: String(s) } })));
    table.replaceChildren(el('thead', null, {}, headRow), el('tbody', null, {}, ...body));
    const diff = Math.abs(moved - here);
    relNote.textContent = `${tok(tr, m)} at ${m} and ${tok(tr, n)} at ${n} score ${formatValue(here, 5)}; moved together to ${m + shift} and ${n + shift}, still ${m - n} apart, they score ${formatValue(moved, 5)} (a difference of ${diff.toExponential(1)}: float rounding). One position closer or farther changes the distance, and the score: ${formatValue(closer, 5)}, ${formatValue(farther, 5)}. Each turn is by the position times \u03b8\u1d62, so q\u2032\u00b7k\u2032 only sees the difference of the angles, (m \u2212 n)\u00b7\u03b8\u1d62. These rows are computed here in JavaScript: the model\u2019s own q and k before RoPE, turned with its \u03b8\u1d62; the first agrees with the engine\u2019s own score S[${m}, ${n}] = ${formatValue(engine, 5)}.`;
  }

  return {
    update(tr, v) {
      trace = tr;
      head = v.head;
      last = v;
      const theta = ropeFrequencies(tr);
      const h = tr.heads[v.head];
      const has = Boolean(theta && h.queryBeforeRope && h.keyBeforeRope);
      none.hidden = has;
      f.figures.hidden = !has;
      f.root.querySelector('.formula-wrap').hidden = !has;
      if (!has) {
        none.textContent = `This model has no rotary positions (its positions are ${tr.config.positional}): nothing turns Q and K here. Models such as Llama, Qwen and SmolLM have this step.`;
        f.explain('RoPE (rotary position embedding) turns each query and key by an angle that grows with its position, instead of adding a position vector to the input.');
        f.formula.set([]);
        return;
      }
      const D = v.D;
      const half = D / 2;
      const m = v.q;
      const n = v.k;
      const d = clampIndex(v.d, D);
      const i = d % half;
      // random weights' trace gives θᵢ only: its base from θ₁ = base^(−2/D)
      const base = tr.rope?.base ?? (half > 1 ? Math.round(theta[1] ** (-D / 2)) : null);
      const scaled = tr.rope?.scaling && tr.rope.scaling !== 'none';
      f.explain(
        `RoPE gives Q and K their positions by turning them. The ${D} numbers of a head are taken in ${half} pairs (i, i + ${half}); at position m each pair is turned by the angle m\u00b7\u03b8\u1d62. The first pairs turn fast (\u03b8\u2080 = ${formatValue(theta[0], 3)} rad per position), the last ones slowly (\u03b8${half - 1 < 10 ? String.fromCharCode(0x2080 + half - 1) : `_${half - 1}`} = ${formatValue(theta[half - 1], 3)}).`,
        `No position vector is added to the input (step 2 is zero for this model), and V is not turned. Because both q and k turn, their dot product depends only on how far apart the two tokens are: see the table below.${scaled ? ` This model rescales the slow frequencies (Llama 3\u2019s \u201cllama3\u201d rule), so \u03b8\u1d62 is not exactly base^(\u22122i/D).` : ''}`,
      );
      const qb = row(h.queryBeforeRope, m);
      const kb = row(h.keyBeforeRope, n);
      const qa = row(h.query, m);
      const ka = row(h.key, n);
      const a = m * theta[i];
      f.formula.set([
        [`\u03b8${i < 10 ? String.fromCharCode(0x2080 + i) : `_${i}`} = ${scaled ? '(llama3-scaled) ' : ''}${base ? `${Number.isInteger(base) ? String(base) : formatValue(base, 6)}^(\u22122\u00b7${i}/${D}) = ` : ''}`, { n: theta[i] }, `;  angle at m = ${m}: ${m}\u00b7\u03b8 = `, { n: a }, ` rad = ${deg(a)}`],
        [`q\u2032[${m}, ${i}] = q[${m}, ${i}]\u00b7cos ${m}\u03b8 \u2212 q[${m}, ${i + half}]\u00b7sin ${m}\u03b8 = `, { n: qb[i] }, '\u00b7', { f: Math.cos(a) }, ' \u2212 ', { f: qb[i + half] }, '\u00b7', { f: Math.sin(a) }, ' = ', { result: qa[i], testid: 'formula-result' }],
        [`q\u2032[${m}, ${i + half}] = q[${m}, ${i + half}]\u00b7cos ${m}\u03b8 + q[${m}, ${i}]\u00b7sin ${m}\u03b8 = `, { n: qb[i + half] }, '\u00b7', { f: Math.cos(a) }, ' + ', { f: qb[i] }, '\u00b7', { f: Math.sin(a) }, ' = ', { result: qa[i + half] }],
        { caption: `The key ${tok(tr, n)} at n = ${n} turns the same way by ${n}\u00b7\u03b8 = ${deg(n * theta[i])}. q and k are head ${v.head + 1}\u2019s, before and after the turn, as the engine computed them.` },
      ]);
      pairsTitle.textContent = `Query ${tok(tr, m)} (m = ${m}) and key ${tok(tr, n)} (n = ${n}), head ${v.head + 1}: each pair before and after its turn`;
      legend.replaceChildren(
        el('span', 'rope-key-q', { text: '\u2014 query' }), ' ',
        el('span', 'rope-key-k', { text: '\u2014 key' }), ' ',
        el('span', 'muted', { text: 'faint: before RoPE; solid: after. Each tile is scaled to its own longest arrow.' }),
      );
      const list = [];
      for (let p = 0; p < half; p++) list.push(tile(p, half, [qa[p], qa[p + half]], [qb[p], qb[p + half]], [ka[p], ka[p + half]], [kb[p], kb[p + half]], m, n, theta[p], p === i));
      tiles.replaceChildren(...list);
      drawRelative(tr, v);
      const common = { colLabels: null, kind: 'diverging', palette: v.palette, showCol: false };
      hmQ.update({ ...common, matrix: h.query, rowLabels: v.labels, selRow: m, selCol: d, title: figureTitle('rope', tr, v.head) });
      hmK.update({ ...common, matrix: h.key, rowLabels: v.labels, selRow: n, selCol: d, title: `Keys K${headSup(v.head + 1)} after RoPE` });
    },
  };
}
