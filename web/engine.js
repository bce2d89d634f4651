// The JavaScript API of the attention engine: the only module that touches
// WebAssembly. It validates settings, calls the Embind bindings, turns their
// error records into real JS errors, and returns plain objects whose matrices
// are {rows, cols, data: Float32Array} copies (never views into wasm memory).
//
//   import { createEngine } from './engine.js';
//   const engine = await createEngine();
//   const trace = engine.run({ sentence: 'The cat sat.', heads: 2, mask: 'causal' });
//   trace.heads[0].weights  // {rows: T, cols: T, data: Float32Array}
//
// See engine.d.ts for every type. The engine API's other modules: trainer.js,
// tokenizer.js and pretrained.js (what Engine creates), validate.js (the scalar
// and text checks), matrices.js (matrix inputs read once into typed arrays),
// results.js (error records into errors, byte offsets into UTF-16 offsets).

import { trainingApi, Trainer, TASKS } from './trainer.js';
import { tokenizerApi, PretrainedTokenizer, TOKENIZER_FILES } from './tokenizer.js';
import { pretrainedApi } from './pretrained.js';
import { codedError, typeName, checkInteger, checkBoolean, checkChoice, checkText } from './validate.js';
import { unwrap, addCharOffsets } from './results.js';
import { INT32_MAX, toMatrix, toFloatMatrix, copyIntoHeap, toMaskSpec, toWeights } from './matrices.js';
import { ENGINE_CONSTANTS } from './generated/engine_constants.js';

export { Trainer, TASKS, PretrainedTokenizer, TOKENIZER_FILES };

// The engine's rules come from the C++ (src/bindings/bindings.cpp buildInfo()),
// written at build time into generated/engine_constants.js so that they are
// known before the wasm has loaded; every Engine checks them against its
// module (a stale file is an error, not a silent difference).

/** Limits, defaults, mask and positional kinds, error codes and the fast
 * path's input layout, as the C++ engine defines them (engine.info without `simd` and `fusedMultiplyAdd`). */
export { ENGINE_CONSTANTS };

/** Settings every call starts from: the C++ Config's defaults (the CLI has the same). */
export const DEFAULT_SETTINGS = Object.freeze({ ...ENGINE_CONSTANTS.defaults, customMask: null, weights: null });

/** Longest sentence the engine takes, in UTF-8 bytes (the core's kMaxSentenceBytes):
 * longer text is rejected before it reaches wasm memory. */
export const MAX_SENTENCE_BYTES = ENGINE_CONSTANTS.maxSentenceBytes;
/** Most sentences runBatch takes (the core's kMaxBatchSentences). */
export const MAX_BATCH_SENTENCES = ENGINE_CONSTANTS.maxBatchSentences;
/** Most tokens a sentence may have (the core's kMaxTokens). */
export const MAX_TOKENS = ENGINE_CONSTANTS.maxTokens;
/** Widest model (the core's kMaxDModel). */
export const MAX_D_MODEL = ENGINE_CONSTANTS.maxDModel;

/** Positional encodings and mask kinds in the core's enum order (MASKS is also
 * what forwardFast's index refers to). */
export const POSITIONALS = ENGINE_CONSTANTS.positionals;
export const MASKS = ENGINE_CONSTANTS.masks;
/** Every err.code an engine error can carry (attn::Error::Code). */
export const ERROR_CODES = ENGINE_CONSTANTS.errorCodes;

let modulePromise = null;

/**
 * Loads and compiles the WebAssembly module once per page (or Node process);
 * every engine shares it.
 * @param {{moduleFactory?: Function, locateFile?: (name: string) => string}} [options]
 * @returns {Promise<Engine>}
 */
export async function createEngine(options = {}) {
  if (options.moduleFactory) return new Engine(await options.moduleFactory(moduleOptions(options)));
  if (!modulePromise) {
    modulePromise = loadModule(options).catch((error) => {
      modulePromise = null;
      throw error;
    });
  }
  return new Engine(await modulePromise);
}

function moduleOptions(options) {
  return options.locateFile ? { locateFile: options.locateFile } : {};
}

