// Types of web/pretrained.js's public part, the pretrained checkpoints
// (engine.openCheckpoint, engine.readHubConfig, engine.checkHubConfig), re-exported by engine.d.ts.

import type { Matrix, HeadTrace, FamilyName } from './types.js';
import type { ModelConfig, BackwardTrace } from './trainer.js';
import type { PretrainedToken } from './tokenizer.js';

/** A pretrained checkpoint's config (GPT-2 or BERT), as the engine reads it. */
/** A pretrained checkpoint's config: every row of the engine's model schema (as Trainer.config), and postNorm. */
export interface PretrainedConfig extends ModelConfig {
  family: FamilyName;
  attnBias: boolean;
  activation: 'gelu_erf' | 'gelu_tanh' | 'silu';
  lnEps: number;
  norm: 'pre' | 'post';
  /** norm === 'post' */
  postNorm: boolean;
  tokenTypes: number;
  embedLayernorm: boolean;
  outputTransform: boolean;
  outputBias: boolean;
  /** the modern decoders' rows (model.hpp; defaults: today's models) */
  ropeBase: number;
  ropeScaling: 'none' | 'llama3';
  ropeFactor: number; ropeLowFreqFactor: number; ropeHighFreqFactor: number; ropeOriginalContext: number;
  rmsnorm: boolean;
  gatedMlp: boolean;
  mlpBias: boolean;
  /** 0 = heads */
  kvHeads: number;
  /** 0 = dModel / heads */
  headDim: number;
  qkvBias: boolean;
  qkNorm: boolean;
}

/**
 * engine.checkHubConfig(configText): what config.json alone says of the model's size, so that a
 * model too large for this engine is refused before anything else is downloaded. The safetensors
 * header (a range request for its first 8 + N bytes) then gives the exact size:
 * checkCheckpointHeader refuses it before the file is downloaded, when the server answers
 * range requests (the Hub does), and openCheckpoint before allocating.
 */
export interface HubSizeCheck {
  config: PretrainedConfig;
  /** bytes of the smallest model the config allows (without the parts only the weights file can
   * add: an output layer of its own, BERT's masked-LM head), its large tensors held as `storage` */
  parameterBytes: number;
  /** what config.json's dtype (transformers 5) or torch_dtype says the weights are: a 16-bit file
   * stays 16-bit in memory, so its large tensors are counted at 2 bytes; else 'F32' */
  storage: 'F32' | 'F16' | 'BF16';
  /** with every part a weights file can add */
  largestBytes: number;
  /** the most this engine holds as `storage`: in wasm 3 GiB for a 16-bit model (its values in
   * several allocations), 2 GiB − 64 MiB for a float32 one (its values one allocation, and one
   * allocation gets at most 2³¹ − 4148 bytes) */
  limitBytes: number;
  /** parameterBytes <= limitBytes and no tensor above one allocation; false: do not download it */
  fits: boolean;
  /** when it does not fit, the too_large message ("the model has 774030080 parameters (3.1 GB as
   * float32), above the 2.1 GB this engine holds"; "… (6.9 GB as BF16 and float32), above the 3.2 GB
   * …"); else null */
  message: string | null;
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
  /** how many allocations (chunks) hold the 16-bit values; 0 when everything is float32 */
  readonly halfChunks: number;
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
  /** the k likeliest tokens of each position: ids and p are T·k long, texts decoded. A model's
   * vocabulary may be larger than its tokenizer's (nanoGPT pads GPT-2's 50257 pieces to 50304 ids):
   * such a padding id is a logit with no text, its text "<pad ID>" and padding true. */
  top: { k: number; ids: Int32Array; p: Float32Array; texts: string[]; padding: boolean[] };
  /** T×V, only with { logits: true } (a long input may not fit then: too_large, whose message says
   * to ask for the top-k instead; without it no T×V matrix is made, the unembedding runs in row blocks) */
  logits?: Matrix;
  /** the text (trace(), not traceIds()) */
  sentence?: string;
  /** how many of trace()'s generated ids it used: all, or 0 when the text does not end with their text;
   * they are decoded together, so a token that holds part of a character spans that character */
  generated: number;
  /** the text without the last generated token (the ids before it decoded together): what an undo
   * of that token leaves; the text itself when no generated id was used */
  undoSentence: string;
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
  /** trace() of given token ids (their start and end are -1; a padding id's piece and text are "<pad ID>") */
  traceIds(ids: ArrayLike<number>, options?: { layer?: number; allWeights?: boolean; logits?: boolean }): PretrainedTrace;
  /** the next token after ids through the model's KV cache (causal models only: BERT is refused) */
  generate(text: string, options?: GenerateOptions): GeneratedToken;
  /** the logits (T×V) of the whole model, nothing traced */
  forward(ids: ArrayLike<number>): { logits: Matrix };
  /** One sentence's backward with the parameter gradients of `layer` only (Trainer.backwardTrace's
   * shape; `layers` has the asked layer's entry, null for the others). targets default: GPT-2 the
   * next token, BERT the model's own top fill at each [MASK] (none: RangeError bad_input). */
  backwardTrace(options: { text: string; targets?: ArrayLike<number> | null; scale?: boolean | null; layer?: number }): PretrainedBackwardTrace;
  /** How many steps by hand can be undone at most (20): a step past it drops the oldest one's old values. */
  static readonly UNDO_LIMIT: number;
  /** One SGD step by hand on layer's attention (head -1: all of it), the old values kept for undoStep
   * (each step's: ~9 MB for a whole layer of GPT-2 small; the last UNDO_LIMIT steps only). steps: how many
   * can be undone now. */
  sgdStep(options: { text: string; targets?: ArrayLike<number> | null; lr: number; layer?: number; head?: number }): { loss: number; size: number; steps: number };
  /** puts back the last sgdStep's old weights bit for bit; returns the steps left (none: TypeError bad_state) */
  undoStep(): number;
  /** how many sgdSteps undoStep can still undo (at most UNDO_LIMIT) */
  readonly undoSteps: number;
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
