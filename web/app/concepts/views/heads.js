// Idea 5's view: the attention weights of every head side by side, the
// verdict (how different the heads are) and the table of every pair. Draws the
// model the controller (../heads.js) gives it.

import { el } from '../../kit/dom.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { headMark } from '../../kit/format.js';
import {
  createDemoFrame, createMetric, createVerdict, createNote, textField, selectField, checkField, seedField, createTable,
  labelsOf, q, formatDiff,
} from '../common.js';

export function createHeadsView(root, { onState, tooltip, maxHeads, dModel }) {
  const f = createDemoFrame(root, 'heads', {
    claim: [
      'Every head projects the tokens with weights of its own, so each head computes its own pattern of attention over the same sentence.',
      'Make the heads share one set of weights and they become exact copies: the difference between them drops to zero.',
    ],
  });
  const c = f.controls;
  const inS = textField(c, 'Sentence', { testid: 'heads-s', onInput: (s) => onState({ s }) });
  const hSel = selectField(c, `Heads (model width ${dModel})`, { options: [2, 4, 8].map((h) => ({ value: h, text: String(h) })), onChange: (h) => onState({ h }), parse: Number, testid: 'heads-h' });
  const share = checkField(c, 'Share weights across heads', { onChange: (v) => onState({ share: v }), testid: 'heads-share', hint: 'every head uses head 1\u2019s W_Q, W_K, W_V columns' });
  const seed = seedField(c, { onChange: (x) => onState({ seed: x }) });

  let trace = null; // the last one drawn, for the tooltips
  const card1 = f.card('Attention weights of every head, side by side');
  const note1 = createNote(card1);
  const verdict = createVerdict(card1);
  const mMax = createMetric(verdict, { label: 'largest difference between the weights of two heads', testid: 'heads-diff', wide: true });
  const mMean = createMetric(verdict, { label: 'mean difference, over all pairs of heads and all cells', testid: 'heads-mean-diff' });
  const mOut = createMetric(verdict, { label: 'largest difference between the outputs of two heads', testid: 'heads-out-diff' });
  const grid = el('div', 'cx-heads-grid');
  card1.append(grid);
  const maps = [];
  const cellWidth = () => {
    const cols = Math.max(1, Math.min(maps.filter((m) => !m.off).length, Math.floor((card1.clientWidth - 32) / 200) || 1));
    return Math.max(150, Math.floor((card1.clientWidth - 32) / cols) - 16);
  };
  for (let h = 0; h < maxHeads; h++) {
    const hm = createHeatmap(grid, {
      id: `heads-${h}`,
      compact: true,
      tooltip,
      getWidth: cellWidth,
      describe: (i, j) => ({ name: `A${headMark(h)}[${i}, ${j}]`, provenance: `how much ${q(trace.tokens[i].text)} attends to ${q(trace.tokens[j].text)} in head ${h + 1}` }),
    });
    maps.push({ hm, off: false });
  }
  const card2 = f.card('How different each pair of heads is');
  const note2 = createNote(card2);
  const table = createTable(card2, { caption: 'Largest difference between the weights of each pair of heads (0: the same numbers)', headers: [''], testid: 'heads-pairs' });
  let headersFor = 0;

  function drawControls(s) {
    inS.set(s.s);
    hSel.set(s.h);
    share.set(s.share);
    seed.set(s.seed);
  }

  function drawMaps(s, m, pal) {
    const { H, T } = m;
    const labels = labelsOf(m.trace);
    note1.set(`${H} heads of width d_k = C/H = ${dModel}/${H} = ${dModel / H}, one map each: rows are queries, columns keys, and a cell\u2019s colour is its weight from 0 to 1. ${s.share ? 'Weights are shared: every head is head 1.' : 'Each head has its own weights.'} Hover a cell for its exact value.`);
    mMax.set(m.worst, { tone: m.worst === 0 ? 'zero' : 'nonzero', noteText: m.worst === 0 ? 'identical heads' : 'the heads differ' });
    mMean.set(m.mean, { tone: m.mean === 0 ? 'zero' : 'nonzero' });
    mOut.set(m.worstOut, { tone: m.worstOut === 0 ? 'zero' : 'nonzero' });
    maps.forEach((x, h) => {
      x.off = h >= H;
      x.hm.hidden = x.off;
    });
    maps.forEach((x, h) => {
      if (h >= H) return;
      x.hm.update({ matrix: m.trace.heads[h].weights, title: `Head ${h + 1}`, shapeText: `${T} queries \u00d7 ${T} keys`, rowLabels: labels, colLabels: labels, kind: 'sequential', palette: pal, selRow: null, selCol: null });
    });
  }

  function drawPairs(s, m) {
    note2.set(s.share
      ? 'With shared weights every pair is exactly 0: the heads repeat one calculation, and adding heads adds nothing.'
      : `Every pair differs (largest ${formatDiff(m.worst)}). Tick \u201cShare weights across heads\u201d to force one calculation on all of them.`);
    if (headersFor !== m.H) {
      headersFor = m.H;
      const thead = table.element.querySelector('thead tr');
      thead.replaceChildren(el('th', null, { text: '', attrs: { scope: 'col' } }), ...m.trace.heads.map((_, b) => el('th', null, { text: `head ${b + 1}`, attrs: { scope: 'col' } })));
    }
    table.set(m.pair.map((r, a) => ({
      cells: [`head ${a + 1}`, ...r.map((d, b) => ({ text: a === b ? '\u2014' : formatDiff(d), value: d, testid: `heads-pair-${a}-${b}`, className: a === b ? 'is-muted' : d === 0 ? 'is-zero' : '' }))],
    })));
  }

  return {
    frame: f,
    /** model: headsModel(…) or null (no result yet: only the controls are set). */
    update(s, m, pal) {
      drawControls(s);
      if (!m) return;
      trace = m.trace;
      drawMaps(s, m, pal);
      drawPairs(s, m);
    },
  };
}
