// Learn 8: one step by hand. Plain gradient descent, θ ← θ − lr·dL/dθ, on the
// head's share of its layer or on every parameter; then every step (forward and
// backward) shows the new weights. What moved: the loss, p(answer) and the
// attention row, before and after the last step. Undo puts the weights back.

import { el, field, setOptions, setValue } from '../../kit/dom.js';
import { tok, at } from '../../kit/common.js';
import { learnStep, fillTable, tableFigure } from './learn-frame.js';
import { tokenLabel } from '../../kit/format.js';
import { learnFigureTitle } from '../../kit/notation.js';

/** The controls: learning rate, what a step moves, Take one step, Undo, how many were taken. */
function createSgdControls(f, ctx) {
  const lr = el('select', 'control', { testid: 'learn-lr' });
  setOptions(lr, ctx.learnChoices.rates.map((x) => ({ value: x, text: String(x) })));
  const scope = el('select', 'control', { testid: 'learn-scope' });
  const take = el('button', 'btn btn-primary', { type: 'button', testid: 'learn-step', text: 'Take one step' });
  const undo = el('button', 'btn', { type: 'button', testid: 'learn-undo', text: 'Undo' });
  const taken = el('span', 'learn-taken', { testid: 'learn-taken' });
  const controls = el('div', 'learn-controls', {}, field('Learning rate', lr, { className: 'field field-inline' }), field('Step on', scope, { className: 'field field-inline' }), take, undo, taken);
  f.root.insertBefore(controls, f.root.querySelector('.formula-wrap'));
  lr.addEventListener('change', () => ctx.select({ lr: Number(lr.value) }));
  scope.addEventListener('change', () => ctx.select({ scope: scope.value }));
  take.addEventListener('click', () => ctx.learn.step());
  undo.addEventListener('click', () => ctx.learn.undo());
  return (tr, v, ready) => {
    setOptions(scope, [{ value: 'head', text: `head ${v.head + 1}, layer ${tr.model.layer + 1}` }, { value: 'all', text: tr.model.pretrained ? `every head, layer ${tr.model.layer + 1}` : 'every parameter' }]);
    setValue(scope, v.state.scope);
    setValue(lr, v.state.lr);
    const n = v.state.sgd.length;
    taken.textContent = n ? `${n} step${n === 1 ? '' : 's'} taken` : 'the trained weights';
    undo.disabled = n === 0;
    take.disabled = !ready || n >= ctx.learnChoices.maxSteps;
  };
}

export const createLearnSgdStep = learnStep('sgd', {
  explain: () => [
    'Gradient descent takes a small step against the gradient: every weight moves by \u2212lr \u00d7 its gradient (plain SGD, no momentum). Take one and every step of the playground, forward and backward, shows the new weights; the link keeps the steps, and opening it takes them again from the trained weights.',
    'A step on one head moves its columns of W_Q, W_K, W_V and its rows of W_O. Steps use the model\u2019s own 1/\u221ad_k, and this sentence and answer: changing either puts the trained weights back.',
  ],
  build(f, ctx) {
    const controls = createSgdControls(f, ctx);
    const r = f.row();
    const moved = tableFigure(r, 'learn-moved', 'What the last step moved');
    const attention = tableFigure(r, 'learn-row');
    return (tr, v, L) => {
      controls(tr, v, Boolean(L));
      if (!L) return;
      const { now, before } = L;
      const y = L.targets[v.q];
      const V = now.probabilities.cols;
      const p = (bw) => bw.probabilities.data[v.q * V + y];
      const dash = { text: '\u2013' };
      const answer = y >= 0 ? tokenLabel((L.vocabulary ?? tr.model.vocabulary)[y]) : '';
      const rows = [[{ text: 'loss L' }, before ? { n: before.loss } : dash, { n: now.loss }]];
      if (y >= 0) rows.push([{ text: `p(${answer}) at ${tok(tr, v.q)}` }, before ? { n: p(before) } : dash, { n: p(now) }]);
      fillTable(moved.table, ['', 'before', 'after'], rows);
      const l = tr.model.layer;
      const P = now.layers[l].heads[v.head].weights;
      const B = before?.layers[l].heads[v.head].weights;
      attention.title.textContent = learnFigureTitle('sgd', tr, v.head, { q: v.q });
      fillTable(attention.table, ['key', 'before', 'after'], tr.tokens.map((t, j) => [{ text: tokenLabel(t.text) }, B ? { n: at(B, v.q, j), bar: at(B, v.q, j) } : dash, { n: at(P, v.q, j), bar: at(P, v.q, j) }]));
      if (y >= 0) {
        f.formula.set([[`\u2113 = \u2212log p(${answer} at ${tok(tr, v.q)}) = \u2212log(`, { n: p(now) }, ') = ', { result: -Math.log(p(now)) }],
          { caption: before ? 'The tables below have the loss, p(answer) and the attention row before and after the last step.' : 'Take a step to see what moves.' }]);
      } else {
        f.formula.set([['L = ', { result: now.loss }], { caption: `Position ${v.q} has no answer: pick a position with one to see its probability move.` }]);
      }
    };
  },
});
