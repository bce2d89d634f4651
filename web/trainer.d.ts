// Types of web/trainer.js's public part, the training engine (engine.createTrainer,
// engine.loadTrainer): what engine.js re-exports, and engine.d.ts with it.

import type { Matrix, Positional, Token, HeadTrace, HeadPatterns } from './types.js';

export type TaskName = 'copy' | 'reverse' | 'sort' | 'previous-token' | 'induction' | 'recall' | 'brackets' | 'coreference' | 'text';
export declare const TASKS: readonly TaskName[];

export interface TrainSettings {
  task?: TaskName;
  /** Task size, 0 = its default (reverse/sort/copy: digits; induction/previous-token/brackets/text: T; recall: pairs). */
  length?: number;
  /** task 'text': the training text (UTF-8, at most 8,000,000 characters). */
  corpus?: string;
  /** task 'text': words kept (the rest become [UNK]); 2 to 49,998 ([PAD] and [UNK] fill the model's 50,000). */
  maxVocab?: number;
  layers?: number;
  dModel?: number;
  heads?: number;
  /** MLP width, 0 = attention-only. */
  mlp?: number;
  /** 0 = the task's sequence length. */
  context?: number;
  layernorm?: boolean;
  positional?: Positional;
  causal?: boolean;
  scale?: boolean;
  /** unembedding = embeddingᵀ */
  tied?: boolean;
  lr?: number;
  beta1?: number;
  beta2?: number;
  weightDecay?: number;
  /** max global gradient norm, 0 = off */
  clip?: number;
  warmup?: number;
  batch?: number;
  seed?: number;
}

/** The memory a trainer and one step's forward and backward need, in bytes (the C++ training_memory). */
export interface TrainingMemory {
  bytes: number;
  /** The most a trainer may use (768 MiB; the wasm module may grow to 4 GiB, for pretrained checkpoints, but training keeps this limit). */
  limitBytes: number;
  fits: boolean;
  parts: {
    /** the weights */
    parameters: number;
    gradients: number;
    /** AdamW's moments and the copy an update keeps */
    optimizer: number;
    /** what the forward keeps for the backward, without the attention weights */
    activations: number;
    /** the softmax weights: layers × batch × heads × length² */
    attention: number;
    /** the backward's buffers and the products' packed operands */
    scratch: number;
  };
  /** Why createTrainer would refuse the settings (the too_large message), or null when they fit. */
  message: string | null;
}

export interface TaskInfo {
  name: TaskName;
  /** The page's title ("Previous token"). */
  title: string;
  description: string;
  pattern: string;
  causal: boolean;
  context: number;
  vocabulary: readonly string[];
  /** The recipe: settings known to learn visibly within seconds. */
  defaults: Required<Omit<TrainSettings, 'corpus'>>;
  /** The recipe's step count. */
  steps: number;
  /** The probe sequence, null = no target at that position. */
  example: { tokens: string[]; targets: (string | null)[] };
}

export interface ModelConfig {
  vocab: number; context: number; layers: number; dModel: number; heads: number; mlp: number;
  layernorm: boolean; positional: Positional; causal: boolean; scale: boolean; tied: boolean;
}

export interface StepReport {
  /** steps done after this call */
  step: number;
  loss: number;
  accuracy: number;
  /** global gradient norm before clipping */
  gradNorm: number;
  /** ‖∂loss/∂(scaled scores)‖, summed over layers and heads */
  scoreGradNorm: number;
  /** variance of the allowed scaled scores (mean over rows, heads, layers) */
  scoreVariance: number;
  /** mean softmax row entropy (nats) */
  rowEntropy: number;
  /** wall time of the call */
  ms: number;
}

export interface ForwardOptions {
  /** heads whose output is zeroed */
  ablate?: [layer: number, head: number][];
  /** every head averages its allowed values uniformly */
  uniformAttention?: boolean;
  /** override the model's causal mask */
  causal?: boolean | null;
}

export interface Probe {
  tokens: string[];
  ids: Int32Array;
  /** -1 = no target */
  targets: Int32Array;
  length: number;
  predictions: Int32Array;
  correct: (boolean | null)[];
  layers: { heads: { weights: Matrix; scores: Record<string, number> }[] }[];
  keys: { name: string; key: Matrix }[];
  probabilities: Matrix;
}

export interface ModelLayerTrace {
  input: Matrix; normed: Matrix;
  wQuery: Matrix; wKey: Matrix; wValue: Matrix; wOutput: Matrix;
  heads: HeadTrace[];
  /** Per head (same order): its pattern scores, computed by the engine. */
  patterns: HeadPatterns[];
  concat: Matrix;
  /** concat·W_O */
  attentionOutput: Matrix;
  /** input + attentionOutput */
  residual: Matrix;
  mlpNormed?: Matrix; mlpHidden?: Matrix; mlpOutput?: Matrix;
  /** rmsnorm: √(mean(x²) + eps) of each row normed and mlpNormed were divided by (T) */
  normedRms?: Float32Array; mlpNormedRms?: Float32Array;
  /** the gated MLP: gate = m·W_gate + b_gate (before its activation) and up = m·W_in + b_in;
   * mlpHidden = act(gate) ⊙ up */
  mlpGate?: Matrix; mlpUp?: Matrix;
  /** the residual stream out */
  output: Matrix;
}

