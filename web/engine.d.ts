// Types of web/engine.js, the attention engine's JavaScript API (hand-written:
// Emscripten 3.1.6 cannot generate them).

/** A row-major matrix: element (i, j) is data[i * cols + j]. `data` is a copy. */
export interface Matrix<T extends Float32Array | Uint8Array = Float32Array> {
  rows: number;
  cols: number;
  data: T;
}

/** Matrices may also be given as arrays of rows. */
export type MatrixInput = Matrix<Float32Array | Uint8Array> | { rows: number; cols: number; data: ArrayLike<number> } | number[][];

export type Positional = 'none' | 'sinusoidal' | 'learned';
export type MaskKind = 'none' | 'causal' | 'padding' | 'causal+padding' | 'custom';

export interface Weights<M = Matrix> {
  /** C×C; head h uses columns h·D … (h+1)·D−1. */
  wQuery: M;
  wKey: M;
  wValue: M;
  /** C×C; head h uses rows h·D … (h+1)·D−1. */
  wOutput: M;
}

export interface Settings {
  /** UTF-8-able text (no unpaired surrogates). Default: a sentence with "it". */
  sentence?: string;
  /** Model width C, 1 … 1024. Default 16. */
  dModel?: number;
  /** Heads H, 1 … C, dividing C. Default 4. */
  heads?: number;
  /** 0 … 2^32−1. Default 42. */
  seed?: number;
  /** Default 'sinusoidal'. */
  positional?: Positional;
  /** Default 'none'. 'custom' needs customMask. */
  mask?: MaskKind;
  /** Pad with [PAD] tokens to this length (0: none). Default 0. */
  padTo?: number;
  /** Divide scores by √D. Default true. */
  scale?: boolean;
  /** Lower-case tokens before looking up ids. Default false. */
  lowercase?: boolean;
  /** Every head uses head 0's weights. Default false. */
  shareHeads?: boolean;
  /** T×T, nonzero = the query (row) may attend to the key (column). */
  customMask?: MatrixInput | null;
  /** Replaces the seeded Glorot weights. */
  weights?: Weights<MatrixInput> | null;
}

export interface Token {
  text: string;
  /** 0 = [PAD], 1 = [UNK], 2 … 32767 hashed. */
  id: number;
  /** UTF-8 byte offsets [start, end). */
  start: number;
  end: number;
  /** UTF-16 offsets into the JS string [startChar, endChar). */
  startChar: number;
  endChar: number;
}

export interface HeadTrace {
  /** Q_h, K_h, V_h: T×D */
  query: Matrix;
  key: Matrix;
  value: Matrix;
  /** Q_h·K_hᵀ: T×T */
  scores: Matrix;
  /** scores / √D (or scores when scale is off), before masking: T×T, finite */
  scaled: Matrix;
  /** Per query: the largest allowed scaled score m (T values; 0 for a fully masked row). */
  rowMax: Float32Array;
  /** Per query: the softmax denominator Σ_j exp(scaled − m) over allowed keys (T values;
   * summed in double, rounded to float; 0 for a fully masked row, at least 1 otherwise). */
  rowSum: Float32Array;
  /** masked row softmax: T×T; forbidden entries exactly 0; weights = exp(scaled − rowMax) / rowSum */
  weights: Matrix;
  /** weights·V_h: T×D */
  output: Matrix;
}

/** One head's scores against the standard patterns on the sentence (the core's head_patterns):
 * previous-token, first-token, same-token, induction (and a trained model's task keys, e.g.
 * antecedent); score null when the pattern scores no row; rows: the rows it scores. */
export type HeadPatterns = Record<string, { score: number | null; rows: number }>;

export interface Trace {
  config: {
    dModel: number; heads: number; dHead: number; seed: number; positional: Positional;
    mask: MaskKind; scale: boolean; padTo: number; lowercase: boolean; shareHeads: boolean;
  };
  sentence: string;
  /** T tokens, padding included. */
  tokens: Token[];
  /** Tokens of the sentence; tokens after these are [PAD]. */
  realTokens: number;
  /** X, P, X' = X + P: T×C */
  embeddings: Matrix;
  positional: Matrix;
  input: Matrix;
  wQuery: Matrix;
  wKey: Matrix;
  wValue: Matrix;
  wOutput: Matrix;
  /** T×T, 1 = may attend. */
  mask: Matrix<Uint8Array>;
  heads: HeadTrace[];
  /** Per head (same order): its pattern scores, computed by the engine. */
  patterns: HeadPatterns[];
  /** Heads' outputs side by side: T×C */
  concat: Matrix;
  /** Y = concat·W_O: T×C */
  output: Matrix;
}

