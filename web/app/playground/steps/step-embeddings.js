// Step 1: each token id picks a row of the embedding table (seeded random
// numbers, or a trained model's own vocabulary and learned table).

import { createStepFrame, tok, at, clampIndex, note } from '../../kit/common.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { quoted } from '../../kit/format.js';
import { figureTitle } from '../../kit/notation.js';

export function createEmbeddingsStep(root, ctx) {
  const f = createStepFrame(root, 'embeddings');
  let trace = null;
  const hm = createHeatmap(f.row(), {
    id: 'embeddings',
    tooltip: ctx.tooltip, getWidth: ctx.width,
    onCellClick: (i, j) => ctx.select({ query: i, dim: j }),
    describe: (i, j) => {
      const t = trace.tokens[i];
      if (trace.model) {
        return {
          name: `X[${i}, ${j}]  ${tok(trace, i)}`,
          provenance: t.unknown
            ? `= E[${t.id}, ${j}]: ${quoted(t.typed, 14)} is not in the vocabulary, so it is read as [UNK] (id ${t.id}).`
            : `= E[${t.id}, ${j}]: entry ${j} of row ${t.id} of the learned embedding table (the vocabulary id of ${tok(trace, i)}).`,
        };
      }
      return {
        name: `X[${i}, ${j}]  ${tok(trace, i)}`,
        provenance: t.id === 0 ? '[PAD] embeds as zeros.' : `= E[${t.id}, ${j}]: entry ${j} of row ${t.id} of the embedding table (the id of ${tok(trace, i)}).`,
      };
    },
  });
  const unknownNote = note(f.figures, 'figure-note unknown-note');
  unknownNote.dataset.testid = 'unknown-note';

  return {
    update(tr, v) {
      trace = tr;
      const d = clampIndex(v.d, v.C);
      const t = tr.tokens[v.q];
      const m = tr.model;
      if (m) {
        f.explain(
          `The model has its own vocabulary of ${m.vocab.toLocaleString('en-US')} entries, learned words in lower case. Each token has a token id there, which picks one row of the embedding table E, C = ${v.C} numbers wide, learned in training along with everything else.`,
          'The same word always gets the same vector, wherever it stands. Words the model never learned all share one row: [UNK], \u201cunknown\u201d.',
        );
        f.formula.set([
          [`X[${v.q}, ${d}] = E[${t.id}, ${d}] = `, { result: at(tr.embeddings, v.q, d) }],
          { caption: t.unknown ? `${quoted(t.typed, 20)} is not in the vocabulary: it becomes [UNK] (id ${t.id}).` : `Row ${v.q} of X is row ${t.id} of E: the learned vector of ${tok(tr, v.q)}.` },
        ]);
        const unk = [...new Set(m.unknown)];
        unknownNote.hidden = unk.length === 0;
        unknownNote.textContent = unk.length ? `Not in the vocabulary, read as [UNK]: ${unk.slice(0, 8).map((w) => quoted(w, 16)).join(', ')}${unk.length > 8 ? `, and ${unk.length - 8} more` : ''}.` : '';
      } else {
        f.explain(
          `Each token has a token id, which picks one row of a table of fixed random numbers (the seed decides them). That row, C = ${v.C} numbers wide, is the token\u2019s vector.`,
          'The same word always gets the same vector, wherever it stands in the sentence. Words never seen before are fine: ids are hashes of the text.',
        );
        f.formula.set([
          [`X[${v.q}, ${d}] = E[${t.id}, ${d}] = `, { result: at(tr.embeddings, v.q, d) }],
          { caption: t.id === 0 ? `Token ${v.q} is [PAD]: padding embeds as zeros.` : `Row ${v.q} of X is row ${t.id} of the embedding table E: the vector of ${tok(tr, v.q)}.` },
        ]);
        unknownNote.hidden = true;
      }
      hm.update({ matrix: tr.embeddings, title: figureTitle('embeddings', tr, v.head), rowLabels: v.labels, colLabels: null, kind: 'diverging', palette: v.palette, selRow: v.q, selCol: d, showCol: false });
    },
  };
}
