// Learn 6: back into the queries, keys and values: dQ = dS·K, dK = dSᵀ·Q, dV = Pᵀ·dO.
// With RoPE, Q and K are the turned q′ and k′: RoPE's backward turns dQ and dK back (by
// −m·θᵢ, the rotation's transpose) before they reach W_Q and W_K (learn-dparams).

import { tok, at, row, col, clampIndex } from '../../kit/common.js';
import { learnStep, learnMap, shownHead, gradientTerms } from './learn-frame.js';
import { learnFigureTitle } from '../../kit/notation.js';

export const createLearnQkvStep = learnStep('dqkv', {
  explain: (tr) => [
    ...(tr.rope ? ['With rotary positions (RoPE), Q and K here are the turned q\u2032 and k\u2032 of step 4b. Turning is a rotation of each (i, i + d_k/2) pair by m\u00b7\u03b8\u1d62, so RoPE\u2019s backward is the rotation back by \u2212m\u00b7\u03b8\u1d62: the last line below gives dq before RoPE, which W_Q gets (step 7).'] : []),
    'A score is a dot product, S[i, j] = q\u1d62\u00b7k\u2c7c, so its gradient goes to both sides: each query moves along the keys it should score higher (dQ = dS\u00b7K), each key along the queries (dK = dS\u1d40\u00b7Q). The values get theirs straight from the output: dV = P\u1d40\u00b7dO, each value moved by the rows that read it, as much as they read it.',
    'If dS collapsed (step 5), dQ and dK collapse with it: W_Q and W_K learn nothing. dV does not go through the softmax\u2019s backward.',
  ],
  build(f, ctx, trace) {
    const r = f.row('figure-row-compact');
    const select = (i, j) => ({ query: i, dim: j });
    const map = (id, name, provenance) => learnMap(r, ctx, id, (i, j) => ({ name: `${name}[${i}, ${j}]  ${tok(trace(), i)}`, provenance }), { share: 0.33, compact: true, select });
    const hmQ = map('learn-dq', 'dQ', '= \u03a3_j dS[i, j]\u00b7K[j, d]: how this query should move');
    const hmK = map('learn-dk', 'dK', '= \u03a3_i dS[i, j]\u00b7Q[i, d]: how this key should move');
    const hmV = map('learn-dv', 'dV', '= \u03a3_i P[i, j]\u00b7dO[i, d]: how this value should move');
    return (tr, v, L) => {
      if (!L) return;
      const { head, D } = shownHead(L, tr, v);
      const d = clampIndex(v.d, D);
      const q = v.q;
      f.formula.set([
        [`dQ[${q}, ${d}] = \u03a3_j dS[${q}, j]\u00b7K[j, ${d}] = `, ...gradientTerms(row(head.dScores, q), col(head.key, d), { max: 4 }), ' = ', { result: at(head.dQuery, q, d) }],
        [`dK[${q}, ${d}] = \u03a3_i dS[i, ${q}]\u00b7Q[i, ${d}] = `, ...gradientTerms(col(head.dScores, q), col(head.query, d), { max: 4 }), ' = ', { n: at(head.dKey, q, d) }],
        [`dV[${q}, ${d}] = \u03a3_i P[i, ${q}]\u00b7dO[i, ${d}] = `, ...gradientTerms(col(head.weights, q), col(head.dOutput, d), { max: 4 }), ' = ', { n: at(head.dValue, q, d) }],
        ...ropeBackLine(tr, head, q, d, D),
      ]);
      const common = { kind: 'diverging', palette: v.palette, rowLabels: v.labels, colLabels: null, selRow: v.q, selCol: d };
      hmQ.update({ ...common, matrix: head.dQuery, title: learnFigureTitle('dqkv', tr, v.head) });
      hmK.update({ ...common, matrix: head.dKey, title: 'dK = dS\u1d40\u00b7Q' });
      hmV.update({ ...common, matrix: head.dValue, title: 'dV = P\u1d40\u00b7dO' });
    };
  },
});

/**
 * RoPE's backward at (m, d): the pair (i, i + D/2) of dQ turned back by −m·θᵢ, the rotation's
 * transpose: dq[i] = dQ[i]·cos + dQ[i + D/2]·sin, dq[i + D/2] = dQ[i + D/2]·cos − dQ[i]·sin.
 * The engine's dq before RoPE is the line's value; none without RoPE.
 */
function ropeBackLine(tr, head, m, d, D) {
  const theta = tr.rope?.frequencies;
  if (!theta || !head.dQueryBeforeRope) return [];
  const half = D / 2;
  const i = d % half;
  const a = m * theta[i];
  const [c, s] = [Math.cos(a), Math.sin(a)];
  const here = at(head.dQuery, m, d);
  const other = at(head.dQuery, m, d < half ? d + half : i);
  const angle = `${m}\u03b8${subscript(i)}`;
  const terms = d < half
    ? [`dq[${m}, ${d}] = dQ[${m}, ${d}]\u00b7cos ${angle} + dQ[${m}, ${d + half}]\u00b7sin ${angle} = `, { n: here }, '\u00b7', { f: c }, ' + ', { n: other }, '\u00b7', { f: s }]
    : [`dq[${m}, ${d}] = dQ[${m}, ${d}]\u00b7cos ${angle} \u2212 dQ[${m}, ${i}]\u00b7sin ${angle} = `, { n: here }, '\u00b7', { f: c }, ' \u2212 ', { n: other }, '\u00b7', { f: s }];
  return [[...terms, ' = ', { result: at(head.dQueryBeforeRope, m, d), testid: 'learn-rope-back' }]];
}

const SUBSCRIPTS = '\u2080\u2081\u2082\u2083\u2084\u2085\u2086\u2087\u2088\u2089';
const subscript = (n) => String(n).replace(/\d/g, (c) => SUBSCRIPTS[Number(c)]);
