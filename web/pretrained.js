// The JS API of pretrained checkpoints (GPT-2, BERT from the Hugging Face Hub),
// over src/bindings/pretrained_bindings.cpp: with engine.js and trainer.js the
// only JS that touches wasm memory. Engine (engine.js) creates them:
//
//   const size = engine.checkHubConfig(configText);   // {fits, parameterBytes, limitBytes, message}: before any download
//   const loader = engine.openCheckpoint(configText, headerBytes, fileSize);   // config.json, the safetensors header, the file's size
//   for (const { begin, end } of loader.needed) … loader.feed(offset, chunk);   // in increasing order
//   const model = loader.finish({ tokenizerJson, vocabJson, mergesTxt, vocabTxt, tokenizerConfigJson });
//   model.trace('Hello world', { layer: 0 });   // every intermediate of layer 0
//   model.generate('Hello', { sample: true, seed: 7 }); // the next token, through the model's KV cache (GPT-2)
//   model.dispose();
//
// A chunk is copied into the loader's staging buffer (a fixed block of wasm
// memory, stagingBytes long) and converted into the model's parameters from
// there: the file is never held whole in wasm memory. Results are plain
// objects with typed-array copies. Types in pretrained.d.ts.

import { codedError, checkInteger, checkNumber, checkBoolean, checkText } from './validate.js';
import { unwrap, addCharOffsets } from './results.js';
import { ENGINE_CONSTANTS } from './generated/engine_constants.js';

/** Longest sentence a pretrained model traces, in UTF-16 units. */
const MAX_TEXT_CHARS = 100_000;
/** Longest config.json / tokenizer file, in UTF-16 units (GPT-2's tokenizer.json is 1.4 M). */
const MAX_FILE_CHARS = 64 << 20;

function toBytes(value, what) {
  if (!(value instanceof Uint8Array)) throw codedError(TypeError, 'bad_input', `${what} must be a Uint8Array`);
  return value;
}

function fileText(files, key) {
  const v = files?.[key];
  if (v == null || v === '') return '';
  return checkText(v, key, { maxChars: MAX_FILE_CHARS });
}

/** The pretrained-model functions of one module. */
export function pretrainedApi(module) {
  return {
    /** Bytes of a safetensors header (8 + N) from the file's first 8 bytes. */
    headerSize(first8) {
      return unwrap(module.hubHeaderSize(toBytes(first8, 'first8')));
    },
    /** config.json's text → the model's config (read_hub_config: an unsupported architecture is refused by name). */
    readHubConfig(configText) {
      return unwrap(module.hubReadConfig(checkText(configText, 'config.json', { maxChars: MAX_FILE_CHARS })));
    },
    /** config.json's text → whether the model fits this engine, before anything else is downloaded. */
    checkHubConfig(configText) {
      return unwrap(module.hubCheckConfig(checkText(configText, 'config.json', { maxChars: MAX_FILE_CHARS })));
    },
    /**
     * The safetensors header (read alone, e.g. by a range request) against config.json and the
     * whole file's size, before the file is downloaded: throws what openCheckpoint would (a
     * missing tensor, a shape, a header that describes more than the file, a model too large),
     * allocating nothing.
     */
    checkCheckpointHeader(configText, header, fileSize) {
      checkInteger(fileSize, 'fileSize', 0, Number.MAX_SAFE_INTEGER);
      unwrap(module.hubLoaderCheck(checkText(configText, 'config.json', { maxChars: MAX_FILE_CHARS }), toBytes(header, 'header'), fileSize));
    },
    /**
     * options.float32: store an F16/BF16 file's weights as float32 (twice the memory, the same numbers).
     * options.chunkBytes (tests): the 16-bit values' chunk size, 16 bytes to 256 MiB (the default),
     * to spread a small model over many allocations.
     */
    openCheckpoint(configText, header, fileSize, options = {}) {
      checkInteger(fileSize, 'fileSize', 0, Number.MAX_SAFE_INTEGER);
      const chunkBytes = options?.chunkBytes ?? 0;
      if (chunkBytes !== 0) checkInteger(chunkBytes, 'options.chunkBytes', 16, 256 << 20);
      return new HubLoader(module, checkText(configText, 'config.json', { maxChars: MAX_FILE_CHARS }), toBytes(header, 'header'), fileSize,
        options?.float32 === true, chunkBytes);
    },
  };
}

