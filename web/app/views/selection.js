// Which query token and which head the step views show.

import { el, field, setOptions, setValue } from './dom.js';
import { tokenLabel } from '../format.js';

export function createSelection(root, { onChange }) {
  const query = el('select', 'control control-query');
  const head = el('select', 'control');
  query.addEventListener('change', () => onChange({ query: Number(query.value) }));
  head.addEventListener('change', () => onChange({ head: Number(head.value) }));
  root.append(field('Query token', query), field('Head', head));
  let tokensKey = null;

  return {
    update(trace, v) {
      if (!trace) return;
      if (tokensKey !== trace.tokens) {
        tokensKey = trace.tokens;
        setOptions(query, trace.tokens.map((t, i) => ({ value: i, text: `${i}: ${tokenLabel(t.text, 20)}` })));
      }
      setOptions(head, trace.heads.map((_, h) => ({ value: h, text: `${h + 1} of ${trace.heads.length}` })));
      setValue(query, v.q);
      setValue(head, v.head);
    },
  };
}
