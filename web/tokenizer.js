// Pretrained tokenizers in the engine (byte-level BPE, WordPiece: the tokenizer of each
// model family, families.js; src/text/pretrained_tokenizer.hpp), made from the Hugging
// Face files' texts:
//
//   const tok = engine.createTokenizer({ 'tokenizer.json': text });
//   tok.encode('Hello world')  // [{id: 15496, piece: 'Hello', text: 'Hello', start: 0, end: 5, startChar: 0, endChar: 5}, …]
//   tok.dispose();
//
// engine.js adds createTokenizer to Engine (tokenizerApi); types in tokenizer.d.ts.

import { codedError, typeName, checkInteger, checkText } from './validate.js';
import { unwrap, addCharOffsets } from './results.js';
import { FAMILY_NAMES, familyChoices } from './families.js';

/** The file names a tokenizer is made from (read_tokenizer's arguments, in order). */
export const TOKENIZER_FILES = Object.freeze(['tokenizer.json', 'vocab.json', 'merges.txt', 'vocab.txt', 'tokenizer_config.json']);
/** createTokenizer's family option: '' (whichever the files make) or a family's name. */
const FAMILIES = ['', ...FAMILY_NAMES];

const finalizer = typeof FinalizationRegistry === 'function' ? new FinalizationRegistry(({ module, handle }) => module.tokenizerDispose(handle)) : null;

export class PretrainedTokenizer {
  /** Use engine.createTokenizer(files, options). */
  constructor(module, files, family, maxTextBytes) {
    this._m = module;
    this._maxTextBytes = maxTextBytes;
    const info = unwrap(module.tokenizerLoad(family, ...TOKENIZER_FILES.map((name) => files[name] ?? '')));
    /** the family asked for, else the first whose tokenizer the files make (families.js) */
    this.family = info.family;
    this.vocabSize = info.vocabSize;
    /** the [MASK] id (WordPiece), -1 without one */
    this.maskId = info.maskId;
    /** the tokenizer in wasm memory: a handle of the bindings' table (0 after dispose()) */
    this._handle = info.handle;
    finalizer?.register(this, { module, handle: this._handle }, this);
  }

  _live() {
    if (!this._handle) throw codedError(TypeError, 'bad_state', 'this tokenizer has been disposed: create a new one');
    return this._handle;
  }

  /** The tokens of a text: [{id, piece, text (readable), start, end, startChar, endChar}], the
   * shape of PretrainedModel.tokenize; start/end are UTF-8 byte offsets, startChar/endChar
   * UTF-16 indices into `text` (-1 for [CLS] and [SEP]). */
  encode(text) {
    checkText(text, 'text', { maxBytes: this._maxTextBytes });
    return addCharOffsets(unwrap(this._m.tokenizerEncode(this._live(), text)), text);
  }

  /** The text of token ids (GPT-2: the bytes as UTF-8; BERT: the pieces joined). */
  decode(ids) {
    if (!Array.isArray(ids)) throw codedError(TypeError, 'bad_input', `ids must be an array of token ids, got ${typeName(ids)}`);
    const list = ids.map((id, i) => checkInteger(id, `ids[${i}]`, 0, this.vocabSize - 1));
    return unwrap(this._m.tokenizerDecode(this._live(), list));
  }

  /** The vocabulary's piece of an id ("Ġworld", "##ing"). */
  piece(id) {
    return unwrap(this._m.tokenizerPiece(this._live(), checkInteger(id, 'id', 0, this.vocabSize - 1)));
  }

  /** Frees the tokenizer in wasm memory; every later call throws (code bad_state). */
  dispose() {
    if (!this._handle) return;
    finalizer?.unregister(this);
    this._m.tokenizerDispose(this._handle);
    this._handle = 0;
  }
}

/** The methods engine.js adds to Engine. */
export function tokenizerApi(module, maxTextBytes) {
  return {
    createTokenizer(files, { family = '' } = {}) {
      if (files === null || typeof files !== 'object') throw codedError(TypeError, 'bad_input', `files must be an object of file texts by name, got ${typeName(files)}`);
      if (!FAMILIES.includes(family)) throw codedError(RangeError, 'bad_input', `family "${family}" is not ${familyChoices()}`);
      const texts = {};
      for (const name of Object.keys(files)) {
        if (!TOKENIZER_FILES.includes(name)) throw codedError(RangeError, 'bad_input', `"${name}" is not a tokenizer file (${TOKENIZER_FILES.join(', ')})`);
        const value = files[name];
        if (value != null) texts[name] = checkText(value, name);
      }
      return new PretrainedTokenizer(module, texts, family, maxTextBytes);
    },
  };
}
