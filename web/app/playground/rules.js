// The playground's domain rules, as pure functions of the state: what a
// change of one field brings with it (batch mode masks the padding, a picked
// model opens on its example and featured head, a custom mask starts from the
// mask on screen), the custom mask as a matrix, and the selection kept inside
// the trace on screen.

import { normalizeState, canonicalCells, sameValue, DEFAULT_SENTENCE } from './state.js';
import { SHIPPED_MODELS } from './models.js';

/** The sentence a model is best shown with (the shipped ones say; random weights use the default). */
export function exampleOf(model) {
  return SHIPPED_MODELS[model]?.example ?? { sentence: DEFAULT_SENTENCE, query: 7 };
}

/** "i-j" for every blocked cell of a T×T mask. */
export function blockedCells(mask) {
  const out = [];
  for (let i = 0; i < mask.rows; i++) for (let j = 0; j < mask.cols; j++) if (!mask.data[i * mask.cols + j]) out.push(`${i}-${j}`);
  return out;
}

/** The T×T 0/1 matrix (1 = may attend) of a list of blocked cells; cells past T are left out. */
export function customMaskMatrix(cells, T) {
  const data = new Uint8Array(T * T).fill(1);
  for (const c of cells) {
    const [i, j] = c.split('-').map(Number);
    if (i < T && j < T) data[i * T + j] = 0;
  }
  return { rows: T, cols: T, data };
}

/** The blocked cells with cell (i, j) flipped. */
export function toggleCell(cells, i, j) {
  const id = `${i}-${j}`;
  return cells.includes(id) ? cells.filter((c) => c !== id) : canonicalCells([...cells, id]);
}

/**
 * The state after a patch, with the rules a change brings and normalizeState's
 * cross-field rules applied. `trace` is the random-weights trace on screen (or null).
 */
export function applyPatch(prev, patch, trace) {
  const next = { ...prev, ...patch };
  if (patch.batch === true && !prev.batch && next.mask === 'none') next.mask = 'padding';
  // a custom mask starts from the mask on screen, unless there are custom edits to come back to
  if (patch.mask === 'custom' && prev.mask !== 'custom' && !patch.customMask && !prev.customMask.length && trace && !trace.model) next.customMask = blockedCells(trace.mask);
  // a model picked while its predecessor's example sentence is shown brings its own example
  if (patch.model && patch.model !== prev.model && patch.sentence === undefined) {
    const before = exampleOf(prev.model);
    const after = exampleOf(patch.model);
    if (prev.sentence === before.sentence && before.sentence !== after.sentence) {
      next.sentence = after.sentence;
      next.query = after.query;
    }
  }
  // picking a shipped model opens it on its learned pattern (unless the patch says where)
  const featured = SHIPPED_MODELS[patch.model]?.featured;
  if (featured && patch.model !== prev.model && patch.layer === undefined && patch.head === undefined) {
    next.layer = featured.layer;
    next.head = featured.head;
  }
  // steps by hand are taken on one sentence and its answers: another sentence, model or answer puts the trained weights back
  if (patch.sgd === undefined && ['model', 'sentence', 'targets'].some((k) => patch[k] !== undefined && !sameValue(patch[k], prev[k]))) next.sgd = [];
  // the answers picked belong to positions of one sentence of one model
  if (patch.targets === undefined && ['model', 'sentence'].some((k) => patch[k] !== undefined && patch[k] !== prev[k])) next.targets = [];
  // the generated ids wrote the sentence's end: an edit of the sentence (or another model) ends them
  if ((patch.sentence !== undefined && patch.sentence !== prev.sentence && patch.gen === undefined) || (patch.model !== undefined && patch.model !== prev.model)) next.gen = [];
  return normalizeState(next);
}

/** The state with query, key, head, layer and dimension inside the trace (the same object if they already are). */
export function clampToTrace(state, tr) {
  if (!tr) return state; // none while a picked model loads: nothing to clamp against yet
  const T = tr.tokens.length;
  const fix = {};
  if (state.query >= T) fix.query = T - 1;
  if (state.key >= T) fix.key = T - 1;
  if (state.head >= tr.heads.length) fix.head = tr.heads.length - 1;
  if (tr.model && state.layer >= tr.model.layers) fix.layer = tr.model.layers - 1;
  if (state.dim >= tr.config.dModel) fix.dim = tr.config.dModel - 1;
  return Object.keys(fix).length ? { ...state, ...fix } : state;
}

/**
 * In batch mode a shorter sentence ends in [PAD] tokens; a query that lands on
 * one (the shown sentence, batch mode or the lines changed, not the user's
 * pick) moves to the sentence's last real token. Returns {state, moved}:
 * moved is {from, to} or null.
 */
export function queryOffPadding(state, tr) {
  if (!tr || !state.batch || tr.model) return { state, moved: null };
  const real = tr.realTokens ?? tr.tokens.length;
  if (state.query < real || real < 1) return { state, moved: null };
  return { state: { ...state, query: real - 1 }, moved: { from: state.query, to: real - 1 } };
}

/** The word at token i of a trace, as typed (lower-cased), or null. */
export function queryText(tr, i) {
  const t = tr?.tokens[i];
  return t ? String(t.typed ?? t.text).toLowerCase() : null;
}

/**
 * The model's own query on a trace: coreference answers at "it" (its first
 * one), a next-word model at the last token; random weights keep the index
 * (inside the sentence).
 */
export function naturalQuery(tr, query) {
  const T = tr.realTokens ?? tr.tokens.length;
  if (tr.model?.task === 'coreference') {
    const it = tr.tokens.findIndex((t, i) => i < T && t.text === 'it');
    if (it >= 0) return it;
  }
  if (tr.model?.causal) return T - 1;
  return Math.max(0, Math.min(T - 1, query));
}

/**
 * Where the query goes in a new sentence: on the same word (its token text)
 * when it is still there, the occurrence nearest the old position; else the
 * model's natural query. A query that was on the last token of a next-word
 * model stays on the last token (it follows the typing). follow: {word, query, last}.
 */
export function followQuery(tr, { word, query, last }) {
  const T = tr.realTokens ?? tr.tokens.length;
  if (last && tr.model?.causal) return T - 1;
  let best = -1;
  for (let i = 0; i < T; i++) {
    if (queryText(tr, i) !== word) continue;
    if (best < 0 || Math.abs(i - query) < Math.abs(best - query)) best = i;
  }
  return best >= 0 ? best : naturalQuery(tr, query);
}
