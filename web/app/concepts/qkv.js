// Idea 2: Q, K and V come from the same input X′ through three weight matrices.
// Evidence: click any entry (i, d) of Q, K or V of a head; the page marks row i
// of X′ and column h·D + d of W_Q, W_K or W_V, writes out the dot product term
// by term and checks its sum against the engine's entry.

import { el } from '../views/dom.js';
import { createHeatmap } from '../views/heatmap.js';
import { createFormula, productTerms } from '../views/formula.js';
import { subscript, formatNumber } from '../format.js';
import {
  createDemoFrame, createMetric, createVerdict, createNote, textField, selectField, seedField,
  createCachedRun, rowOf, clampIndex, labelsOf, q, formatDiff,
} from './common.js';

const NAMES = { q: 'Q', k: 'K', v: 'V' };
const WHAT = { q: 'query', k: 'key', v: 'value' };
const WEIGHT = { q: 'wQuery', k: 'wKey', v: 'wValue' };
const PART = { q: 'query', k: 'key', v: 'value' };
const PLURAL = { q: 'queries', k: 'keys', v: 'values' };
const PE_OPTIONS = [
  { value: 'none', text: 'none' },
  { value: 'sinusoidal', text: 'sinusoidal' },
  { value: 'learned', text: 'learned' },
];

/** Column j of a matrix as a Float32Array. */
function column(m, j) {
  const out = new Float32Array(m.rows);
  for (let c = 0; c < m.rows; c++) out[c] = m.data[c * m.cols + j];
  return out;
}

/** Σ_c a[c]·b[c], accumulated in double precision. */
function dot(a, b) {
  let s = 0;
  for (let c = 0; c < a.length; c++) s += a[c] * b[c];
  return s;
}

