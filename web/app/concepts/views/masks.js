// Idea 7's view: the causal mask (each output row's change after an edit, the
// weights of the first sentence) and the padding mask (every sentence of the
// batch with the mask on and off, one sentence's weights and its weight on
// [PAD] per row). Draws the model the controller (../masks.js) gives it.

import { el } from '../../kit/dom.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { headMark, formatValue, tokenText } from '../../kit/format.js';
import {
  createDemoFrame, createMetric, createVerdict, createNote, textField, linesField, selectField, checkField, seedField,
  createTable, labelsOf, q, formatDiff, headOptions,
} from '../common.js';
import { createBars } from '../bars.js';
import { MAX_LINES, MAX_LINES_TEXT } from '../limits.js';

export function createMasksView(root, { onState, tooltip }) {
  const f = createDemoFrame(root, 'masks', {
    claim: [
      'A mask sets the scores of forbidden pairs to \u2212\u221e before the softmax, so their weights are exactly 0: a causal mask hides every later token, a padding mask hides the filler that makes short sentences as long as the longest.',
      'Whatever a token cannot see cannot change its output.',
    ],
  });
  const c = f.controls;
  const headSel = selectField(c, 'Head (for the maps)', { options: [], onChange: (h) => onState({ head: h }), parse: Number, testid: 'masks-head' });
  const seed = seedField(c, { onChange: (x) => onState({ seed: x }) });

  // causal
  const card1 = f.card('Causal mask: edit a later word');
  const c1 = el('div', 'cx-controls cx-inline-controls');
  card1.append(c1);
  const inA = textField(c1, 'Sentence', { testid: 'masks-a', onInput: (a) => onState({ a }) });
  const inB = textField(c1, 'The same sentence with a later word changed', { testid: 'masks-b', onInput: (b) => onState({ b }) });
  const causal = checkField(c1, 'Causal mask on', { onChange: (v) => onState({ causal: v }), testid: 'masks-causal' });
  const note1 = createNote(card1);
  const verdict1 = createVerdict(card1);
  const mBefore = createMetric(verdict1, { label: 'largest change in the output rows before the edit', testid: 'masks-causal-before' });
  const mAfter = createMetric(verdict1, { label: 'largest change in the output rows from the edit on', testid: 'masks-causal-after' });
  const row1 = el('div', 'cx-figure-row');
  card1.append(row1);
  const table1 = createTable(row1, { caption: 'Each output row: the largest difference between the first sentence and the edited one', headers: ['row', 'first', 'edited', 'largest difference', ''], testid: 'masks-causal-table', className: 'cx-rows-table' });
  let traceA = null;
  let head = 0;
  const hmA = createHeatmap(row1, {
    id: 'masks-causal-weights',
    share: 0.5,
    tooltip,
    describe: (i, j) => ({ name: `A${headMark(head)}[${i}, ${j}]`, provenance: `weight of ${q(traceA.tokens[j].text)} for ${q(traceA.tokens[i].text)}${j > i && traceA.config.mask === 'causal' ? ': a later token, masked' : ''}` }),
  });

  // padding
  const card2 = f.card('Padding mask: a batch of sentences of different lengths');
  const c2 = el('div', 'cx-controls cx-inline-controls');
  card2.append(c2);
  const inBatch = linesField(c2, 'Sentences, one per line (padded with [PAD] to the longest)', { testid: 'masks-batch', hint: `The first ${MAX_LINES} lines are computed.`, maxLength: MAX_LINES_TEXT, onInput: (bs) => { if (bs.length) onState({ bs }); } });
  const pad = checkField(c2, 'Padding mask on', { onChange: (v) => onState({ pad: v }), testid: 'masks-pad' });
  const shown = selectField(c2, 'Sentence shown', { options: [], onChange: (bi) => onState({ bi }), parse: Number, testid: 'masks-bi' });
  const note2 = createNote(card2);
  const verdict2 = createVerdict(card2);
  const mPadMax = createMetric(verdict2, { label: 'largest weight on a [PAD] key (all heads, all rows)', testid: 'masks-pad-max', wide: true });
  const mLeak = createMetric(verdict2, { label: 'weight leaked onto [PAD] per real row', testid: 'masks-pad-leak', wide: true });
  const table2 = createTable(card2, { caption: 'Every sentence of the batch: the largest weight on a [PAD] key with the padding mask on and off (0 means exactly zero), and the weight leaked per row when it is off', headers: ['sentence', '[PAD]s', 'mask on', 'mask off', 'leak, off'], testid: 'masks-pad-table' });
  const row2 = el('div', 'cx-figure-row');
  card2.append(row2);
  let traceP = null;
  const hmP = createHeatmap(row2, {
    id: 'masks-pad-weights',
    share: 0.6,
    tooltip,
    describe: (i, j) => ({ name: `A${headMark(head)}[${i}, ${j}]`, provenance: `${q(traceP.tokens[i].text)} \u2192 ${q(traceP.tokens[j].text)}${j >= traceP.realTokens ? ' ([PAD] key)' : ''}` }),
  });
  const bars = createBars(row2, { caption: 'Weight on [PAD] keys, per row', testid: 'masks-pad-rows', labelHeader: 'row', valueHeader: 'on [PAD]' });

  function drawControls(s, m) {
    inA.set(s.a);
    inB.set(s.b);
    causal.set(s.causal);
    inBatch.set(s.bs);
    pad.set(s.pad);
    seed.set(s.seed);
    if (!m) return;
    headSel.setOptions(headOptions(m.H));
    headSel.set(m.head);
  }

  function drawCausalVerdict(s, m) {
    const { a, b, k, before, after } = m;
    if (k < 0) note1.set('The two sentences are the same: change a word near the end of the second one.');
    else if (k === 0) note1.set('The sentences differ already at the first token, so there are no earlier rows to compare: change a later word instead.');
    else note1.set(`The sentences first differ at token ${k} (${q(a.tokens[k]?.text ?? '(end)')} \u2192 ${q(b.tokens[k]?.text ?? '(end)')}). ${s.causal ? `With the causal mask, rows 0 to ${k - 1} cannot look at it, so they stay exactly the same; rows from ${k} on see the new word and change.` : 'Without the mask every row sees the edited word, so every row changes.'}`);
    mBefore.set(before, {
      tone: Number.isNaN(before) ? null : before === 0 ? 'zero' : 'nonzero',
      noteText: Number.isNaN(before) ? '' : before === 0 ? 'unchanged' : 'changed: the edit leaks backwards',
    });
    mAfter.set(after, { tone: Number.isNaN(after) ? null : after > 0 ? 'nonzero' : 'zero', noteText: Number.isNaN(after) ? '' : after > 0 ? 'changed' : 'unchanged' });
  }

  function drawCausalRows(s, m, pal) {
    const { a, b, k, n, rowDiffs } = m;
    const rows = [];
    const T = Math.max(a.tokens.length, b.tokens.length);
    for (let i = 0; i < T; i++) {
      const has = i < n;
      const changed = has && rowDiffs[i] !== 0;
      rows.push({
        className: `${changed ? 'is-changed' : ''}${k >= 0 && i === k ? ' is-edit' : ''}`.trim(),
        testid: `masks-causal-row-${i}`,
        cells: [
          String(i),
          { text: a.tokens[i] ? tokenText(a.tokens[i].text) : '\u2014' },
          { text: b.tokens[i] ? tokenText(b.tokens[i].text) : '\u2014' },
          { text: has ? formatDiff(rowDiffs[i]) : '\u2014', value: has ? rowDiffs[i] : NaN, testid: `masks-row-diff-${i}` },
          { text: !has ? 'only in one' : changed ? 'changed' : 'unchanged', className: changed ? 'is-nonzero' : has ? 'is-zero' : '' },
        ],
      });
    }
    table1.set(rows);
    traceA = a;
    const Ta = a.tokens.length;
    hmA.update({
      matrix: a.heads[head].weights,
      title: `Weights A${headMark(head)}, first sentence${s.causal ? ' (causal)' : ''}`,
      shapeText: `${Ta} queries \u00d7 ${Ta} keys`,
      rowLabels: labelsOf(a),
      colLabels: labelsOf(a),
      kind: 'sequential',
      palette: pal,
      selRow: null,
      selCol: k >= 0 && k < Ta ? k : null,
    });
  }

  function drawPadding(s, m, bi, batch, H, pal) {
    const { trace: tr, stats: st, statsOn, statsOff, perRow } = m;
    traceP = tr;
    shown.setOptions(batch.map((x, i) => ({ value: i, text: `${i + 1}: ${tokenText(x)}` })));
    shown.set(bi);
    const T2 = tr.tokens.length;
    const kept = s.bs.length > MAX_LINES
      ? ` ${s.bs.length === MAX_LINES + 1 ? `Line ${MAX_LINES + 1} is` : `Lines ${MAX_LINES + 1}\u2013${s.bs.length} are`} kept in the box and the link but not computed: the demo takes ${MAX_LINES}.`
      : '';
    note2.set(`All ${batch.length} sentences are padded to ${T2} tokens. Sentence ${bi + 1} has ${tr.realTokens} real tokens and ${st.pads} [PAD]${st.pads === 1 ? '' : 's'}. ${s.pad ? 'With the padding mask, the [PAD] columns get exactly zero weight in every row.' : 'Without the padding mask, every row puts some weight on the [PAD] keys: filler leaks into the outputs.'}${kept}`);
    mPadMax.set(st.pads ? st.max : NaN, {
      text: st.pads ? formatDiff(st.max) : 'no [PAD] in this sentence',
      tone: !st.pads ? null : st.max === 0 ? 'zero' : 'nonzero',
      noteText: !st.pads ? 'pick a shorter sentence' : st.max === 0 ? 'exactly zero' : 'weight leaks onto padding',
    });
    mLeak.set(st.pads ? st.meanLeak : NaN, { text: st.pads ? formatDiff(st.meanLeak) : '\u2014', tone: !st.pads ? null : st.meanLeak === 0 ? 'zero' : 'nonzero', noteText: st.pads ? `mean over ${tr.realTokens} rows and ${H} heads` : '' });
    table2.set(batch.map((x, i) => ({
      className: i === bi ? 'is-current' : '',
      cells: [
        { text: `${i + 1}: ${tokenText(x)}`, title: x },
        String(statsOn[i].pads),
        { text: statsOn[i].pads ? formatDiff(statsOn[i].max, { short: true }) : '\u2014', value: statsOn[i].pads ? statsOn[i].max : NaN, testid: `masks-pad-on-${i}`, className: statsOn[i].pads && statsOn[i].max === 0 ? 'is-zero' : '' },
        { text: statsOff[i].pads ? formatDiff(statsOff[i].max, { short: true }) : '\u2014', value: statsOff[i].pads ? statsOff[i].max : NaN, testid: `masks-pad-off-${i}`, className: statsOff[i].pads && statsOff[i].max > 0 ? 'is-nonzero' : '' },
        { text: statsOff[i].pads ? formatValue(statsOff[i].meanLeak, 3) : '\u2014', value: statsOff[i].meanLeak, testid: `masks-leak-off-${i}` },
      ],
    })));
    hmP.update({
      matrix: tr.heads[head].weights,
      title: `Weights A${headMark(head)}, sentence ${bi + 1}, padding mask ${s.pad ? 'on' : 'off'}`,
      shapeText: `${T2} queries \u00d7 ${T2} keys`,
      rowLabels: labelsOf(tr),
      colLabels: labelsOf(tr),
      kind: 'sequential',
      palette: pal,
      selRow: null,
      selCol: null,
    });
    bars.update({
      labels: labelsOf(tr),
      values: perRow,
      range: Math.max(1e-9, ...perRow),
      shapeText: `head ${head + 1}`,
      digits: 3,
      foot: [el('span', 'num', { text: `largest ${formatDiff(Math.max(...perRow))}` })],
    });
  }

  return {
    frame: f,
    /** model: {H, head, bi, batch, causal: causalModel(…), padding: paddingModel(…)} or null (only the controls are set). */
    update(s, m, pal) {
      drawControls(s, m);
      if (!m) return;
      head = m.head;
      drawCausalVerdict(s, m.causal);
      drawCausalRows(s, m.causal, pal);
      drawPadding(s, m.padding, m.bi, m.batch, m.H, pal);
    },
  };
}
