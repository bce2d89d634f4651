// "Next token" for a pretrained GPT-2 (causal) model, under the sentence: the
// buttons and how the token is picked, and a small view of the KV cache after
// the last append: which rows of K and V were reused and which one was computed
// now, and which cells the causal mask hides. Drawn from what the controller
// passes (generate.js); no engine, no state module.
//
//   const view = createGenerationView(root, { choices, onNext, onUndo, onPick });
//   view.update(trace, state, { available, reason, busy, last, error });

import { el, field } from '../../kit/dom.js';
import { formatValue } from '../../kit/format.js';

/** Rows of the cache drawn at most (the last ones; a long text is summarised above them). */
const MAX_ROWS = 16;

function option(value, text) {
  return el('option', '', { value: String(value), text });
}

/**
 * choices: {picks, temperatures, topKs}. onNext(), onUndo(), onPick(patch) with patch
 * {pick} | {temperature} | {topK} | {genSeed}.
 */
export function createGenerationView(root, { choices, onNext, onUndo, onPick }) {
  const next = el('button', 'btn gen-next', { type: 'button', text: 'Next token', testid: 'gen-next' });
  const undo = el('button', 'btn gen-undo', { type: 'button', text: 'Undo', testid: 'gen-undo' });
  const pick = el('select', '', { testid: 'gen-pick' }, option('top', 'the likeliest'), option('sample', 'sampled'));
  const temperature = el('select', '', { testid: 'gen-temp' }, ...choices.temperatures.map((t) => option(t, String(t))));
  const topK = el('select', '', { testid: 'gen-topk' }, ...choices.topKs.map((k) => option(k, k === 0 ? 'all' : String(k))));
  const seed = el('input', '', { type: 'number', min: '0', max: '4294967295', step: '1', testid: 'gen-seed' });
  const sampling = el('div', 'gen-sampling', {}, field('Temperature', temperature), field('Top-k', topK), field('Sampling seed', seed));
  const status = el('p', 'gen-status', { testid: 'gen-status', attrs: { 'aria-live': 'polite' } });
  const cacheText = el('p', 'gen-cache-text', { testid: 'kv-cache-text' });
  const grid = el('div', 'gen-cache-grid', { testid: 'kv-cache', attrs: { role: 'img' } });
  const cache = el('div', 'gen-cache', {}, cacheText, grid);
  const box = el('div', 'gen', { testid: 'generation' },
    el('div', 'gen-row', {}, next, undo, field('Pick', pick)), sampling, status, cache);
  root?.append(box);

  next.addEventListener('click', () => onNext());
  undo.addEventListener('click', () => onUndo());
  pick.addEventListener('change', () => onPick({ pick: pick.value }));
  temperature.addEventListener('change', () => onPick({ temperature: Number(temperature.value) }));
  topK.addEventListener('change', () => onPick({ topK: Number(topK.value) }));
  seed.addEventListener('change', () => {
    const n = Number(seed.value);
    if (Number.isInteger(n) && n >= 0 && n <= 4294967295) onPick({ genSeed: n });
  });

  /** The cache as rows: one per token, K and V reused (cached) or computed now, and the mask's cells. */
  function drawCache(tr, last) {
    const T = tr.tokens.length;
    const fresh = last && last.position === T - 1 ? T - 1 : -1;
    const from = Math.max(0, T - MAX_ROWS);
    const rows = [];
    for (let i = from; i < T; i++) {
      const kind = i === fresh ? 'new' : 'cached';
      const cells = [];
      for (let j = from; j < T; j++) cells.push(el('span', `gen-cell${j > i ? ' hidden' : ''}${i === fresh && j <= i ? ' fresh' : ''}`));
      rows.push(el('div', `gen-cache-row ${kind}`, { dataset: { row: String(i), kind } },
        el('span', 'gen-cells', { attrs: { 'aria-hidden': 'true' } }, ...cells),
        el('span', 'gen-cache-label', { text: `${i} ${tr.tokens[i].text}` }),
        el('span', 'gen-cache-kv', { text: i === fresh ? 'new' : 'reused' })));
    }
    grid.replaceChildren(...(from > 0 ? [el('p', 'gen-cache-more', { text: `\u2026 and ${from} earlier rows, reused the same way` })] : []), ...rows);
    grid.setAttribute('aria-label', fresh >= 0
      ? `Rows 0 to ${fresh - 1} of K and V reused from the cache, row ${fresh} computed now; the cells right of the diagonal are hidden by the causal mask`
      : 'The causal mask: each row sees itself and the rows before it');
  }

  return {
    update(tr, state, g) {
      box.hidden = !g.available && !g.reason;
      next.hidden = undo.hidden = sampling.hidden = cache.hidden = !g.available;
      pick.closest('.field').hidden = !g.available;
      if (!g.available) {
        status.textContent = g.reason ?? '';
        return;
      }
      next.disabled = g.busy || !tr;
      undo.disabled = g.busy || !state.gen.length || !tr;
      pick.value = state.pick;
      sampling.hidden = state.pick !== 'sample';
      temperature.value = String(state.temperature);
      topK.value = String(state.topK);
      if (document.activeElement !== seed) seed.value = String(state.genSeed);
      const last = g.last;
      if (g.error) status.textContent = g.error;
      else if (last) status.textContent = `Added \u201c${last.display}\u201d (token ${last.position}, probability ${formatValue(last.probability, 3)}).`;
      else status.textContent = state.gen.length ? `The last ${state.gen.length === 1 ? 'token was' : `${state.gen.length} tokens were`} generated.` : 'Writes one token at a time: the model reads only the tokens before each new one.';
      if (!tr) return;
      const L = g.layers;
      cacheText.textContent = last && last.position === tr.tokens.length - 1
        ? `The new token ${last.position} read the keys and values of tokens 0\u2013${last.position - 1} from the cache (${last.reused} rows in each of ${L} layers) and computed only its own row (new). `
          + 'The causal mask hides every cell right of the diagonal (dashed): no earlier token sees the new one, so their keys and values never change.'
        : 'The causal mask hides every cell right of the diagonal (dashed). Next token computes only the new row and reuses the earlier keys and values.';
      drawCache(tr, last && last.position === tr.tokens.length - 1 ? last : null);
    },
  };
}
