// The training lab's state: one typed table of fields, their defaults, and how
// each is written to and read from the URL hash ("#task=reverse&L=1&H=2&…&step=300").
// Parsing never throws: a value that does not fit its field falls back to the
// task's default and is reported, so a damaged link still opens a working lab
// with a notice. Every model and training setting, the seed and the step count
// are in the hash, so a link retrains deterministically to the same numbers.
//
//   const { state, problems } = parseTrainHash(location.hash, tasks);
//   history.replaceState(null, '', `#${serializeTrainState(state)}`);
//
// The own-text corpus travels compressed (deflate-raw, base64url) in the
// parameter `text`; main.js packs and unpacks it (CompressionStream is async).

import { POSITIONALS, ENGINE_CONSTANTS } from '../../engine.js';
import { parseScalarField, THEMES, fitHeads } from '../kit/url-fields.js';

export { THEMES, POSITIONALS };

/** The tasks, in the engine's order (the task registry, src/train/task_registry.hpp). */
export const TASKS = ENGINE_CONSTANTS.tasks;
const TASK_TITLES = Object.fromEntries(ENGINE_CONSTANTS.taskTable.map((t) => [t.name, t.title]));
/** The page's title of a task ("Previous token"), from the registry. */
export function taskTitle(name) {
  return TASK_TITLES[name] ?? name;
}

export const LAYER_CHOICES = Object.freeze([1, 2, 3, 4, 6]);
export const HEAD_CHOICES = Object.freeze([1, 2, 3, 4, 6, 8]);
export const WIDTH_CHOICES = Object.freeze([8, 12, 16, 24, 32, 48, 64, 96, 128]);
export const LR_CHOICES = Object.freeze([1e-4, 3e-4, 5e-4, 1e-3, 2e-3, 3e-3, 5e-3, 1e-2, 2e-2, 3e-2]);
export const BATCH_CHOICES = Object.freeze([1, 2, 4, 8, 16, 32, 64, 128, 256]);
export const KEY_VIEWS = Object.freeze(['overlay', 'beside', 'off']);
/** When free training stops by itself (stop.js): at a plateau (the default), at 100% held-out accuracy, never. */
export const STOP_CHOICES = Object.freeze(['plateau', 'goal', 'off']);
/** Training speed: as fast as it goes, or watchable (WATCH_STEPS_PER_SECOND, a few steps a frame). */
export const SPEED_CHOICES = Object.freeze(['full', 'watch']);
export const WATCH_STEPS_PER_SECOND = 30;
export const MAX_STEPS = 1000000;
/** Longest own text (UTF-16 code units): about 100 KB; the link carries it compressed. */
export const MAX_CORPUS = 100000;
export const DEFAULT_TASK = 'reverse';

/** The engine's row of a setting (buildInfo().trainSettings: type, range, choices), by JS key. */
const ENGINE_ROWS = Object.fromEntries(ENGINE_CONSTANTS.trainSettings.map((row) => [row.js, row]));
const KINDS = { whole: 'int', real: 'number', boolean: 'bool', choice: 'choice' };

/**
 * A lab field: its name in the lab's link and its label are the lab's own; its kind
 * (int {min, max}, number {min, max}: a float, bool, choice {choices}) and range are the
 * engine's row, so a setting's range or choices are written once, in the model schema.
 */
function labField(js, param, label, extra = {}) {
  const row = ENGINE_ROWS[js];
  if (!row) throw new Error(`the engine has no training setting "${js}" (buildInfo().trainSettings)`);
  const kind = KINDS[row.type];
  const shape = kind === 'int' || kind === 'number' ? { min: row.lo, max: row.hi } : kind === 'choice' ? { choices: Object.freeze([...row.values]) } : {};
  return Object.freeze({ param, kind, ...shape, label, ...extra });
}

/**
 * Model and training fields the lab sets and its link carries. Their defaults come from the
 * task (engine.tasks()[i].defaults, its recipe), so they are not listed here either.
 */
