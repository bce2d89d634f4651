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

/** A head whose rows (after the first) put on average more than this share on the first token is a sink head. */
export const SINK_SHARE = 0.5;

/**
 * The attention sink of a layer: how many heads put most of a row's weight on the first
 * token (the mean over rows 1 … T−1 of weights[i][0] above SINK_SHARE), and that mean over
 * those heads. heads: the layer's [{weights: T×T}]; T: the real tokens. Null when fewer
 * than half the heads do, or T < 3 (a row or two says nothing).
 */
export function attentionSink(heads, T) {
  if (T < 3) return null;
  const shares = heads.map((h) => {
    let s = 0;
    for (let i = 1; i < T; i++) s += h.weights.data[i * h.weights.cols];
    return s / (T - 1);
  });
  const sinks = shares.filter((x) => x > SINK_SHARE);
  if (sinks.length * 2 <= heads.length) return null;
  return { heads: sinks.length, of: heads.length, share: sinks.reduce((a, b) => a + b, 0) / sinks.length };
}

/** "Heads 1, 2 read K/V head 1; heads 3, 4 read K/V head 2." (grouped-query attention), or ''. */
export function kvGroupsText(config) {
  const H = config.heads;
  const Hkv = config.kvHeads ?? H;
  if (Hkv >= H) return '';
  const g = H / Hkv;
  const parts = [];
  for (let kv = 0; kv < Hkv && kv < 8; kv++) {
    const first = kv * g + 1;
    parts.push(`heads ${g === 2 ? `${first} and ${first + 1}` : `${first}\u2013${first + g - 1}`} share K/V head ${kv + 1}`);
  }
  return ` Grouped-query attention: ${parts.join('; ')}${Hkv > 8 ? '; \u2026' : ''}. Each head still has its own queries, so its pattern can differ from its group\u2019s.`;
}

export function createHeadsStep(root, ctx) {
  const f = createStepFrame(root, 'heads');
  const modelNote = createModelNote(f);
  const start = el('p', 'start-here', { testid: 'start-here' });
  const tourBtn = el('button', 'btn btn-small', { type: 'button', testid: 'tour-start', text: '\u25b6 Take the tour from step 1' });
  tourBtn.addEventListener('click', () => ctx.tour?.());
  const tour = el('p', 'tour', { testid: 'tour' }, tourBtn, el('span', 'tour-text', { text: ' New to attention? The 12 steps, from the words\u2019 embeddings to this output, one at a time and at your pace: Next when you are ready, End tour to stop.' }));
  // the lessons ask before they show: one link beside the tour, where the page knows them
  if (ctx.lessonsHref) tour.append(' ', el('a', 'ap-link', { href: ctx.lessonsHref, text: 'Or take a lesson: predict, then see \u2192', testid: 'lessons-link' }));
  // the first row of figures (the one a fresh page scrolls to): what to look at, the tour, the model view
  const mvRow = f.row('figure-row-stack');
  const sink = el('p', 'model-note', { testid: 'attention-sink', attrs: { role: 'note' } });
  sink.hidden = true;
  mvRow.append(start, sink, tour);
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
      const paragraphs = [
        `Steps 4 to 9 ran ${v.H === 1 ? 'once, for the single head' : `${v.H} times in parallel, once per head, each with its own slice of W_Q, W_K and W_V`}. Different heads can attend to different things: compare their patterns.`,
        tr.model
          ? `Each head is named by the pattern it matches best on this sentence: previous-token (each word looks at the one before), first-token, same-token (a word looks at other copies of itself), induction (a word looks at what followed its earlier copy)${tr.model.task === 'coreference' ? ', antecedent (the pronoun looks at the noun it means)' : ''}. The score is the share of its weight where the pattern says: 1 = all of it. Same-token and induction need at least two repeats on the sentence to name a head. Click a head to look at it in every step.`
          : 'Each head is scored against the same patterns (previous-token, first-token, same-token, induction); with random weights a high score is luck. Click a head to look at it in every step.',
      ];
      f.explain(paragraphs[0], paragraphs[1] + kvGroupsText(tr.config));
      // an attention sink: most heads park most of each row's weight on the first token
      const found = tr.model ? attentionSink(tr.heads, tr.realTokens ?? tr.tokens.length) : null;
      sink.hidden = !found;
      if (found) {
        sink.textContent = `Attention sink: ${found.heads} of ${found.of} heads in layer ${tr.model.layer + 1} put most of each row\u2019s weight on the first token, ${tok(tr, 0)} (${Math.round(found.share * 100)}% on average). A softmax row must sum to 1, so a head with nothing useful to fetch still spends its weight somewhere; trained models learn to park it on the first token, which every row can see. It says little about the meaning of ${tok(tr, 0)}.`;
      }
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
