// Step 10: every head's attention pattern side by side; pick one. For a
// trained model also the whole model at a glance (every layer × head, the
// model view), where a fresh page opens: one line says what to look at, and a
// button starts the guided tour from step 1.

import { createStepFrame, tok, at, clampIndex, createModelNote, createFitNote } from '../../kit/common.js';
import { createHeadsGrid } from '../views/headsgrid.js';
import { createModelView } from '../views/modelview.js';
import { createLinesView } from '../views/lines.js';
import { headSup } from '../../kit/notation.js';
import { el } from '../../kit/dom.js';
import { formatValue, quoted } from '../../kit/format.js';

/** "Start here: in ★ L2 H1 the row of “it” puts 0.998 of its weight on “animal”." (null without a featured head) */
export function startHereText(tr, q) {
  const f = tr.model?.featured;
  const layer = f ? tr.model.layerHeads?.[f.layer] : null;
  if (!layer) return null;
  const w = layer.heads[f.head].weights;
  const T = w.cols;
  let best = 0;
  for (let j = 1; j < T; j++) if (w.data[q * T + j] > w.data[q * T + best]) best = j;
  const p = layer.patterns[f.head]?.best;
  const named = p && p.name !== 'first-token' ? ` (${p.name})` : '';
  const share = `the row of ${quoted(tr.tokens[q].text)} puts ${formatValue(w.data[q * T + best], 3)} of its weight on ${quoted(tr.tokens[best].text)}`;
  // outside what the model learned, the same numbers are no headline: they are a guess
  if (tr.model.fit?.outside) return `In \u2605 L${f.layer + 1} H${f.head + 1}, ${share}; on this sentence that is a guess (below: why).`;
  return `Start here: in \u2605 L${f.layer + 1} H${f.head + 1}${named}, ${share}. Click a word in your sentence to follow another row.`;
}

export function createHeadsStep(root, ctx) {
  const f = createStepFrame(root, 'heads');
  const modelNote = createModelNote(f);
  const start = el('p', 'start-here', { testid: 'start-here' });
  const tourBtn = el('button', 'btn btn-small', { type: 'button', testid: 'tour-start', text: '\u25b6 Take the tour from step 1' });
  tourBtn.addEventListener('click', () => ctx.tour?.());
  const tour = el('p', 'tour', { testid: 'tour' }, tourBtn, el('span', 'tour-text', { text: ' New to attention? The 12 steps, from the words\u2019 embeddings to this output, one at a time and at your pace: Next when you are ready, End tour to stop.' }));
  // the first row of figures (the one a fresh page scrolls to): what to look at, the tour, the model view
  const mvRow = f.row('figure-row-stack');
  mvRow.append(start, tour);
  const fitNote = createFitNote(f, { parent: mvRow, onPickModel: (model) => ctx.select({ model }) });
  const modelView = createModelView(mvRow, { onOpen: (layer, head) => ctx.select({ layer, head, step: 'softmax' }) });
  const r = f.row();
  // meaning first, mechanics after: the explanation and the formula come below the model view
  f.figures.insertBefore(f.root.querySelector('.step-explain'), r);
  f.figures.insertBefore(f.root.querySelector('.formula-wrap'), r);
  const grid = createHeadsGrid(r, { onSelectHead: (h) => ctx.select({ head: h }) });
  const r2 = f.row();
  const lines = createLinesView(r2, { onSelectQuery: (i) => ctx.select({ query: i }), getWidth: ctx.width });

  return {
    update(tr, v) {
      modelNote.update(tr);
      fitNote.update(tr);
      const startText = tr.model ? startHereText(tr, v.q) : null;
      start.hidden = !startText;
      start.textContent = startText ?? '';
      start.classList.toggle('is-outside', Boolean(tr.model?.fit?.outside));
      tour.hidden = !ctx.tour;
      const d = clampIndex(v.d, v.D);
      f.explain(
        `Steps 4 to 9 ran ${v.H === 1 ? 'once, for the single head' : `${v.H} times in parallel, once per head, each with its own slice of W_Q, W_K and W_V`}. Different heads can attend to different things: compare their patterns.`,
        tr.model
          ? `Each head is named by the pattern it matches best on this sentence: previous-token (each word looks at the one before), first-token, same-token (a word looks at other copies of itself), induction (a word looks at what followed its earlier copy)${tr.model.task === 'coreference' ? ', antecedent (the pronoun looks at the noun it means)' : ''}. The score is the share of its weight where the pattern says: 1 = all of it. Same-token and induction need at least two repeats on the sentence to name a head. Click a head to look at it in every step.`
          : 'Each head is scored against the same patterns (previous-token, first-token, same-token, induction); with random weights a high score is luck. Click a head to look at it in every step.',
      );
      const lineParts = [`Column ${d} of each head\u2019s output for ${tok(tr, v.q)}: `];
      tr.heads.slice(0, 16).forEach((h, i) => {
        if (i > 0) lineParts.push(', ');
        lineParts.push(`O${headSup(i + 1)}[${v.q}, ${d}] = `);
        lineParts.push(i === v.head ? { result: at(h.output, v.q, d) } : { n: at(h.output, v.q, d) });
      });
      if (v.H > 16) lineParts.push(`, \u2026 (${v.H - 16} more heads)`);
      f.formula.set([lineParts, { caption: `Head ${v.head + 1} is selected; the lines below show its weights for ${tok(tr, v.q)}.` }]);
      mvRow.hidden = !tr.model;
      if (tr.model) modelView.update({ trace: tr, layers: tr.model.layerHeads, layer: tr.model.layer, head: v.head, q: v.q, palette: v.palette, width: ctx.width(), featured: tr.model.featured });
      grid.update({ trace: tr, head: v.head, q: v.q, palette: v.palette });
      lines.update({ labels: v.labels, weights: tr.heads[v.head].weights, mask: tr.mask, q: v.q, head: v.head, palette: v.palette });
    },
  };
}
