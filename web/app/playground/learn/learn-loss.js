// Learn 1: the loss and where the backward starts, dL/dlogits = softmax − one-hot
// (averaged over the positions with a target): per position its target and
// p(target); at the selected position the likeliest words with their gradient.

import { learnStep, fillTable, tableFigure } from './learn-frame.js';
import { tokenLabel } from '../../kit/format.js';
import { lossWords } from './learn.js';
import { learnFigureTitle } from '../../kit/notation.js';

export const createLearnLossStep = learnStep('loss', {
  explain: () => [
    'The loss says how wrong the model is: L = \u2212log p(answer), averaged over the positions that have an answer. Learning means changing the weights so that L gets smaller.',
    'The backward starts with the gradient of L with respect to the logits, which is simple: each word\u2019s probability, minus 1 at the answer (softmax \u2212 one-hot), divided by the number of answers. From here it flows back through every step, in reverse.',
  ],
  build(f) {
    const r = f.row();
    const positions = tableFigure(r, 'learn-positions', 'Each position with an answer');
    const top = tableFigure(r, 'learn-top');
    return (tr, v, L) => {
      if (!L) return;
      const voc = L.vocabulary ?? tr.model.vocabulary;
      const P = L.bw.probabilities;
      const V = P.cols;
      const targeted = [];
      L.targets.forEach((y, i) => { if (y >= 0) targeted.push(i); });
      const N = targeted.length;
      fillTable(positions.table, ['position', 'answer', 'p(answer)', '\u2212log p'], targeted.map((i) => {
        const p = P.data[i * V + L.targets[i]];
        return [{ text: `${i} ${tokenLabel(tr.tokens[i].text)}` }, { text: tokenLabel(voc[L.targets[i]]) }, { n: p }, { n: -Math.log(p) }];
      }), targeted.indexOf(v.q));
      const y = L.targets[v.q];
      top.title.textContent = learnFigureTitle('loss', tr, v.head, { q: v.q });
      const items = lossWords(P, v.q, voc, y);
      fillTable(top.table, ['word', 'p', 'dL/dlogit'], items.map((it) => [{ text: `${tokenLabel(it.text)}${it.id === y ? ' (answer)' : ''}` }, { n: it.p }, { n: L.bw.dLogits.data[v.q * V + it.id] }]));
      if (y < 0) {
        f.formula.set([[`dL/dlogits[${v.q}, w] = `, { result: L.bw.dLogits.data[v.q * V] }], { caption: `Position ${v.q} has no answer, so its gradient is 0: pick a position with one, or pick an answer for it above.` }]);
        return;
      }
      f.formula.set([
        [`L = \u2212(1/${N}) \u03a3 log p(answer) = `, { n: L.bw.loss }],
        [`dL/dlogits[${v.q}, ${tokenLabel(voc[y])}] = (p \u2212 1) / N = (`, { n: P.data[v.q * V + y] }, ` \u2212 1) / ${N} = `, { result: L.bw.dLogits.data[v.q * V + y] }],
        { caption: 'Negative: the loss wants this logit larger. Every other word gets p / N, positive: smaller.' },
      ]);
    };
  },
});
