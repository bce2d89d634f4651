// Idea 4's view: the engine's measurements at the chosen head width (metrics
// and an off/on table), the two sweeps over widths 2 … 512 as three charts, and
// the numbers behind them. Draws the sweeps the controller (../scale.js) gives it.

import { el, uniqueId } from '../../kit/dom.js';
import {
  createDemoFrame, createMetric, createVerdict, createNote, selectField, checkField, seedField, createTable,
} from '../common.js';
import { createLineChart } from '../chart.js';
import { DK_VALUES } from '../limits.js';
import { formatValue } from '../../kit/format.js';
import { glossed } from '../../kit/glossary.js';

/** Every number of this demo: three significant digits by the page's rule. */
function fmt(x) {
  if (!Number.isFinite(x)) return '\u2014';
  return formatValue(x, 3);
}

/** samples: how many samples of T queries × T keys each point of the sweeps is. */
export function createScaleView(root, { onState, samples }) {
  const f = createDemoFrame(root, 'scale', {
    claim: [
      'For random q and k with unit-variance entries, the score q\u00b7k has variance d_k, so wider heads give bigger scores: softmax saturates (one weight near 1, the rest near 0, entropy near 0) and its gradient vanishes.',
      'Dividing by \u221ad_k brings the variance back to 1 at every width. It is part of the method, not a tuning knob.',
    ],
  });
  const c = f.controls;
  const slider = el('input', 'cx-slider', { type: 'range', min: '0', max: String(DK_VALUES.length - 1), step: '1', testid: 'scale-dk' });
  const sliderOut = el('output', 'cx-slider-value num', { testid: 'scale-dk-value' });
  slider.addEventListener('input', () => onState({ dk: DK_VALUES[Number(slider.value)] }));
  const sliderId = uniqueId('dk');
  slider.id = sliderId;
  c.append(el('div', 'field cx-field is-wide cx-slider-field', {},
    el('label', 'field-label', { htmlFor: sliderId }, 'Head width d_k ', sliderOut), slider,
    el('span', 'field-hint', { text: 'Arrow keys move one step; the charts mark the point.' })));
  const scaleBox = checkField(c, 'Divide the scores by \u221ad_k', { onChange: (v) => onState({ scale: v }), testid: 'scale-toggle' });
  const tSel = selectField(c, 'Keys per row (T)', { options: [4, 8, 16, 32].map((t) => ({ value: t, text: String(t) })), onChange: (t) => onState({ t }), parse: Number, testid: 'scale-t' });
  const seed = seedField(c, { onChange: (x) => onState({ seed: x }) });

  const card1 = f.card('At the chosen width');
  const note1 = createNote(card1);
  // the same claim on one real gradient: the playground's Learn part, a trained head with and without 1/√d_k
  card1.append(el('p', 'cx-note', {}, el('a', null, { href: 'index.html#model=coreference&layer=1&head=0&q=7&k=1&step=dscale', testid: 'scale-learn-link', text: 'Follow one gradient back through a trained head, with and without 1/\u221ad_k \u2192' })));
  const verdict = createVerdict(card1);
  const mVar = createMetric(verdict, { label: 'variance of the scores', testid: 'scale-cur-var' });
  const mEnt = createMetric(verdict, { label: 'mean row entropy (nats)', testid: 'scale-cur-entropy' });
  const mJac = createMetric(verdict, { label: 'mean softmax-Jacobian norm', testid: 'scale-cur-jacobian' });
  // the three measures' words, each with its one line where it first appears (issue #40, 5)
  card1.append(el('p', 'cx-note cx-terms', { testid: 'scale-terms' }, ...glossed('Entropy is in nats; the Jacobian norm is the Frobenius norm of the softmax\u2019s Jacobian, averaged over rows (tap a term for its meaning).')));
  const cmp = createTable(card1, { caption: 'Scale off and on at this width', headers: ['', 'off', 'on (\u00f7\u221ad_k)'], testid: 'scale-compare' });

  const card2 = f.card('Over head widths from 2 to 512 (both sweeps, measured by the engine)');
  const note2 = createNote(card2);
  const charts = el('div', 'cx-charts');
  card2.append(charts);
  const chVar = createLineChart(charts, { title: 'Score variance', xLabel: 'head width d_k (log scale)', yLabel: 'variance of q\u00b7k (log)', yLog: true, testid: 'scale-chart-variance', description: 'Without the scale the variance grows like d_k; with it, it stays near 1.' });
  const chEnt = createLineChart(charts, { title: 'Mean row entropy of the softmax', xLabel: 'head width d_k (log scale)', yLabel: 'entropy (nats)', testid: 'scale-chart-entropy', description: 'Without the scale the entropy collapses toward 0; with it, it stays near the uniform ln T.' });
  const chJac = createLineChart(charts, { title: 'Softmax gradient: mean Jacobian norm', xLabel: 'head width d_k (log scale)', yLabel: 'Frobenius norm', testid: 'scale-chart-jacobian', description: 'Without the scale the Jacobian norm falls toward 0: the gradient vanishes.' });

  const details = el('details', 'cx-details');
  details.append(el('summary', null, { text: 'The numbers behind the charts' }));
  card2.append(details);
  const table = createTable(details, { caption: `Every point: ${samples} samples of T random queries \u00d7 T random keys`, headers: ['d_k', 'variance off', 'variance on', 'entropy off', 'entropy on', 'Jacobian off', 'Jacobian on'], testid: 'scale-table' });

  function drawControls(s) {
    const idx = Math.max(0, DK_VALUES.indexOf(s.dk));
    if (slider.value !== String(idx)) slider.value = String(idx);
    sliderOut.textContent = `= ${s.dk}`;
    slider.setAttribute('aria-valuetext', `d_k = ${s.dk}`);
    scaleBox.set(s.scale);
    tSel.set(s.t);
    seed.set(s.seed);
  }

  /** The chosen width: metrics and the off/on table. */
  function drawPoint(s, m) {
    const { off, on } = m.at;
    const cur = s.scale ? on : off;
    const lnT = cur.maxEntropy;
    note1.set(`d_k = ${s.dk}, scale ${s.scale ? 'on' : 'off'}: ${samples} samples of ${s.t} random queries against ${s.t} random keys, entries drawn with variance 1. ${s.scale ? 'The scores stay near variance 1 and the rows stay spread out.' : s.dk >= 16 ? 'The scores spread as wide as d_k and each softmax row puts nearly all its weight on one key.' : 'At small widths the damage is small; slide d_k up and watch.'}`);
    mVar.set(cur.scoreVariance, { text: fmt(cur.scoreVariance), noteText: s.scale ? '\u2248 1 at every width' : `\u2248 d_k = ${s.dk}`, tone: s.scale ? 'good' : (s.dk >= 16 ? 'bad' : null) });
    mEnt.set(cur.meanEntropy, { text: fmt(cur.meanEntropy), noteText: `uniform row: ln T = ${fmt(lnT)}`, tone: cur.meanEntropy < 0.25 * lnT ? 'bad' : null });
    mJac.set(cur.meanJacobianNorm, { text: fmt(cur.meanJacobianNorm), noteText: `${fmt(cur.meanJacobianNorm / on.meanJacobianNorm)} \u00d7 the scaled value`, tone: cur.meanJacobianNorm < 0.5 * on.meanJacobianNorm ? 'bad' : null });
    cmp.set([
      { cells: ['variance of q\u00b7k', { text: fmt(off.scoreVariance), value: off.scoreVariance, className: s.scale ? '' : 'is-current' }, { text: fmt(on.scoreVariance), value: on.scoreVariance, className: s.scale ? 'is-current' : '' }] },
      { cells: ['mean row entropy', { text: fmt(off.meanEntropy), value: off.meanEntropy, className: s.scale ? '' : 'is-current' }, { text: fmt(on.meanEntropy), value: on.meanEntropy, className: s.scale ? 'is-current' : '' }] },
      { cells: ['Jacobian norm', { text: fmt(off.meanJacobianNorm), value: off.meanJacobianNorm, className: s.scale ? '' : 'is-current' }, { text: fmt(on.meanJacobianNorm), value: on.meanJacobianNorm, className: s.scale ? 'is-current' : '' }] },
    ]);
  }

  /** Both sweeps: the charts and the table behind them. */
  function drawSweeps(s, m) {
    const { sweep } = m;
    const lnT = (s.scale ? m.at.on : m.at.off).maxEntropy;
    const first = sweep.off[0];
    const last = sweep.off[DK_VALUES.length - 1];
    note2.set(`Scale off, from d_k = 2 to 512: the variance grows ${fmt(last.scoreVariance / first.scoreVariance)}\u00d7 (d_k grew 256\u00d7), the entropy falls from ${fmt(first.meanEntropy)} to ${fmt(last.meanEntropy)} and the gradient norm from ${fmt(first.meanJacobianNorm)} to ${fmt(last.meanJacobianNorm)}. Scale on, all three stay flat. The highlighted line is the one your toggle selects.`);
    const pts = (list, field) => list.map((r, i) => [DK_VALUES[i], r[field]]);
    const series = (field) => [
      { name: 'scale off: S\u2032 = S = q\u00b7k', className: 'cx-s-off', points: pts(sweep.off, field), active: !s.scale },
      { name: 'scale on: S\u2032 = q\u00b7k / \u221ad_k', className: 'cx-s-on', points: pts(sweep.on, field), active: s.scale },
    ];
    const xDomain = [2, 512];
    chVar.update({
      series: [...series('scoreVariance'), { name: 'd_k (what theory predicts without the scale)', className: 'cx-s-guide', points: DK_VALUES.map((d) => [d, d]), dashed: true }],
      marker: s.dk,
      xDomain,
    });
    chEnt.update({ series: series('meanEntropy'), refs: [{ y: lnT, label: `ln T = ${fmt(lnT)} (uniform row)`, className: 'is-max' }], marker: s.dk, xDomain, yDomain: [0, Math.max(lnT * 1.08, 0.1)] });
    chJac.update({ series: series('meanJacobianNorm'), marker: s.dk, xDomain });

    table.set(DK_VALUES.map((d, i) => {
      const a = sweep.off[i];
      const b = sweep.on[i];
      return {
        className: d === s.dk ? 'is-current' : '',
        cells: [
          String(d),
          { text: fmt(a.scoreVariance), value: a.scoreVariance, testid: `scale-var-off-${d}` },
          { text: fmt(b.scoreVariance), value: b.scoreVariance, testid: `scale-var-on-${d}` },
          { text: fmt(a.meanEntropy), value: a.meanEntropy, testid: `scale-entropy-off-${d}` },
          { text: fmt(b.meanEntropy), value: b.meanEntropy, testid: `scale-entropy-on-${d}` },
          { text: fmt(a.meanJacobianNorm), value: a.meanJacobianNorm, testid: `scale-jacobian-off-${d}` },
          { text: fmt(b.meanJacobianNorm), value: b.meanJacobianNorm, testid: `scale-jacobian-on-${d}` },
        ],
      };
    }));
  }

  return {
    frame: f,
    /** model: {sweep: {off, on}, at: {off, on}} or null (no result yet: only the controls are set). */
    update(s, m) {
      drawControls(s);
      if (!m) return;
      drawPoint(s, m);
      drawSweeps(s, m);
    },
  };
}
