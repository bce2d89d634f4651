// Types of web/pretrained.js's public part, the pretrained checkpoints
// (engine.openCheckpoint, engine.readHubConfig), re-exported by engine.d.ts.

import type { Matrix, HeadTrace, FamilyName } from './types.js';
import type { ModelConfig, BackwardTrace } from './trainer.js';
import type { PretrainedToken } from './tokenizer.js';

/** A pretrained checkpoint's config (GPT-2 or BERT), as the engine reads it. */
/** A pretrained checkpoint's config: every row of the engine's model schema (as Trainer.config), and postNorm. */
export interface PretrainedConfig extends ModelConfig {
  family: FamilyName;
  attnBias: boolean;
  activation: 'gelu_erf' | 'gelu_tanh';
  lnEps: number;
  norm: 'pre' | 'post';
  /** norm === 'post' */
  postNorm: boolean;
  tokenTypes: number;
  embedLayernorm: boolean;
  outputTransform: boolean;
  outputBias: boolean;
}

/** Streams model.safetensors into the engine without a second copy of the file (pretrained.js). */
export declare class HubLoader {
  readonly config: Readonly<PretrainedConfig>;
  /** the byte ranges of the file the model needs, in increasing order */
  readonly needed: readonly { begin: number; end: number }[];
  readonly neededBytes: number;
  /** how the large tensors are stored: 'F32', or an F16/BF16 file's own format (kept 16-bit: half the memory, the same numbers) */
  readonly storage: 'F32' | 'BF16' | 'F16';
  /** bytes the model's parameters take (allocated when the loader is made) */
  readonly parameterBytes: number;
  /** the largest chunk feed() takes */
  readonly stagingBytes: number;
  /** the file's bytes at `offset`, in increasing order; returns the bytes fed so far */
  feed(offset: number, bytes: Uint8Array): number;
  /** the model with its tokenizer (files' texts; '' or absent = no such file); frees the loader */
  finish(files?: { tokenizerJson?: string; vocabJson?: string; mergesTxt?: string; vocabTxt?: string; tokenizerConfigJson?: string }): PretrainedModel;
  dispose(): void;
}

export interface PretrainedLayerTrace {
  /** empty unless this is the traced layer (or allWeights: only each head's weights) */
  heads: HeadTrace[] | { weights: Matrix }[];
  input?: Matrix; normed?: Matrix;
  wQuery?: Matrix; wKey?: Matrix; wValue?: Matrix; wOutput?: Matrix;
  bQuery?: Matrix; bKey?: Matrix; bValue?: Matrix; bOutput?: Matrix;
  ln1Gain?: Matrix; ln1Bias?: Matrix;
  concat?: Matrix; attentionOutput?: Matrix; residual?: Matrix;
  mlpNormed?: Matrix; mlpHidden?: Matrix; mlpOutput?: Matrix; output?: Matrix;
}

export interface PretrainedTrace {
  config: PretrainedConfig;
  tokens: PretrainedToken[];
  length: number;
  embeddings: Matrix;
  positional: Matrix;
  mask: Matrix<Uint8Array>;
  layers: PretrainedLayerTrace[];
  /** the k likeliest tokens of each position: ids and p are T·k long, texts decoded */
  top: { k: number; ids: Int32Array; p: Float32Array; texts: string[] };
  /** T×V, only with { logits: true } (a long input may not fit then: too_large, whose message says
   * to ask for the top-k instead; without it no T×V matrix is made, the unembedding runs in row blocks) */
  logits?: Matrix;
  /** the text (trace(), not traceIds()) */
  sentence?: string;
  /** how many of trace()'s generated ids it used: all, or 0 when the text does not end with their text */
  generated: number;
}

/** PretrainedModel.generate: greedy (the argmax) unless sample. */
export interface GenerateOptions {
  /** the ids that wrote the end of the text (the last GeneratedToken.generated) */
  generated?: ArrayLike<number>;
  sample?: boolean;
  /** ENGINE_CONSTANTS.minTemperature … maxTemperature (0.05 … 5) */
  temperature?: number;
  /** the likeliest k tokens only; 0 = every token */
  topK?: number;
  /** with the position, the draw: the same seed and ids give the same token */
  seed?: number;
  /** also the new position's logits */
  logits?: boolean;
}

export interface GeneratedToken {
  id: number;
  piece: string;
  /** decoded */
  text: string;
  /** readable (a leading space as "␣") */
  display: string;
  /** the text with the token appended */
  sentence: string;
  /** the ids that wrote the end of sentence, the new one last */
  generated: number[];
  /** the new token's index in the sequence (= ids.length) */
  position: number;
  /** earlier rows of K and V the new token read from the cache */
  reused: number;
  /** rows of the text this call computed before the new one: 0 when it continues the last call, more after an undo or an edit */
  recomputed: number;
  /** the chosen token's probability, softmax of the logits at the last position of ids */
  probability: number;
  /** [layer][head]: the new row of the attention weights (position + 1 values) */
  weights: Float32Array[][];
  logits?: Float32Array;
}

export declare class PretrainedModel {
  readonly config: Readonly<PretrainedConfig>;
  readonly parameterCount: number;
  /** how the large tensors are stored: 'F32', 'BF16' or 'F16' */
  readonly storage: 'F32' | 'BF16' | 'F16';
  /** bytes the parameters take */
  readonly parameterBytes: number;
  /** BERT's [MASK] id, -1 for GPT-2 */
  readonly maskId: number;
  tokenize(text: string): PretrainedToken[];
  /** every intermediate of `layer`; the other layers' attention weights when allWeights (default) */
  /** generated: the ids that wrote the end of text (generate()), kept as chosen */
  trace(text: string, options?: { layer?: number; allWeights?: boolean; logits?: boolean; generated?: ArrayLike<number> }): PretrainedTrace;
  /** trace() of given token ids (their start and end are -1) */
  traceIds(ids: ArrayLike<number>, options?: { layer?: number; allWeights?: boolean; logits?: boolean }): PretrainedTrace;
  /** the next token after ids through the model's KV cache (causal models only: BERT is refused) */
  generate(text: string, options?: GenerateOptions): GeneratedToken;
  /** the logits (T×V) of the whole model, nothing traced */
  forward(ids: ArrayLike<number>): { logits: Matrix };
  /** One sentence's backward with the parameter gradients of `layer` only (Trainer.backwardTrace's
   * shape; `layers` has the asked layer's entry, null for the others). targets default: GPT-2 the
   * next token, BERT the model's own top fill at each [MASK] (none: RangeError bad_input). */
  backwardTrace(options: { text: string; targets?: ArrayLike<number> | null; scale?: boolean | null; layer?: number }): PretrainedBackwardTrace;
  /** One SGD step by hand on layer's attention (head -1: all of it), the old values kept for undoStep. */
  sgdStep(options: { text: string; targets?: ArrayLike<number> | null; lr: number; layer?: number; head?: number }): { loss: number; size: number; steps: number };
  /** puts back the last sgdStep's old weights bit for bit; returns the steps left (none: TypeError bad_state) */
  undoStep(): number;
  dispose(): void;
}

/** PretrainedModel.backwardTrace: BackwardTrace with one layer's entry. */
export interface PretrainedBackwardTrace extends Omit<BackwardTrace, 'layers'> {
  layer: number;
  /** the forward and backward's memory beyond the weights (the estimate checked before allocating) */
  memoryBytes: number;
  /** the model's own targets (before the given ones) */
  defaults: Int32Array | number[];
  layers: (BackwardTrace['layers'][number] | null)[];
}
