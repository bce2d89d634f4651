// The "Notation" legend, as every page shows it (playground, concept lab,
// training lab): NOTATION of ../notation.js, the one list, collapsed until opened.

import { el } from './dom.js';
import { NOTATION } from './notation.js';

export function createNotation() {
  const list = el('dl', 'notation-list');
  for (const [symbol, meaning] of NOTATION) list.append(el('dt', null, { text: symbol }), el('dd', null, { text: meaning }));
  return el('details', 'notation', { testid: 'notation' }, el('summary', null, { text: 'Notation' }), list);
}
