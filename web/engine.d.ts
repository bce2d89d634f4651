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
  /** masked row softmax: T×T; forbidden entries exactly 0 */
  weights: Matrix;
  /** weights·V_h: T×D */
  output: Matrix;
}

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

export interface BuildInfo { simd: boolean; maxTokens: number; maxDModel: number; vocabSize: number; maxSentenceBytes: number }

export declare const DEFAULT_SETTINGS: Readonly<Required<Settings>>;
export declare const POSITIONALS: readonly Positional[];
export declare const MASKS: readonly MaskKind[];
/** 65536: a longer sentence (in UTF-8 bytes) is a RangeError, raised before it reaches wasm memory. */
export declare const MAX_SENTENCE_BYTES: number;
/** 64: the most sentences runBatch takes. */
export declare const MAX_BATCH_SENTENCES: number;

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
  forward(options: { x: MatrixInput; weights: Weights<MatrixInput>; heads: number; mask?: ForwardMask; scale?: boolean }): Matrix;
  /** forward() on the Eigen reference path (multi_head_output), for tests and benchmarks. */
  forwardReference(options: { x: MatrixInput; weights: Weights<MatrixInput>; heads: number; mask?: MatrixInput | null; scale?: boolean }): Matrix;
  allocatedBytes(): number;
  memoryBytes(): number;
}
