// A model's trace (every intermediate of every layer) seen one layer at a
// time, in the shape the twelve step views already read for random weights
// (engine.run's trace), plus what a full block adds. One function for every
// model the playground shows with layers: a model trained here (Trainer.trace)
// and a pretrained one (its worker's trace, sources/pretrained.js), each with a
// plain description of the model beside its trace.
//
//   embeddings, positional     E[ids] and P: the same for every layer
//   stream                     x, the residual stream into this layer (layer 0: X + P)
//   input                      X′, what Q, K and V are computed from: LN1(x) (x without LayerNorm)
//   wQuery … wOutput, heads, concat, output = concat·W_O   this layer's attention
//   block {residual, mlpNormed, mlpHidden, mlpOutput, out} the rest of the block
//   final {normed, logits, probabilities}                  after the last layer only
//   model {name, layer, layers, …}                         what the views need to say it
//   bias, generated, undoSentence   a pretrained model's: its biases (the formulas quote
//                              them), how many of the last tokens "Next token" wrote, and
//                              the sentence without the last of them (what Undo leaves)
//
// Pure: no DOM, no engine.

import { headPatterns } from '../kit/patterns.js';

/** The token texts as a model trained here reads them: its vocabulary entry ([UNK] for unknown words). */
function vocabularyTokens(tokens, vocabulary) {
  const unk = vocabulary.indexOf('[UNK]');
  return tokens.map((t) => {
    const text = vocabulary[t.id] ?? t.text;
    return { ...t, text, typed: t.text, unknown: t.id === unk && unk >= 0 };
  });
}

/** A pretrained model's tokens: its tokenizer's pieces, their texts as the trace gives them
 * ([CLS] and [SEP] have no place in the text: start −1, drawn at 0 and marked special). */
function pieceTokens(tokens) {
  return tokens.map((t) => ({
    text: t.text, id: t.id, start: Math.max(0, t.start), end: Math.max(0, t.end), typed: t.text, unknown: false,
    piece: t.piece, special: t.start < 0, startChar: t.startChar,
  }));
}

/** A LayerNorm's gain and bias from the engine's trace (1×C matrices), or null. */
function gainBias(gain, bias) {
  return gain && bias ? { gain: gain.data, bias: bias.data } : null;
}

/** A vector ({rows: 1, cols: n, data}, or the typed array itself) as the plain array the formulas quote. */
const vec = (m) => (m ? (m.data ?? m) : null);

/**
 * One layer of a model's trace as the step data.
 * modelTrace: the engine's model trace ({config, tokens, length, sentence, embeddings,
 * positional, mask, layers, finalNormed, logits, probabilities, grammar}).
 * model: what the page knows of the model, plainly:
 *   name, task (null: none), about  the picker's value, its task, its one line
 *   seed                            the seed it was trained from (0 when unknown)
 *   featured                        {layer, head} the page opens on, or null
 *   vocabulary                      the texts of the probabilities' columns (a model trained
 *                                   here: its whole vocabulary, which also names its tokens)
 *   pretrained                      null for a model trained here; for a pretrained one
 *                                   {family, postNorm, maskId, parameterCount}: its tokens are
 *                                   its tokenizer's pieces, and it has biases and no task
 *   tokenTexts                      (pretrained) Map id → text of the full vocabulary's ids
 *                                   the trace knows (the Learn steps' targets are full ids)
 * Head names come from the engine's pattern scores (layers[l].patterns; a
 * coreference model's include its task's antecedent key).
 */
export function layerTrace(modelTrace, layer, model) {
  const c = modelTrace.config;
  const L = modelTrace.layers.length;
  const l = Math.max(0, Math.min(L - 1, layer));
  const lt = modelTrace.layers[l];
  const pretrained = model.pretrained ?? null;
  const tokens = pretrained ? pieceTokens(modelTrace.tokens) : vocabularyTokens(modelTrace.tokens, model.vocabulary);
  const T = tokens.length;
  const last = l === L - 1;
  const trace = {
    // a head's width D is head_dim when the config gives one (Qwen3: 128 where C/H is 64);
    // kvHeads: the K/V heads (grouped-query attention: query head h reads K/V head ⌊h/(H/H_kv)⌋)
    config: {
      dModel: c.dModel, heads: c.heads, dHead: c.headDim > 0 ? c.headDim : c.dModel / c.heads, kvHeads: c.kvHeads > 0 ? c.kvHeads : c.heads,
      seed: model.seed ?? 0, positional: c.positional, mask: c.causal ? 'causal' : 'none', scale: c.scale,
    },
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
      // the gated MLP (SwiGLU): hidden = SiLU(gate) ⊙ up, before down_proj
      mlpGate: lt.mlpGate ?? null,
      mlpUp: lt.mlpUp ?? null,
      mlpOutput: lt.mlpOutput ?? null,
      out: lt.output,
    },
    final: last ? { normed: modelTrace.finalNormed, logits: modelTrace.logits, probabilities: modelTrace.probabilities } : null,
    model: {
      name: model.name,
      task: model.task,
      about: model.about,
      layer: l,
      layers: L,
      layernorm: c.layernorm,
      mlp: c.mlp,
      causal: c.causal,
      vocabulary: model.vocabulary,
      vocab: c.vocab,
      context: c.context,
      unknown: tokens.filter((t) => t.unknown).map((t) => t.typed),
      // how far the sentence is from what the model learned: a model trained here on a task
      fit: pretrained ? null : sentenceFit(modelTrace, tokens, model),
      ln1: c.layernorm && !c.rmsnorm ? gainBias(lt.ln1Gain, lt.ln1Bias) : null,
      lnFinal: c.layernorm && !c.rmsnorm ? gainBias(modelTrace.finalLnGain, modelTrace.finalLnBias) : null,
      // the modern block's kinds (Llama, Qwen): RMSNorm (gain only), the gated MLP, q/k norms
      rmsnorm: Boolean(c.rmsnorm),
      rms1: c.rmsnorm && lt.ln1Gain && lt.normedRms ? { gain: vec(lt.ln1Gain), rms: vec(lt.normedRms) } : null,
      gatedMlp: Boolean(c.gatedMlp),
      qkNorm: Boolean(c.qkNorm),
    },
  };
  // RoPE: θᵢ of each (i, i + D/2) pair (position m turns the pair by m·θᵢ)
  if (c.positional === 'rope' && modelTrace.ropeFrequencies) {
    trace.rope = { frequencies: modelTrace.ropeFrequencies, base: c.ropeBase, scaling: c.ropeScaling ?? 'none' };
  }
  // ALiBi: each head's slope m_h (the bias −m_h·|i − j| joins the scores before the mask)
  if (c.positional === 'alibi' && modelTrace.alibiSlopes) trace.alibi = { slopes: modelTrace.alibiSlopes };
  trace.headPatterns = headPatterns(lt.patterns);
  // every layer at once, for the model view: its heads and their pattern names
  trace.model.layerHeads = modelTrace.layers.map((x, i) => ({ heads: x.heads, patterns: i === l ? trace.headPatterns : headPatterns(x.patterns) }));
  trace.model.featured = model.featured ?? null;
  if (pretrained) {
    trace.generated = modelTrace.generated ?? 0;
    trace.undoSentence = modelTrace.undoSentence ?? null;
    trace.model.tokenTexts = model.tokenTexts;
    trace.model.pretrained = pretrained;
    trace.bias = { query: vec(lt.bQuery), key: vec(lt.bKey), value: vec(lt.bValue), output: vec(lt.bOutput) };
  }
  return trace;
}

