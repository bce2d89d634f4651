// The shapes every module of the engine API shares (engine.js, trainer.js,
// pretrained.js): matrices, tokens, one head's trace, the error codes.
// Hand-written, as the other .d.ts files (Emscripten 3.1.6 cannot generate them);
// engine.d.ts re-exports them all.

/** A row-major matrix: element (i, j) is data[i * cols + j]. `data` is a copy. */
export interface Matrix<T extends Float32Array | Uint8Array = Float32Array> {
  rows: number;
  cols: number;
  data: T;
}

/** Matrices may also be given as arrays of rows. */
export type MatrixInput = Matrix<Float32Array | Uint8Array> | { rows: number; cols: number; data: ArrayLike<number> } | number[][];

/** rope and alibi act inside attention (the positional matrix P is zeros for them). */
export type Positional = 'none' | 'sinusoidal' | 'learned' | 'rope' | 'alibi';
export type MaskKind = 'none' | 'causal' | 'padding' | 'causal+padding' | 'custom';

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
  /** rope only: Q_h and K_h before their rotation (query and key are after it): T×D */
  queryBeforeRope?: Matrix;
  keyBeforeRope?: Matrix;
}

/** One head's scores against the standard patterns on the sentence (the core's head_patterns):
 * previous-token, first-token, same-token, induction (and a trained model's task keys, e.g.
 * antecedent); score null when the pattern scores no row; rows: the rows it scores. */
export type HeadPatterns = Record<string, { score: number | null; rows: number }>;

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