export function createQkvDemo(root, { engine, onState, tooltip, palette }) {
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

  let trace = null;
  let head = 0;
  let D = 1;

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
        name: `${NAMES[m]}${subscript(head + 1)}[${i}, ${d}]  ${q(trace.tokens[i].text)}`,
        provenance: `= \u03a3_c X\u2032[${i}, c]\u00b7W_${NAMES[m]}[c, ${head * D + d}]. Click to write it out.`,
      }),
    });
  }

  const card2 = f.card('Where the selected entry comes from');
  const formula = createFormula(card2, { testid: 'qkv-formula' });
  const verdict = createVerdict(card2);
  const mEntry = createMetric(verdict, { label: 'entry computed by the engine', testid: 'qkv-entry' });
  const mDot = createMetric(verdict, { label: 'the dot product above, summed here', testid: 'qkv-dot' });
  const mDiff = createMetric(verdict, { label: '|difference|', testid: 'qkv-diff' });
  const bottom = el('div', 'cx-figure-row');
  card2.append(bottom);
  const hmX = createHeatmap(bottom, {
    id: 'qkv-input',
    tooltip,
    onCellClick: (i) => onState({ i }),
    describe: (i, col) => ({ name: `X\u2032[${i}, ${col}]  ${q(trace.tokens[i].text)}`, provenance: 'the input row: token embedding + positional encoding' }),
  });
  const hmW = createHeatmap(bottom, {
    id: 'qkv-weight',
    tooltip,
    onCellClick: (_, col) => onState({ head: Math.floor(col / D), d: col % D }),
    describe: (r, col) => ({ name: `W[${r}, ${col}]`, provenance: `column ${col} belongs to head ${Math.floor(col / D) + 1} (its column ${col % D}); seeded random weights` }),
  });
  const same = createFormula(card2, { testid: 'qkv-same' });

  const run = createCachedRun(engine, f);
  return {
    update(s) {
      inS.set(s.s);
      peSel.set(s.pe);
      seed.set(s.seed);
      const tr = run({ sentence: s.s, positional: s.pe, seed: s.seed });
      if (!tr) return;
      trace = tr;
      const T = tr.tokens.length;
      const H = tr.heads.length;
      const C = tr.config.dModel;
      D = tr.config.dHead;
      head = clampIndex(s.head, H);
      const i = clampIndex(s.i, T);
      const d = clampIndex(s.d, D);
      if (i !== s.i || d !== s.d || head !== s.head) queueMicrotask(() => onState({ i, d, head }));
      headSel.setOptions(tr.heads.map((_, x) => ({ value: x, text: `${x + 1} of ${H}` })));
      headSel.set(head);
      const pal = palette();
      const labels = labelsOf(tr);
      const h = tr.heads[head];
      const col = head * D + d;
      const M = NAMES[s.m];
      const word = q(tr.tokens[i].text);

      note1.set(`Head ${head + 1} of ${H}: each head has D = C/H = ${C}/${H} = ${D} columns of its own in W_Q, W_K and W_V. Selected: ${M}${subscript(head + 1)}[${i}, ${d}], the ${WHAT[s.m]} of ${word}. Click a cell or focus a matrix and use the arrow keys and Enter.`);
      for (const m of ['q', 'k', 'v']) {
        maps[m].update({
          matrix: h[PART[m]],
          title: `${NAMES[m]}${subscript(head + 1)} (${PLURAL[m]})`,
          rowLabels: labels,
          colLabels: null,
          kind: 'diverging',
          palette: pal,
          selRow: m === s.m ? i : null,
          selCol: m === s.m ? d : null,
          showCol: false,
        });
      }

      const w = tr[WEIGHT[s.m]];
      const x = rowOf(tr.input, i);
      const wc = column(w, col);
      const entry = h[PART[s.m]].data[i * D + d];
      const sum = dot(x, wc);
      const diff = Math.abs(sum - entry);
      formula.set([
        [`${M}${subscript(head + 1)}[${i}, ${d}] = \u03a3_c X\u2032[${i}, c] \u00b7 W_${M}[c, ${col}] = `, ...productTerms(x, wc, { max: C }), ' = ', { result: sum, testid: 'qkv-formula-result' }],
        { caption: `Row ${i} of X\u2032 (${word}) times column ${col} of W_${M} (head ${head + 1}, its column ${d}), ${C} products added.` },
      ]);
      mEntry.set(entry, { text: formatNumber(entry, 6) });
      mDot.set(sum, { text: formatNumber(sum, 6) });
      mDiff.set(diff, { tone: diff < 1e-5 ? 'zero' : 'bad', noteText: diff < 1e-5 ? 'they match (float rounding)' : 'they do not match' });

      hmX.update({ matrix: tr.input, title: 'Input X\u2032 (one row per token)', rowLabels: labels, colLabels: null, kind: 'diverging', palette: pal, selRow: i, selCol: null });
      hmW.update({
        matrix: w,
        title: `W_${M}, column ${col} marked`,
        rowLabels: Array.from({ length: C }, (_, r) => `c = ${r}`),
        colLabels: null,
        kind: 'diverging',
        palette: pal,
        selRow: null,
        selCol: col,
        colBands: { size: D, colors: pal.headColors, names: tr.heads.map((_, x) => `head ${x + 1}`) },
      });

      const others = ['q', 'k', 'v'].filter((m) => m !== s.m);
      same.set([
        ...others.map((m) => {
          const wm = column(tr[WEIGHT[m]], col);
          return [`${NAMES[m]}${subscript(head + 1)}[${i}, ${d}] = X\u2032[${i}] \u00b7 W_${NAMES[m]}[:, ${col}] = `, ...productTerms(x, wm, { max: 3 }), ' = ', { n: dot(x, wm) }, { muted: ` (engine: ${formatNumber(h[PART[m]].data[i * D + d], 3)})` }];
        }),
        { caption: `The same row X\u2032[${i}] gives the ${WHAT[others[0]]} and the ${WHAT[others[1]]} too: only the weight column changes. The three are not separate inputs. (|difference| of the entry above: ${formatDiff(diff)}.)` },
      ]);
    },
  };
}
