// The lessons' figures: the prediction made in the figure (pick words or heads,
// drag bars, move a slider) and the reveal that draws the guess beside the
// engine's numbers. Views only: they are given the facts and draw them.

import { el } from '../kit/dom.js';
import { formatValue } from '../kit/format.js';
import { getFact, partText } from './parts.js';

/** Parts as DOM: numbers in spans with data-fact (the tests read them), the misconception emphasised. */
export function partsNode(tag, className, parts, facts) {
  const node = el(tag, className);
  for (const p of parts) {
    if (typeof p === 'string') node.append(p);
    else if (p.myth) node.append(el('strong', 'ls-myth', { text: partText(p, facts) }));
    else if (p.fact) node.append(el('span', p.int ? 'ls-num ls-int' : 'ls-num', { text: partText(p, facts), dataset: { fact: p.fact } }));
    else node.append(partText(p, facts));
  }
  return node;
}

/** Sets inline style properties (through the CSSOM, which a strict CSP allows). */
function styled(node, styles) {
  Object.assign(node.style, styles);
  return node;
}

const pct = (x) => `${Math.max(0, Math.min(100, x * 100)).toFixed(2)}%`;

// ---- the prediction --------------------------------------------------------------------

/**
 * The prediction widget. guess: the working guess (kept by the controller across
 * screens); onGuess(next) on every change. Returns the node.
 */
export function predictFigure(lesson, facts, guess, onGuess) {
  const p = lesson.predict;
  if (p.kind === 'pick') return pickFigure(p.options(facts), p.multi, guess ?? [], onGuess);
  if (p.kind === 'bars') return barsFigure(facts, guess ?? p.start(facts), onGuess);
  return sliderFigure(p, facts, guess ?? getFact(facts, p.start), onGuess);
}

function pickFigure(options, multi, chosen, onGuess) {
  const box = el('div', 'ls-pick', { attrs: { role: 'group', 'aria-label': multi ? 'Your prediction: pick any' : 'Your prediction: pick one' }, testid: 'predict-figure' });
  let picked = [...chosen];
  const buttons = options.map((o) => {
    const b = el('button', 'ls-chip', { type: 'button', text: o.label, dataset: { option: o.id }, attrs: { 'aria-pressed': String(picked.includes(o.id)) } });
    b.addEventListener('click', () => {
      if (multi) picked = picked.includes(o.id) ? picked.filter((x) => x !== o.id) : [...picked, o.id];
      else picked = [o.id];
      for (const x of buttons) x.setAttribute('aria-pressed', String(picked.includes(x.dataset.option)));
      onGuess([...picked]);
    });
    return b;
  });
  box.append(...buttons);
  return box;
}

function barsFigure(facts, values, onGuess) {
  const box = el('div', 'ls-bars ls-bars-edit', { testid: 'predict-figure' });
  const v = [...values];
  const sum = el('p', 'ls-sum', { attrs: { 'aria-live': 'polite' } });
  const showSum = () => { sum.textContent = `Your bars add up to ${formatValue(v.reduce((a, b) => a + b, 0), 3)}.`; };
  facts.words.forEach((w, i) => {
    const input = el('input', 'ls-range', { type: 'range', attrs: { min: '0', max: '1', step: '0.01', 'aria-label': `Your weight for word ${i + 1}, \u201c${w}\u201d` } });
    input.value = String(v[i]);
    const out = el('span', 'ls-guess-value', { text: formatValue(v[i], 2) });
    input.addEventListener('input', () => {
      v[i] = Number(input.value);
      out.textContent = formatValue(v[i], 2);
      showSum();
      onGuess([...v]);
    });
    box.append(el('div', 'ls-bar-row', {},
      el('span', 'ls-bar-label', { text: w }),
      el('span', 'ls-score', {}, 'score ', el('span', 'ls-num', { text: formatValue(facts.scores[i], 3), dataset: { fact: `scores.${i}` } })),
      input, out));
  });
  showSum();
  box.append(sum);
  return box;
}

function sliderFigure(p, facts, value, onGuess) {
  const min = getFact(facts, p.min);
  // step "any": the slider starts exactly at the engine's number its prompt states (arrows move 1% of the range)
  const input = el('input', 'ls-range ls-slider', { type: 'range', attrs: { min: String(min), max: '1', step: 'any', 'aria-label': p.label } });
  input.value = String(value);
  const out = el('output', 'ls-guess-value', { text: formatValue(Number(input.value), 2) });
  input.addEventListener('input', () => {
    out.textContent = formatValue(Number(input.value), 2);
    onGuess(Number(input.value));
  });
  return el('div', 'ls-slider-box', { testid: 'predict-figure' }, el('label', 'ls-slider-label', {}, p.label, input), out);
}

// ---- the reveal -----------------------------------------------------------------------

const YOURS = () => el('span', 'ls-tag ls-tag-mine', { text: 'your pick' });