async function loadModule(options) {
  if (typeof WebAssembly !== 'object') {
    throw new Error('This browser cannot run WebAssembly, which the attention engine needs.');
  }
  const isNode = typeof process === 'object' && process?.versions?.node && typeof window === 'undefined';
  if (isNode) {
    const { default: factory } = await import('./generated/attention_core.node.cjs');
    return factory();
  }
  if (!simdSupported()) {
    throw new Error('This browser supports WebAssembly but not its SIMD extension, which the attention engine is built with. Any current Chrome, Edge, Firefox or Safari (16.4 and later) has it.');
  }
  const { default: factory } = await import('./generated/attention_core.js');
  return factory({
    locateFile: options.locateFile ?? ((name) => new URL(`./generated/${name}`, import.meta.url).href),
  });
}

/** True when this engine can validate a module using a v128 instruction. */
export function simdSupported() {
  // (module (func (result v128) i32.const 0 i8x16.splat i8x16.popcnt)), the
  // probe wasm-feature-detect uses.
  const probe = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);
  try {
    return WebAssembly.validate(probe);
  } catch {
    return false;
  }
}

// ---- validation -----------------------------------------------------------

/** A sentence: valid Unicode of at most MAX_SENTENCE_BYTES UTF-8 bytes (validate.js's checkText). */
function checkSentence(sentence, what = 'sentence') {
  return checkText(sentence, what, { maxBytes: MAX_SENTENCE_BYTES });
}

/** Fills in defaults and checks types; the core checks ranges and shapes. */
export function normalizeSettings(settings = {}) {
  if (settings === null || typeof settings !== 'object') throw codedError(TypeError, 'bad_input', `settings must be an object, got ${typeName(settings)}`);
  // an explicit undefined means "the default", as for a missing key
  const given = Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined));
  const s = { ...DEFAULT_SETTINGS, ...given };
  const out = {
    sentence: checkSentence(s.sentence),
    dModel: checkInteger(s.dModel, 'dModel', -INT32_MAX, INT32_MAX),
    heads: checkInteger(s.heads, 'heads', -INT32_MAX, INT32_MAX),
    seed: checkInteger(s.seed, 'seed', 0, 4294967295),
    positional: checkChoice(s.positional, 'positional', POSITIONALS),
    mask: checkChoice(s.mask, 'mask', MASKS, 'bad_mask'),
    padTo: checkInteger(s.padTo, 'padTo', -INT32_MAX, INT32_MAX),
    scale: checkBoolean(s.scale, 'scale'),
    lowercase: checkBoolean(s.lowercase, 'lowercase'),
    shareHeads: checkBoolean(s.shareHeads, 'shareHeads'),
    customMask: null,
    weights: null,
  };
  if (s.customMask != null) out.customMask = toMatrix(s.customMask, 'customMask', Uint8Array);
  if (out.mask === 'custom' && !out.customMask) throw codedError(TypeError, 'bad_mask', 'mask "custom" needs customMask, a T×T matrix of 0/1 (1 = may attend)');
  if (s.weights != null) out.weights = toWeights(s.weights, (m, name) => toMatrix(m, name, Float32Array));
  return out;
}

// ---- results ----------------------------------------------------------------

function finishTrace(trace, sentence) {
  addCharOffsets(trace.tokens, sentence);
  trace.sentence = sentence;
  return trace;
}

/** Frees the C++ state of an engine that was dropped without dispose(). */
const forgotten = typeof FinalizationRegistry === 'function' ? new FinalizationRegistry(({ module, handle }) => module.engineDispose(handle)) : null;

/** The keys of engine.info the generated constants must match. */
function constantsOf(info) {
  const { simd, fusedMultiplyAdd, ...rest } = info;
  return JSON.stringify(rest);
}

/** Attention weights kept in an engine (Engine.keepWeights): pass it as forward()'s weights. */
export class KeptWeights {
  constructor(engine, version, c) {
    this._engine = engine;
    this._version = version;
    /** the weights' C (each is C×C) */
    this.c = c;
    Object.freeze(this);
  }
}

/** The engine: one per caller; all share one compiled module, each owns its
 * C++ state (seeded-weights cache, fast-path buffers), freed by dispose(). */