/** Frees the C++ side of loaders and models that were dropped without dispose(). */
const forgotten = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(({ free, handle }) => free(handle))
  : null;

export class HubLoader {
  constructor(module, configText, header, fileSize, float32 = false, chunkBytes = 0) {
    this._m = module;
    const r = unwrap(module.hubLoaderCreate(configText, header, fileSize, !float32, chunkBytes));
    this._handle = r.handle;
    /** The model's config as read from config.json. */
    this.config = Object.freeze(r.config);
    /** The byte ranges of the file the model needs, [{begin, end}] in increasing order. */
    this.needed = Object.freeze(r.needed.map((x) => Object.freeze(x)));
    this.neededBytes = r.neededBytes;
    /** How the large tensors are stored: 'F32', or the file's 'BF16' / 'F16' (kept 16-bit: half the memory). */
    this.storage = r.storage;
    /** Bytes the model's parameters take (allocated already). */
    this.parameterBytes = r.parameterBytes;
    /** How many allocations (chunks) hold the 16-bit values; 0 when everything is float32. */
    this.halfChunks = r.halfChunks;
    /** The largest chunk feed() takes. */
    this.stagingBytes = r.stagingBytes;
    this._staging = r.staging;
    forgotten?.register(this, { free: (h) => module.hubLoaderDispose(h), handle: this._handle }, this);
  }

  _live() {
    if (!this._handle) throw codedError(TypeError, 'bad_state', 'this loader has been finished or disposed');
    return this._handle;
  }

  /** The file's bytes at `offset` (at most stagingBytes of them); returns the bytes fed so far. */
  feed(offset, bytes) {
    const handle = this._live();
    toBytes(bytes, 'chunk');
    checkInteger(offset, 'offset', 0, Number.MAX_SAFE_INTEGER);
    if (bytes.length > this.stagingBytes) throw codedError(RangeError, 'bad_input', `a chunk holds at most ${this.stagingBytes} bytes, got ${bytes.length}`);
    // HEAPU8 is read here, after any growth: a view taken before it would be stale. The staging
    // address is unsigned (>>> 0): it lies above 2 GiB once a large model's parameters are below it
    this._m.HEAPU8.set(bytes, this._staging >>> 0);
    return unwrap(this._m.hubLoaderFeed(handle, offset, bytes.length));
  }

  /** The model, with its tokenizer read from the files' texts; the loader is freed either way. */
  finish(files = {}) {
    const handle = this._live();
    const texts = {};
    for (const key of ['tokenizerJson', 'vocabJson', 'mergesTxt', 'vocabTxt', 'tokenizerConfigJson']) texts[key] = fileText(files, key);
    this._handle = 0;
    forgotten?.unregister(this);
    const r = unwrap(this._m.hubLoaderFinish(handle, texts));
    return new PretrainedModel(this._m, r);
  }

  dispose() {
    if (!this._handle) return;
    forgotten?.unregister(this);
    this._m.hubLoaderDispose(this._handle);
    this._handle = 0;
  }
}

export class PretrainedModel {
  /** How many steps by hand (sgdStep) can be undone at most: past it the oldest is dropped. */
  static UNDO_LIMIT = ENGINE_CONSTANTS.maxUndoSteps;

  constructor(module, r) {
    this._m = module;
    this._handle = r.handle;
    this.config = Object.freeze(r.config);
    this.parameterCount = r.parameterCount;
    /** 'F32', 'BF16' or 'F16': how the large tensors are stored. */
    this.storage = r.storage;
    /** Bytes the parameters take. */
    this.parameterBytes = r.parameterBytes;
    /** BERT's [MASK] id, -1 for GPT-2. */
    this.maskId = r.maskId;
    forgotten?.register(this, { free: (h) => module.pretrainedDispose(h), handle: this._handle }, this);
  }

