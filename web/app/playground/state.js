// The playground's state: one typed table of fields, their defaults, and how
// each is written to and read from the URL hash. Parsing never throws: a value
// that does not fit its field falls back to the default and is reported, so a
// damaged link still opens a working page with a notice.
//
//   const { state, problems } = parseHash(location.hash);
//   location.hash = serializeState(state);
//
// Indices (query, key, dim, head, shown) are 0-based, as in the trace.

// The engine's rules (limits, defaults, mask and positional kinds) come from the C++
// through engine.js, which reads them from generated/engine_constants.js: known
// before the wasm has loaded, so a link is parsed against the engine's own limits.
import { POSITIONALS, MASKS, DEFAULT_SETTINGS, MAX_TOKENS, MAX_D_MODEL } from '../../engine.js';
import { cutText, splitLines } from '../kit/text.js';
import { THEMES, parseScalarField as parseUrlScalar, fitHeads } from '../kit/url-fields.js';
import { STEPS, EXTRA_STEP_IDS } from './steps.js';
import { LEARN_STEPS } from './learn/steps.js';
import { encodeCells, decodeCells } from './mask-cells.js';
import { isPretrainedName, parseHubMirror } from '../hub/source.js';

export const WIDTHS = Object.freeze([4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024]);
export const HEAD_CHOICES = Object.freeze([1, 2, 3, 4, 6, 8, 12, 16, 32]);
export const SPEEDS = Object.freeze([0.25, 0.5, 1, 2, 4]);
/** The Learn part's one-step-by-hand choices: learning rates and what a step moves. */
export const LEARN_RATES = Object.freeze([0.01, 0.03, 0.1, 0.3, 1, 3, 10]);
export const LEARN_SCOPES = Object.freeze(['head', 'all']);
/** Steps by hand a link may replay. */
export const MAX_SGD_STEPS = 20;
/** One step by hand as the link writes it: "lr:L.H" (one head) or "lr:a" (every parameter). */
const SGD_STEP_RE = new RegExp(`^(${LEARN_RATES.map((r) => String(r).replace('.', '\\.')).join('|')}):(a|\\d{1,2}\\.\\d{1,2})$`);
/** A target the user picked: "position:token id" (id −1: no loss at that position). */
const TARGET_RE = /^\d{1,4}:-?\d{1,7}$/;
export { POSITIONALS, MASKS, STEPS, LEARN_STEPS, splitLines };
/** Every step id: the twelve forward steps, then the Learn part's. */
export const ALL_STEPS = Object.freeze([...STEPS, ...LEARN_STEPS]);
export const isLearnStep = (step) => LEARN_STEPS.includes(step);

/** The model picker: two trained models shipped with the page, and seeded random weights
 * (the only one the width, heads, seed, positional, mask and scale controls act on). A model
 * trained in the lab is "lab:<key>" (its checkpoint is in this browser's storage, see models.js). */
export const MODELS = Object.freeze(['coreference', 'language', 'random']);
export const DEFAULT_MODEL = 'coreference';
const LAB_MODEL_RE = /^lab:[A-Za-z0-9_-]{1,64}$/;
export const isLabModel = (m) => typeof m === 'string' && LAB_MODEL_RE.test(m);
export const isTrainedModel = (m) => m !== 'random';
/** The last layer a link may name: gpt2-xl's 48th (a shipped model has 2; pretrained.hpp kMaxInferenceLayers). */
export const MAX_LAYER = 47;

export const MAX_SENTENCE_CHARS = 20000;
/** Batch mode computes the first MAX_BATCH sentences; more lines are kept (in the box and the link), not computed. */
export const MAX_BATCH = 8;
/** All batch text together, in UTF-16 units (the box's maxLength). */
export const MAX_BATCH_CHARS = MAX_BATCH * MAX_SENTENCE_CHARS;
export const MAX_CUSTOM_CELLS = 20000;
/** Generation ("Next token", pretrained GPT-2): how the token is picked, and the sampling choices
 * (the engine takes temperatures ENGINE_CONSTANTS.minTemperature … maxTemperature). */