export class Engine {
  /** @param {object} module the Embind module */
  constructor(module) {
    this._m = module;
    /** {simd, maxTokens, maxDModel, …, defaults, masks, positionals, errorCodes, fastInputs} from the C++ */
    this.info = Object.freeze(module.buildInfo());
    if (constantsOf(this.info) !== JSON.stringify(ENGINE_CONSTANTS)) {
      throw new Error('generated/engine_constants.js does not match the engine\'s wasm module (a stale build): run ./build_wasm.sh');
    }
    /** this engine's C++ state: a handle of the bindings' table (0 after dispose()) */
    this._handle = module.engineCreate();
    forgotten?.register(this, { module, handle: this._handle }, this);
    this._training = trainingApi(module);
    this._tokenizers = tokenizerApi(module, MAX_SENTENCE_BYTES);
    this._pretrained = pretrainedApi(module);
  }

  /** The C++ state's handle, or a TypeError (code bad_state) after dispose(). */
  _live() {
    if (!this._handle) throw codedError(TypeError, 'bad_state', 'this engine has been disposed: create a new one');
    return this._handle;
  }

  /** Frees this engine's C++ state (its weights cache and fast-path buffers); the
   * engine cannot be used afterwards. Trainers it created are separate (Trainer.dispose). */
  dispose() {
    if (!this._handle) return;
    forgotten?.unregister(this);
    this._m.engineDispose(this._handle);
    this._handle = 0;
  }

  /** What this engine keeps in wasm memory between calls: {cachedWeightsBytes,
   * weightsCacheHits, weightsCacheMisses, fastWorkspaceBytes, fastBufferBytes,
   * gemmWorkspaceBytes (the module's bounded product workspace)}. */
  stats() {
    return unwrap(this._m.engineStats(this._live()));
  }

  /** The training tasks: [{name, description, pattern, causal, context, vocabulary, defaults, steps, example}]. */
  tasks() {
    return this._training.tasks();
  }

  /** A new model + AdamW + task, initialised from the seed (trainer.js). */
  /** A pretrained tokenizer (GPT-2's BPE, BERT's WordPiece) from the Hugging Face files' texts,
   * by name ('tokenizer.json', or 'vocab.json' + 'merges.txt', or 'vocab.txt'; 'tokenizer_config.json'
   * for BERT's lower-casing); family: a name of engine.info.families, or '' (from the files). Free it with dispose(). */
  createTokenizer(files, options = {}) {
    return this._tokenizers.createTokenizer(files, options);
  }

  createTrainer(settings = {}) {
    return this._training.createTrainer(settings);
  }

  /** What createTrainer(settings) and its steps would need in memory: {bytes, limitBytes, fits,
   * parts, message}; allocates nothing (trainer.js). */
  estimateTrainingMemory(settings = {}) {
    return this._training.estimateTrainingMemory(settings);
  }

  /** A model from .safetensors bytes; a text model needs {corpus} to go on training. */
  loadTrainer(bytes, options = {}) {
    return this._training.loadTrainer(bytes, options);
  }

  /** A Hub checkpoint's config.json → the model's config (pretrained.js); an unsupported
   * architecture or a missing field is refused by name (bad_checkpoint). */
  readHubConfig(configText) {
    return this._pretrained.readHubConfig(configText);
  }

  /** Bytes of a safetensors header (8 + N), from the file's first 8 bytes. */
  safetensorsHeaderSize(first8) {
    return this._pretrained.headerSize(first8);
  }

  /** Whether a Hub model fits this engine, from config.json alone (pretrained.js): {config,
   * parameterBytes, largestBytes, limitBytes, fits, message}; ask before downloading anything. */
  checkHubConfig(configText) {
    return this._pretrained.checkHubConfig(configText);
  }

  /** The safetensors header, read alone (a range request), against config.json and the whole
   * file's size: throws what openCheckpoint would, allocating nothing (pretrained.js). */
  checkCheckpointHeader(configText, header, fileSize) {
    this._pretrained.checkCheckpointHeader(configText, header, fileSize);
  }

