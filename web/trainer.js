// The training engine's JS API: a Trainer wraps one model + optimizer + task
// living in wasm memory (core/trainer.hpp, src/bindings/train_bindings.cpp).
// Engine (engine.js) creates them: engine.createTrainer(settings),
// engine.loadTrainer(bytes), engine.tasks(). Results are plain objects and
// typed-array copies; the only handle is the Trainer itself: call dispose()
// when done (a FinalizationRegistry frees forgotten ones eventually).
// Types in trainer.d.ts (re-exported by engine.d.ts).

import { ENGINE_CONSTANTS } from './generated/engine_constants.js';
import { codedError, typeName, checkInteger as int, checkNumber as num, checkBoolean as bool, checkChoice as choice, checkText } from './validate.js';
import { unwrap, addCharOffsets } from './results.js';

/** The training tasks, in the C++'s TaskKind order (engine.info.tasks). */
export const TASKS = ENGINE_CONSTANTS.tasks;
/** The task registry's rows (task_registry.hpp): {name, title, causal, length: {default, lo, hi, rule}}. */
export const TASK_TABLE = ENGINE_CONSTANTS.taskTable;

/** createTrainer's settings, each a row of the C++'s tables (model_schema.hpp's and
 * settings:: in trainer.hpp, through buildInfo().trainSettings): {name, js, flag, label,
 * type: whole | real | boolean | choice, lo, hi, values, model}. */
export const TRAIN_SETTINGS = ENGINE_CONSTANTS.trainSettings.filter((row) => row.js !== '');

/** The largest learning rate of sgdStep (backward.hpp kMaxSgdRate). */
export const SGD_MAX_RATE = ENGINE_CONSTANTS.maxSgdRate;

/** Longest corpus and probe/trace text, in UTF-16 code units. */
const MAX_CORPUS_CHARS = 8_000_000;
const MAX_SEQUENCE_CHARS = 100_000;

/** One setting checked by its row: a primitive of its type, inside its range. */
function checkSetting(row, value) {
  switch (row.type) {
    case 'whole': return int(value, row.js, row.lo, row.hi);
    case 'real': return num(value, row.js, row.lo, row.hi);
    case 'boolean': return bool(value, row.js);
    default: return choice(value, row.js, row.values);
  }
}

/** Every setting read once into a fresh object of primitives (getters and
 * proxies are read exactly once), defaults from the task's recipe. */
export function normalizeTrainSettings(settings, tasks) {
  if (settings === null || typeof settings !== 'object') throw codedError(TypeError, 'bad_input', `settings must be an object, got ${typeName(settings)}`);
  const given = {};
  for (const [k, v] of Object.entries(settings)) if (v !== undefined) given[k] = v;
  const task = choice(given.task ?? 'reverse', 'task', TASKS);
  const info = tasks.find((t) => t.name === task);
  const s = { ...info.defaults, corpus: '', ...given, task };
  const out = { task, corpus: checkText(s.corpus, 'corpus', { maxChars: MAX_CORPUS_CHARS }) };
  for (const row of TRAIN_SETTINGS) out[row.js] = checkSetting(row, s[row.js]);
  return out;
}

/** [[layer, head], …] read once into plain integers. */
function toAblate(ablate) {
  if (ablate == null) return null;
  if (!Array.isArray(ablate)) throw codedError(TypeError, 'bad_input', `ablate must be an array of [layer, head] pairs, got ${typeName(ablate)}`);
  return Array.from(ablate, (pair, i) => {
    if (!Array.isArray(pair) || pair.length !== 2) throw codedError(TypeError, 'bad_input', `ablate[${i}] must be a [layer, head] pair`);
    return [int(pair[0], `ablate[${i}] layer`, 0, 1 << 16), int(pair[1], `ablate[${i}] head`, 0, 1 << 16)];
  });
}

function forwardOptions(options = {}) {
  if (options === null || typeof options !== 'object') throw codedError(TypeError, 'bad_input', `options must be an object, got ${typeName(options)}`);
  const causal = options.causal;
  if (causal !== undefined && causal !== null) bool(causal, 'causal');
  const uniform = options.uniformAttention ?? false;
  bool(uniform, 'uniformAttention');
  return { ablate: toAblate(options.ablate), uniformAttention: uniform, causal: causal ?? null };
}

function toIds(ids, name) {
  if (ids == null || typeof ids !== 'object' || typeof ids.length !== 'number') throw codedError(TypeError, 'bad_input', `${name} must be an array of token ids`);
  const n = ids.length;
  int(n, `${name}.length`, 1, 1 << 20);
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = int(ids[i], `${name}[${i}]`, -1, 2147483647);
  return out;
}

/** A sequence option: {ids} or {text}, or nothing (the task's probe). */
function sequenceOptions(options = {}) {
  if (options === null || typeof options !== 'object') throw codedError(TypeError, 'bad_input', `options must be an object, got ${typeName(options)}`);
  const out = forwardOptions(options);
  const { ids, text } = options; // read once
  if (ids != null) out.ids = Array.from(toIds(ids, 'ids'));
  else if (text != null) out.text = checkText(text, 'text', { maxChars: MAX_SEQUENCE_CHARS });
  return out;
}

