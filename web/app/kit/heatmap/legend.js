// The heatmap's legend: the colour ramp with the values at its ends, the
// colour scale in use (for weight maps, with a toggle auto / 0–1 / row max,
// view-local state), and the grey of masked cells when there are any.

import { el } from '../dom.js';
import { formatValue } from '../format.js';
import { lutOf, SCALES, SCALE_NAMES } from './colors.js';

const LEGEND_DIGITS = 3;

/** The words that name a resolved scale: "row max (auto: rows nearly uniform)". */
export function scaleText(scale) {
  if (scale.kind === 'range') return '';
  const name = scale.kind === 'row' ? 'scale: row max (each row\u2019s largest weight is darkest)' : 'scale: 0\u20131';
  if (!scale.auto) return name;
  return scale.kind === 'row'
    ? `${name}; auto: rows nearly uniform, typical max ${formatValue(scale.typical, 3)}`
    : `${name} (auto)`;
}

/** onScale(choice): the reader picked a scale (one of SCALES). */
export function createLegend({ id, onScale }) {
  const lo = el('span', 'hm-legend-text');
  const bar = el('span', 'hm-legend-bar', { attrs: { 'aria-hidden': 'true' } });
  const hi = el('span', 'hm-legend-text');
  const ramp = el('span', 'hm-legend-ramp', {}, lo, bar, hi);
  const name = el('span', 'hm-scale-name', { testid: `scale-${id}` });
  const buttons = SCALES.map((s) => {
    const b = el('button', 'hm-scale-btn', { type: 'button', text: SCALE_NAMES[s], dataset: { scale: s }, attrs: { 'aria-pressed': 'false' } });
    b.addEventListener('click', () => onScale(s));
    return b;
  });
  const toggle = el('span', 'hm-scale-toggle', { hidden: true, attrs: { role: 'group', 'aria-label': 'Colour scale' } }, ...buttons);
  const swatch = el('span', 'hm-masked-swatch', { attrs: { 'aria-hidden': 'true' } });
  const maskedText = el('span', 'hm-legend-text');
  const masked = el('span', 'hm-legend-masked', { hidden: true, testid: `masked-legend-${id}` }, swatch, maskedText);
  const element = el('span', 'hm-legend', {}, ramp, masked, name, toggle);
  return {
    element,
    /** m: the model; scale: resolveScale's result; blocked: whether any cell is masked. */
    update(m, scale, blocked) {
      const pal = m.palette;
      if (m.kind === 'mask') {
        lo.textContent = '0 = blocked';
        hi.textContent = '1 = allowed';
        bar.style.background = `linear-gradient(90deg, rgb(${pal.maskedRgb.join(',')}) 0 50%, rgb(${pal.allowRgb.join(',')}) 50% 100%)`;
        name.textContent = '';
        toggle.hidden = true;
        masked.hidden = true;
        return;
      }
      const { lut } = lutOf(m);
      const stops = [];
      for (let k = 0; k <= 8; k++) {
        const o = Math.round((k / 8) * 255) * 3;
        stops.push(`rgb(${lut[o]},${lut[o + 1]},${lut[o + 2]})`);
      }
      bar.style.background = `linear-gradient(90deg, ${stops.join(', ')})`;
      if (scale.kind === 'row') {
        lo.textContent = '0';
        hi.textContent = 'row max';
      } else {
        lo.textContent = m.kind === 'sequential' ? '0' : formatValue(-scale.range, LEGEND_DIGITS);
        hi.textContent = formatValue(scale.range, LEGEND_DIGITS);
      }
      name.textContent = scaleText(scale);
      name.dataset.scale = scale.kind;
      name.dataset.choice = scale.choice;
      toggle.hidden = scale.kind === 'range';
      for (const b of buttons) b.setAttribute('aria-pressed', b.dataset.scale === scale.choice ? 'true' : 'false');
      masked.hidden = !blocked;
      maskedText.textContent = m.mask ? 'masked (\u2212\u221e)' : 'masked (exactly 0)';
      swatch.style.backgroundColor = pal.masked;
    },
  };
}