  /** A HubLoader (pretrained.js) from config.json's text, the safetensors header's bytes and the
   * file's size in bytes (a header that describes more is refused before anything is allocated):
   * feed it the file's needed ranges, then finish() it into a PretrainedModel. An F16/BF16 file
   * stays 16-bit in memory (half the bytes, the same numbers) unless options.float32. */
  openCheckpoint(configText, header, fileSize, options = {}) {
    return this._pretrained.openCheckpoint(configText, header, fileSize, options);
  }

  /** Every intermediate of multi-head attention for one sentence. */
  run(settings = {}) {
    const s = normalizeSettings(settings);
    return finishTrace(unwrap(this._m.engineRunTrace(this._live(), s.sentence, s)), s.sentence);
  }

  /** Several sentences padded to a common length (the longest, or padTo);
   * mask defaults to 'padding' so padded keys get zero weight. */
  runBatch(sentences, settings = {}) {
    if (!Array.isArray(sentences)) throw codedError(TypeError, 'bad_input', `sentences must be an array of strings, got ${typeName(sentences)}`);
    // each sentence read once into our own array: holes become undefined (a
    // TypeError naming the sentence), and a Proxy cannot answer differently later
    const n = sentences.length;
    if (!Number.isInteger(n) || n < 0) throw codedError(TypeError, 'bad_input', `sentences must be an array of strings, got a length of ${n}`);
    if (n > MAX_BATCH_SENTENCES) throw codedError(RangeError, 'too_many_tokens', `the batch has ${n} sentences, above the limit of ${MAX_BATCH_SENTENCES}`);
    const list = new Array(n);
    for (let i = 0; i < n; i++) list[i] = checkSentence(sentences[i], `sentence ${i + 1}`);
    const s = normalizeSettings({ mask: 'padding', ...settings, sentence: list[0] ?? 'x' });
    const traces = unwrap(this._m.engineRunBatch(this._live(), list, s));
    return traces.map((t, i) => finishTrace(t, list[i]));
  }

  /** Tokens of a sentence: [{text, id, start, end, startChar, endChar}]. */
  tokenize(sentence, { lowercase = false } = {}) {
    checkSentence(sentence);
    checkBoolean(lowercase, 'lowercase');
    return addCharOffsets(unwrap(this._m.tokenize(sentence, lowercase)), sentence);
  }

  /** Entropy (nats) of each row of a weight matrix: Float32Array(rows). */
  rowEntropy(weights) {
    return unwrap(this._m.rowEntropy(toMatrix(weights, 'weights', Float32Array)));
  }

  /** Frobenius norm of each row's softmax Jacobian: Float32Array(rows). */
  softmaxJacobianNorm(weights) {
    return unwrap(this._m.softmaxJacobianNorm(toMatrix(weights, 'weights', Float32Array)));
  }

  /** {mean, variance, min, max, count} of the entries (allowed ones if a mask is given). */
  scoreStats(scores, mask = null) {
    const m = toMatrix(scores, 'scores', Float32Array);
    return unwrap(this._m.scoreStats(m, mask == null ? null : toMatrix(mask, 'mask', Uint8Array)));
  }

  /** Random unit-variance q, k of width dK: score variance, mean row entropy
   * and mean softmax-Jacobian norm, with or without the 1/√dK scale. */
  scaleExperiment({ dK, tokens = 16, samples = 64, seed = 42, scale = true } = {}) {
    checkInteger(dK, 'dK', 1, 4096);
    checkInteger(tokens, 'tokens', 1, 512);
    checkInteger(samples, 'samples', 1, 10000);
    checkInteger(seed, 'seed', 0, 4294967295);
    checkBoolean(scale, 'scale');
    return unwrap(this._m.scaleExperiment(dK, tokens, samples, seed, scale));
  }