export const PICKS = Object.freeze(['top', 'sample']);
export const TEMPERATURES = Object.freeze([0.5, 0.7, 1, 1.5, 2]);
export const TOP_KS = Object.freeze([0, 5, 10, 40]);
/** Most generated ids a link keeps: the longest context of a model that is run (pretrained.hpp). */
export const MAX_GENERATED = 2048;
const MAX_TOKEN_ID = 262143;
/** Largest token index (query, key, a custom mask cell): the engine's token limit − 1. */
export const MAX_INDEX = MAX_TOKENS - 1;

export const DEFAULT_SENTENCE = DEFAULT_SETTINGS.sentence;
export const DEFAULT_BATCH = Object.freeze([
  'The cat sat on the mat.',
  'Dogs bark.',
  'The animal didn\'t cross the street because it was too tired.',
]);

/**
 * Every field: its URL parameter, kind and default. Kinds: text, lines (array
 * of strings), int {min, max}, choice {choices}, bool, cells (blocked mask
 * cells as "query-key" strings; in the URL grouped by query, see mask-cells.js),
 * ids (token ids, "464,5044" in the URL).
 */
export const FIELDS = Object.freeze({
  model: { param: 'model', kind: 'model', default: DEFAULT_MODEL, label: 'model' },
  layer: { param: 'layer', kind: 'int', min: 0, max: MAX_LAYER, default: 1, label: 'layer', when: (s) => isTrainedModel(s.model) },
  // a lab model's retrain link (the training lab's own hash), so a browser without the model can retrain it
  from: { param: 'from', kind: 'text', default: '', label: 'training lab link', when: (s) => isLabModel(s.model) && s.from !== '' },
  sentence: { param: 's', kind: 'text', default: DEFAULT_SENTENCE, label: 'sentence' },
  batch: { param: 'batch', kind: 'bool', default: false, label: 'batch mode' },
  sentences: { param: 'bs', kind: 'lines', default: DEFAULT_BATCH, label: 'batch sentences', when: (s) => s.batch },
  shown: { param: 'bi', kind: 'int', min: 0, max: MAX_BATCH - 1, default: 0, label: 'sentence shown', when: (s) => s.batch },
  dModel: { param: 'c', kind: 'int', min: 1, max: MAX_D_MODEL, default: DEFAULT_SETTINGS.dModel, label: 'model width' },
  heads: { param: 'h', kind: 'int', min: 1, max: MAX_D_MODEL, default: DEFAULT_SETTINGS.heads, label: 'heads' },
  seed: { param: 'seed', kind: 'int', min: 0, max: 4294967295, default: DEFAULT_SETTINGS.seed, label: 'seed' },
  positional: { param: 'pe', kind: 'choice', choices: POSITIONALS, default: DEFAULT_SETTINGS.positional, label: 'positional encoding' },
  mask: { param: 'mask', kind: 'choice', choices: MASKS, default: DEFAULT_SETTINGS.mask, label: 'mask' },
  customMask: { param: 'cm', kind: 'cells', default: Object.freeze([]), label: 'custom mask', when: (s) => s.customMask.length > 0 },
  scale: { param: 'scale', kind: 'bool', default: DEFAULT_SETTINGS.scale, label: 'scale' },
  // the ids "Next token" appended (they wrote the sentence's end, kept as chosen), and how it picks
  gen: { param: 'gen', kind: 'ids', default: Object.freeze([]), label: 'generated tokens', when: (s) => isPretrainedName(s.model) && s.gen.length > 0 },
  pick: { param: 'pick', kind: 'choice', choices: PICKS, default: 'top', label: 'next-token choice', when: (s) => isPretrainedName(s.model) && s.pick !== 'top' },
  temperature: { param: 'temp', kind: 'choice', choices: TEMPERATURES, default: 1, label: 'temperature', when: (s) => isPretrainedName(s.model) && s.pick === 'sample' },
  topK: { param: 'topk', kind: 'choice', choices: TOP_KS, default: 40, label: 'top-k', when: (s) => isPretrainedName(s.model) && s.pick === 'sample' },
  genSeed: { param: 'gseed', kind: 'int', min: 0, max: 4294967295, default: 1, label: 'sampling seed', when: (s) => isPretrainedName(s.model) && s.pick === 'sample' },
  step: { param: 'step', kind: 'choice', choices: [...ALL_STEPS, ...EXTRA_STEP_IDS], default: 'embeddings', label: 'step' },
  query: { param: 'q', kind: 'int', min: 0, max: MAX_INDEX, default: 7, label: 'query token' },
  key: { param: 'k', kind: 'int', min: 0, max: MAX_INDEX, default: 1, label: 'key token' },
  dim: { param: 'd', kind: 'int', min: 0, max: MAX_D_MODEL - 1, default: 0, label: 'dimension' },
  head: { param: 'head', kind: 'int', min: 0, max: MAX_D_MODEL - 1, default: 0, label: 'head' },
  speed: { param: 'speed', kind: 'choice', choices: SPEEDS, default: 1, label: 'speed' },
  // where hf: models are fetched from: '' is the page's own (huggingface.co unless its host names a mirror)
  hub: { param: 'hub', kind: 'hub', default: '', label: 'Hub mirror', when: (s) => s.hub !== '' },
  theme: { param: 'theme', kind: 'choice', choices: THEMES, default: 'system', label: 'theme' },
  // the Learn part (learn.js): the targets picked by hand, the scale switch on the backward, one step by hand
  targets: { param: 'tg', kind: 'list', re: TARGET_RE, max: MAX_INDEX + 1, default: Object.freeze([]), label: 'targets', when: (s) => s.targets.length > 0 },
  learnScale: { param: 'ls', kind: 'bool', default: true, label: 'scale on the backward', when: (s) => !s.learnScale },
  lr: { param: 'lr', kind: 'choice', choices: LEARN_RATES, default: 1, label: 'learning rate', when: (s) => s.lr !== 1 },
  scope: { param: 'scope', kind: 'choice', choices: LEARN_SCOPES, default: 'head', label: 'what a step moves', when: (s) => s.scope !== 'head' },
  sgd: { param: 'sgd', kind: 'list', re: SGD_STEP_RE, max: MAX_SGD_STEPS, default: Object.freeze([]), label: 'steps by hand', when: (s) => s.sgd.length > 0 },
});