export const MODEL_FIELDS = Object.freeze({
  length: labField('length', 'n', 'task size'),
  maxVocab: labField('maxVocab', 'vocab', 'words kept', { when: (s) => s.task === 'text' }),
  layers: labField('layers', 'L', 'layers'),
  heads: labField('heads', 'H', 'heads'),
  dModel: labField('dModel', 'C', 'd_model'),
  mlp: labField('mlp', 'mlp', 'MLP width'),
  layernorm: labField('layernorm', 'ln', 'layernorm'),
  positional: labField('positional', 'pe', 'positional encoding'),
  causal: labField('causal', 'causal', 'causal mask'),
  scale: labField('scale', 'scale', 'scale'),
  lr: labField('lr', 'lr', 'learning rate'),
  batch: labField('batch', 'bs', 'batch size'),
  seed: labField('seed', 'seed', 'seed'),
});

/** View fields: not part of the model; their defaults are fixed. */
export const VIEW_FIELDS = Object.freeze({
  step: { param: 'step', kind: 'int', min: 0, max: MAX_STEPS, default: 0, label: 'step count' },
  ablate: { param: 'ab', kind: 'heads', default: Object.freeze([]), label: 'ablated heads', when: (s) => s.ablate.length > 0 },
  key: { param: 'key', kind: 'name', default: '', label: 'answer key', when: (s) => s.key !== '' },
  keyView: { param: 'kv', kind: 'choice', choices: KEY_VIEWS, default: 'overlay', label: 'answer key view', when: (s) => s.keyView !== 'overlay' },
  stopAt: { param: 'stop', kind: 'choice', choices: STOP_CHOICES, default: 'plateau', label: 'stop at', when: (s) => s.stopAt !== 'plateau' },
  speed: { param: 'speed', kind: 'choice', choices: SPEED_CHOICES, default: 'full', label: 'speed', when: (s) => s.speed !== 'full' },
  logScale: { param: 'log', kind: 'bool', default: true, label: 'log-scale loss', when: (s) => !s.logScale },
  theme: { param: 'theme', kind: 'choice', choices: THEMES, default: 'system', label: 'theme', when: (s) => s.theme !== 'system' },
});

/** Settings of the task's recipe that the lab does not show (taken from the task's defaults as they are). */
export const HIDDEN_SETTINGS = Object.freeze(['tied', 'context', 'warmup', 'clip', 'weightDecay']);

/** Settings the engine's createTrainer takes, from a state and the task's info (engine.tasks()). */
export function trainerSettings(state, taskInfo = null) {
  const out = { task: state.task };
  for (const name of HIDDEN_SETTINGS) if (taskInfo?.defaults?.[name] !== undefined) out[name] = taskInfo.defaults[name];
  for (const name of Object.keys(MODEL_FIELDS)) {
    if (name === 'maxVocab' && state.task !== 'text') continue;
    out[name] = state[name];
  }
  if (state.task === 'text') out.corpus = state.corpus;
  return out;
}

/** Words a text task of size T needs (TextTask::minimum_words in src/train/tasks_text.cpp: a window of
 * T + 1 words in both the first 90% and the held-out last 10%). */
export function minimumWords(T) {
  let n = T + 1;
  while (Math.floor((n * 9) / 10) < T + 1 || n - Math.floor((n * 9) / 10) < T + 1) n += 1;
  return n;
}

/** Keys of the model that a change of them needs a new trainer (all model fields and the corpus). */
export const MODEL_KEYS = Object.freeze(['task', 'corpus', ...Object.keys(MODEL_FIELDS)]);

/** The task's defaults as state values: its recipe's value of every MODEL_FIELDS key (the engine's). */
export function taskDefaults(taskInfo) {
  const d = taskInfo?.defaults ?? {};
  const out = {};
  for (const key of Object.keys(MODEL_FIELDS)) {
    if (d[key] === undefined) throw new Error(`the engine's defaults of the task "${taskInfo?.name}" have no ${key}`);
    out[key] = d[key];
  }
  out.lr = Number(out.lr.toPrecision(6)); // the engine reports float32 values (0.003000000026…)
  return out;
}

/** A fresh state for a task (its defaults) with the view fields at theirs. */
export function defaultTrainState(task, tasks, corpus = '') {
  const info = tasks.find((t) => t.name === task) ?? tasks.find((t) => t.name === DEFAULT_TASK) ?? tasks[0];
  const s = { task: info.name, corpus: info.name === 'text' ? corpus : '', ...taskDefaults(info) };
  for (const [name, f] of Object.entries(VIEW_FIELDS)) s[name] = Array.isArray(f.default) ? [...f.default] : f.default;
  return s;
}

// ---- one field -----------------------------------------------------------------

const HEAD_RE = /^(\d{1,2})-(\d{1,2})$/;

