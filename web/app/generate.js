// "Next token" on the playground (the controller's part; the view is
// views/generation.js): for a pretrained causal model (GPT-2) it asks the
// model's worker for the next token (hub.js generate: the worker's KV cache
// reuses the earlier keys and values), then puts the token's text into the
// sentence and its id into the state's `gen` (the URL), so a link reopens the
// same tokens; the step views then show the new row (the query moves to it).
// Undo drops the last generated token. BERT is not causal: the view says so.
//
//   const generation = createGeneration(slot, { handle, state, trace, set, render });
//   generation.update(trace);   // from the controller's render()

import { createGenerationView } from './views/generation.js';
import { PICKS, TEMPERATURES, TOP_KS } from './state.js';
import { isPretrainedName } from './hub-source.js';

/**
 * handle(): the pretrained model on screen (hub.js handle) or null; state(): the playground's
 * state; trace(): the trace on screen; set(patch): the controller's; render(): redraw.
 */
export function createGeneration(root, { handle, state, trace, set, render }) {
  let busy = false;
  let last = null; // the last generated token (GeneratedToken, pretrained.js) while its row is on screen
  let error = null;

  const view = createGenerationView(root, {
    choices: { picks: PICKS, temperatures: TEMPERATURES, topKs: TOP_KS },
    onNext: next,
    onUndo: undo,
    onPick: (patch) => set(patch),
  });

  async function next() {
    const h = handle();
    const s = state();
    const tr = trace();
    if (busy || !h || !tr) return;
    busy = true;
    error = null;
    render();
    try {
      const token = await h.generate(s.sentence, s.gen, { sample: s.pick === 'sample', temperature: s.temperature, topK: s.topK, seed: s.genSeed });
      if (state().sentence !== s.sentence || state().model !== s.model) return; // the page moved on meanwhile
      last = token;
      set({ sentence: token.sentence, gen: token.generated, query: token.position, key: token.position });
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
    // the last token's text starts where the trace says (the generated tokens carry their offsets)
    const cut = tr.tokens.at(-1).startChar;
    last = null;
    error = null;
    set({ sentence: s.sentence.slice(0, cut), gen: s.gen.slice(0, -1), query: tr.tokens.length - 2 });
  }

  return {
    update(tr) {
      const s = state();
      const h = handle();
      const config = h?.info?.config ?? null;
      const pretrained = isPretrainedName(s.model) && config;
      if (last && (!tr || last.position !== tr.tokens.length - 1 || s.gen.at(-1) !== last.id)) last = null;
      view.update(tr, s, {
        available: Boolean(pretrained && config.causal),
        reason: pretrained && !config.causal ? 'BERT is not causal: every token reads the tokens after it, so it cannot write a text one token at a time.' : null,
        busy,
        last,
        error,
        layers: config?.layers ?? 0,
      });
    },
  };
}
