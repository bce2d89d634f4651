// The concept lab's state: which demo is open and each demo's own settings,
// all mirrored to the URL hash ("#demo=order&pe=none&a=cat+chases+dog").
// Parsing never throws: a value that does not fit falls back to its default
// and is reported, so a damaged link still opens a working demo with a notice.
//
//   const { demo, states, theme, problems } = parseConceptHash(location.hash);
//   location.hash = serializeConceptHash(demo, states[demo], theme);

import { POSITIONALS } from '../../engine.js';
import { parseScalarField, THEMES } from '../kit/url-fields.js';
import { cutText, splitLines } from '../kit/text.js';
import { RACES, racesOfDemo, raceFieldNames } from './races.js';
import { DK_VALUES, MAX_TEXT, MAX_LINES, MAX_LINES_TEXT } from './limits.js';
import { MAX_SHIFT } from './order-distance.js';

export { THEMES, POSITIONALS };

export const DEMOS = Object.freeze(['context', 'qkv', 'scores', 'scale', 'heads', 'order', 'masks']);
export { DK_VALUES, MAX_TEXT, MAX_LINES, MAX_LINES_TEXT };
const SEED = { kind: 'int', min: 0, max: 4294967295, default: 42, label: 'seed' };
const INDEX = (def, label) => ({ kind: 'int', min: 0, max: 255, default: def, label });

/** The highest step a link may ask a race to replay to. */
export const MAX_RACE_STEP = 100000;

/**
 * The fields of a demo's race (see race-view.js): its seed, its finish line,
 * the step it is paused at, whether it runs, and the second arm's variant.
 */
function raceFields(demo) {
  const out = {};
  for (const name of racesOfDemo(demo)) {
    const r = RACES[name];
    const f = raceFieldNames(name);
    const which = r.prefix ? ` (${name} race)` : '';
    out[f.seed] = { kind: 'int', min: 0, max: 4294967295, default: r.seed, label: `race seed${which}` };
    out[f.steps] = { kind: 'choice', choices: r.stepChoices, default: r.steps, label: `race length${which}` };
    out[f.at] = { kind: 'int', min: 0, max: MAX_RACE_STEP, default: 0, label: `race step${which}` };
    out[f.run] = { kind: 'bool', default: false, label: `race running${which}` };
    if (r.variant) out[r.variant.param] = { kind: 'choice', choices: r.variant.choices, default: r.variant.default, label: r.variant.label };
  }
  return out;
}

const FIELDS = {
  context: {
    a: { kind: 'text', default: 'The bank of the river flooded', label: 'first sentence' },
    b: { kind: 'text', default: 'The bank raised its interest rates', label: 'second sentence' },
    q: INDEX(1, 'token'),
    head: INDEX(0, 'head'),
    pe: { kind: 'choice', choices: POSITIONALS, default: 'sinusoidal', label: 'positional encoding' },
    seed: SEED,
  },
  qkv: {
    s: { kind: 'text', default: 'The cat sat on the mat.', label: 'sentence' },
    m: { kind: 'choice', choices: ['q', 'k', 'v'], default: 'q', label: 'matrix' },
    i: INDEX(1, 'row'),
    d: INDEX(2, 'column'),
    head: INDEX(0, 'head'),
    pe: { kind: 'choice', choices: POSITIONALS, default: 'sinusoidal', label: 'positional encoding' },
    seed: SEED,
  },
  scores: {
    s: { kind: 'text', default: 'The animal didn\'t cross the street because it was too tired.', label: 'sentence' },
    q: INDEX(7, 'query row'),
    k: INDEX(1, 'key'),
    head: INDEX(0, 'head'),
    scale: { kind: 'bool', default: true, label: 'scale' },
    seed: SEED,
  },
  scale: {
    dk: { kind: 'choice', choices: DK_VALUES, default: 64, label: 'd_k' },
    scale: { kind: 'bool', default: false, label: 'scale' },
    t: { kind: 'choice', choices: [4, 8, 16, 32], default: 16, label: 'keys per row' },
    seed: SEED,
  },
  heads: {
    s: { kind: 'text', default: 'The animal didn\'t cross the street because it was too tired.', label: 'sentence' },
    h: { kind: 'choice', choices: [2, 4, 8], default: 4, label: 'heads' },
    share: { kind: 'bool', default: false, label: 'share weights' },
    seed: SEED,
  },
  order: {
    a: { kind: 'text', default: 'cat chases dog', label: 'first sentence' },
    b: { kind: 'text', default: 'dog chases cat', label: 'second sentence' },
    pe: { kind: 'choice', choices: POSITIONALS, default: 'none', label: 'positional encoding' },
    n: { kind: 'choice', choices: [16, 32, 64, 100], default: 32, label: 'positions' },
    c: { kind: 'choice', choices: [16, 32, 64, 128], default: 32, label: 'encoding width' },
    sh: { kind: 'int', min: 0, max: MAX_SHIFT, default: 3, label: 'words put before the sentence' },
    seed: SEED,
  },
  masks: {
    a: { kind: 'text', default: 'The cat sat on the mat', label: 'first sentence' },
    b: { kind: 'text', default: 'The cat sat on the rug', label: 'edited sentence' },
    causal: { kind: 'bool', default: true, label: 'causal mask' },
    bs: { kind: 'lines', default: ['The cat sat on the mat.', 'Dogs bark.', 'It rained all day long'], label: 'batch sentences' },
    pad: { kind: 'bool', default: true, label: 'padding mask' },
    bi: INDEX(1, 'sentence shown'),
    head: INDEX(0, 'head'),
    seed: SEED,
  },
};