/** Rows of token ids ([[id, …], …]), each row read once, into {rows, length, flat}.
 * Every row must be as long as the first: a ragged batch is refused (bad_shape,
 * naming the row and the lengths), never re-cut into rows of another length. */
function flatRows(value, name) {
  const list = Array.from(value);
  const lengths = list.map((row) => (Array.isArray(row) ? row.length : -1));
  const notRow = lengths.indexOf(-1);
  if (notRow >= 0) throw codedError(TypeError, 'bad_input', `${name} row ${notRow} is ${typeName(list[notRow])}, not an array of token ids`);
  const ragged = lengths.findIndex((n) => n !== lengths[0]);
  if (ragged >= 0) {
    throw codedError(RangeError, 'bad_shape', `${name} row ${ragged} has ${lengths[ragged]} tokens but row 0 has ${lengths[0]} (row lengths ${lengths.join(', ')}): every row of a batch must be equally long; pad the short rows and give their real lengths in lengths`);
  }
  const flat = [];
  list.forEach((row, i) => {
    for (let j = 0; j < lengths[i]; j++) flat.push(row[j]);
  });
  return { rows: list.length, length: lengths[0] ?? 0, flat: toIds(flat, name) };
}

const isRows = (v) => Array.isArray(v) && Array.isArray(v[0]);

/** {ids, targets} as arrays of rows or flat (with batch and length). */
function toBatch(batch) {
  if (batch === null || typeof batch !== 'object') throw codedError(TypeError, 'bad_input', `batch must be an object {ids, targets, lengths?}, got ${typeName(batch)}`);
  const { ids, targets, lengths } = batch;
  let rows, length, flatIds, flatTargets;
  if (isRows(ids)) {
    const x = flatRows(ids, 'ids');
    rows = x.rows;
    length = x.length;
    flatIds = x.flat;
    if (isRows(targets)) {
      const y = flatRows(targets, 'targets');
      if (y.rows !== rows || y.length !== length) throw codedError(RangeError, 'bad_shape', `targets are ${y.rows} rows of ${y.length} but ids are ${rows} rows of ${length}`);
      flatTargets = y.flat;
    } else flatTargets = toIds(targets, 'targets');
  } else {
    rows = int(batch.batch, 'batch.batch', 1, 4096);
    length = int(batch.length, 'batch.length', 1, 4096);
    flatIds = toIds(ids, 'ids');
    flatTargets = toIds(targets, 'targets');
  }
  if (flatIds.length !== rows * length || flatTargets.length !== rows * length) {
    throw codedError(RangeError, 'bad_input', `a batch of ${rows}×${length} needs ${rows * length} ids and targets, got ${flatIds.length} and ${flatTargets.length}`);
  }
  return { batch: rows, length, ids: flatIds, targets: flatTargets, lengths: lengths == null ? null : toIds(lengths, 'lengths') };
}

const finalizer = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(({ module, handle }) => module.trainerDispose(handle))
  : null;

/** One trainable model. Create with engine.createTrainer() or engine.loadTrainer(). */
export class Trainer {
  /** @internal */
  constructor(module, info) {
    this._m = module;
    this._handle = info.handle;
    this._steps = info.stepCount;
    /** the normalised settings, defaults filled in */
    this.settings = Object.freeze(info.settings);
    /** {vocab, context, layers, dModel, heads, mlp, layernorm, positional, causal, scale, tied} */
    this.config = Object.freeze(info.config);
    /** id → token text */
    this.vocabulary = Object.freeze(info.vocabulary);
    this.parameterCount = info.parameterCount;
    /** false for a text model loaded without its corpus: it can be probed and traced, not trained */
    this.hasTask = info.hasTask;
    this._token = {};
    finalizer?.register(this, { module, handle: this._handle }, this._token);
  }

  get stepCount() { return this._steps; }

  _live() {
    if (this._handle === 0) throw codedError(TypeError, 'bad_state', 'this trainer has been disposed: create a new one');
    return this._handle;
  }

  /** n optimizer steps on the task's batches (the batch of step k is fixed by the seed). */
  step(n = 1) {
    int(n, 'n', 1, 1000000);
    return this._stepping((handle) => this._m.trainerStep(handle, n));
  }

  /** n optimizer steps on one given batch. */
  stepBatch(batch, n = 1) {
    int(n, 'n', 1, 1000000);
    const b = toBatch(batch);
    return this._stepping((handle) => this._m.trainerStepBatch(handle, b, n));
  }

  /** Runs a stepping call; afterwards stepCount is the engine's step, also when the
   * call stopped part-way (a non-finite value at step k keeps the k − 1 steps before it). */
  _stepping(call) {
    const handle = this._live();
    let report;
    try {
      report = unwrap(call(handle));
    } catch (error) {
      this._steps = unwrap(this._m.trainerInfo(handle)).stepCount;
      throw error;
    }
    this._steps = report.step;
    return report;
  }

