// A small SVG line chart for the training curves and the timeline: a linear x
// axis (steps, 0 to a round number above the last step), a linear or log-10 y
// axis, one path per series, a marker line at a chosen step. Colours come from
// CSS classes (train.css), so both themes work.
//
// Updates are cheap, because they come several times a second while training:
// the axes are rebuilt only when their ticks change (the x axis grows in round
// steps), and each series is one <path> whose d attribute is replaced.
//
//   const chart = createChart(parent, { title, yLabel, testid });
//   chart.update({ series: [{name, className, points: [[x, y]], dashed}], xMax, log, yDomain, marker });

import { el, svgEl } from '../kit/dom.js';
import { formatTick, niceStep } from '../kit/format.js';

const M = { left: 46, right: 12, top: 10, bottom: 34 };


/** The smallest of 1, 1.5, 2, 3, 4, 5, 6, 8, 10 × 10^k at or above x. */
export function niceCeil(x) {
  const p = 10 ** Math.floor(Math.log10(Math.max(x, 1e-9)));
  for (const m of [1, 1.5, 2, 3, 4, 5, 6, 8, 10]) if (m * p >= x - 1e-9) return m * p;
  return 10 * p;
}

export function createChart(parent, { title, yLabel, testid, description = '', width: maxW = 440, height: H = 210 }) {
  // one SVG unit is one CSS pixel up to maxW (so the text keeps its size on a phone), then the chart scales
  let W = maxW;
  const svg = svgEl('svg', { viewBox: `0 0 ${W} ${H}`, class: 'tr-chart-svg', role: 'img', 'aria-label': `${title}. ${description}` });
  const axes = svgEl('g', { class: 'tr-axes' });
  const lines = svgEl('g', { class: 'tr-lines' });
  const marker = svgEl('line', { class: 'tr-marker', y1: M.top, y2: H - M.bottom });
  svg.append(axes, marker, lines);
  const legend = el('ul', 'tr-legend');
  const head = el('figcaption', 'tr-chart-title', { text: title });
  const figure = el('figure', 'tr-chart', { testid }, head, svg, legend);
  parent.append(figure);
  let legendKey = '';
  let axisKey = '';
  const paths = new Map(); // series name → <path>

  function drawAxes(xTicks, yTicks, px, py, log) {
    axes.replaceChildren();
    for (const t of yTicks) {
      const y = py(t);
      axes.append(svgEl('line', { x1: M.left, x2: W - M.right, y1: y, y2: y, class: 'tr-gridline' }));
      axes.append(svgEl('text', { x: M.left - 6, y: y + 4, 'text-anchor': 'end', class: 'tr-tick' }, formatTick(t)));
    }
    for (const v of xTicks) {
      const x = px(v);
      axes.append(svgEl('line', { x1: x, x2: x, y1: H - M.bottom, y2: H - M.bottom + 4, class: 'tr-tickmark' }));
      axes.append(svgEl('text', { x, y: H - M.bottom + 16, 'text-anchor': 'middle', class: 'tr-tick' }, formatTick(v)));
    }
    axes.append(svgEl('line', { x1: M.left, x2: W - M.right, y1: H - M.bottom, y2: H - M.bottom, class: 'tr-axis' }));
    axes.append(svgEl('line', { x1: M.left, x2: M.left, y1: M.top, y2: H - M.bottom, class: 'tr-axis' }));
    axes.append(svgEl('text', { x: (M.left + W - M.right) / 2, y: H - 4, 'text-anchor': 'middle', class: 'tr-axis-title' }, 'step'));
    const my = (M.top + H - M.bottom) / 2;
    axes.append(svgEl('text', { x: 12, y: my, 'text-anchor': 'middle', class: 'tr-axis-title', transform: `rotate(-90 12 ${my})` }, yLabel + (log ? ' (log)' : '')));
  }

  return {
    element: figure,
    update({ series, xMax, log = false, yDomain = null, marker: at = null }) {
      const fit = Math.round(Math.max(280, Math.min(maxW, figure.clientWidth || maxW)));
      if (fit !== W) {
        W = fit;
        svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
        axisKey = '';
      }
      const x1 = niceCeil(Math.max(10, xMax));
      const px = (x) => M.left + (x / x1) * (W - M.left - M.right);
      let lo = Infinity;
      let hi = -Infinity;
      if (yDomain) [lo, hi] = yDomain;
      else for (const s of series) for (const [, y] of s.points) if (Number.isFinite(y) && (!log || y > 0)) { lo = Math.min(lo, y); hi = Math.max(hi, y); }
      if (!Number.isFinite(lo)) { lo = log ? 0.01 : 0; hi = 1; }
      const yTicks = [];
      let py;
      if (log) {
        const a = Math.floor(Math.log10(lo));
        const b = Math.max(Math.ceil(Math.log10(hi)), a + 1);
        for (let e = a; e <= b; e++) yTicks.push(10 ** e);
        py = (y) => H - M.bottom - ((Math.log10(Math.max(y, 10 ** a)) - a) / (b - a)) * (H - M.top - M.bottom);
      } else {
        if (!yDomain) lo = Math.min(0, lo);
        const step = niceStep(hi - lo || 1, 4);
        lo = Math.floor(lo / step + 1e-9) * step;
        const top = Math.max(lo + step, Math.ceil(hi / step - 1e-9) * step);
        for (let v = lo; v <= top + step * 1e-6; v += step) yTicks.push(Number(v.toPrecision(6)));
        py = (y) => H - M.bottom - ((y - lo) / (top - lo)) * (H - M.top - M.bottom);
      }
      const xTicks = [];
      const xs = niceStep(x1, 5);
      for (let v = 0; v <= x1 + 1e-9; v += xs) xTicks.push(Number(v.toPrecision(6)));
      const key = JSON.stringify([xTicks, yTicks, log, W]);
      if (key !== axisKey) {
        axisKey = key;
        drawAxes(xTicks, yTicks, px, py, log);
      }
      if (at != null) {
        const x = px(Math.min(at, x1)).toFixed(1);
        marker.setAttribute('x1', x);
        marker.setAttribute('x2', x);
        marker.removeAttribute('visibility');
      } else marker.setAttribute('visibility', 'hidden');
      const seen = new Set();
      for (const s of series) {
        seen.add(s.name);
        let path = paths.get(s.name);
        if (!path) {
          path = svgEl('path', { class: `tr-line ${s.className}${s.dashed ? ' is-dashed' : ''}` });
          paths.set(s.name, path);
          lines.append(path);
        }
        let d = '';
        let k = 0;
        for (const [x, y] of s.points) {
          if (!Number.isFinite(y) || (log && y <= 0) || x > x1) continue;
          d += `${k++ ? 'L' : 'M'}${px(x).toFixed(1)},${py(y).toFixed(1)}`;
        }
        path.setAttribute('d', d || 'M0,0');
        path.setAttribute('visibility', d ? 'visible' : 'hidden');
      }
      for (const [name, path] of paths) {
        if (!seen.has(name)) {
          path.remove();
          paths.delete(name);
        }
      }
      const lk = series.map((s) => `${s.name}|${s.className}|${s.dashed}`).join(';');
      if (lk !== legendKey) {
        legendKey = lk;
        legend.replaceChildren(...series.map((s) => el('li', `tr-legend-item ${s.className}${s.dashed ? ' is-dashed' : ''}`, {},
          el('span', 'tr-swatch', { attrs: { 'aria-hidden': 'true' } }), el('span', null, { text: s.name }))));
      }
    },
  };
}
