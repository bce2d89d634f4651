// Step 4: Q, K and V of the selected head, all three from the same input X'.

import { createStepFrame, tok, at, row, col, clampIndex, headColumns, operator } from '../../kit/common.js';
import { createHeatmap } from '../../kit/heatmap.js';
import { productTerms } from '../../kit/formula.js';
import { headSup, figureTitle } from '../../kit/notation.js';

const WHAT = { Q: 'query', K: 'key', V: 'value' };

/** The K/V head query head h reads (grouped-query attention: ⌊h/(H/H_kv)⌋; one per head otherwise). */
export function kvHeadOf(config, h) {
  const H = config.heads;
  const Hkv = config.kvHeads ?? H;
  return Math.floor(h / (H / Hkv));
}

/** The query heads (0-based) that share K/V head kv. */
export function kvGroup(config, kv) {
  const group = config.heads / (config.kvHeads ?? config.heads);
  return Array.from({ length: group }, (_, i) => kv * group + i);
}

/** "shared with heads 3, 4" (1-based, the other query heads of h's group), or "read by this head only". */
export function sharedWith(config, h) {
  const others = kvGroup(config, kvHeadOf(config, h)).filter((x) => x !== h).map((x) => x + 1);
  if (!others.length) return 'read by this head only';
  return `shared with head${others.length === 1 ? '' : 's'} ${others.slice(0, -1).join(', ')}${others.length > 1 ? ' and ' : ''}${others.at(-1)}`;
}

/** What the KV cache keeps per token for this model, beside one K/V per query head. */
export function kvCacheText(tr, H, D) {
  const L = tr.model.layers;
  const Hkv = tr.config.kvHeads;
  const per = 2 * L * Hkv * D;
  const full = 2 * L * H * D;
  const kb = (n) => `${(n * 4 / 1024).toLocaleString('en-US', { maximumFractionDigits: 1 })} KB`;
  return ` When it writes text, the KV cache keeps K and V of every earlier token: 2 \u00d7 ${L} layers \u00d7 ${Hkv} K/V heads \u00d7 ${D} = ${per.toLocaleString('en-US')} numbers per token (${kb(per)} in float32), where one K/V per query head would need 2 \u00d7 ${L} \u00d7 ${H} \u00d7 ${D} = ${full.toLocaleString('en-US')} (${kb(full)}), ${H / Hkv} times more.`;
}