export interface ScoreStats { mean: number; variance: number; min: number; max: number; count: number }

export interface ScaleExperimentResult {
  scoreVariance: number;
  meanEntropy: number;
  meanJacobianNorm: number;
  /** ln(tokens): the entropy of a uniform row. */
  maxEntropy: number;
}

/** Why an engine error was thrown (err.code): attn::Error::Code of the C++ core. */
export type ErrorCode =
  | 'bad_input'          // a value out of range or of the wrong type
  | 'bad_shape'          // matrices whose sizes do not fit together
  | 'bad_mask'           // an unknown mask, or a mask matrix that does not fit
  | 'not_finite'         // NaN, an infinity, or a value beyond ±1e6
  | 'bad_text'           // text that is not valid UTF-8 / Unicode
  | 'empty_text'         // a sentence with no tokens
  | 'too_many_tokens'    // more tokens, bytes of text or sentences than the engine takes
  | 'too_large'          // sizes whose memory is above a limit (model width, trace size, training memory)
  | 'out_of_memory'      // the allocation failed
  | 'too_long_for_model' // more tokens than a trained model's context
  | 'unknown_word'       // a word outside a trained model's vocabulary
  | 'bad_checkpoint'     // a .safetensors file that cannot be read
  | 'bad_state'          // a disposed engine or trainer
  | 'internal';          // a bug

/** Every error the engine throws is a RangeError, TypeError or Error with a code. */
export interface EngineError extends Error { code: ErrorCode }

/** The engine's rules as the C++ defines them (engine.info without simd and fusedMultiplyAdd). */
export interface EngineConstants {
  maxTokens: number;
  maxDModel: number;
  vocabSize: number;
  maxSentenceBytes: number;
  maxBatchSentences: number;
  /** 3·H·T² of a full trace may not exceed this. */
  maxTraceScoreFloats: number;
  /** Largest |entry| of x and the weights. */
  maxAbsValue: number;
  /** Largest rows or cols of a matrix passed in. */
  maxSide: number;
  /** PretrainedModel.generate's sampling temperature range (generation.hpp). */
  minTemperature: number;
  maxTemperature: number;
  defaults: {
    sentence: string; dModel: number; heads: number; seed: number; positional: Positional; mask: MaskKind;
    padTo: number; scale: boolean; lowercase: boolean; shareHeads: boolean;
  };
  masks: readonly MaskKind[];
  positionals: readonly Positional[];
  errorCodes: readonly ErrorCode[];
  /** The training tasks (TASKS). */
  tasks: readonly TaskName[];
  /** The task registry (src/train/task_registry.hpp): title and size range of each task. */
  taskTable: readonly { name: TaskName; title: string; causal: boolean; length: { default: number; lo: number; hi: number; rule: string } }[];
  /** createTrainer's settings (model_schema.hpp's rows, then settings:: of trainer.hpp): the
   * checkpoint key, JS key ('' = not a JS setting), attn train's flag, range and type. */
  trainSettings: readonly {
    name: string; js: string; flag: string; label: string; type: 'whole' | 'real' | 'boolean' | 'choice';
    lo: number; hi: number; values: readonly string[]; model: boolean;
  }[];
  /** The fast path's inputs in the order of its raw-heap offset table. */
  fastInputs: readonly ('x' | 'wQuery' | 'wKey' | 'wValue' | 'wOutput')[];
  /** The model families of pretrained checkpoints (src/families/family.hpp; web/families.js). */
  families: readonly FamilyInfo[];
}

/** A family's name ('gpt2', …): one of engine.info.families. */
export type FamilyName = string;

/** One model family, as the page asks it (buildInfo().families). */
export interface FamilyInfo {
  name: FamilyName;
  /** for messages and the page ('GPT-2') */
  title: string;
  /** the config.json architectures and model_type values it accepts */
  architectures: readonly string[];
  modelTypes: readonly string[];
  tokenizer: 'byte_level_bpe' | 'wordpiece';
  /** the choices of files that make its tokenizer, in the order tried */
  tokenizerFiles: readonly (readonly string[])[];
  /** those files in words ('tokenizer.json, or vocab.json and merges.txt') */
  tokenizerNeeds: string;
  /** causal: writes a text one token at a time (generate) */
  generates: boolean;
  /** what its top tokens are ('likeliest next tokens') */
  predictions: string;
  /** whose answer the Learn part's default target is ('the next token') */
  learnTarget: string;
}

