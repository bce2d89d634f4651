// Step 10: every head's attention pattern side by side; pick one.

import { createStepFrame, tok, at, clampIndex, createModelNote } from './common.js';
import { createHeadsGrid } from './headsgrid.js';
import { createLinesView } from './lines.js';
import { headSup } from '../notation.js';

export function createHeadsStep(root, ctx) {
  const f = createStepFrame(root, 'heads');
  const modelNote = createModelNote(f);
  const r = f.row();
  const grid = createHeadsGrid(r, { onSelectHead: (h) => ctx.select({ head: h }) });
  const r2 = f.row();
  const lines = createLinesView(r2, { onSelectQuery: (i) => ctx.select({ query: i }), getWidth: ctx.width });

  return {
    update(tr, v) {
      modelNote.update(tr);
      const d = clampIndex(v.d, v.D);
      f.explain(
        `Steps 4 to 9 ran ${v.H === 1 ? 'once, for the single head' : `${v.H} times in parallel, once per head, each with its own slice of W_Q, W_K and W_V`}. Different heads can attend to different things: compare their patterns.`,
        tr.model
          ? `Each head is named by the pattern it matches best on this sentence: previous-token (each word looks at the one before), first-token, same-word, induction (a word looks at what followed its earlier copy)${tr.model.task === 'coreference' ? ', antecedent (the pronoun looks at the noun it means)' : ''}. The score is the share of its weight where the pattern says: 1 = all of it. Click a head to look at it in every step.`
          : 'Each head is scored against the same patterns (previous-token, first-token, same-word, induction); with random weights a high score is luck. Click a head to look at it in every step.',
      );
      const lineParts = [`Column ${d} of each head\u2019s output for ${tok(tr, v.q)}: `];
      tr.heads.slice(0, 16).forEach((h, i) => {
        if (i > 0) lineParts.push(', ');
        lineParts.push(`O${headSup(i + 1)}[${v.q}, ${d}] = `);
        lineParts.push(i === v.head ? { result: at(h.output, v.q, d) } : { n: at(h.output, v.q, d) });
      });
      if (v.H > 16) lineParts.push(`, \u2026 (${v.H - 16} more heads)`);
      f.formula.set([lineParts, { caption: `Head ${v.head + 1} is selected; the lines below show its weights for ${tok(tr, v.q)}.` }]);
      grid.update({ trace: tr, head: v.head, q: v.q, palette: v.palette });
      lines.update({ labels: v.labels, weights: tr.heads[v.head].weights, mask: tr.mask, q: v.q, head: v.head, palette: v.palette });
    },
  };
}
