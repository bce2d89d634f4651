// The Learn part's arithmetic over a backward trace (Trainer.backwardTrace):
// norms, a head's share of a layer's weight gradients, how much of dP each
// softmax row lets through. Pure: no DOM, no engine, no imports.

/** ‖x‖ of a typed array or array (in double). */
export function norm(data) {
  let s = 0;
  for (const x of data) s += x * x;
  return Math.sqrt(s);
}

/** ‖row i‖ of a {rows, cols, data} matrix. */
export function rowNorm(m, i) {
  return norm(m.data.subarray(i * m.cols, (i + 1) * m.cols));
}

/** The norm of head h's share of a C×C weight gradient: its columns h·D … (W_Q, W_K, W_V), or its rows (W_O). */
export function headShareNorm(m, h, D, { rows = false } = {}) {
  let s = 0;
  for (let r = 0; r < m.rows; r++) {
    for (let c = 0; c < m.cols; c++) {
      if ((rows ? r : c) >= h * D && (rows ? r : c) < (h + 1) * D) s += m.data[r * m.cols + c] ** 2;
    }
  }
  return Math.sqrt(s);
}

/** Every head's ‖dW_Q‖, ‖dW_K‖, ‖dW_V‖, ‖dW_O‖ in one layer of a backward trace. */
export function headGradNorms(layer, D) {
  return layer.heads.map((_, h) => ({
    q: headShareNorm(layer.dWQuery, h, D),
    k: headShareNorm(layer.dWKey, h, D),
    v: headShareNorm(layer.dWValue, h, D),
    o: headShareNorm(layer.dWOutput, h, D, { rows: true }),
  }));
}

/** Per query row: the largest weight, ‖dPᵢ‖, ‖dS′ᵢ‖ and what the softmax lets through, ‖dS′ᵢ‖ / ‖dPᵢ‖ (0 when dP is 0). */
export function rowPass(head) {
  const P = head.weights;
  return Array.from({ length: P.rows }, (_, i) => {
    const dP = rowNorm(head.dWeights, i);
    const dS = rowNorm(head.dScaled, i);
    let max = 0;
    for (let j = 0; j < P.cols; j++) max = Math.max(max, P.data[i * P.cols + j]);
    return { max, dP, dS, pass: dP > 0 ? dS / dP : 0 };
  });
}

/** Σₖ Pᵢₖ·dPᵢₖ: the row's average of dP under its weights (the softmax Jacobian's shared term). */
export function rowMean(head, i) {
  const P = head.weights;
  let s = 0;
  for (let j = 0; j < P.cols; j++) s += P.data[i * P.cols + j] * head.dWeights.data[i * P.cols + j];
  return s;
}

/** The mean of each row's largest weight over the rows that have a target's gradient: how saturated a head is. */
export function meanRowMax(head) {
  const rows = rowPass(head);
  return rows.reduce((s, r) => s + r.max, 0) / Math.max(1, rows.length);
}
