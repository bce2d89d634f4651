// A trained model's trace (Trainer.trace: every intermediate of every layer)
// seen one layer at a time, in the shape the twelve step views already read
// for random weights (engine.run's trace), plus what a full block adds:
//
//   embeddings, positional     E[ids] and P: the same for every layer
//   stream                     x, the residual stream into this layer (layer 0: X + P)
//   input                      X′, what Q, K and V are computed from: LN1(x) (x without LayerNorm)
//   wQuery … wOutput, heads, concat, output = concat·W_O   this layer's attention
//   block {residual, mlpNormed, mlpHidden, mlpOutput, out} the rest of the block
//   final {normed, logits, probabilities}                  after the last layer only
//   model {name, layer, layers, …}                         what the views need to say it
//
// Pure: no DOM, no engine.

import { standardKeys, keyRows, headPatterns } from './patterns.js';

/** The token texts as the model reads them: its vocabulary entry ([UNK] for unknown words). */
function modelTokens(trace, vocabulary) {
  const unk = vocabulary.indexOf('[UNK]');
  return trace.tokens.map((t) => {
    const text = vocabulary[t.id] ?? t.text;
    return { ...t, text, typed: t.text, unknown: t.id === unk && unk >= 0 };
  });
}

function gainBias(tensors, prefix) {
  const g = tensors[`${prefix}.gain`];
  const b = tensors[`${prefix}.bias`];
  return g && b ? { gain: g.data, bias: b.data } : null;
}

/**
 * One layer of a trained model's trace as a playground trace.
 * entry: a loaded model (models.js: {name, trainer, tensors, task, about}).
 * antecedent: the task's antecedent key (T×T matrix) for coreference models, or null.
 */
export function layerTrace(modelTrace, layer, entry, { antecedent = null } = {}) {
  const c = modelTrace.config;
  const L = modelTrace.layers.length;
  const l = Math.max(0, Math.min(L - 1, layer));
  const lt = modelTrace.layers[l];
  const tokens = modelTokens(modelTrace, entry.trainer.vocabulary);
  const T = tokens.length;
  const last = l === L - 1;
  const trace = {
    config: { dModel: c.dModel, heads: c.heads, dHead: c.dModel / c.heads, seed: entry.trainer.settings?.seed ?? 0, positional: c.positional, mask: c.causal ? 'causal' : 'none', scale: c.scale },
    tokens,
    realTokens: modelTrace.length ?? T,
    sentence: modelTrace.sentence,
    embeddings: modelTrace.embeddings,
    positional: modelTrace.positional,
    stream: lt.input,
    input: lt.normed,
    wQuery: lt.wQuery,
    wKey: lt.wKey,
    wValue: lt.wValue,
    wOutput: lt.wOutput,
    mask: modelTrace.mask,
    heads: lt.heads,
    concat: lt.concat,
    output: lt.attentionOutput,
    block: {
      residual: lt.residual,
      mlpNormed: lt.mlpNormed ?? null,
      mlpHidden: lt.mlpHidden ?? null,
      mlpOutput: lt.mlpOutput ?? null,
      out: lt.output,
    },
    final: last ? { normed: modelTrace.finalNormed, logits: modelTrace.logits, probabilities: modelTrace.probabilities } : null,
    model: {
      name: entry.name,
      task: entry.task,
      about: entry.about,
      layer: l,
      layers: L,
      layernorm: c.layernorm,
      mlp: c.mlp,
      causal: c.causal,
      vocabulary: entry.trainer.vocabulary,
      vocab: c.vocab,
      context: c.context,
      unknown: tokens.filter((t) => t.unknown).map((t) => t.typed),
      ln1: c.layernorm ? gainBias(entry.tensors, `layers.${l}.ln1`) : null,
      lnFinal: c.layernorm ? gainBias(entry.tensors, 'final_ln') : null,
    },
  };
  const keys = standardKeys(tokens.map((t) => t.id), c.causal);
  if (antecedent) keys.antecedent = keyRows(antecedent);
  trace.headPatterns = headPatterns(lt.heads, keys);
  return trace;
}

/** Head pattern scores for a random-weights trace (its real tokens only). */
export function randomHeadPatterns(trace) {
  const ids = trace.tokens.slice(0, trace.realTokens ?? trace.tokens.length).map((t) => t.id);
  const causal = trace.config.mask === 'causal' || trace.config.mask === 'causal+padding';
  return headPatterns(trace.heads, standardKeys(ids, causal));
}

/** The k most likely tokens of row i of a probabilities matrix: [{id, text, p}]. */
export function topTokens(probabilities, i, vocabulary, k = 5) {
  const V = probabilities.cols;
  const row = probabilities.data.subarray(i * V, (i + 1) * V);
  const idx = Array.from({ length: V }, (_, j) => j).sort((a, b) => row[b] - row[a] || a - b).slice(0, k);
  return idx.map((id) => ({ id, text: vocabulary[id] ?? String(id), p: row[id] }));
}