/** Canonical list of [layer, head] pairs: unique, sorted. */
export function canonicalHeads(list) {
  const seen = new Set();
  const out = [];
  for (const p of list) {
    if (!Array.isArray(p) || p.length !== 2 || !p.every((x) => Number.isInteger(x) && x >= 0 && x < 64)) continue;
    const k = `${p[0]}-${p[1]}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push([p[0], p[1]]);
  }
  return out.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

function parseField(f, raw) {
  const scalar = parseScalarField(f, raw);
  if (scalar) return scalar;
  switch (f.kind) {
    case 'number': {
      if (!/^\d*\.?\d+(e-?\d{1,2})?$/i.test(raw)) return { error: `must be a number from ${f.min} to ${f.max}` };
      const x = Number(raw);
      if (!(x >= f.min && x <= f.max)) return { error: `must be a number from ${f.min} to ${f.max}` };
      return { value: x };
    }
    case 'heads': {
      if (raw === '') return { value: [] };
      const parts = raw.split('.');
      if (parts.length > 256 || !parts.every((p) => HEAD_RE.test(p))) return { error: 'must be heads like 0-1.1-0 (layer-head)' };
      return { value: canonicalHeads(parts.map((p) => p.split('-').map(Number))) };
    }
    case 'name':
      if (!/^[a-z][a-z0-9-]{0,39}$/.test(raw)) return { error: 'must be the name of an answer key' };
      return { value: raw };
    default:
      return { error: 'is not a known kind of setting' };
  }
}

function writeField(f, value) {
  switch (f.kind) {
    case 'bool': return value ? '1' : '0';
    case 'heads': return value.map(([l, h]) => `${l}-${h}`).join('.');
    default: return String(value);
  }
}

function showRaw(raw) {
  const chars = Array.from(String(raw));
  return chars.length > 24 ? `${chars.slice(0, 23).join('')}\u2026` : chars.join('');
}

// ---- whole state -------------------------------------------------------------------

/** Applies the cross-field rules: heads divide d_model; ablated heads exist. */
export function normalizeTrainState(s) {
  const out = { ...s, ablate: canonicalHeads(s.ablate ?? []) };
  out.heads = fitHeads(out.dModel, out.heads);
  out.ablate = out.ablate.filter(([l, h]) => l < out.layers && h < out.heads);
  if (out.task !== 'text') out.corpus = '';
  return out;
}

/**
 * Reads a location.hash. Returns {state, problems, given, textParam, empty}:
 * problems are sentences for a notice (one per value that could not be used);
 * textParam is the packed corpus (or null) for main.js to unpack.
 */
export function parseTrainHash(hash, tasks) {
  const text = String(hash ?? '').replace(/^#/, '');
  const problems = [];
  let params;
  try {
    params = new URLSearchParams(text);
  } catch {
    params = new URLSearchParams();
    problems.push('the link\u2019s settings could not be read');
  }
  let task = DEFAULT_TASK;
  const rawTask = params.get('task');
  const names = tasks.map((t) => t.name);
  if (rawTask !== null) {
    if (names.includes(rawTask)) task = rawTask;
    else problems.push(`task \u201c${showRaw(rawTask)}\u201d is not one of ${names.join(', ')}; showing ${task}`);
  }
  const state = defaultTrainState(task, tasks);
  const byParam = new Map();
  for (const [name, f] of Object.entries(MODEL_FIELDS)) byParam.set(f.param, [name, f]);
  for (const [name, f] of Object.entries(VIEW_FIELDS)) byParam.set(f.param, [name, f]);
  const seen = new Set(['task']);
  const given = new Set();
  let textParam = null;
  for (const [param, raw] of params) {
    if (seen.has(param)) continue;
    seen.add(param);
    if (param === 'text') {
      if (task === 'text') textParam = raw;
      else problems.push('an own text was given but the task is not \u201cyour own text\u201d; it was ignored');
      continue;
    }
    const entry = byParam.get(param);
    if (!entry) {
      problems.push(`setting \u201c${showRaw(param)}\u201d is not used by the training lab and was ignored`);
      continue;
    }
    const [name, f] = entry;
    if (f.when && name === 'maxVocab' && task !== 'text') continue;
    const r = parseField(f, raw);
    if (r.value !== undefined) {
      state[name] = r.value;
      given.add(name);
    }
    if (r.error) problems.push(`${f.label} \u201c${showRaw(raw)}\u201d ${r.error}; using the default`);
  }
  if (state.dModel % state.heads !== 0) {
    const fixed = fitHeads(state.dModel, state.heads);
    problems.push(`${state.heads} heads do not divide d_model ${state.dModel}; using ${fixed}`);
  }
  const before = state.ablate.length;
  const normal = normalizeTrainState(state);
  if (normal.ablate.length < before) problems.push('an ablated head does not exist in this model and was ignored');
  return { state: normal, problems, given, textParam, empty: text === '' };
}

/** The hash text (without "#") for a state; packedText is the compressed corpus (or ''). */
export function serializeTrainState(state, packedText = '') {
  const params = new URLSearchParams();
  params.set('task', state.task);
  for (const [name, f] of Object.entries(MODEL_FIELDS)) {
    if (f.when && !f.when(state)) continue;
    params.set(f.param, writeField(f, state[name]));
  }
  for (const [name, f] of Object.entries(VIEW_FIELDS)) {
    if (f.when && !f.when(state)) continue;
    params.set(f.param, writeField(f, state[name]));
  }
  if (state.task === 'text' && packedText) params.set('text', packedText);
  return params.toString();
}

/** True when two states need different trainers (a model or training setting differs). */
export function modelChanged(a, b) {
  return MODEL_KEYS.some((k) => a[k] !== b[k]);
}

// ---- the corpus in the link ------------------------------------------------------------

function toBase64Url(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text) {
  const b = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) out[i] = b.charCodeAt(i);
  return out;
}

async function pipe(bytes, stream) {
  const out = new Response(new Blob([bytes]).stream().pipeThrough(stream));
  return new Uint8Array(await out.arrayBuffer());
}

/** The corpus as link text: "z" + base64url(deflate-raw(UTF-8)), or "u" + base64url(UTF-8) without CompressionStream. */
export async function packText(text) {
  const bytes = new TextEncoder().encode(text);
  if (typeof CompressionStream === 'function') return `z${toBase64Url(await pipe(bytes, new CompressionStream('deflate-raw')))}`;
  return `u${toBase64Url(bytes)}`;
}

/** What the lab says when a link's text cannot be used (unpackText's error message). */
export const LINK_TEXT_PROBLEM = 'this link\u2019s text is damaged or too long';
/** Most UTF-8 bytes a link's text may take: MAX_CORPUS UTF-16 code units are at most 3 bytes each. */
export const MAX_CORPUS_BYTES = 3 * MAX_CORPUS;
/** Compressed bytes fed to the inflater at a time: one piece inflates to at most about 1 MB. */
const INFLATE_PIECE = 1024;

/** deflate-raw bytes inflated by stream, chunk by chunk; once more than cap bytes have come
 * out, the stream is cancelled and this throws (a link that inflates to gigabytes stops here). */
async function inflateCapped(bytes, cap) {
  const stream = new DecompressionStream('deflate-raw');
  const writer = stream.writable.getWriter();
  const reader = stream.readable.getReader();
  // fed in small pieces, each after the inflater took the last (write() waits on its backpressure)
  const feeding = (async () => {
    for (let i = 0; i < bytes.length; i += INFLATE_PIECE) await writer.write(bytes.subarray(i, i + INFLATE_PIECE));
    await writer.close();
  })();
  feeding.catch(() => {}); // a cancelled or damaged stream rejects the pending write; the reader reports it
  const chunks = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > cap) throw new Error(`more than ${cap} bytes`);
      chunks.push(value);
    }
  } catch (e) {
    await reader.cancel().catch(() => {});
    throw e;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** The inverse of packText. Throws an Error (message LINK_TEXT_PROBLEM) when the text is
 * damaged, is not UTF-8, or is longer than MAX_CORPUS: never a cut or empty text in silence. */
export async function unpackText(packed) {
  let text;
  try {
    const kind = packed[0];
    const bytes = fromBase64Url(packed.slice(1));
    let raw;
    if (kind === 'z') raw = await inflateCapped(bytes, MAX_CORPUS_BYTES);
    else if (kind === 'u' && bytes.length <= MAX_CORPUS_BYTES) raw = bytes;
    else throw new Error('unknown packing or too long');
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    text = null;
  }
  if (text === null || text.length > MAX_CORPUS) throw new Error(LINK_TEXT_PROBLEM);
  return text;
}
