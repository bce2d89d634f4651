// The playground's one notation, written once here and shown on the page as
// the "Notation" legend (playground.js). Every title, formula, tooltip and
// export uses it:
//   tokens   subscripts and first indices, counted from 0: q₇ is row 7 of Q, S[7, 1]
//   heads    a superscript in parentheses, counted from 1 like the Head picker: Q⁽¹⁾
//   sizes    T tokens, C = d_model (the model width), H heads, d_k = C/H per head
//   weights  W_Q, W_K, W_V, W_O (letters after "_" are subscripts)
//   modern   m, θᵢ and the pair (i, i + d_k/2) of RoPE; H_kv K/V heads; a norm's gain g

import { quoted } from './format.js';

const SUP = { 0: '\u2070', 1: '\u00b9', 2: '\u00b2', 3: '\u00b3', 4: '\u2074', 5: '\u2075', 6: '\u2076', 7: '\u2077', 8: '\u2078', 9: '\u2079', H: '\u1d34', h: '\u02b0' };

/** "⁽¹⁾" for head 1 (a 1-based number, or "H" / "h"). */
export function headSup(n) {
  return `\u207d${String(n).split('').map((c) => SUP[c] ?? c).join('')}\u207e`;
}

/** The legend: [symbol, meaning] pairs. */
export const NOTATION = Object.freeze([
  ['T, C, H', 'tokens in the sentence, the model width (d_model), heads'],
  ['d_k', 'the width of one head: d_k = C/H'],
  ['q\u2087, S[7, 1]', 'subscripts and first indices are tokens, counted from 0 like the rows: q\u2087 is row 7 of Q'],
  [`Q${headSup(1)}`, 'a superscript in parentheses is the head, counted from 1 (Head 1 is the first head): the queries of head 1'],
  ['W_Q, W_K, W_V, W_O', 'the learned (or seeded) projection matrices; W_O mixes the heads at the end'],
  ['S, S\u2032, A', 'scores Q\u00b7K\u1d40, scores after scaling (S\u2032 = S/\u221ad_k, or S when scaling is off) and masking, weights softmax(S\u2032)'],
  // the modern decoders (Llama, Qwen): RoPE, grouped-query attention, RMSNorm
  ['m, \u03b8\u1d62', 'rotary positions (RoPE): m is a token\u2019s position, counted from 0; \u03b8\u1d62 = base^(\u22122i/d_k) is how fast pair i turns, so at position m it is turned by the angle m\u00b7\u03b8\u1d62'],
  ['(i, i + d_k/2)', 'a RoPE pair: dimension i of a query or key turns together with dimension i + d_k/2, as one 2-D arrow (i = 0 \u2026 d_k/2 \u2212 1)'],
  ['H_kv', 'grouped-query attention: the number of K/V heads; each is shared by H/H_kv neighbouring query heads (heads 1 \u2026 H/H_kv read K/V head 1), and the KV cache keeps H_kv heads'],
  ['g', 'a norm\u2019s learned gain: RMSNorm(x) = x/rms(x)\u00b7g with rms(x) = \u221a(mean(x\u00b2) + \u03b5), no mean taken away and no bias (LayerNorm: (x \u2212 \u03bc)/\u03c3\u00b7g + b)'],
]);

/**
 * The title of a step's main figure for head h (0-based), as the page shows it
 * above the matrix and the export writes it above the figure.
 */
export function figureTitle(step, trace, h) {
  const head = `, head ${h + 1}`;
  const m = trace.model;
  switch (step) {
    case 'embeddings': return 'Token embeddings X';
    case 'positional': return 'Positional encoding P';
    case 'input': return m ? (m.rmsnorm ? 'Input X\u2032 = RMSNorm(x)' : m.layernorm ? 'Input X\u2032 = LayerNorm(x)' : 'Input X\u2032 = x') : 'Input X\u2032 = X + P';
    case 'projections': return `Queries Q${headSup(h + 1)}`;
    case 'rope': return `Queries Q${headSup(h + 1)} after RoPE`;
    case 'scores': return `Scores S = Q\u00b7K\u1d40${head}`;
    case 'scaled': return trace.config.scale ? `Scaled S\u2032 = S/\u221ad_k${head}` : `S\u2032 = S, unscaled (scaling is off)${head}`;
    case 'masked': return `Masked scores S\u2032${head}`;
    case 'softmax':
    case 'heads': return `Weights A = softmax(S\u2032)${head}`;
    case 'weighted': return `Output O${headSup(h + 1)} = A\u00b7V`;
    case 'concat': return `Concatenated heads [O${headSup(1)} \u2026 O${headSup('H')}]`;
    case 'output': return 'Output Y = concat\u00b7W_O';
    default: return step;
  }
}

/**
 * The title of a Learn step's main figure for head h (0-based), as the step's
 * view shows it above that figure (views/learn-*.js) and the export writes it
 * (learn/step-registry.js). scale: the backward's 1/√d_k (the scale switch); q: the
 * selected query (the loss and the step by hand are about its row).
 */
export function learnFigureTitle(step, trace, h, { scale = true, q = 0 } = {}) {
  const head = `, head ${h + 1}`;
  const at = quoted(trace.tokens[q]?.text ?? '?');
  switch (step) {
    case 'loss': return `dL/dlogits at ${at}, the likeliest words`;
    case 'dout': return `dO${head}`;
    case 'dweights': return `dP = dO\u00b7V\u1d40${head}`;
    case 'dsoftmax': return `dS\u2032${head}`;
    case 'dscale': return `dS${scale ? ' = dS\u2032/\u221ad_k' : ', without 1/\u221ad_k'}${head}`;
    case 'dqkv': return 'dQ = dS\u00b7K';
    case 'dparams': return `dW_Q${head}\u2019s columns`;
    case 'sgd': return `Attention row of ${at}${head}`;
    default: return step;
  }
}
