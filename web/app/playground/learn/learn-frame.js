// The frame of every Learn step: the step frame (explanation, formula, figures)
// under a head that says what is learned: the loss, the answer at the selected
// position (a picker: the task's answer, another word, or none) and the scale
// switch on the backward. ctx.learn (the controller) sets the target and the
// switch. v.learn is the controller's backward (learn.js): {bw, on, off, now,
// before, targets, defaults, problem, modelScale, and for a pretrained model its
// vocabulary by full token id: the trace's own is only the top tokens}.

import { el, clear, setOptions, setValue, uniqueId } from '../../kit/dom.js';
import { createStepFrame, tok } from '../../kit/common.js';
import { formatValue, DIGITS, tokenLabel } from '../../kit/format.js';
import { topTokens } from '../model-trace.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { productTerms } from '../../kit/formula.js';
import { familyInfo } from '../../../families.js';

const NONE = '-1';
const TASK = 'task';

/** The answer picker's choices at position q: the task's answer, the sentence's words, the model's five likeliest, none. */
function targetChoices(tr, L, q, vocabulary) {
  const seen = new Set();
  const out = [];
  const add = (id, text) => {
    if (id < 0 || seen.has(id)) return;
    seen.add(id);
    out.push({ value: String(id), text });
  };
  const def = L.defaults[q];
  // whose answer the default is: the task's (our models), the family's (GPT-2 the next token, BERT the model's own fill)
  const whose = familyInfo(tr.model?.pretrained?.family)?.learnTarget ?? 'the task\u2019s';
  out.push({ value: TASK, text: `${whose}: ${def >= 0 ? tokenLabel(vocabulary[def]) : 'none'}` });
  if (L.targets[q] >= 0 && L.targets[q] !== def) add(L.targets[q], tokenLabel(vocabulary[L.targets[q]]));
  const probs = L.now?.probabilities ?? tr.final?.probabilities;
  if (probs) for (const it of topTokens(probs, q, vocabulary, 5)) add(it.id, `${tokenLabel(it.text)} (likely)`);
  for (const t of tr.tokens) add(t.id, tokenLabel(vocabulary[t.id] ?? t.text));
  out.push({ value: NONE, text: 'no target here' });
  return out;
}

export function createLearnFrame(root, name, ctx) {
  const f = createStepFrame(root, name);
  const loss = el('output', 'num learn-loss', { testid: 'learn-loss' });
  const lossNote = el('span', 'learn-loss-note');
  const lossLine = el('p', 'learn-loss-line', {}, 'Loss L = ', loss, lossNote);
  const target = el('select', 'control', { testid: 'learn-target' });
  const targetId = uniqueId('t');
  target.id = targetId;
  const targetLabel = el('label', 'field-label', { htmlFor: targetId });
  const scale = el('input', null, { type: 'checkbox', testid: 'learn-scale' });
  const scaleLabel = el('label', 'learn-switch', {}, scale, ' with 1/\u221ad_k (switch off to see the backward without it)');
  const problem = el('p', 'learn-problem', { testid: 'learn-problem', attrs: { role: 'note' } });
  const head = el('div', 'learn-head', { testid: 'learn-head' }, lossLine, el('div', 'field field-inline', {}, targetLabel, target), scaleLabel, problem);
  root.insertBefore(head, root.querySelector('.step-explain'));
  let q = 0;
  target.addEventListener('change', () => ctx.learn.setTarget(q, target.value === TASK ? null : Number(target.value)));
  scale.addEventListener('change', () => ctx.select({ learnScale: scale.checked }));

  return {
    ...f,
    /** Updates the head; returns v.learn when there is a backward to show (else hides the figures and says why). */
    update(tr, v) {
      const L = v.learn;
      q = v.q;
      targetLabel.textContent = `Answer at ${tok(tr, q)} (position ${q})`;
      setOptions(target, targetChoices(tr, L, q, L.vocabulary ?? tr.model.vocabulary));
      const picked = v.state.targets.some((x) => Number(x.split(':')[0]) === q);
      setValue(target, picked ? String(L.targets[q]) : TASK);
      scale.checked = v.state.learnScale;
      problem.hidden = !L.problem;
      problem.textContent = L.problem ?? '';
      const ready = Boolean(L.bw);
      f.figures.hidden = !ready;
      f.formula.element.hidden = !ready;
      lossLine.hidden = !ready;
      if (ready) {
        // the switch runs the forward without 1/√d_k too: its loss is that forward's
        lossNote.textContent = L.bw.scale === L.modelScale ? '' : ` (${L.bw.scale ? 'with' : 'without'} 1/\u221ad_k)`;
        loss.textContent = formatValue(L.bw.loss, DIGITS.formula);
        loss.title = formatValue(L.bw.loss, DIGITS.exact);
        loss.dataset.value = String(L.bw.loss);
      }
      return ready ? L : null;
    },
  };
}