  _live() {
    if (!this._handle) throw codedError(TypeError, 'bad_state', 'this model has been disposed');
    return this._handle;
  }

  /** [{id, piece, text (readable), start, end (UTF-8 bytes; -1 for [CLS], [SEP]), startChar, endChar}]:
   * PretrainedTokenizer.encode's shape. */
  tokenize(text) {
    return addCharOffsets(unwrap(this._m.pretrainedTokenize(this._live(), checkText(text, 'text', { maxChars: MAX_TEXT_CHARS }))), text);
  }

  /**
   * Every intermediate of `layer` for one sentence ({config, tokens, length, embeddings,
   * positional, mask, layers: [{input, normed, wQuery…, bQuery…, ln1Gain, ln1Bias, heads,
   * concat, attentionOutput, residual, mlp…, output}], top: {k, ids, p, texts}}); the other
   * layers carry their heads' weights only when allWeights, else nothing. The T×V logits only
   * with logits: true (at T = 1024 with GPT-2's vocabulary they do not fit: too_large).
   */
  trace(text, { layer = 0, allWeights = true, logits = false, generated = [] } = {}) {
    const handle = this._live();
    checkText(text, 'text', { maxChars: MAX_TEXT_CHARS });
    const gen = this._ids(generated, 'generated');
    checkInteger(layer, 'layer', 0, this.config.layers - 1);
    checkBoolean(allWeights, 'allWeights');
    checkBoolean(logits, 'logits');
    const out = unwrap(this._m.pretrainedTrace(handle, text, null, gen, layer, allWeights, logits));
    addCharOffsets(out.tokens, text);
    out.sentence = text;
    return out;
  }

  /** trace() of given token ids (their tokens' start and end are -1); logits: also the T×V logits. */
  traceIds(ids, { layer = 0, allWeights = true, logits = false } = {}) {
    const handle = this._live();
    const list = this._ids(ids, 'ids');
    checkInteger(layer, 'layer', 0, this.config.layers - 1);
    checkBoolean(allWeights, 'allWeights');
    checkBoolean(logits, 'logits');
    return unwrap(this._m.pretrainedTrace(handle, '', list, null, layer, allWeights, logits));
  }

  /**
   * The next token after `text` (a causal model: GPT-2; BERT is refused by name), computed
   * through the model's KV cache, which keeps the keys and values of the earlier positions
   * from call to call. generated: the ids that wrote the end of `text` (the last call's
   * `generated`), kept as chosen. Returns {id, piece, text, display, sentence (text + the
   * token), generated, position, reused, recomputed, probability, weights: [layer][head]
   * Float32Array (the new row), logits? (the new position's, with logits: true)}. Greedy (the
   * argmax) unless sample: a draw from softmax(logits / temperature) over the topK likeliest
   * (0 = all), at (seed, position), so the same seed and text give the same token.
   */
  generate(text, { generated = [], sample = false, temperature = 1, topK = 0, seed = 0, logits = false } = {}) {
    const handle = this._live();
    checkText(text, 'text', { maxChars: MAX_TEXT_CHARS });
    const ids = this._ids(generated, 'generated');
    checkBoolean(sample, 'sample');
    checkNumber(temperature, 'temperature', ENGINE_CONSTANTS.minTemperature, ENGINE_CONSTANTS.maxTemperature);
    checkInteger(topK, 'topK', 0, this.config.vocab);
    checkInteger(seed, 'seed', 0, 0xffffffff);
    checkBoolean(logits, 'logits');
    return unwrap(this._m.pretrainedGenerate(handle, text, ids, { sample, temperature, topK, seed, logits }));
  }

