// Idea 2's view: Q, K and V of one head (click an entry), then where the
// selected entry comes from: its row of X′, its column of W, the dot product
// written out, and the same row giving the other two. Draws the model the
// controller (../qkv.js) gives it.

import { el } from '../../kit/dom.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { createFormula, productTerms } from '../../kit/formula.js';

/** The concept lab writes its formulas with 3 significant digits, like its metrics and bars. */
const DIGITS = 3;
import { headMark, formatValue } from '../../kit/format.js';
import {
  createDemoFrame, createMetric, createVerdict, createNote, textField, selectField, seedField,
  labelsOf, q, formatDiff, headOptions,
} from '../common.js';
import { PE_OPTIONS } from './options.js';

const NAMES = { q: 'Q', k: 'K', v: 'V' };
const WHAT = { q: 'query', k: 'key', v: 'value' };
const PLURAL = { q: 'queries', k: 'keys', v: 'values' };

export function createQkvView(root, { onState, tooltip }) {
  const f = createDemoFrame(root, 'qkv', {
    claim: [
      'There is one input per token, the row X\u2032 = embedding + position. Q, K and V are three linear maps of that same row, each with its own learned weight matrix; click any entry to see the one row and the one column it came from.',
    ],
  });
  const c = f.controls;
  const inS = textField(c, 'Sentence', { testid: 'qkv-s', onInput: (s) => onState({ s }) });
  const peSel = selectField(c, 'Positional encoding', { options: PE_OPTIONS, onChange: (pe) => onState({ pe }), testid: 'qkv-pe' });
  const headSel = selectField(c, 'Head', { options: [], onChange: (h) => onState({ head: h }), parse: Number, testid: 'qkv-head' });
  const seed = seedField(c, { onChange: (x) => onState({ seed: x }) });

  let model = null; // the last one drawn, for the tooltips and clicks
  const D = () => model?.D ?? 1;

  const card1 = f.card('Queries, keys and values of one head: click an entry');
  const note1 = createNote(card1);
  const top = el('div', 'cx-figure-row');
  card1.append(top);
  const maps = {};
  for (const m of ['q', 'k', 'v']) {
    maps[m] = createHeatmap(top, {
      id: `qkv-${m}`,
      share: 0.32,
      tooltip,
      onCellClick: (i, d) => onState({ m, i, d }),
      describe: (i, d) => ({
        name: `${NAMES[m]}${headMark(model.head)}[${i}, ${d}]  ${q(model.trace.tokens[i].text)}`,
        provenance: `= \u03a3_c X\u2032[${i}, c]\u00b7W_${NAMES[m]}[c, ${model.head * D() + d}]. Click to write it out.`,
      }),
    });
  }

  const card2 = f.card('Where the selected entry comes from');
  const formula = createFormula(card2, { testid: 'qkv-formula', digits: DIGITS });
  const verdict = createVerdict(card2);
  const mEntry = createMetric(verdict, { label: 'the entry, computed by the engine', testid: 'qkv-entry' });
  const mDot = createMetric(verdict, { label: 'the dot product above, added up here', testid: 'qkv-dot' });
  const mDiff = createMetric(verdict, { label: 'difference between the two', testid: 'qkv-diff' });
  const bottom = el('div', 'cx-figure-row');
  card2.append(bottom);
  const hmX = createHeatmap(bottom, {
    id: 'qkv-input',
    tooltip,
    onCellClick: (i) => onState({ i }),
    describe: (i, col) => ({ name: `X\u2032[${i}, ${col}]  ${q(model.trace.tokens[i].text)}`, provenance: 'the input row: token embedding + positional encoding' }),
  });
  const hmW = createHeatmap(bottom, {
    id: 'qkv-weight',
    tooltip,
    onCellClick: (_, col) => onState({ head: Math.floor(col / D()), d: col % D() }),
    describe: (r, col) => ({ name: `W[${r}, ${col}]`, provenance: `column ${col} belongs to head ${Math.floor(col / D()) + 1} (its column ${col % D()}); seeded random weights` }),
  });
  const same = createFormula(card2, { testid: 'qkv-same', digits: DIGITS });

  function drawControls(s, m) {
    inS.set(s.s);
    peSel.set(s.pe);
    seed.set(s.seed);
    if (!m) return;
    headSel.setOptions(headOptions(m.H));
    headSel.set(m.head);
  }

  function drawMaps(s, m, pal) {
    const { head, i, d, T, H, C } = m;
    const labels = labelsOf(m.trace);
    note1.set(`Head ${head + 1} of ${H}: each head has d_k = C/H = ${C}/${H} = ${m.D} columns of its own in W_Q, W_K and W_V. Selected: ${NAMES[s.m]}${headMark(head)}[${i}, ${d}], the ${WHAT[s.m]} of ${q(m.trace.tokens[i].text)}. Click a cell or focus a matrix and use the arrow keys and Enter.`);
    for (const x of ['q', 'k', 'v']) {
      maps[x].update({
        matrix: m.matrices[x],
        title: `${NAMES[x]}${headMark(head)} (${PLURAL[x]})`,
        shapeText: `${T} tokens \u00d7 d_k = ${m.D}`,
        rowLabels: labels,
        colLabels: null,
        kind: 'diverging',
        palette: pal,
        selRow: x === s.m ? i : null,
        selCol: x === s.m ? d : null,
        showCol: false,
      });
    }
  }

  function drawEntry(s, m, pal) {
    const { head, i, d, col, C, x } = m;
    const e = m.selected;
    const M = NAMES[s.m];
    const word = q(m.trace.tokens[i].text);
    formula.set([
      [`${M}${headMark(head)}[${i}, ${d}] = \u03a3_c X\u2032[${i}, c] \u00b7 W_${M}[c, ${col}] = `, ...productTerms(x, e.column, { max: C, digits: DIGITS }), ' = ', { result: e.sum, testid: 'qkv-formula-result' }],
      { caption: `Row ${i} of X\u2032 (${word}) times column ${col} of W_${M} (head ${head + 1}, its column ${d}), ${C} products added.` },
    ]);
    mEntry.set(e.engine, { text: formatValue(e.engine, 6) });
    mDot.set(e.sum, { text: formatValue(e.sum, 6) });
    mDiff.set(e.diff, { tone: e.diff < 1e-5 ? 'zero' : 'bad', noteText: e.diff < 1e-5 ? 'they match (float rounding)' : 'they do not match' });

    hmX.update({ matrix: m.trace.input, title: 'Input X\u2032 (one row per token)', shapeText: `${m.T} tokens \u00d7 C = ${C}`, rowLabels: labelsOf(m.trace), colLabels: null, kind: 'diverging', palette: pal, selRow: i, selCol: null });
    hmW.update({
      matrix: e.weights,
      title: `W_${M}, column ${col} marked`,
      shapeText: `${C} rows c \u00d7 ${C} columns (${m.H} heads \u00d7 d_k = ${m.D})`,
      rowLabels: Array.from({ length: C }, (_, r) => `c = ${r}`),
      colLabels: null,
      kind: 'diverging',
      palette: pal,
      selRow: null,
      selCol: col,
      colBands: { size: m.D, colors: pal.headColors, names: m.trace.heads.map((_, k) => `head ${k + 1}`) },
    });
    same.set([
      ...m.others.map((o) => [`${NAMES[o.m]}${headMark(head)}[${i}, ${d}] = X\u2032[${i}] \u00b7 W_${NAMES[o.m]}[:, ${col}] = `, ...productTerms(x, o.column, { max: 3, digits: DIGITS }), ' = ', { n: o.sum }, { muted: ` (engine: ${formatValue(o.engine, 3)})` }]),
      { caption: `The same row X\u2032[${i}] gives the ${WHAT[m.others[0].m]} and the ${WHAT[m.others[1].m]} too: only the weight column changes. The three are not separate inputs. (Difference between the entry above and its dot product: ${formatDiff(e.diff)}.)` },
    ]);
  }

  return {
    frame: f,
    /** model: qkvModel(…) or null (no result yet: only the controls are set). */
    update(s, m, pal) {
      drawControls(s, m);
      if (!m) return;
      model = m;
      drawMaps(s, m, pal);
      drawEntry(s, m, pal);
    },
  };
}