/** Each demo's fields: URL parameter name → {kind, default, label, …}. */
export const DEMO_FIELDS = Object.freeze(Object.fromEntries(Object.entries(FIELDS).map(([demo, f]) => [demo, Object.freeze({ ...f, ...raceFields(demo) })])));

export function defaultDemoState(demo) {
  const s = {};
  for (const [name, f] of Object.entries(DEMO_FIELDS[demo])) s[name] = Array.isArray(f.default) ? [...f.default] : f.default;
  return s;
}

function showRaw(raw) {
  const chars = Array.from(String(raw));
  return chars.length > 24 ? `${chars.slice(0, 23).join('')}\u2026` : chars.join('');
}

/** One field from its URL text: {value} or {error} (or both when it was cut). */
function parseField(f, raw) {
  const scalar = parseScalarField(f, raw);
  if (scalar) return scalar;
  switch (f.kind) {
    case 'text':
      if (raw.length > MAX_TEXT) return { value: cutText(raw, MAX_TEXT), error: `is longer than ${MAX_TEXT} characters, cut` };
      return { value: raw };
    case 'lines': {
      // all lines kept (the demo computes the first MAX_LINES and says so), the text capped as the box caps it
      const cut = raw.length > MAX_LINES_TEXT;
      const lines = splitLines(cutText(raw, MAX_LINES_TEXT)).map((x) => cutText(x, MAX_TEXT));
      if (!lines.length) return { error: 'has no sentences' };
      if (cut) return { value: lines, error: `is longer than ${MAX_LINES_TEXT} characters in all, cut` };
      return { value: lines };
    }
    default:
      return { error: 'is not a known kind of setting' };
  }
}

function writeField(f, value) {
  if (f.kind === 'lines') return value.join('\n');
  if (f.kind === 'bool') return value ? '1' : '0';
  return String(value);
}

/** A demo state with every value checked (wrong types → defaults). */
export function normalizeDemoState(demo, input) {
  const s = defaultDemoState(demo);
  for (const [name, f] of Object.entries(DEMO_FIELDS[demo])) {
    const v = input?.[name];
    if (v === undefined || v === null) continue;
    if (f.kind === 'text' && typeof v === 'string') s[name] = cutText(v, MAX_TEXT);
    else if (f.kind === 'lines' && Array.isArray(v)) {
      const lines = splitLines(cutText(v.map(String).join('\n'), MAX_LINES_TEXT)).map((x) => cutText(x, MAX_TEXT));
      if (lines.length) s[name] = lines;
    } else if (f.kind === 'int' && Number.isInteger(v) && v >= f.min && v <= f.max) s[name] = v;
    else if (f.kind === 'choice' && f.choices.includes(v)) s[name] = v;
    else if (f.kind === 'bool' && typeof v === 'boolean') s[name] = v;
  }
  return s;
}

/**
 * Reads "#demo=…&…". Returns {demo, state, theme, problems, empty}: problems
 * are sentences for a notice, one per value that could not be used.
 */
export function parseConceptHash(hash) {
  const text = String(hash ?? '').replace(/^#/, '');
  const problems = [];
  let params;
  try {
    params = new URLSearchParams(text);
  } catch {
    params = new URLSearchParams();
    problems.push('the link\u2019s settings could not be read');
  }
  let demo = DEMOS[0];
  const rawDemo = params.get('demo');
  if (rawDemo !== null) {
    if (DEMOS.includes(rawDemo)) demo = rawDemo;
    else problems.push(`demo \u201c${showRaw(rawDemo)}\u201d is not one of ${DEMOS.join(', ')}; showing ${demo}`);
  }
  let theme = 'system';
  const rawTheme = params.get('theme');
  if (rawTheme !== null) {
    if (THEMES.includes(rawTheme)) theme = rawTheme;
    else problems.push(`theme \u201c${showRaw(rawTheme)}\u201d must be one of ${THEMES.join(', ')}; using system`);
  }
  const fields = DEMO_FIELDS[demo];
  const state = defaultDemoState(demo);
  const seen = new Set(['demo', 'theme']);
  const given = new Set();
  for (const [param, raw] of params) {
    if (seen.has(param)) continue;
    seen.add(param);
    const f = Object.hasOwn(fields, param) ? fields[param] : null;
    if (!f) {
      problems.push(`setting \u201c${showRaw(param)}\u201d is not used by this demo and was ignored`);
      continue;
    }
    const r = parseField(f, raw);
    if (r.value !== undefined) {
      state[param] = r.value;
      given.add(param);
    }
    if (r.error) problems.push(`${f.label} \u201c${showRaw(raw)}\u201d ${r.error}${r.value === undefined ? '; using the default' : ''}`);
  }
  return { demo, state, theme, problems, given, empty: text === '' };
}

/** The hash text (without "#") for a demo and its state. */
export function serializeConceptHash(demo, state, theme = 'system') {
  const params = new URLSearchParams();
  params.set('demo', demo);
  for (const [name, f] of Object.entries(DEMO_FIELDS[demo])) params.set(name, writeField(f, state[name]));
  if (theme !== 'system') params.set('theme', theme);
  return params.toString();
}