/** simd: the SIMD128 build; fusedMultiplyAdd: the relaxed-SIMD flavour (./build_wasm.sh --relaxed),
 * whose products are fused (its last bits differ from the exact build's). */
export interface BuildInfo extends EngineConstants { simd: boolean; fusedMultiplyAdd: boolean }

/** What an engine keeps in wasm memory between calls (Engine.stats()). */
export interface EngineStats {
  cachedWeightsBytes: number;
  weightsCacheHits: number;
  weightsCacheMisses: number;
  fastWorkspaceBytes: number;
  fastBufferBytes: number;
  /** The module's product workspace, bounded (at most 4 MiB kept between calls). */
  gemmWorkspaceBytes: number;
  /** Module-wide, shared by every engine: the live trainers (each freed by its dispose()) and their weights. */
  liveTrainers: number;
  trainerParameterBytes: number;
}

export declare const DEFAULT_SETTINGS: Readonly<Required<Settings>>;
export declare const POSITIONALS: readonly Positional[];
export declare const MASKS: readonly MaskKind[];
/** 65536: a longer sentence (in UTF-8 bytes) is a RangeError, raised before it reaches wasm memory. */
export declare const MAX_SENTENCE_BYTES: number;
/** 64: the most sentences runBatch takes. */
export declare const MAX_BATCH_SENTENCES: number;
/** 2048: the most tokens a sentence may have. */
export declare const MAX_TOKENS: number;
/** 1024: the widest model. */
export declare const MAX_D_MODEL: number;
export declare const ERROR_CODES: readonly ErrorCode[];
export declare const ENGINE_CONSTANTS: Readonly<EngineConstants>;

/**
 * Loads the WebAssembly module (once per page) and returns an engine.
 * Rejects with an Error naming the problem when WebAssembly or SIMD is missing.
 */
export declare function createEngine(options?: {
  moduleFactory?: (options: object) => Promise<unknown>;
  locateFile?: (name: string) => string;
}): Promise<Engine>;

/** Fills in defaults and checks types (TypeError) and basic ranges (RangeError). */
export declare function normalizeSettings(settings?: Settings): Required<Settings>;
export declare function simdSupported(): boolean;
/** Element (i, j) of a matrix. */
export declare function at(matrix: Matrix<Float32Array | Uint8Array>, i: number, j: number): number;

/**
 * Every method throws TypeError for a value of the wrong type and RangeError
 * (with the C++ core's message, e.g. "d_model 10 is not divisible by 3 heads")
 * for a value out of range. Nothing needs to be deleted. Every number returned
 * is finite: x and weights entries must be finite and within ±1e6 (beyond it
 * Q·Kᵀ could overflow float), the analysis functions' entries too (scoreStats:
 * any finite value), or the RangeError names the first entry that is not
 * ("x[0][1] is NaN, not a finite number"). Matrices are read once (each
 * property, row and entry), so getters and Proxies see one read each.
 */
/** Attention weights kept in an engine (Engine.keepWeights). */
export declare class KeptWeights {
  /** the weights' C (each is C×C) */
  readonly c: number;
}

/** forward()'s mask: none, causal, padding keys past realTokens, or any T×T 0/1 matrix (1 = may attend). */
export type ForwardMask = null | 'none' | 'causal' | { kind: 'padding' | 'causal+padding'; realTokens: number } | MatrixInput;

