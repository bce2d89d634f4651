// One row of numbers as horizontal bars: a label, the number, a bar. Signed
// values grow left (negative) or right (positive) from a centre line; values in
// [0, 1] grow from the left, with an optional reference tick (e.g. 1/T, the
// weight of a plain average). Every row keeps its exact value in data-value.

import { el } from '../kit/dom.js';
import { formatValue, tokenText } from '../kit/format.js';

export function createBars(parent, { caption, testid, signed = false, labelHeader = 'key', valueHeader = 'value', className = '' }) {
  const valueHeaderText = valueHeader;
  const title = el('span', 'hm-title', { text: caption });
  const shape = el('span', 'hm-shape');
  const head = el('div', 'cx-bar-row cx-bar-head', { attrs: { 'aria-hidden': 'true' } },
    el('span', 'cx-bar-label', { text: labelHeader }), el('span', 'cx-bar-num', { text: valueHeader }), el('span'));
  const list = el('div', 'cx-bar-list', { attrs: { role: 'list' } });
  const foot = el('div', 'cx-bar-foot');
  const figure = el('figure', `cx-bars${signed ? ' is-signed' : ''} ${className}`.trim(), { testid }, el('figcaption', 'hm-caption', {}, title, shape), head, list, foot);
  parent.append(figure);
  let rows = [];
  let labelsKey = null;

  function build(labels) {
    list.replaceChildren();
    rows = labels.map((text, j) => {
      const num = el('span', 'cx-bar-num num');
      const fill = el('span', 'cx-bar-fill');
      const tick = el('span', 'cx-bar-ref', { hidden: true });
      const track = el('span', 'cx-bar-track', {}, fill, tick);
      const row = el('div', 'cx-bar-row', { attrs: { role: 'listitem' }, dataset: { index: String(j) } },
        el('span', 'cx-bar-label', { text: tokenText(text) }), num, track);
      list.append(row);
      return { row, num, fill, tick };
    });
    labelsKey = labels;
  }

  return {
    element: figure,
    /**
     * {labels, values (array), range (bar scale), reference (number or null),
     *  selected (index or null), shapeText, foot: [nodes or strings], digits (significant, formatValue)}
     * The number column is as wide as the longest number shown, so none is clipped.
     */
    update({ labels, values, range, reference = null, selected = null, shapeText = '', foot: footParts = [], digits = 3, blocked = null }) {
      if (labelsKey !== labels || rows.length !== labels.length) build(labels);
      shape.textContent = shapeText;
      const r = range > 0 ? range : 1;
      let widest = Math.max(3, Array.from(valueHeaderText).length);
      rows.forEach((x, j) => {
        const v = values[j];
        const isBlocked = blocked ? blocked[j] : false;
        x.num.textContent = isBlocked ? '\u2212\u221e' : formatValue(v, digits);
        widest = Math.max(widest, x.num.textContent.length);
        x.num.title = isBlocked ? 'masked' : formatValue(v, 7);
        x.row.dataset.value = String(v);
        x.row.classList.toggle('is-selected', j === selected);
        x.row.classList.toggle('is-negative', v < 0);
        x.row.classList.toggle('is-masked', Boolean(isBlocked));
        const frac = Math.min(1, Math.abs(v) / r);
        if (signed) {
          x.fill.style.width = `${(frac * 50).toFixed(2)}%`;
          x.fill.style.left = v < 0 ? `${(50 - frac * 50).toFixed(2)}%` : '50%';
        } else {
          x.fill.style.width = `${(frac * 100).toFixed(2)}%`;
          x.fill.style.left = '0';
        }
        if (reference != null) {
          x.tick.hidden = false;
          x.tick.style.left = `${(Math.min(1, reference / r) * 100).toFixed(2)}%`;
        } else {
          x.tick.hidden = true;
        }
      });
      figure.style.setProperty('--cx-num-ch', String(widest + 1));
      foot.replaceChildren(...footParts);
    },
  };
}
