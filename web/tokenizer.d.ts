// Types of web/tokenizer.js's public part, the pretrained tokenizers
// (engine.createTokenizer): what engine.js re-exports, and engine.d.ts with it.

import type { FamilyName } from './types.js';

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