/** URL parameters of the settings only random weights have (the controls that act on nothing else). */
const RANDOM_PARAMS = Object.freeze(['dModel', 'heads', 'seed', 'positional', 'mask', 'customMask', 'scale'].map((name) => FIELDS[name].param));

/** Fields whose change needs a new engine run; the rest are pure view changes. */
export const COMPUTE_FIELDS = Object.freeze(['model', 'sentence', 'batch', 'sentences', 'dModel', 'heads', 'seed', 'positional', 'mask', 'customMask', 'scale', 'sgd', 'gen']);

export function defaultState() {
  const s = {};
  for (const [name, f] of Object.entries(FIELDS)) s[name] = Array.isArray(f.default) ? [...f.default] : f.default;
  return s;
}

// ---- one field ------------------------------------------------------------------

const CELL_RE = /^(\d{1,4})-(\d{1,4})$/;

/** Canonical form of a blocked-cell list: unique, sorted by query then key. */
export function canonicalCells(cells) {
  const pairs = [];
  const seen = new Set();
  for (const c of cells) {
    const m = CELL_RE.exec(c);
    if (!m) continue;
    const q = Number(m[1]);
    const k = Number(m[2]);
    if (q > MAX_INDEX || k > MAX_INDEX) continue;
    const id = `${q}-${k}`;
    if (seen.has(id)) continue;
    seen.add(id);
    pairs.push([q, k]);
  }
  pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return pairs.map(([q, k]) => `${q}-${k}`);
}

