// The cell inspector: a small floating card with a cell's exact value and
// where it came from. One per playground, shared by every heatmap.

import { el } from './dom.js';
import { formatValue, DIGITS } from './format.js';

export function createTooltip(parent) {
  const name = el('div', 'tip-name');
  const value = el('div', 'tip-value', { testid: 'tooltip-value' });
  const prov = el('div', 'tip-prov');
  const box = el('div', 'tip', { testid: 'tooltip', hidden: true, attrs: { role: 'tooltip' } }, name, value, prov);
  parent.append(box);
  let owner = null;

  /**
   * Beside the point (x, y); with `avoid` (the box of the cells a tap explains) below
   * or above that box instead, so the card covers none of its rows, and else at the
   * window's edge farther from the point.
   */
  function place(x, y, avoid) {
    const win = box.ownerDocument.defaultView;
    const vw = win.innerWidth;
    const vh = win.innerHeight;
    const w = box.offsetWidth;
    const h = box.offsetHeight;
    let left = x + 14;
    let top = y + 16;
    if (left + w > vw - 8) left = Math.max(8, x - w - 14);
    if (top + h > vh - 8) top = Math.max(8, y - h - 12);
    if (avoid) {
      left = Math.max(8, Math.min(vw - w - 8, x - w / 2));
      if (avoid.bottom + 8 + h <= vh - 8) top = avoid.bottom + 8;
      else if (avoid.top - 8 - h >= 8) top = avoid.top - 8 - h;
      else top = y > vh / 2 ? 8 : vh - h - 8;
    }
    box.style.left = `${Math.round(left)}px`;
    box.style.top = `${Math.round(top)}px`;
  }

  return {
    /** info: {name, value (number), provenance}; x, y: viewport coordinates; avoid: a box to keep clear of (a tap's matrix) */
    show(source, x, y, info, { avoid = null } = {}) {
      owner = source;
      name.textContent = info.name;
      value.textContent = formatValue(info.value, DIGITS.exact); // 7 digits: a float32's full precision
      value.dataset.value = String(info.value);
      prov.textContent = info.provenance ?? '';
      prov.hidden = !info.provenance;
      box.hidden = false;
      place(x, y, avoid);
    },
    hide(source) {
      if (source && source !== owner) return;
      owner = null;
      box.hidden = true;
    },
    get element() {
      return box;
    },
  };
}