  /** Held-out loss and accuracy (the same held-out set every call). */
  evaluate(options = {}) {
    const samples = int(options?.samples ?? 256, 'samples', 1, 100000);
    return unwrap(this._m.trainerEvaluate(this._live(), samples, forwardOptions(options)));
  }

  /** Each head's answer-key scores averaged over held-out samples. */
  headScores(samples = 64, options = {}) {
    int(samples, 'samples', 1, 10000);
    return unwrap(this._m.trainerHeadScores(this._live(), samples, forwardOptions(options)));
  }

  /** Attention maps, answer keys and predictions on the task's probe, or on {ids} / {text}. */
  probe(options = {}) {
    return unwrap(this._m.trainerProbe(this._live(), sequenceOptions(options)));
  }

  /** Every intermediate of every layer for {text} or {ids} (the playground's steps). */
  trace(options = {}) {
    const s = sequenceOptions(options);
    const out = unwrap(this._m.trainerTrace(this._live(), s));
    if (s.text != null) {
      addCharOffsets(out.tokens, s.text);
      out.sentence = s.text;
    }
    return out;
  }

  /** One sentence's backward ({ids} or {text}; targets: one per token, -1 none,
   * default the task's; scale: false drops 1/√D): loss, dLogits and per layer and
   * head dOutput, dWeights, dScaled, dScores, dQuery, dKey, dValue; gradNorms. */
  backwardTrace(options = {}) {
    const s = sequenceOptions(options);
    if (options.targets != null) s.targets = Array.from(toIds(options.targets, 'targets'));
    if (options.scale != null) s.scale = bool(options.scale, 'scale');
    return unwrap(this._m.trainerBackward(this._live(), s));
  }

  /** One plain SGD step by hand on one sentence's loss (the playground's "take one step"):
   * θ ← θ − lr·∂loss/∂θ with the model's own scale, on every parameter (scope 'all') or on
   * one head's share of a layer's attention (scope 'head', with layer and head: its columns
   * of W_Q, W_K, W_V and rows of W_O). Sequence and targets as backwardTrace. The AdamW
   * state and stepCount are not touched. Returns {loss (before the step), size: ‖Δθ‖}. */
  sgdStep(options = {}) {
    const s = sequenceOptions(options);
    if (options.targets != null) s.targets = Array.from(toIds(options.targets, 'targets'));
    s.lr = num(options.lr, 'lr', Number.MIN_VALUE, SGD_MAX_RATE);
    const scope = choice(options.scope ?? 'all', 'scope', ['all', 'head']);
    s.layer = scope === 'all' ? -1 : int(options.layer, 'layer', 0, this.config.layers - 1);
    s.head = scope === 'all' ? -1 : int(options.head, 'head', 0, this.config.heads - 1);
    return unwrap(this._m.trainerSgd(this._live(), s));
  }

  /** Every parameter, flat in the checkpoint's layout order (a copy: keep it to undo steps). */
  parameters() {
    return unwrap(this._m.trainerParameters(this._live()));
  }

  /** Puts back the parameters() of this model, bit for bit (the optimizer state is not touched). */
  setParameters(values) {
    if (!(values instanceof Float32Array)) throw codedError(TypeError, 'bad_input', `parameters must be a Float32Array (from parameters()), got ${typeName(values)}`);
    unwrap(this._m.trainerSetParameters(this._live(), values));
  }

  /** The model as .safetensors bytes (config, task and vocabulary in __metadata__). */
  save() {
    return unwrap(this._m.trainerSave(this._live()));
  }

  /** Frees the model in wasm memory; every later call throws. */
  dispose() {
    if (this._handle === 0) return;
    this._m.trainerDispose(this._handle);
    finalizer?.unregister(this._token);
    this._handle = 0;
  }
}

/** The methods engine.js adds to Engine. */
export function trainingApi(module) {
  let tasks = null;
  const taskList = () => (tasks ??= Object.freeze(unwrap(module.trainTasks())));
  return {
    tasks: () => taskList(),
    createTrainer(settings = {}) {
      const s = normalizeTrainSettings(settings, taskList());
      return new Trainer(module, unwrap(module.trainerCreate(s)));
    },
    /** What createTrainer(settings) and its steps need in memory, before anything is allocated:
     * {bytes, limitBytes, fits, parts, message} (message: the too_large error createTrainer throws, or null). */
    estimateTrainingMemory(settings = {}) {
      const s = normalizeTrainSettings(settings, taskList());
      return unwrap(module.trainingMemory(s));
    },
    loadTrainer(bytes, { corpus = '' } = {}) {
      if (!(bytes instanceof Uint8Array)) throw codedError(TypeError, 'bad_input', `a checkpoint must be a Uint8Array of the file's bytes, got ${typeName(bytes)}`);
      checkText(corpus, 'corpus', { maxChars: MAX_CORPUS_CHARS });
      return new Trainer(module, unwrap(module.trainerLoad(bytes, corpus)));
    },
  };
}