/** Reads an int, choice, bool or model field from its URL text: {value} or {error}; null for other kinds. */
export function parseScalarField(f, raw) {
  if (f.kind !== 'model') return parseUrlScalar(f, raw);
  if (MODELS.includes(raw) || LAB_MODEL_RE.test(raw) || isPretrainedName(raw)) return { value: raw };
  return { error: `must be one of ${MODELS.join(', ')}, lab:<key> or hf:<Hub model id>` };
}

/** Reads one field from its URL text; returns {value} or {error}. */
function parseField(f, raw) {
  const scalar = parseScalarField(f, raw);
  if (scalar) return scalar;
  switch (f.kind) {
    case 'text':
      if (raw.length > MAX_SENTENCE_CHARS) return { value: cutText(raw, MAX_SENTENCE_CHARS), error: `longer than ${MAX_SENTENCE_CHARS} characters, cut` };
      return { value: raw };
    case 'lines': {
      // every line is kept (only the first MAX_BATCH are computed, with a notice by the box)
      const cut = raw.length > MAX_BATCH_CHARS;
      const lines = splitLines(cut ? cutText(raw, MAX_BATCH_CHARS) : raw);
      if (lines.length === 0) return { error: 'no sentences' };
      if (cut) return { value: lines, error: `longer than ${MAX_BATCH_CHARS} characters in all, cut` };
      return { value: lines };
    }
    case 'list': {
      const items = raw === '' ? [] : raw.split(',');
      if (items.length > f.max) return { error: `has more than ${f.max} entries` };
      const bad = items.find((x) => !f.re.test(x));
      if (bad !== undefined) return { error: `has an entry \u201c${showRaw(bad)}\u201d that is not one` };
      return { value: items };
    }
    case 'cells': {
      const r = decodeCells(raw, { maxIndex: MAX_INDEX, maxCells: MAX_CUSTOM_CELLS });
      return r.error ? { error: r.error } : { value: canonicalCells(r.cells) };
    }
    case 'hub': {
      const r = parseHubMirror(raw);
      return r.error ? { error: r.error } : { value: r.base };
    }
    case 'ids': {
      const parts = raw.split(',');
      if (raw === '' || parts.length > MAX_GENERATED || !parts.every((p) => /^\d{1,6}$/.test(p) && Number(p) <= MAX_TOKEN_ID)) {
        return { error: `must be at most ${MAX_GENERATED} token ids (whole numbers) separated by commas` };
      }
      return { value: parts.map(Number) };
    }
    default:
      return { error: 'unknown kind' };
  }
}

/** The batch sentences the engine runs: the first MAX_BATCH. */
export function computedSentences(state) {
  return state.sentences.slice(0, MAX_BATCH);
}

function writeField(f, value) {
  switch (f.kind) {
    case 'lines': return value.join('\n');
    case 'list': return value.join(',');
    case 'bool': return value ? '1' : '0';
    case 'cells': return encodeCells(value);
    case 'ids': return value.join(',');
    default: return String(value);
  }
}

function showRaw(raw) {
  const chars = Array.from(raw);
  return chars.length > 24 ? `${chars.slice(0, 23).join('')}\u2026` : raw;
}

// ---- whole state ---------------------------------------------------------------

/**
 * Returns a copy with every cross-field rule applied (heads divide the width,
 * the shown batch sentence exists). Values of the wrong type fall back to defaults.
 */
