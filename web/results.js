// What the bindings return, made ready for JS callers: an error record becomes a
// thrown, coded error (unwrap), and tokens' UTF-8 byte offsets gain their UTF-16
// indices into the JS string (addCharOffsets). Every module of the engine API
// (engine.js, trainer.js, tokenizer.js, pretrained.js) uses both, so they live
// here, below all of them, and none of those modules imports another for them.

import { codedError } from './validate.js';

/** A binding's result, or the JS error its error record {__attnError} describes
 * (RangeError, TypeError or Error, with err.code). */
export function unwrap(result) {
  if (result && typeof result === 'object' && result.__attnError) {
    const { errorType, errorMessage, errorCode } = result.__attnError;
    const ErrorType = errorType === 'TypeError' ? TypeError : errorType === 'RangeError' ? RangeError : Error;
    throw codedError(ErrorType, errorCode, errorMessage);
  }
  return result;
}

/** UTF-8 byte offset → UTF-16 index at every character boundary of `text` (walks it once). */
export function utf8ToUtf16Offsets(text) {
  const byteToChar = new Map([[0, 0]]);
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.codePointAt(i);
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (code > 0xffff) i++;
    byteToChar.set(bytes, i + 1);
  }
  return byteToChar;
}

/** Adds UTF-16 offsets (startChar, endChar) to tokens that carry UTF-8 byte offsets
 * (start, end; -1, a pretrained tokenizer's [CLS] or [SEP], stays -1): the traces and
 * tokenize() of engine.js, a Trainer's traces, the pretrained tokenizers and models. */
export function addCharOffsets(tokens, sentence) {
  const byteToChar = utf8ToUtf16Offsets(sentence);
  for (const t of tokens) {
    t.startChar = t.start < 0 ? -1 : byteToChar.get(t.start) ?? sentence.length;
    t.endChar = t.end < 0 ? -1 : byteToChar.get(t.end) ?? sentence.length;
  }
  return tokens;
}
