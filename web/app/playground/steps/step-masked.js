// Step 7: the mask. Forbidden scores become −∞; clicking a cell of the mask
// toggles it (switching the mask to "custom"). With ALiBi positions this is also
// where each head's bias −m_h·|i − j| joins the scores (its matrix is shown).

import { createStepFrame, tok, at, clampIndex, createOffer } from '../../kit/common.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { el } from '../../kit/dom.js';
import { formatValue, DIGITS, subscript } from '../../kit/format.js';
import { alibiSlope, alibiBias, softmaxInput, slopeRule, maskedTitle } from '../alibi.js';

const TEXT = {
  none: 'No mask: every token may look at every token, including later ones.',
  causal: 'Causal mask: a token may only look at itself and the tokens before it, as when a model writes text left to right. Later keys are blocked.',
  padding: 'Padding mask: [PAD] tokens only fill shorter sentences of a batch up to the same length, so no query may look at them.',
  'causal+padding': 'Causal and padding mask: only earlier tokens, and never [PAD].',
  custom: 'Your own mask: each cell you block is forbidden for that query.',
};

const headSub = (h) => subscript(h + 1);

/** A mask of all 1s blocks nothing: why, and where a mask shows something (null when it does here). */
export function emptyMaskOffer(tr) {
  if (!tr.mask.data.every((x) => x !== 0)) return null;
  if (!tr.model) return { text: 'Every cell is 1: no mask, so nothing is blocked.', label: 'Use a causal mask \u2192', patch: { mask: 'causal' } };
  if (tr.model.causal) return null;
  return {
    text: 'Every cell is 1: this model reads the whole sentence, so it blocks nothing. The language model is causal: each word sees only the words before it.',
    label: 'See its mask \u2192',
    patch: { model: 'language', step: 'masked' },
  };
}