/** "1 of 9 words is", "4 of 13 words are" */
function ofWords(n, total) {
  return `${n} of ${total} word${total === 1 ? '' : 's'} ${n === 1 ? 'is' : 'are'}`;
}

/** More than this share of [UNK] words puts a sentence outside what a model learned. */
export const UNKNOWN_SHARE_LIMIT = 0.2;

/**
 * How far a sentence is from what a trained model learned, from three
 * measures: the share of its words the model does not know ([UNK]), whether
 * the task's grammar makes it (the engine's Task::grammar: the coreference
 * generator's four sentence shapes; -1 when a model has no grammar, as the
 * language model), and for coreference whether its answer at "it" is a word
 * of the sentence at all. Longer than the model's context is an error before
 * this (too_long_for_model).
 * model: layerTrace's description (its task and vocabulary).
 * Returns {outside, measures: [plain lines], known, length, context, grammar, suggest}.
 */
export function sentenceFit(modelTrace, tokens, model) {
  const T = modelTrace.length ?? tokens.length;
  const real = tokens.slice(0, T);
  const unknown = real.filter((t) => t.unknown);
  const context = modelTrace.config.context;
  const grammar = modelTrace.grammar ?? -1;
  const measures = [];
  const reasons = [];
  const share = T ? unknown.length / T : 0;
  if (unknown.length) {
    const line = `${ofWords(unknown.length, T)} unknown to it (it reads them as [UNK]): ${unknown.map((t) => `\u201c${t.typed}\u201d`).join(', ')}.`;
    measures.push(line);
    if (share > UNKNOWN_SHARE_LIMIT) reasons.push('unknown');
  } else {
    measures.push(`It knows all ${T} word${T === 1 ? '' : 's'}.`);
  }
  measures.push(`${T} of the ${context} positions it was trained on.`);
  if (grammar === 0) {
    measures.push('Not one of the sentence shapes it was trained on.');
    reasons.push('grammar');
  } else if (grammar === 1) {
    measures.push('One of the sentence shapes it was trained on.');
  }
  if (model.task === 'coreference') {
    const it = real.findIndex((t) => t.text === 'it');
    if (it < 0) {
      measures.push('There is no \u201cit\u201d: the model was trained to answer only at \u201cit\u201d.');
      reasons.push('no-it');
    } else if (modelTrace.probabilities) {
      const V = modelTrace.probabilities.cols;
      const row = modelTrace.probabilities.data.subarray(it * V, (it + 1) * V);
      let best = 0;
      for (let j = 1; j < V; j++) if (row[j] > row[best]) best = j;
      const word = model.vocabulary[best] ?? String(best);
      if (!real.some((t) => t.id === best)) {
        measures.push(`Its answer at \u201cit\u201d, \u201c${word}\u201d, is not a word of this sentence.`);
        reasons.push('answer');
      }
    }
  }
  return {
    outside: reasons.length > 0,
    reasons,
    measures,
    known: T - unknown.length,
    length: T,
    context,
    grammar,
    // the model that fits everyday sentences better (none yet for the language model itself)
    suggest: model.task === 'coreference' ? 'language' : null,
  };
}

/** Head names for a random-weights trace, from the engine's pattern scores (its real tokens only). */
export function randomHeadPatterns(trace) {
  return headPatterns(trace.patterns);
}

/** The k most likely tokens of row i of a probabilities matrix: [{id, text, p}]. */
export function topTokens(probabilities, i, vocabulary, k = 5) {
  const V = probabilities.cols;
  const row = probabilities.data.subarray(i * V, (i + 1) * V);
  const idx = Array.from({ length: V }, (_, j) => j).sort((a, b) => row[b] - row[a] || a - b).slice(0, k);
  return idx.map((id) => ({ id, text: vocabulary[id] ?? String(id), p: row[id] }));
}
