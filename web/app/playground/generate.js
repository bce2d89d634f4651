// "Next token" on the playground (the controller's part; the view is
// views/generation.js): for a model whose source can write (a pretrained
// causal model, GPT-2) it asks the source for the next token (its worker's
// KV cache reuses the earlier keys and values), then puts the token's text
// into the sentence and its id into the state's `gen` (the URL), so a link
// reopens the same tokens; the step views then show the new row (the query
// moves to it). Undo drops the last generated token: the sentence becomes what
// the ids before it decode to (the trace's undoSentence: a token may hold part
// of a character, so the text is not cut at its offset). A model that is not
// causal says why (its source's generation.reason).
//
//   const generation = createGeneration(slot, { source, state, trace, set, render });
//   generation.update(trace);   // from the controller's render()

import { createGenerationView } from './views/generation.js';
import { PICKS, TEMPERATURES, TOP_KS } from './state.js';

/**
 * source(): the model source on screen (sources/registry.js) or null; state(): the playground's
 * state; trace(): the trace on screen; set(patch): the controller's; render(): redraw.
 */
export function createGeneration(root, { source, state, trace, set, render }) {
  let busy = false;
  let last = null; // the last generated token (GeneratedToken, pretrained.js) while its row is on screen
  let error = null;
  let moveTo = -1; // the new token's row: the query goes there once its trace is on screen

  const view = createGenerationView(root, {
    choices: { picks: PICKS, temperatures: TEMPERATURES, topKs: TOP_KS },
    onNext: next,
    onUndo: undo,
    onPick: (patch) => set(patch),
  });

  async function next() {
    const src = source();
    const s = state();
    const tr = trace();
    if (busy || !src?.generate || !tr) return;
    busy = true;
    error = null;
    render();
    try {
      const token = await src.generate(s.sentence, s.gen, { sample: s.pick === 'sample', temperature: s.temperature, topK: s.topK, seed: s.genSeed });
      if (state().sentence !== s.sentence || state().model !== s.model) return; // the page moved on meanwhile
      last = token;
      moveTo = token.position;
      set({ sentence: token.sentence, gen: token.generated });
    } catch (e) {
      error = String(e?.message ?? e);
    } finally {
      busy = false;
      render();
    }
  }

  function undo() {
    const s = state();
    const tr = trace();
    if (busy || !tr || !s.gen.length || tr.tokens.length < 2) return;
    // the trace says what the ids before the last one wrote (when the sentence still ends with them)
    const sentence = tr.generated > 0 && typeof tr.undoSentence === 'string' ? tr.undoSentence : s.sentence;
    last = null;
    error = null;
    set({ sentence, gen: s.gen.slice(0, -1), query: tr.tokens.length - 2 });
  }

  return {
    update(tr) {
      const s = state();
      const g = source()?.generation ?? null;
      if (tr && moveTo >= 0 && tr.sentence === s.sentence && tr.tokens.length - 1 === moveTo) {
        // the trace with the new token is here (a query set before it would be clamped to the old one)
        const q = moveTo;
        moveTo = -1;
        queueMicrotask(() => set({ query: q, key: q }));
      }
      if (last && tr && tr.sentence === s.sentence && (last.position !== tr.tokens.length - 1 || s.gen.at(-1) !== last.id)) last = null;
      view.update(tr, s, {
        available: Boolean(g?.available),
        reason: g?.reason ?? null,
        busy,
        last,
        error,
        layers: g?.layers ?? 0,
      });
    },
  };
}
