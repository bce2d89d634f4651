// The probe's predictions: for every position with a target, the input token,
// the target and the model's prediction, marked correct (✓) or wrong (✗) by
// a glyph as well as a colour (colour-blind safe). With heads ablated, a second
// line shows the predictions without them.
//
//   const view = createPredictionsView(root);
//   view.update({ tokens, targets, predictions, correct, ablated: {predictions, correct} | null, vocabulary });
//
// The list is built once per probe; updates while training only change texts and classes.

import { el, clear } from '../kit/dom.js';
import { tokenText } from '../kit/format.js';

export function createPredictionsView(root) {
  const title = el('h2', 'card-title', { text: 'Predictions on the probe' });
  const summary = el('p', 'tr-pred-summary', { testid: 'pred-summary' });
  const list = el('ol', 'tr-preds', { testid: 'predictions' });
  root.append(title, summary, list);
  let shapeKey = '';
  let items = [];
  let key = '';

  function build(tokens, targets) {
    clear(list);
    items = tokens.map((tok, i) => {
      const li = el('li', 'tr-pred', { dataset: { position: String(i) } });
      li.append(el('span', 'tr-pred-in', { text: tokenText(tok), attrs: { title: `input ${i}: ${tok}` } }));
      const out = el('span', 'tr-pred-out');
      const want = el('span', 'tr-pred-want', { hidden: true });
      const ab = el('span', 'tr-pred-ab', { hidden: true });
      li.append(out, want, ab);
      if (targets[i] < 0) {
        li.classList.add('is-none');
        out.textContent = '\u00b7';
        out.title = 'no target here';
      }
      list.append(li);
      return { li, out, want, ab };
    });
  }

  return {
    update({ tokens, targets, predictions, correct, ablated, vocabulary }) {
      const sk = JSON.stringify([tokens, targets]);
      if (sk !== shapeKey) {
        shapeKey = sk;
        key = '';
        build(tokens, targets);
      }
      const k = `${Array.from(predictions).join(',')}|${ablated ? Array.from(ablated.predictions).join(',') : '-'}`;
      if (k === key) return;
      key = k;
      const word = (id) => (id >= 0 && id < vocabulary.length ? vocabulary[id] : `#${id}`);
      let right = 0;
      let total = 0;
      let rightAb = 0;
      targets.forEach((t, i) => {
        if (t < 0) return;
        const it = items[i];
        total += 1;
        const ok = correct[i] === true;
        if (ok) right += 1;
        it.li.classList.toggle('is-right', ok);
        it.li.classList.toggle('is-wrong', !ok);
        it.li.dataset.correct = ok ? '1' : '0';
        it.out.textContent = `${ok ? '\u2713' : '\u2717'} ${tokenText(word(predictions[i]))}`;
        it.out.title = `predicted ${word(predictions[i])}, target ${word(t)}`;
        it.want.hidden = ok;
        it.want.textContent = ok ? '' : `want ${tokenText(word(t))}`;
        it.ab.hidden = !ablated;
        if (ablated) {
          const okA = ablated.correct[i] === true;
          if (okA) rightAb += 1;
          it.ab.className = `tr-pred-ab ${okA ? 'is-right' : 'is-wrong'}`;
          it.ab.textContent = `${okA ? '\u2713' : '\u2717'} ${tokenText(word(ablated.predictions[i]))}`;
          it.ab.title = `with the ablated heads: predicted ${word(ablated.predictions[i])}`;
          it.ab.dataset.correct = okA ? '1' : '0';
        }
      });
      summary.textContent = total
        ? `${right} of ${total} targets right${ablated ? `; ${rightAb} of ${total} with the ablated heads (lower line)` : ''}.`
        : 'This probe has no targets.';
      summary.dataset.right = String(right);
      summary.dataset.total = String(total);
    },
  };
}
