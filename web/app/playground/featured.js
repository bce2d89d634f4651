// Where a pretrained model opens (issue #40, 12): a shipped model has a head
// chosen by hand (models.js); a loaded one is chosen from its first trace, so
// the page opens on a row that shows something rather than on a head whose
// row sits on the first token (an attention sink), as most rows of GPT-2 do.

/**
 * The query: the last token of the sentence that is a word of it (not [SEP] or
 * another special token). The head: over every layer, the one whose row of that
 * query puts the most weight on a single earlier token that is neither the first
 * token (a sink) nor the query itself; the first such head wins a tie.
 * layers: the trace's [{heads: [{weights: {rows, cols, data}}]}]; tokens: [{start}]
 * (start < 0: a special token). Null when a layer has no weights or T < 3.
 */
export function featuredHead(layers, tokens) {
  const T = tokens.length;
  let q = T - 1;
  while (q > 0 && tokens[q].start < 0) q -= 1;
  if (q < 2 || !layers.length || !layers.every((l) => l.heads?.every((h) => h.weights?.data))) return null;
  let best = null;
  layers.forEach((layer, l) => layer.heads.forEach((h, hd) => {
    const row = h.weights.data.subarray(q * h.weights.cols, (q + 1) * h.weights.cols);
    for (let j = 1; j < q; j++) {
      if (!best || row[j] > best.weight) best = { layer: l, head: hd, query: q, key: j, weight: row[j] };
    }
  }));
  return best;
}