  _ids(ids, what) {
    if (!Array.isArray(ids) && !ArrayBuffer.isView(ids)) throw codedError(TypeError, 'bad_input', `${what} must be an array of token ids`);
    return Array.from(ids, (id, i) => checkInteger(id, `${what}[${i}]`, 0, this.config.vocab - 1));
  }

  /**
   * One sentence's backward (Trainer.backwardTrace's shape, for the Learn steps): the parameter
   * gradients of `layer` only, the activation gradients through the layers above it. targets:
   * one per token (-1 none); default the model's own (GPT-2: the next token; BERT: its likeliest
   * fill at each [MASK]; a BERT sentence without [MASK] is a RangeError bad_input). scale false
   * drops 1/√D. {loss, scale, layer, memoryBytes, targets, defaults, dLogits, probabilities,
   * layers (the asked one filled, null for the others), gradNorms}.
   */
  backwardTrace({ text, targets = null, scale = null, layer = 0 } = {}) {
    const handle = this._live();
    checkText(text, 'text', { maxChars: MAX_TEXT_CHARS });
    checkInteger(layer, 'layer', 0, this.config.layers - 1);
    if (scale !== null) checkBoolean(scale, 'scale');
    const tg = targets === null ? null : this._targets(targets);
    return unwrap(this._m.pretrainedBackward(handle, { text, targets: tg, scale, layer }));
  }

  /**
   * One plain SGD step by hand on the sentence's loss (the model's own scale), on layer
   * `layer`'s attention: head ≥ 0 that head's columns of W_Q, W_K, W_V (and biases) and rows of
   * W_O, head -1 all of them. lr in (0, 100]. {loss (before), size: ‖Δθ‖, steps (undoable)}.
   * Each step keeps the old values of what it changed (~9 MB for a whole layer of GPT-2 small), the
   * last UNDO_LIMIT steps only: past it the oldest is dropped and can no longer be undone.
   */
  sgdStep({ text, targets = null, lr, layer = 0, head = -1 } = {}) {
    const handle = this._live();
    checkText(text, 'text', { maxChars: MAX_TEXT_CHARS });
    checkInteger(layer, 'layer', 0, this.config.layers - 1);
    checkInteger(head, 'head', -1, this.config.heads - 1);
    if (typeof lr !== 'number' || !(lr > 0 && lr <= 100)) throw codedError(RangeError, 'bad_input', `lr must be a number above 0 and at most 100, got ${lr}`);
    const tg = targets === null ? null : this._targets(targets);
    return unwrap(this._m.pretrainedSgd(handle, { text, targets: tg, lr, layer, head }));
  }

  /** Undoes the last sgdStep exactly (the old weights put back); returns how many steps remain. */
  undoStep() {
    return unwrap(this._m.pretrainedUndo(this._live()));
  }

  /** How many sgdSteps undoStep can still undo: the last PretrainedModel.UNDO_LIMIT at most. */
  get undoSteps() {
    return unwrap(this._m.pretrainedUndoSteps(this._live()));
  }

  _targets(targets) {
    if (!Array.isArray(targets) && !ArrayBuffer.isView(targets)) throw codedError(TypeError, 'bad_input', 'targets must be an array of token ids (-1: none)');
    return Array.from(targets, (id, i) => checkInteger(id, `targets[${i}]`, -1, this.config.vocab - 1));
  }

  /** The logits of token ids through the whole model, nothing traced: {logits: T×V matrix}. */
  forward(ids) {
    const handle = this._live();
    if (!Array.isArray(ids) && !ArrayBuffer.isView(ids)) throw codedError(TypeError, 'bad_input', 'ids must be an array of token ids');
    const list = Array.from(ids, (id, i) => checkInteger(id, `ids[${i}]`, 0, this.config.vocab - 1));
    return unwrap(this._m.pretrainedForward(handle, list));
  }

  dispose() {
    if (!this._handle) return;
    forgotten?.unregister(this);
    this._m.pretrainedDispose(this._handle);
    this._handle = 0;
  }
}
