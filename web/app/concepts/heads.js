// Idea 5: multi-head attention. Each head has its own slice of W_Q, W_K, W_V,
// so the heads' weight matrices differ; with shareHeads every head uses head
// 0's weights and the difference between heads drops to exactly 0.

import { el } from '../views/dom.js';
import { createHeatmap } from '../views/heatmap.js';
import { subscript } from '../format.js';
import {
  createDemoFrame, createMetric, createVerdict, createNote, textField, selectField, checkField, seedField, createTable,
  createCachedRun, maxAbs, labelsOf, q, formatDiff,
} from './common.js';
import { createRace } from './race-view.js';

const MAX_HEADS = 8;
const D_MODEL = 16;

export function createHeadsDemo(root, { engine, onState, tooltip, palette }) {
  const f = createDemoFrame(root, 'heads', {
    claim: [
      'Every head projects the tokens with weights of its own, so each head computes its own pattern of attention over the same sentence.',
      'Make the heads share one set of weights and they become exact copies: the difference between them drops to zero.',
    ],
  });
  const c = f.controls;
  const inS = textField(c, 'Sentence', { testid: 'heads-s', onInput: (s) => onState({ s }) });
  const hSel = selectField(c, 'Heads (model width 16)', { options: [2, 4, 8].map((h) => ({ value: h, text: String(h) })), onChange: (h) => onState({ h }), parse: Number, testid: 'heads-h' });
  const share = checkField(c, 'Share weights across heads', { onChange: (v) => onState({ share: v }), testid: 'heads-share', hint: 'every head uses head 1\u2019s W_Q, W_K, W_V columns' });
  const seed = seedField(c, { onChange: (x) => onState({ seed: x }) });

  let trace = null;
  const card1 = f.card('Attention weights of every head, side by side');
  const note1 = createNote(card1);
  const verdict = createVerdict(card1);
  const mMax = createMetric(verdict, { label: 'largest difference between two heads, max |A\u1d62 \u2212 A\u2c7c|', testid: 'heads-diff', wide: true });
  const mMean = createMetric(verdict, { label: 'mean |A\u1d62 \u2212 A\u2c7c| over all pairs and cells', testid: 'heads-mean-diff' });
  const mOut = createMetric(verdict, { label: 'head outputs, max |O\u1d62 \u2212 O\u2c7c|', testid: 'heads-out-diff' });
  const grid = el('div', 'cx-heads-grid');
  card1.append(grid);
  const maps = [];
  const cellWidth = () => {
    const cols = Math.max(1, Math.min(maps.filter((m) => !m.off).length, Math.floor((card1.clientWidth - 32) / 200) || 1));
    return Math.max(150, Math.floor((card1.clientWidth - 32) / cols) - 16);
  };
  for (let h = 0; h < MAX_HEADS; h++) {
    const hm = createHeatmap(grid, {
      id: `heads-${h}`,
      compact: true,
      tooltip,
      getWidth: cellWidth,
      describe: (i, j) => ({ name: `A${subscript(h + 1)}[${i}, ${j}]`, provenance: `how much ${q(trace.tokens[i].text)} attends to ${q(trace.tokens[j].text)} in head ${h + 1}` }),
    });
    maps.push({ hm, off: false });
  }
  const card2 = f.card('How different each pair of heads is');
  const note2 = createNote(card2);
  const table = createTable(card2, { caption: 'max |A\u1d62 \u2212 A\u2c7c| for each pair of heads', headers: [''], testid: 'heads-pairs' });
  let headersFor = 0;

  const race = createRace(f, 'heads', { onState, tooltip, palette });
  const run = createCachedRun(engine, f);
  return {
    hide: () => race.hide(),
    update(s) {
      race.update(s);
      inS.set(s.s);
      hSel.set(s.h);
      share.set(s.share);
      seed.set(s.seed);
      const tr = run({ sentence: s.s, dModel: D_MODEL, heads: s.h, shareHeads: s.share, seed: s.seed });
      if (!tr) return;
      trace = tr;
      const H = tr.heads.length;
      const T = tr.tokens.length;
      const labels = labelsOf(tr);
      const pal = palette();
      // pairwise differences
      const pair = [];
      let worst = 0;
      let meanSum = 0;
      let pairs = 0;
      let worstOut = 0;
      for (let a = 0; a < H; a++) {
        pair.push([]);
        for (let b = 0; b < H; b++) {
          const d = maxAbs(tr.heads[a].weights.data, tr.heads[b].weights.data);
          pair[a].push(d);
          if (b > a) {
            worst = Math.max(worst, d);
            let m = 0;
            const A = tr.heads[a].weights.data;
            const B = tr.heads[b].weights.data;
            for (let x = 0; x < A.length; x++) m += Math.abs(A[x] - B[x]);
            meanSum += m / A.length;
            pairs++;
            worstOut = Math.max(worstOut, maxAbs(tr.heads[a].output.data, tr.heads[b].output.data));
          }
        }
      }
      const mean = pairs ? meanSum / pairs : 0;
      note1.set(`${H} heads of width D = ${D_MODEL}/${H} = ${D_MODEL / H}, one map each: rows are queries, columns keys, and a cell\u2019s colour is its weight from 0 to 1. ${s.share ? 'Weights are shared: every head is head 1.' : 'Each head has its own weights.'} Hover a cell for its exact value.`);
      mMax.set(worst, { tone: worst === 0 ? 'zero' : 'nonzero', noteText: worst === 0 ? 'identical heads' : 'the heads differ' });
      mMean.set(mean, { tone: mean === 0 ? 'zero' : 'nonzero' });
      mOut.set(worstOut, { tone: worstOut === 0 ? 'zero' : 'nonzero' });
      maps.forEach((m, h) => {
        m.off = h >= H;
        m.hm.hidden = m.off;
      });
      maps.forEach((m, h) => {
        if (h >= H) return;
        m.hm.update({ matrix: tr.heads[h].weights, title: `Head ${h + 1}`, shapeText: `${T} \u00d7 ${T}`, rowLabels: labels, colLabels: labels, kind: 'sequential', palette: pal, selRow: null, selCol: null });
      });
      note2.set(s.share
        ? 'With shared weights every pair is exactly 0: the heads repeat one calculation, and adding heads adds nothing.'
        : `Every pair differs (largest ${formatDiff(worst)}). Tick \u201cShare weights across heads\u201d to force one calculation on all of them.`);
      if (headersFor !== H) {
        headersFor = H;
        const thead = table.element.querySelector('thead tr');
        thead.replaceChildren(el('th', null, { text: '', attrs: { scope: 'col' } }), ...tr.heads.map((_, b) => el('th', null, { text: `head ${b + 1}`, attrs: { scope: 'col' } })));
      }
      table.set(pair.map((r, a) => ({
        cells: [`head ${a + 1}`, ...r.map((d, b) => ({ text: a === b ? '\u2014' : formatDiff(d), value: d, testid: `heads-pair-${a}-${b}`, className: a === b ? 'is-muted' : d === 0 ? 'is-zero' : '' }))],
      })));
    },
  };
}
