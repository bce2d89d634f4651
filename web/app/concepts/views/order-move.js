// Idea 6's second card: order and distance under each positional kind. The
// sentence moves right by filler words (a slider); the table gives the score of
// one pair in place and moved, and how much the key word's input vector changed;
// the sentences below are read from those numbers (../order-distance.js).

import { el, uniqueId } from '../../kit/dom.js';
import { formatValue } from '../../kit/format.js';
import { createNote, createTable, formatDiff } from '../common.js';
import { KIND_TEXT, MAX_SHIFT, distanceSentences } from '../order-distance.js';

export function createDistanceCard(frame, { onState }) {
  const card = frame.card('Order and distance: move the sentence, keep the pair', 'cx-distance');
  card.dataset.testid = 'order-distance';
  const intro = createNote(card);
  intro.set('Absolute positions (sinusoidal, learned) add a vector that says where a word stands. Relative ones act inside attention and see only how far apart two words are: rotary turns q and k by angles whose difference is the distance, ALiBi subtracts slope \u00d7 distance from the score. Move the whole sentence to the right and watch one pair: the last word looking at the first.');
  const slider = el('input', 'cx-range', { type: 'range', min: '0', max: String(MAX_SHIFT), step: '1', testid: 'order-move' });
  const id = uniqueId('sh');
  slider.id = id;
  const out = el('output', 'cx-range-value', { testid: 'order-move-value', attrs: { for: id } });
  const label = el('label', 'field-label', { text: 'Words put before the sentence', htmlFor: id });
  // (a row of controls: a field alone in the column card would take its 200px basis as height)
  card.append(el('div', 'cx-controls', {}, el('div', 'field cx-field is-wide', {}, label, el('div', 'cx-range-row', {}, slider, out))));
  slider.addEventListener('input', () => onState({ sh: Number(slider.value) }));
  const caption = createNote(card, 'cx-table-caption');
  const table = createTable(card, { caption: '', headers: ['positions', 'score in place', 'score moved', 'change', 'key\u2019s input X\u2032 changed by'], testid: 'order-distance-table' });
  const verdict = createNote(card, 'cx-note cx-strong-note');
  verdict.element.dataset.testid = 'order-distance-verdict';

  return {
    /** m: distanceModel(…) or null (an error is shown by the frame). */
    update(s, m) {
      if (document.activeElement !== slider) slider.value = String(s.sh);
      out.textContent = String(s.sh);
      if (!m) return;
      caption.set(`Score S\u2032 of \u201c${m.query}\u201d \u2192 \u201c${m.key}\u201d (head 1, what the softmax reads), in place and moved ${m.shift} word${m.shift === 1 ? '' : 's'} right: \u201c${m.moved}\u201d`);
      table.set(m.rows.map((r) => ({
        testid: `order-distance-${r.kind}`,
        className: r.same ? '' : 'is-current',
        cells: [
          KIND_TEXT[r.kind],
          { text: formatValue(r.at, 4), value: r.at, testid: `order-distance-at-${r.kind}` },
          { text: formatValue(r.moved, 4), value: r.moved, testid: `order-distance-moved-${r.kind}` },
          { text: r.same ? (r.change === 0 ? 'none' : `${formatDiff(r.change)} (rounding)`) : formatDiff(r.change), value: r.change, className: r.same ? 'is-zero' : 'is-nonzero' },
          { text: formatDiff(r.inputChange), value: r.inputChange, className: r.inputChange === 0 ? 'is-zero' : 'is-nonzero' },
        ],
      })));
      verdict.set(distanceSentences(m).join(' '));
    },
  };
}
