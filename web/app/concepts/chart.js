// A small SVG line chart: log-2 (d_k) or linear x axis, linear or log-10 y axis, ticks,
// axis titles, series as lines with dots, dashed reference lines, and a marker
// at the current x with the value of each series there. Colours come from CSS
// classes (concepts.css), so both themes work without redrawing.
//
//   const chart = createLineChart(parent, { title, xLabel, yLabel, yLog: true, testid });
//   chart.update({ series: [{name, className, points: [[x, y]], active}], refs, marker, xDomain });

import { el, svgEl } from '../kit/dom.js';
import { formatTick, niceStep } from '../kit/format.js';

const W = 420;
const H = 270;
const M = { left: 58, right: 16, top: 14, bottom: 46 };


export function createLineChart(parent, { title, xLabel, yLabel, yLog = false, xLog = true, testid, description }) {
  const svg = svgEl('svg', { viewBox: `0 0 ${W} ${H}`, class: 'cx-chart-svg', role: 'img', 'aria-label': `${title}. ${description ?? ''}` });
  const legend = el('ul', 'cx-legend');
  const caption = el('figcaption', 'hm-caption', {}, el('span', 'hm-title', { text: title }));
  const figure = el('figure', 'cx-chart', { testid }, caption, svg, legend);
  parent.append(figure);

  return {
    element: figure,
    /**
     * series: [{name, className, points: [[x, y]], active, dashed, noDots}]
     * refs: [{y, label, className}] horizontal reference lines
     * marker: x of the current point (or null)
     * xDomain: [min, max], yDomain: [min, max] (optional; a linear y axis starts at min(0, data))
     */
    update({ series, refs = [], marker = null, xDomain, yDomain = null }) {
      svg.replaceChildren();
      const [x0, x1] = xDomain;
      const lx = xLog ? (x) => Math.log2(x) : (x) => x;
      const px = (x) => M.left + ((lx(x) - lx(x0)) / (lx(x1) - lx(x0) || 1)) * (W - M.left - M.right);
      // y domain from the data and the references
      let lo = Infinity;
      let hi = -Infinity;
      for (const s of series) for (const [, y] of s.points) if (Number.isFinite(y) && (!yLog || y > 0)) { lo = Math.min(lo, y); hi = Math.max(hi, y); }
      for (const r of refs) { lo = Math.min(lo, r.y); hi = Math.max(hi, r.y); }
      if (yDomain) [lo, hi] = yDomain;
      let ticks;
      let py;
      if (yLog) {
        const e0 = Math.floor(Math.log10(lo));
        const e1 = Math.ceil(Math.log10(hi));
        const a = e0;
        const b = Math.max(e1, e0 + 1);
        ticks = [];
        for (let e = a; e <= b; e++) ticks.push(10 ** e);
        py = (y) => H - M.bottom - ((Math.log10(Math.max(y, 10 ** a)) - a) / (b - a)) * (H - M.top - M.bottom);
      } else {
        if (!yDomain) lo = Math.min(0, lo);
        const step = niceStep(hi - lo || 1, 5);
        lo = Math.floor(lo / step + 1e-9) * step;
        const top = Math.ceil(hi / step - 1e-9) * step;
        ticks = [];
        for (let v = lo; v <= top + step * 1e-6; v += step) ticks.push(Number(v.toPrecision(6)));
        const span = top - lo || 1;
        py = (y) => H - M.bottom - ((y - lo) / span) * (H - M.top - M.bottom);
      }

      // grid and y ticks
      const grid = svgEl('g', { class: 'cx-grid' });
      for (const t of ticks) {
        const y = py(t);
        grid.append(svgEl('line', { x1: M.left, x2: W - M.right, y1: y, y2: y }));
        grid.append(svgEl('text', { x: M.left - 7, y: y + 4, 'text-anchor': 'end', class: 'cx-tick' }, formatTick(t)));
      }
      // x ticks: powers of two on a log axis, round steps on a linear one
      const xTicks = [];
      if (xLog) for (let v = 2 ** Math.ceil(Math.log2(x0)); v <= x1; v *= 2) xTicks.push(v);
      else {
        const step = niceStep(x1 - x0 || 1, 6);
        for (let v = Math.ceil(x0 / step) * step; v <= x1 + 1e-9; v += step) xTicks.push(Number(v.toPrecision(6)));
      }
      for (const v of xTicks) {
        const x = px(v);
        grid.append(svgEl('line', { x1: x, x2: x, y1: H - M.bottom, y2: H - M.bottom + 5, class: 'cx-tickmark' }));
        grid.append(svgEl('text', { x, y: H - M.bottom + 18, 'text-anchor': 'middle', class: 'cx-tick' }, String(v)));
      }
      svg.append(grid);
      // axes
      svg.append(svgEl('line', { x1: M.left, x2: W - M.right, y1: H - M.bottom, y2: H - M.bottom, class: 'cx-axis' }));
      svg.append(svgEl('line', { x1: M.left, x2: M.left, y1: M.top, y2: H - M.bottom, class: 'cx-axis' }));
      svg.append(svgEl('text', { x: (M.left + W - M.right) / 2, y: H - 8, 'text-anchor': 'middle', class: 'cx-axis-title' }, xLabel));
      svg.append(svgEl('text', { x: 14, y: (M.top + H - M.bottom) / 2, 'text-anchor': 'middle', class: 'cx-axis-title', transform: `rotate(-90 14 ${(M.top + H - M.bottom) / 2})` }, yLabel));

      // reference lines
      for (const r of refs) {
        const y = py(r.y);
        svg.append(svgEl('line', { x1: M.left, x2: W - M.right, y1: y, y2: y, class: `cx-ref ${r.className ?? ''}` }));
        svg.append(svgEl('text', { x: M.left + 6, y: y - 5, 'text-anchor': 'start', class: 'cx-ref-label' }, r.label));
      }
      // the marker
      if (marker != null) {
        const x = px(marker);
        svg.append(svgEl('line', { x1: x, x2: x, y1: M.top, y2: H - M.bottom, class: 'cx-marker' }));
      }
      // series: inactive first, so the active one is drawn on top
      const ordered = [...series].sort((a, b) => Number(Boolean(a.active)) - Number(Boolean(b.active)));
      for (const s of ordered) {
        const g = svgEl('g', { class: `cx-series ${s.className}${s.active ? ' is-active' : ''}${s.dashed ? ' is-dashed' : ''}` });
        const pts = s.points.filter(([, y]) => Number.isFinite(y) && (!yLog || y > 0));
        g.append(svgEl('path', { d: pts.map(([x, y], k) => `${k ? 'L' : 'M'}${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' '), class: 'cx-line' }));
        if (!s.dashed && !s.noDots) for (const [x, y] of pts) g.append(svgEl('circle', { cx: px(x).toFixed(1), cy: py(y).toFixed(1), r: x === marker ? 4.5 : 2.4, class: x === marker ? 'cx-dot is-current' : 'cx-dot' }));
        svg.append(g);
      }

      legend.replaceChildren(...series.map((s) => el('li', `cx-legend-item ${s.className}${s.active ? ' is-active' : ''}${s.dashed ? ' is-dashed' : ''}`, {},
        el('span', 'cx-swatch', { attrs: { 'aria-hidden': 'true' } }), el('span', null, { text: s.name }))));
      for (const r of refs) legend.append(el('li', `cx-legend-item is-ref ${r.className ?? ''}`, {}, el('span', 'cx-swatch', { attrs: { 'aria-hidden': 'true' } }), el('span', null, { text: r.label })));
    },
  };
}
