// The heatmap's legend: the colour ramp with the values at its ends.

import { el } from '../dom.js';
import { formatCell } from '../../format.js';
import { lutOf } from './colors.js';

export function createLegend() {
  const lo = el('span', 'hm-legend-text');
  const bar = el('span', 'hm-legend-bar');
  const hi = el('span', 'hm-legend-text');
  const element = el('span', 'hm-legend', { attrs: { 'aria-hidden': 'true' } }, lo, bar, hi);
  return {
    element,
    /** m: the model; range: the value range the colours span. */
    update(m, range) {
      const pal = m.palette;
      if (m.kind === 'mask') {
        lo.textContent = '0 = blocked';
        hi.textContent = '1 = allowed';
        bar.style.background = `linear-gradient(90deg, rgb(${pal.maskedRgb.join(',')}) 0 50%, rgb(${pal.allowRgb.join(',')}) 50% 100%)`;
        return;
      }
      const { lut } = lutOf(m);
      const stops = [];
      for (let k = 0; k <= 8; k++) {
        const o = Math.round((k / 8) * 255) * 3;
        stops.push(`rgb(${lut[o]},${lut[o + 1]},${lut[o + 2]})`);
      }
      bar.style.background = `linear-gradient(90deg, ${stops.join(', ')})`;
      lo.textContent = m.kind === 'sequential' ? '0' : formatCell(-range);
      hi.textContent = formatCell(range);
    },
  };
}