export interface ModelTrace {
  config: ModelConfig;
  tokens: Token[];
  length: number;
  /** 1: a sequence the task's generator makes; 0: not (outside its grammar); -1: the task has no grammar, or the model no task */
  grammar: 1 | 0 | -1;
  embeddings: Matrix;
  positional: Matrix;
  mask: Matrix<Uint8Array>;
  layers: ModelLayerTrace[];
  finalNormed: Matrix;
  /** rmsnorm: √(mean(x²) + eps) of each row LN_f divided by (T) */
  finalRms?: Float32Array;
  /** rope: θᵢ after any scaling (D/2; the same in every layer) */
  ropeFrequencies?: Float32Array;
  /** alibi: each head's slope m_h (H) */
  alibiSlopes?: Float32Array;
  logits: Matrix;
  probabilities: Matrix;
  /** the text, when traced from {text} */
  sentence?: string;
}

/** Trainer.backwardTrace: every gradient intermediate of one sentence (the same numbers as
 * `attn grad --model FILE --sentence S`). */
export interface BackwardHeadTrace {
  /** this forward's (with the trace's scale) */
  query: Matrix; key: Matrix; value: Matrix; weights: Matrix;
  dOutput: Matrix; dWeights: Matrix; dScaled: Matrix; dScores: Matrix; dQuery: Matrix; dKey: Matrix; dValue: Matrix;
  /** rope only: q and k before the rotation, and their gradients (dQuery, dKey turned back) */
  queryBeforeRope?: Matrix; keyBeforeRope?: Matrix; dQueryBeforeRope?: Matrix; dKeyBeforeRope?: Matrix;
}
export interface BackwardTrace {
  loss: number;
  scale: boolean;
  targets: Int32Array | number[];
  dLogits: Matrix;
  probabilities: Matrix;
  /** normed: the attention's input X′; dStreamIn/Out: ∂loss/∂ the residual stream into and out of
   * the layer; dWQuery …: the layer's C×C weight gradients */
  layers: { normed: Matrix; dStreamIn: Matrix; dStreamOut: Matrix; dAttention: Matrix; wOutput: Matrix; dWQuery: Matrix; dWKey: Matrix; dWValue: Matrix; dWOutput: Matrix; heads: BackwardHeadTrace[] }[];
  /** each parameter's gradient norm, by name */
  gradNorms: Record<string, number>;
}

export declare class Trainer {
  readonly settings: Readonly<Required<Omit<TrainSettings, 'corpus'>>>;
  readonly config: Readonly<ModelConfig>;
  readonly vocabulary: readonly string[];
  readonly parameterCount: number;
  /** false for a text model loaded without its corpus */
  readonly hasTask: boolean;
  /** the engine's step, also after a call that stopped part-way */
  readonly stepCount: number;
  /** n optimizer steps; a non-finite loss or gradient throws RangeError naming the step, weights kept. */
  step(n?: number): StepReport;
  /** rows of equal length (pad and give lengths); a ragged batch throws RangeError code bad_shape */
  stepBatch(batch: { ids: number[][] | Int32Array; targets: number[][] | Int32Array; batch?: number; length?: number; lengths?: number[] | null }, n?: number): StepReport;
  evaluate(options?: ForwardOptions & { samples?: number }): { loss: number; accuracy: number; targets: number };
  headScores(samples?: number, options?: ForwardOptions): { layer: number; head: number; scores: Record<string, number> }[];
  probe(options?: ForwardOptions & { ids?: ArrayLike<number>; text?: string }): Probe;
  trace(options: ForwardOptions & { ids?: ArrayLike<number>; text?: string }): ModelTrace;
  /** One sentence's backward: targets one per token (-1 none; default the task's), scale false
   * drops 1/√D. A bad target is a RangeError with err.code. */
  backwardTrace(options?: { ids?: ArrayLike<number>; text?: string; targets?: ArrayLike<number>; scale?: boolean }): BackwardTrace;
  /** One plain SGD step by hand on one sentence's loss, with the model's own scale: every
   * parameter (scope 'all', the default) or one head's columns of W_Q, W_K, W_V and rows of
   * W_O (scope 'head' with layer and head). lr in (0, 100]. AdamW state untouched. */
  sgdStep(options: { ids?: ArrayLike<number>; text?: string; targets?: ArrayLike<number>; lr: number; scope?: 'all' | 'head'; layer?: number; head?: number }): { loss: number; size: number };
  /** every parameter, flat in the checkpoint's layout order (a copy) */
  parameters(): Float32Array;
  /** puts back parameters() bit for bit; a wrong length is RangeError bad_shape, a non-finite value not_finite */
  setParameters(values: Float32Array): void;
  /** the .safetensors bytes */
  save(): Uint8Array;
  /** frees the wasm-side model; every later call throws TypeError */
  dispose(): void;
}