export function createProjectionsStep(root, ctx) {
  const f = createStepFrame(root, 'projections');
  let trace = null;
  let head = 0;
  const select = (i, j) => ctx.select({ query: i, dim: j });
  const top = f.row();
  const maps = {};
  for (const name of ['Q', 'K', 'V']) {
    maps[name] = createHeatmap(top, {
      id: `projection-${name.toLowerCase()}`,
      share: 0.32,
      tooltip: ctx.tooltip, getWidth: ctx.width,
      onCellClick: select,
      describe: (i, j) => {
        const D = trace.config.dHead;
        const owner = name === 'Q' ? head : kvHeadOf(trace.config, head);
        return { name: `${name}${headSup(head + 1)}[${i}, ${j}]  ${tok(trace, i)}`, provenance: `= \u03a3_c X\u2032[${i}, c] \u00b7 W_${name}[c, ${owner * D + j}]: the ${WHAT[name]} of ${tok(trace, i)} in head ${head + 1}` };
      },
    });
  }
  const bottom = f.row('figure-row-compact');
  const hmX = createHeatmap(bottom, { id: 'projection-input', compact: true, share: 0.6, tooltip: ctx.tooltip, getWidth: ctx.width, onCellClick: select, describe: (i, j) => ({ name: `X\u2032[${i}, ${j}]  ${tok(trace, i)}`, provenance: trace.model ? 'the input row after LayerNorm (step 3)' : 'the input row (embedding + position)' }) });
  operator(bottom, '\u00d7');
  const hmW = createHeatmap(bottom, {
    id: 'projection-wq',
    compact: true,
    share: 0.3,
    tooltip: ctx.tooltip, getWidth: ctx.width,
    onCellClick: (i, j) => ctx.select({ dim: j }),
    describe: (i, j) => ({ name: `W_Q[${i}, ${head * trace.config.dHead + j}]`, provenance: `column ${j} of head ${head + 1}\u2019s slice of W_Q (${trace.model ? 'learned' : 'seeded'} weights)` }),
  });

  return {
    update(tr, v) {
      trace = tr;
      head = v.head;
      const { D, C } = v;
      const d = clampIndex(v.d, D);
      const h = tr.heads[v.head];
      const x = row(tr.input, v.q);
      const kv = kvHeadOf(tr.config, v.head);
      const grouped = (tr.config.kvHeads ?? v.H) < v.H;
      const width = D === C / v.H ? `d_k = C/H = ${C}/${v.H} = ${D}` : `d_k = ${D} (this model\u2019s head_dim; C/H would be ${C / v.H})`;
      f.explain(
        `The same input row is multiplied by three different weight matrices. The query says what this token is looking for, the key what it offers to others, the value what it passes on when chosen.`,
        grouped
          ? `Head ${v.head + 1} has its own ${D} columns of W_Q (${width}), but only ${tr.config.kvHeads} K/V head${tr.config.kvHeads === 1 ? '' : 's'} exist: K and V here are K/V head ${kv + 1}\u2019s, ${sharedWith(tr.config, v.head)} (grouped-query attention).${tr.model ? ` These are layer ${tr.model.layer + 1}\u2019s learned matrices.${kvCacheText(tr, v.H, D)}` : ''}`
          : `Head ${v.head + 1} uses its own ${width} columns of W_Q, W_K and W_V, so each head looks at the tokens in a smaller space of its own.${tr.model ? ` These are layer ${tr.model.layer + 1}\u2019s learned matrices.` : ''}`,
      );
      const lines = [];
      for (const [name, m, w, bias] of [['Q', h.query, tr.wQuery, tr.bias?.query], ['K', h.key, tr.wKey, tr.bias?.key], ['V', h.value, tr.wValue, tr.bias?.value]]) {
        // K and V: the columns of the K/V head this query head reads (its own, without grouping)
        const owner = name === 'Q' ? v.head : kv;
        const wcol = col(headColumns(w, owner, D), d);
        // a pretrained checkpoint (GPT-2, BERT) adds a learned bias b to each projection
        const j = owner * D + d;
        // RoPE turns Q and K after the product (the maps show them turned): the formula ends before it;
        // Qwen3 also RMS-normalises each head's q and k first (q_norm, k_norm)
        const before = name === 'Q' ? h.queryBeforeRope : name === 'K' ? h.keyBeforeRope : null;
        const normed = Boolean(tr.model?.qkNorm) && name !== 'V';
        let sum = bias ? bias[j] : 0;
        for (let c = 0; c < x.length; c++) sum += x[c] * wcol[c];
        const label = `${name}${headSup(v.head + 1)}[${v.q}, ${d}]${before && !normed ? ' before RoPE' : ''}`;
        const testid = name === 'Q' ? 'formula-result' : `formula-result-${name.toLowerCase()}`;
        lines.push([
          `${label} = \u03a3_c X\u2032[${v.q}, c]\u00b7W_${name}[c, ${j}]${bias ? ` + b_${name}[${j}]` : ''} = `,
          ...productTerms(x, wcol, { max: 4 }),
          ...(bias ? [' + ', { n: bias[j] }] : []),
          ' = ',
          normed ? { n: sum } : { result: before ? at(before, v.q, d) : at(m, v.q, d), testid },
        ]);
        if (normed && before) {
          lines.push([`${name}${headSup(v.head + 1)}[${v.q}, ${d}] after the head\u2019s RMSNorm (${name === 'Q' ? 'q' : 'k'}_norm), before RoPE = `, { result: at(before, v.q, d), testid }]);
        }
      }
      lines.push({ caption: `Three different columns, one input row: Q, K and V of ${tok(tr, v.q)} all come from X\u2032[${v.q}].${h.queryBeforeRope ? ` The formulas end before RoPE turns Q and K (the next step); the maps above show them turned.${tr.model?.qkNorm ? ' This model first divides each head\u2019s q and k by their root mean square and multiplies by a learned gain (q_norm, k_norm).' : ''}` : ''}` });
      f.formula.set(lines);
      const common = { rowLabels: v.labels, colLabels: null, kind: 'diverging', palette: v.palette, selRow: v.q, selCol: d, showCol: false };
      maps.Q.update({ ...common, matrix: h.query, title: figureTitle('projections', tr, v.head) });
      maps.K.update({ ...common, matrix: h.key, title: grouped ? `Keys K${headSup(v.head + 1)} (K/V head ${kv + 1})` : `Keys K${headSup(v.head + 1)}` });
      maps.V.update({ ...common, matrix: h.value, title: grouped ? `Values V${headSup(v.head + 1)} (K/V head ${kv + 1})` : `Values V${headSup(v.head + 1)}` });
      hmX.update({ ...common, matrix: tr.input, title: 'Input X\u2032', selCol: null });
      hmW.update({ matrix: headColumns(tr.wQuery, v.head, D), title: `W_Q, head ${v.head + 1}`, rowLabels: v.dimLabels, colLabels: null, kind: 'diverging', palette: v.palette, selRow: null, selCol: d });
    },
  };
}
