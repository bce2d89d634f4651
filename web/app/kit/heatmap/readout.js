// The selected row in the DOM: a visually hidden list, one item per cell with
// its exact value in data-value, for screen readers and tests. The text reads
// like the tooltip: the whole token and formatValue(v, DIGITS.exact).

import { el } from '../dom.js';
import { formatValue, tokenText, DIGITS } from '../format.js';
import { createDeps } from './memo.js';

const MAX_ITEMS = 2048;

export function createReadout(id) {
  const element = el('ol', 'sr-only hm-readout', { testid: `row-${id}` });
  const deps = createDeps();
  return {
    element,
    update(m) {
      const row = m.selRow;
      if (!deps.changed([m.matrix, m.mask, row, m.reveal?.row, m.reveal?.count])) return;
      if (row == null || row >= m.matrix.rows) {
        element.replaceChildren();
        return;
      }
      const { cols, data } = m.matrix;
      let n = Math.min(cols, MAX_ITEMS);
      if (m.reveal && m.reveal.row === row) n = Math.min(n, Math.max(0, m.reveal.count));
      // reuse the list items: only their text and data change
      while (element.children.length > n) element.lastChild.remove();
      while (element.children.length < n) element.append(document.createElement('li'));
      const items = element.children;
      for (let j = 0; j < n; j++) {
        const blocked = m.mask && !m.mask[row * cols + j];
        const v = blocked ? -Infinity : data[row * cols + j];
        const colName = m.colLabels ? tokenText(m.colLabels[j]) : `dimension ${j}`;
        const li = items[j];
        li.textContent = `${colName}: ${formatValue(v, DIGITS.exact)}`;
        li.dataset.testid = `cell-${id}-${row}-${j}`;
        li.dataset.value = String(v);
      }
      element.setAttribute('aria-label', `${m.title}, row ${row}`);
    },
  };
}
