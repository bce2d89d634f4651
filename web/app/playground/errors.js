// What the page says when the engine refuses a sentence or settings: a title
// and a sentence for the message bar, from the engine's error; when the engine
// cannot start; and of a link's settings that could not be used.

export function describeError(e, hasResult) {
  const msg = String(e?.message ?? e);
  const keep = hasResult ? ' The page still shows the last sentence that worked.' : '';
  // the engine's error codes (engine.d.ts ErrorCode), not its wording
  const code = e?.code;
  if (code === 'empty_text') return { title: 'Nothing to show yet:', text: `the sentence is empty. Type a few words to see attention at work.${keep}` };
  // the way forward: a real model reads long text (its size is asked first), random weights read 2,048 tokens
  if (code === 'too_long_for_model') {
    return {
      title: 'This model reads short sentences:',
      text: `${msg}, the longest it was trained on. Shorten the sentence, read it with a real model trained on long text, or pick random weights, which read up to 2,048 tokens.${keep}`,
      actions: [{ id: 'real', text: 'Read it with a real model\u2026', testid: 'run-real' }, { id: 'random', text: 'Random weights', testid: 'run-random' }],
    };
  }
  if (code === 'unknown_word') return { title: 'This model cannot read that word:', text: `${msg}. Use the words of the task it was trained on.${keep}` };
  if (code === 'too_many_tokens') return { title: 'This is too much for the page:', text: `${msg}. Try a shorter text.${keep}` };
  // a full trace keeps 3·H·T² scores: heads and tokens are what it costs
  if (code === 'too_large') return { title: 'This is too much for the page:', text: `${msg}. Try fewer heads or a shorter text.${keep}` };
  if (code === 'out_of_memory') return { title: 'This is too much for the page:', text: `${msg}. Try fewer heads or a narrower model.${keep}` };
  return { title: 'The engine could not run these settings:', text: `${msg}.${keep}` };
}

/** The engine's start-up failure, with what to do about it. */
export function fatalText(e) {
  let fatal = String(e?.message ?? e);
  if (/WebAssembly/.test(fatal) && !/Chrome/.test(fatal)) fatal += ' Any current Chrome, Edge, Firefox or Safari can run it.';
  else if (!/WebAssembly/.test(fatal)) fatal += ' (If you are running it from a checkout: build the module with ./build_wasm.sh and serve web/ over http.)';
  return fatal;
}

/** The message of a link's settings that could not be used. */
export function urlNotice(details) {
  return { id: 'url', kind: 'notice', title: 'Some settings in the link could not be used,', text: 'so defaults were used for them:', details, dismissible: true };
}
