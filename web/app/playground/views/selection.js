// Which query token, which head and (for a trained model) which layer the
// step views show.

import { el, field, setOptions, setValue } from '../../kit/dom.js';
import { tokenLabel, excerpt } from '../../kit/format.js';

export function createSelection(root, { onChange }) {
  const query = el('select', 'control control-query');
  const head = el('select', 'control');
  const layer = el('select', 'control');
  query.addEventListener('change', () => onChange({ query: Number(query.value) }));
  head.addEventListener('change', () => onChange({ head: Number(head.value) }));
  layer.addEventListener('change', () => onChange({ layer: Number(layer.value) }));
  const layerField = field('Layer', layer);
  layerField.hidden = true;
  // a [PAD] query in batch mode: said, never silent
  const padNote = el('p', 'selection-note', { testid: 'pad-note', hidden: true, attrs: { role: 'status' } });
  root.append(field('Query token', query), field('Head', head), layerField, padNote);
  let tokensKey = null;

  function showPadNote(trace, v) {
    const real = trace.realTokens ?? trace.tokens.length;
    const sentence = `\u201c${excerpt(trace.sentence ?? '', 40)}\u201d`;
    let text = '';
    if (v.q >= real) {
      text = `Query ${v.q} is [PAD]: padding that makes ${sentence} as long as the longest sentence of the batch. Its row is computed like any other (a padding mask hides [PAD] keys, not queries), but nothing reads it: a model ignores what comes out at [PAD] positions.`;
    } else if (v.queryMoved && v.queryMoved.to === v.q) {
      text = `The query moved from ${v.queryMoved.from}, a [PAD] token in this sentence, to ${v.q} \u201c${tokenLabel(trace.tokens[v.q].text, 20)}\u201d, the last real token of ${sentence}.`;
    }
    padNote.hidden = text === '';
    padNote.textContent = text;
  }

  return {
    update(trace, v) {
      if (!trace) return;
      showPadNote(trace, v);
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