export declare class Engine {
  readonly info: BuildInfo;
  run(settings?: Settings): Trace;
  /** Sentences padded to the longest; mask defaults to 'padding'. */
  runBatch(sentences: string[], settings?: Omit<Settings, 'sentence'>): Trace[];
  tokenize(sentence: string, options?: { lowercase?: boolean }): Token[];
  rowEntropy(weights: MatrixInput): Float32Array;
  softmaxJacobianNorm(weights: MatrixInput): Float32Array;
  scoreStats(scores: MatrixInput, mask?: MatrixInput | null): ScoreStats;
  scaleExperiment(options: { dK: number; tokens?: number; samples?: number; seed?: number; scale?: boolean }): ScaleExperimentResult;
  /** Output only (T×C), without per-head matrices: the fast path (SIMD kernels).
   * Hidden keys of 'causal' and padding masks are skipped, not computed. */
  forward(options: { x: MatrixInput; weights: Weights<MatrixInput> | KeptWeights; heads: number; mask?: ForwardMask; scale?: boolean }): Matrix;
  /** weights checked and packed once, kept in the engine: forward({x, weights: kept}) copies only x;
   * a later keepWeights() replaces them (the old handle is refused, bad_state) */
  keepWeights(weights: Weights<MatrixInput>): KeptWeights;
  /** forward() on the independent reference path (multi_head_output: Eigen's own
   * products, none of the SIMD kernels), for tests and benchmarks. */
  forwardReference(options: { x: MatrixInput; weights: Weights<MatrixInput>; heads: number; mask?: MatrixInput | null; scale?: boolean }): Matrix;
  allocatedBytes(): number;
  memoryBytes(): number;
  /** What this engine keeps between calls. */
  stats(): EngineStats;
  /** Frees this engine's C++ state; using it afterwards is a TypeError with code 'bad_state'. */
  dispose(): void;
  /** The training tasks, their sentences, recipes and examples. */
  tasks(): readonly TaskInfo[];
  /** A new model, AdamW state and task, initialised from the seed. Settings whose steps need more
   * memory than TrainingMemory.limitBytes are a RangeError with code 'too_large'. */
  createTrainer(settings?: TrainSettings): Trainer;
  /** What createTrainer(settings) and its steps would need in memory; allocates nothing. */
  estimateTrainingMemory(settings?: TrainSettings): TrainingMemory;
  /** A model from the bytes of a .safetensors checkpoint (RangeError/TypeError naming the problem
   * for a bad file). A text model needs its corpus to go on training. */
  loadTrainer(bytes: Uint8Array, options?: { corpus?: string }): Trainer;
  /** A Hub config.json → the model's config; an unsupported architecture or a bad field is a
   * RangeError with code 'bad_checkpoint' naming it (pretrained.js). */
  readHubConfig(configText: string): PretrainedConfig;
  /** Bytes of a safetensors header (8 + N) from the file's first 8 bytes. */
  safetensorsHeaderSize(first8: Uint8Array): number;
  /** A loader from config.json's text and the file's header bytes: feed it the needed ranges. */
  openCheckpoint(configText: string, header: Uint8Array): HubLoader;
  /** A pretrained tokenizer from the Hugging Face files' texts by name: 'tokenizer.json' (BPE or
   * WordPiece), or 'vocab.json' + 'merges.txt' (GPT-2), or 'vocab.txt' (BERT, with
   * 'tokenizer_config.json' for its lower-casing). A bad file is a TypeError with code
   * 'bad_checkpoint' naming the file and the problem. Free it with dispose(). */
  createTokenizer(files: TokenizerFiles, options?: { family?: '' | FamilyName }): PretrainedTokenizer;
}

// ---- pretrained tokenizers (web/tokenizer.js) -------------------------------------------

export type TokenizerFileName = 'tokenizer.json' | 'vocab.json' | 'merges.txt' | 'vocab.txt' | 'tokenizer_config.json';
export type TokenizerFiles = Partial<Record<TokenizerFileName, string>>;
export declare const TOKENIZER_FILES: readonly TokenizerFileName[];

/** One token of a pretrained tokenizer or model (PretrainedTokenizer.encode, PretrainedModel.tokenize,
 * PretrainedTrace.tokens): Token's names, plus the vocabulary's piece. */
export interface PretrainedToken {
  id: number;
  /** the vocabulary's piece ("Ġworld", "##ing", "[CLS]") */
  piece: string;
  /** readable: GPT-2's bytes decoded, a leading space as "␣", a part of a character as "\xE2"; BERT's piece */
  text: string;
  /** UTF-8 byte offsets in the text, [start, end); a token inside a character spans the character;
   * -1 for added tokens ([CLS], [SEP]) and for traceIds() */
  start: number;
  end: number;
  /** the same as UTF-16 indices into the JS string (-1 where start is -1); absent after traceIds() */
  startChar: number;
  endChar: number;
}

export declare class PretrainedTokenizer {
  /** the family asked for, else the first whose tokenizer the files make */
  readonly family: FamilyName;
  readonly vocabSize: number;
  /** BERT's [MASK] id; -1 for GPT-2 */
  readonly maskId: number;
  /** Text above MAX_SENTENCE_BYTES is a RangeError 'too_many_tokens'; a lone surrogate a TypeError 'bad_text'. */
  encode(text: string): PretrainedToken[];
  decode(ids: readonly number[]): string;
  piece(id: number): string;
  /** Frees it; using it afterwards is a TypeError with code 'bad_state'. */
  dispose(): void;
}

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

// ---- training (web/trainer.js) ---------------------------------------------------------

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