export function createMaskedStep(root, ctx) {
  const f = createStepFrame(root, 'masked');
  const offer = createOffer(f, (patch) => ctx.select(patch));
  let trace = null;
  const r = f.row();
  const hmMask = createHeatmap(r, {
    id: 'mask',
    share: 0.45,
    tooltip: ctx.tooltip, getWidth: ctx.width,
    onCellClick: (i, j) => ctx.toggleMask(i, j),
    describe: (i, j, value) => ({ name: `mask[${i}, ${j}]  ${tok(trace, i)} \u2192 ${tok(trace, j)}`, provenance: trace.model ? `${value ? 'allowed' : 'blocked'}: the mask this model was trained with` : `${value ? 'allowed' : 'blocked'}: click to ${value ? 'block' : 'allow'} it` }),
  });
  // ALiBi: the head's bias, beside the mask (hidden for every other positional kind)
  const biasBox = el('div', 'alibi-box', { testid: 'alibi-bias' });
  const biasNote = el('p', 'figure-note', { testid: 'alibi-slope' });
  biasBox.append(biasNote);
  r.append(biasBox);
  let slopeNow = 0;
  const hmBias = createHeatmap(biasBox, {
    id: 'alibi',
    share: 0.45,
    tooltip: ctx.tooltip, getWidth: ctx.width,
    onCellClick: (i, j) => ctx.select({ query: i, key: j }),
    describe: (i, j, value) => ({ name: `ALiBi bias[${i}, ${j}]  ${tok(trace, i)} \u2192 ${tok(trace, j)}`, provenance: `= \u2212m\u00b7|${i} \u2212 ${j}| = \u2212${formatValue(slopeNow, DIGITS.formula)} \u00d7 ${Math.abs(i - j)} = ${formatValue(value, DIGITS.formula)}` }),
  });
  const hm = createHeatmap(r, {
    id: 'masked',
    share: 0.52,
    tooltip: ctx.tooltip, getWidth: ctx.width,
    onCellClick: (i, j) => ctx.select({ query: i, key: j }),
    describe: (i, j, value) => ({ name: `masked S\u2032[${i}, ${j}]  ${tok(trace, i)} \u2192 ${tok(trace, j)}`, provenance: value === -Infinity ? 'blocked by the mask: \u2212\u221e, so its weight will be exactly 0' : slopeNow ? `= S\u2032[${i}, ${j}] \u2212 m\u00b7|${i} \u2212 ${j}| (ALiBi; allowed by the mask)` : `= S\u2032[${i}, ${j}] (allowed by the mask)` }),
  });

  return {
    update(tr, v) {
      trace = tr;
      const h = tr.heads[v.head];
      const k = clampIndex(v.k, v.T);
      const allowed = at(tr.mask, v.q, k) !== 0;
      const kind = tr.config.mask;
      if (tr.model) {
        f.explain(
          TEXT[kind] ?? TEXT.none,
          `A blocked score is set to \u2212\u221e before softmax, and e^(\u2212\u221e) = 0, so its weight is exactly zero. This model was trained with ${tr.model.causal ? 'a causal mask (it predicts each next word, so it must not see it)' : 'no mask (it reads the whole sentence before answering)'}; the mask is part of the model, so it cannot be edited here. Pick random weights to draw your own.`,
        );
      } else {
        f.explain(
          TEXT[kind] ?? TEXT.none,
          `A blocked score is set to \u2212\u221e before softmax, and e^(\u2212\u221e) = 0, so its weight is exactly zero. Click a cell of the mask to block or allow it${kind === 'custom' ? '' : ' (this switches the mask to custom)'}.`,
        );
      }
      offer.update(emptyMaskOffer(tr));
      const slope = alibiSlope(tr, v.head);
      slopeNow = slope ?? 0;
      const input = softmaxInput(tr, v.head);
      if (slope === null) {
        f.formula.set(allowed
          ? [[`mask[${v.q}, ${k}] = 1 (allowed), so masked S\u2032[${v.q}, ${k}] = S\u2032[${v.q}, ${k}] = `, { result: at(h.scaled, v.q, k) }]]
          : [[`mask[${v.q}, ${k}] = 0 (blocked), so masked S\u2032[${v.q}, ${k}] = `, { result: -Infinity }]]);
      } else {
        const d = Math.abs(v.q - k);
        f.formula.set([
          allowed
            ? [`mask[${v.q}, ${k}] = 1 (allowed), so masked S\u2032[${v.q}, ${k}] = S\u2032[${v.q}, ${k}] \u2212 m${headSub(v.head)}\u00b7|${v.q} \u2212 ${k}| = `, { n: at(h.scaled, v.q, k) }, ' \u2212 ', { n: slope }, ` \u00d7 ${d} = `, { result: at(input, v.q, k) }]
            : [`mask[${v.q}, ${k}] = 0 (blocked), so masked S\u2032[${v.q}, ${k}] = `, { result: -Infinity }],
          { caption: `ALiBi: head ${v.head + 1} subtracts its slope m = 2^(${slopeRule(tr.heads.length, v.head).exponent}) = ${formatValue(slope, DIGITS.formula)} times the distance |i \u2212 j| from every score, so far keys lose weight; the same pair at the same distance gets the same bias anywhere in the sentence.` },
        ]);
      }
      biasBox.hidden = slope === null;
      if (slope !== null) {
        biasNote.textContent = `Head ${v.head + 1}\u2019s slope m = ${formatValue(slope, DIGITS.formula)}: the bias is \u2212${formatValue(slope, DIGITS.formula)} \u00d7 distance, added to S\u2032 before the mask.`;
        hmBias.update({ matrix: alibiBias(slope, v.T), title: `ALiBi bias \u2212m\u00b7|i \u2212 j|, head ${v.head + 1}`, rowLabels: v.labels, colLabels: v.labels, kind: 'diverging', palette: v.palette, selRow: v.q, selCol: k });
      }
      hmMask.update({ matrix: tr.mask, title: `Mask (${kind})`, rowLabels: v.labels, colLabels: v.labels, kind: 'mask', palette: v.palette, selRow: v.q, selCol: k });
      hm.update({ matrix: input, mask: tr.mask.data, title: maskedTitle(tr, v.head), rowLabels: v.labels, colLabels: v.labels, kind: 'diverging', palette: v.palette, selRow: v.q, selCol: k });
    },
  };
}
