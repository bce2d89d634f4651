// Types of web/engine.js, the attention engine's JavaScript API (hand-written:
// Emscripten 3.1.6 cannot generate them). The shared shapes are in types.d.ts, the
// trainers' in trainer.d.ts, the pretrained tokenizers' in tokenizer.d.ts and the
// pretrained checkpoints' in pretrained.d.ts: all re-exported here, as engine.js
// is the package's one entry point.

import type { Matrix, MatrixInput, Positional, MaskKind, Token, HeadTrace, HeadPatterns, ErrorCode, FamilyName, FamilyInfo } from './types.js';
import type { TaskName, TaskInfo, TrainSettings, TrainingMemory, Trainer } from './trainer.js';
import type { TokenizerFiles, PretrainedTokenizer } from './tokenizer.js';
import type { PretrainedConfig, HubLoader, HubSizeCheck } from './pretrained.js';

export * from './types.js';
export * from './trainer.js';
export * from './tokenizer.js';
export * from './pretrained.js';

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
  /** rope: θᵢ (D/2; position m turns the pair (i, i + D/2) by m·θᵢ) */
  ropeFrequencies?: Float32Array;
  /** alibi: each head's slope m_h (H; the softmax reads scaled − m_h·|i − j|) */
  alibiSlopes?: Float32Array;
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
  /** Module-wide too: the other live handles (engines, pretrained tokenizers, Hub loaders, loaded models). */
  liveEngines: number;
  liveTokenizers: number;
  liveLoaders: number;
  liveModels: number;
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

/** Attention weights kept in an engine (Engine.keepWeights). */
export declare class KeptWeights {
  /** the weights' C (each is C×C) */
  readonly c: number;
}

/** forward()'s mask: none, causal, padding keys past realTokens, or any T×T 0/1 matrix (1 = may attend). */
export type ForwardMask = null | 'none' | 'causal' | { kind: 'padding' | 'causal+padding'; realTokens: number } | MatrixInput;

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
  /** Whether the model of a Hub config.json fits this engine, before anything else is
   * downloaded (HubSizeCheck, pretrained.js); a config that cannot be read throws as readHubConfig. */
  checkHubConfig(configText: string): HubSizeCheck;
  /** The safetensors header, read alone (a range request for its first 8 + N bytes), against
   * config.json and the whole file's size: throws what openCheckpoint would, allocating nothing. */
  checkCheckpointHeader(configText: string, header: Uint8Array, fileSize: number): void;
  /** A loader from config.json's text, the file's header bytes and the file's size in bytes: feed it
   * the needed ranges. A header that describes more data than fileSize ('bad_checkpoint') or
   * parameters above HubSizeCheck.limitBytes ('too_large') is refused before anything is allocated.
   * An F16/BF16 file stays 16-bit in memory (half the bytes, the same numbers) unless
   * options.float32 (twice the memory, the same numbers). options.chunkBytes (tests): the 16-bit
   * values' chunk size, 16 bytes to 256 MiB (the default), to spread a small model over many allocations. */
  openCheckpoint(configText: string, header: Uint8Array, fileSize: number, options?: { float32?: boolean; chunkBytes?: number }): HubLoader;
  /** A pretrained tokenizer from the Hugging Face files' texts by name: 'tokenizer.json' (BPE or
   * WordPiece), or 'vocab.json' + 'merges.txt' (GPT-2), or 'vocab.txt' (BERT, with
   * 'tokenizer_config.json' for its lower-casing). A bad file is a TypeError with code
   * 'bad_checkpoint' naming the file and the problem. Free it with dispose(). */
  createTokenizer(files: TokenizerFiles, options?: { family?: '' | FamilyName }): PretrainedTokenizer;
}