export function normalizeState(input) {
  const s = defaultState();
  for (const [name, f] of Object.entries(FIELDS)) {
    const v = input?.[name];
    if (v === undefined || v === null) continue;
    switch (f.kind) {
      case 'text':
        if (typeof v === 'string') s[name] = cutText(v, MAX_SENTENCE_CHARS);
        break;
      case 'lines': {
        // nothing typed is dropped: every line is kept, the whole text capped as the box caps it
        const lines = splitLines(cutText((Array.isArray(v) ? v.map(String) : [String(v)]).join('\n'), MAX_BATCH_CHARS));
        if (lines.length) s[name] = lines;
        break;
      }
      case 'int':
        if (Number.isInteger(v) && v >= f.min && v <= f.max) s[name] = v;
        break;
      case 'choice':
        if (f.choices.includes(v)) s[name] = v;
        break;
      case 'bool':
        if (typeof v === 'boolean') s[name] = v;
        break;
      case 'cells':
        if (Array.isArray(v)) s[name] = canonicalCells(v.slice(0, MAX_CUSTOM_CELLS));
        break;
      case 'list':
        if (Array.isArray(v) && v.length <= f.max && v.every((x) => typeof x === 'string' && f.re.test(x))) s[name] = [...v];
        break;
      case 'ids':
        if (Array.isArray(v) && v.length <= MAX_GENERATED && v.every((x) => Number.isInteger(x) && x >= 0 && x <= MAX_TOKEN_ID)) s[name] = [...v];
        break;
      case 'hub':
        if (typeof v === 'string' && (v === '' || parseHubMirror(v).base === v)) s[name] = v;
        break;
      case 'model':
        if (MODELS.includes(v) || isLabModel(v) || isPretrainedName(v)) s[name] = v;
        break;
      default:
    }
  }
  s.heads = fitHeads(s.dModel, s.heads);
  if (s.shown >= computedSentences(s).length) s.shown = computedSentences(s).length - 1;
  return s;
}

/**
 * Parses a location.hash ("#s=...&c=16"). Returns {state, problems}: problems
 * are human-readable strings, one per field that fell back to its default.
 * A link without model= opens what the page opens with (the default trained
 * model), unless it names a setting only random weights have (RANDOM_PARAMS):
 * a trimmed link ("#step=softmax") keeps the page's model, and an old link
 * from before the model picker ("#c=16&h=4&seed=42") still opens random weights.
 */
export function parseHash(hash) {
  const problems = [];
  const text = String(hash ?? '').replace(/^#/, '');
  const state = defaultState();
  if (text === '') return { state, problems, empty: true };
  let params;
  try {
    params = new URLSearchParams(text);
  } catch {
    return { state, problems: ['the link’s settings could not be read'], empty: false };
  }
  if (!params.has('model') && RANDOM_PARAMS.some((p) => params.has(p))) state.model = 'random';
  const byParam = new Map(Object.entries(FIELDS).map(([name, f]) => [f.param, name]));
  const seen = new Set();
  for (const [param, raw] of params) {
    const name = byParam.get(param);
    if (!name) {
      problems.push(`unknown setting \u201c${showRaw(param)}\u201d was ignored`);
      continue;
    }
    if (seen.has(param)) continue;
    seen.add(param);
    const f = FIELDS[name];
    const r = parseField(f, raw);
    if (r.value !== undefined) state[name] = r.value;
    if (r.error) problems.push(`${f.label} \u201c${showRaw(raw)}\u201d ${r.error}${r.value === undefined ? '; using the default' : ''}`);
  }
  if (state.dModel % state.heads !== 0) {
    const fixed = state.dModel % FIELDS.heads.default === 0 ? FIELDS.heads.default : fitHeads(state.dModel, state.heads);
    problems.push(`${state.heads} heads do not divide model width ${state.dModel}; using ${fixed}`);
    state.heads = fixed;
  }
  if (state.shown >= computedSentences(state).length) {
    problems.push(`sentence shown ${state.shown + 1} does not exist; showing the first`);
    state.shown = 0;
  }
  return { state, problems, empty: false };
}

/** The hash text (without "#") for a state; optional fields only when they matter. */
export function serializeState(state) {
  const params = new URLSearchParams();
  for (const [name, f] of Object.entries(FIELDS)) {
    if (f.when && !f.when(state)) continue;
    params.set(f.param, writeField(f, state[name]));
  }
  return params.toString();
}

export function sameValue(a, b) {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => x === b[i]);
  return a === b;
}

/** Names of fields that differ between two states. */
export function changedFields(a, b) {
  return Object.keys(FIELDS).filter((k) => !sameValue(a[k], b[k]));
}
