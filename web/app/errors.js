// What the page says when the engine refuses a sentence or settings: a title
// and a sentence for the message bar, from the engine's error.

export function describeError(e, hasResult) {
  const msg = String(e?.message ?? e);
  const keep = hasResult ? ' The page still shows the last sentence that worked.' : '';
  if (/no tokens/.test(msg)) return { title: 'Nothing to show yet:', text: `the sentence is empty. Type a few words to see attention at work.${keep}` };
  if (/reads at most/.test(msg)) return { title: 'This model reads short sentences:', text: `${msg}, the longest it was trained on. Shorten the sentence, or pick random weights, which read up to 2,048 tokens.${keep}` };
  if (/not in the model.s vocabulary/.test(msg)) return { title: 'This model cannot read that word:', text: `${msg}. Use the words of the task it was trained on.${keep}` };
  if (/tokens|MB|limit/.test(msg)) return { title: 'This is too much for the page:', text: `${msg}. Try a shorter sentence or fewer heads.${keep}` };
  return { title: 'The engine could not run these settings:', text: `${msg}.${keep}` };
}