/**
 * A Learn step's view factory (the registry's `view`): build(f, ctx, trace) makes its
 * figures once (trace() is the trace on screen, for tooltips) and returns
 * draw(tr, v, L), which runs when there is a backward to show; explain(tr, v) gives
 * the explanation's paragraphs, shown always.
 */
export function learnStep(name, { explain, build }) {
  return (root, ctx) => {
    const f = createLearnFrame(root, name, ctx);
    let trace = null;
    const draw = build(f, ctx, () => trace);
    return {
      update(tr, v) {
        trace = tr;
        const L = f.update(tr, v);
        f.explain(...explain(tr, v));
        draw(tr, v, L);
      },
    };
  };
}

/** A Learn step's heatmap of a gradient: a click selects the cell's query (and key). */
export function learnMap(parent, ctx, id, describe, { share = 1, compact = false, select = (i, j) => ({ query: i, key: j }) } = {}) {
  return createHeatmap(parent, { id, share, compact, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: (i, j) => ctx.select(select(i, j)), describe });
}

/** The layer and head of the backward the steps show: {layer, head, D}. */
export function shownHead(L, tr, v) {
  const layer = L.bw.layers[tr.model.layer];
  return { layer, head: layer.heads[v.head], D: tr.config.dHead };
}

/** A small table: header cells, then rows of cells ({text} or {n: number}, with {bar: 0…1} a bar before it); the selected row marked. */
export function fillTable(table, header, rows, selected = -1) {
  clear(table);
  table.append(el('tr', null, {}, ...header.map((h) => el('th', null, { text: h }))));
  rows.forEach((cells, i) => {
    const tr = el('tr', i === selected ? 'is-selected' : null);
    for (const c of cells) {
      const td = el('td', c.n !== undefined ? 'num' : null, { text: c.n !== undefined ? formatValue(c.n, DIGITS.cell) : c.text });
      if (c.bar !== undefined) {
        // a bar of a share 0…1 (the row's largest weight), its number beside it
        const fill = el('span', 'prediction-fill');
        fill.style.width = `${Math.max(0.5, 100 * c.bar).toFixed(2)}%`;
        td.prepend(el('span', 'prediction-bar learn-bar', {}, fill));
      }
      if (c.n !== undefined) {
        td.dataset.value = String(c.n);
        td.title = formatValue(c.n, DIGITS.exact);
      }
      tr.append(td);
    }
    table.append(tr);
  });
}

/** A figure holding one table, with its title. */
export function tableFigure(parent, testid, titleText = '') {
  const table = el('table', 'learn-table', { testid });
  const title = el('span', 'hm-title', { text: titleText });
  parent.append(el('figure', 'learn-figure', {}, el('figcaption', 'hm-caption', {}, title), table));
  return { table, title };
}

/**
 * A sum of products as formula parts (formula.js productTerms), without the terms that
 * are exactly 0: in a gradient most rows are 0 (their token reaches no answer), and the
 * ones that count would hide among them. The dropped terms are counted.
 */
export function gradientTerms(as, bs, { max = 4 } = {}) {
  const keep = [];
  for (let i = 0; i < as.length; i++) if (as[i] * bs[i] !== 0) keep.push(i);
  if (keep.length === 0 || keep.length === as.length) return productTerms(as, bs, { max });
  const zeros = as.length - keep.length;
  return [...productTerms(keep.map((i) => as[i]), keep.map((i) => bs[i]), { max }), { muted: ` + ${zeros} term${zeros === 1 ? '' : 's'} of 0` }];
}