export function revealFigure(fig, facts) {
  const box = el('figure', `ls-figure ls-figure-${fig.kind}`, { testid: 'reveal-figure' });
  box.append(partsNode('figcaption', 'ls-caption', fig.caption, facts));
  if (fig.kind === 'bars') box.append(revealBars(fig, facts));
  else if (fig.kind === 'scale') box.append(revealScale(fig, facts));
  else box.append(revealHeads(fig, facts));
  return box;
}

/** What the colours of the reveal's bars mean (only those the figure uses). */
function barsLegend(fig) {
  const item = (cls, text) => el('span', null, {}, el('span', `ls-swatch ${cls}`), text);
  const anyTruth = fig.rows.some((r) => r.truth) && fig.rows.some((r) => !r.truth);
  return el('p', 'ls-legend', {},
    item('ls-sw-weight', fig.valueLabel ?? 'the engine\u2019s number'),
    fig.otherLabel ? item('ls-sw-other', fig.otherLabel) : null,
    anyTruth ? item('ls-sw-truth', 'darker: the answer') : null,
    fig.rows.some((r) => r.guess != null) ? item('ls-sw-guess', 'your bar') : null,
    fig.reference ? item('ls-sw-ref', fig.referenceLabel ?? 'the plain average') : null);
}

function revealBars(fig, facts) {
  const list = el('div', 'ls-bars');
  list.append(barsLegend(fig));
  const values = fig.rows.map((r) => getFact(facts, r.key));
  const top = fig.scaleKey ? getFact(facts, fig.scaleKey) : Math.max(...values, ...fig.rows.map((r) => r.guess ?? 0), 1e-12);
  fig.rows.forEach((r, i) => {
    const track = el('div', 'ls-track');
    track.append(styled(el('div', `ls-fill${r.truth ? ' ls-fill-truth' : ''}`), { width: pct(values[i] / top) }));
    if (r.guess !== undefined && r.guess !== null) track.append(styled(el('div', 'ls-fill ls-fill-guess'), { width: pct(r.guess / top) }));
    if (r.other) track.append(styled(el('div', 'ls-fill ls-fill-other'), { width: pct(getFact(facts, r.other) / top) }));
    if (fig.reference) track.append(styled(el('div', 'ls-ref', { attrs: { 'aria-hidden': 'true' } }), { left: pct(getFact(facts, fig.reference) / top) }));
    const nums = el('span', 'ls-values', {}, el('span', 'ls-num', { text: partText({ fact: r.key, digits: 3 }, facts), dataset: { fact: r.key } }));
    if (r.guess !== undefined && r.guess !== null) nums.append(' (yours ', el('span', 'ls-yours', { text: formatValue(r.guess, 2) }), ')');
    if (r.other) nums.append(' [', el('span', 'ls-num', { text: partText({ fact: r.other, digits: 3 }, facts), dataset: { fact: r.other } }), ']');
    if (r.score) nums.prepend('score ', el('span', 'ls-num', { text: partText({ fact: r.score, digits: 3 }, facts), dataset: { fact: r.score } }), ' \u2192 ');
    list.append(el('div', 'ls-bar-row', {}, el('span', 'ls-bar-label', {}, r.label, r.mine ? YOURS() : null), track, nums));
  });
  return list;
}

function revealScale(fig, facts) {
  const track = el('div', 'ls-scale-track');
  const legend = el('ul', 'ls-scale-legend');
  for (const m of fig.marks) {
    const v = getFact(facts, m.key);
    const cls = m.mine ? 'ls-mark-mine' : m.truth ? 'ls-mark-truth' : 'ls-mark-other';
    track.append(styled(el('div', `ls-mark ${cls}`, { attrs: { 'aria-hidden': 'true' } }), { left: pct(v) }));
    legend.append(el('li', cls, {}, el('span', 'ls-swatch'), `${m.label}: `, el('span', 'ls-num', { text: partText({ fact: m.key }, facts), dataset: { fact: m.key } })));
  }
  return el('div', 'ls-scale', {}, track, legend);
}

function revealHeads(fig, facts) {
  const T = facts.T;
  const grid = el('div', 'ls-heads');
  for (const h of fig.heads) {
    const cells = styled(el('div', 'ls-mini', { attrs: { role: 'img', 'aria-label': `${h.label}: its weights, one row per word` } }), { gridTemplateColumns: `repeat(${T}, 1fr)` });
    for (const w of h.pattern) cells.append(styled(el('span', 'ls-cell'), { opacity: String(Math.max(0.04, w)) }));
    grid.append(el('div', 'ls-head', {}, el('p', 'ls-head-name', {}, h.label, h.mine ? YOURS() : null), cells,
      el('p', 'ls-head-diff', {}, 'vs H1: ', el('span', 'ls-num', { text: partText({ fact: h.key }, facts), dataset: { fact: h.key } }))));
  }
  return grid;
}