  /**
   * Output only, Y = MHA(x) (T×C), without keeping per-head matrices: the fast
   * path (hand-written SIMD kernels; same numbers as forwardReference within 1e-5).
   * mask: null or 'none', 'causal', {kind: 'padding' | 'causal+padding', realTokens},
   * or a T×T matrix of 0/1 (1 = may attend). Hidden keys of 'causal' and padding
   * masks (and of a matrix that is one of them) are skipped, not computed.
   * Matrices whose data is already a Float32Array are passed without a copy in JS.
   */
  forward({ x, weights, heads, mask = null, scale = true }) {
    const input = toFloatMatrix(x, 'x');
    checkInteger(heads, 'heads', -INT32_MAX, INT32_MAX);
    checkBoolean(scale, 'scale');
    const kept = weights instanceof KeptWeights;
    if (kept && (weights._engine !== this || weights._version !== this._keptVersion)) {
      throw codedError(TypeError, 'bad_state', 'these kept weights were replaced by a later keepWeights() or belong to another engine');
    }
    const spec = toMaskSpec(mask);
    const handle = this._live();
    const empty = { rows: 0, cols: 0 };
    const w = kept ? { wQuery: empty, wKey: empty, wValue: empty, wOutput: empty } : toWeights(weights, toFloatMatrix);
    this._fastInputs(handle, { x: input, ...w });
    const mode = [heads, MASKS.indexOf(spec.kind), spec.realTokens, scale, spec.matrix];
    const y = unwrap(kept ? this._m.engineForwardKept(handle, ...mode) : this._m.engineForwardFast(handle, ...mode));
    const start = y >>> 2;
    return { rows: input.rows, cols: input.cols, data: this._m.HEAPF32.slice(start, start + input.rows * input.cols) };
  }

  /**
   * Keeps attention weights in the engine ({wQuery, wKey, wValue, wOutput}, C×C each:
   * checked and packed now) for forward({x, weights: kept, …}) calls that copy only x,
   * as a model keeps its weights between calls. Returns the handle forward() takes;
   * a later keepWeights() replaces these (the old handle is then refused, bad_state).
   */
  keepWeights(weights) {
    const w = toWeights(weights, toFloatMatrix);
    const handle = this._live();
    this._fastInputs(handle, { x: { rows: 0, cols: 0 }, ...w });
    this._keptVersion = (this._keptVersion ?? 0) + 1;  // the old handle is stale even if this fails
    const c = unwrap(this._m.engineKeepWeights(handle));
    return new KeptWeights(this, this._keptVersion, c);
  }

  /** forward()'s step 1: sizes the buffers kept in wasm memory and copies each input
   * in with one HEAPF32.set (HEAPF32 re-read after the call: memory may grow). The
   * order (the sizes passed, the offsets returned) is the C++'s: info.fastInputs. */
  _fastInputs(handle, inputs) {
    const names = { x: 'x', wQuery: 'weights.wQuery', wKey: 'weights.wKey', wValue: 'weights.wValue', wOutput: 'weights.wOutput' };
    const order = ENGINE_CONSTANTS.fastInputs;
    const table = unwrap(this._m.engineFastInputs(handle, ...order.flatMap((k) => [inputs[k].rows, inputs[k].cols])));
    if (table === 0) throw codedError(RangeError, 'out_of_memory', 'out of memory: the requested sizes are too large for this page');
    const heap = this._m.HEAPF32;
    const offsets = this._m.HEAPU32;
    const at = table >>> 2;
    order.forEach((k, i) => {
      if (inputs[k].data) copyIntoHeap(heap, offsets[at + i] >>> 2, inputs[k], names[k]);
    });
  }

  /** forward() on the Eigen reference path (multi_head_output): the slow,
   * obvious implementation the fast path is tested against. mask: null or a T×T matrix. */
  forwardReference({ x, weights, heads, mask = null, scale = true }) {
    const input = toMatrix(x, 'x', Float32Array);
    checkInteger(heads, 'heads', -INT32_MAX, INT32_MAX);
    checkBoolean(scale, 'scale');
    const w = toWeights(weights, (m, name) => toMatrix(m, name, Float32Array));
    return unwrap(this._m.forwardOutput(input, w, heads, mask == null ? null : toMatrix(mask, 'mask', Uint8Array), scale));
  }

  /** Bytes currently allocated by the engine's C++ heap (for leak checks). */
  allocatedBytes() {
    return this._m.heapStats().allocatedBytes;
  }

  /** Size of the wasm memory in bytes. */
  memoryBytes() {
    return this._m.HEAP8.buffer.byteLength;
  }
}

/** Element (i, j) of a {rows, cols, data} matrix. */
export function at(matrix, i, j) {
  return matrix.data[i * matrix.cols + j];
}
