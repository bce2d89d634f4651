// Which query token, which head and (for a trained model) which layer the
// step views show.

import { el, field, setOptions, setValue } from './dom.js';
import { tokenLabel } from '../format.js';

export function createSelection(root, { onChange }) {
  const query = el('select', 'control control-query');
  const head = el('select', 'control');
  const layer = el('select', 'control');
  query.addEventListener('change', () => onChange({ query: Number(query.value) }));
  head.addEventListener('change', () => onChange({ head: Number(head.value) }));
  layer.addEventListener('change', () => onChange({ layer: Number(layer.value) }));
  const layerField = field('Layer', layer);
  layerField.hidden = true;
  root.append(field('Query token', query), field('Head', head), layerField);
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
      const m = trace.model;
      layerField.hidden = !m || layerField.dataset.hostHidden === '1';
      if (m) {
        setOptions(layer, Array.from({ length: m.layers }, (_, l) => ({ value: l, text: `${l + 1} of ${m.layers}` })));
        setValue(layer, m.layer);
      }
    },
  };
}
