// The sentence box and its tokens as chips (text + id), and batch mode:
// several sentences, one per line, padded to the longest with [PAD].
// The limits come in from the state's tables (through the controller):
// {maxChars, maxBatch, maxBatchChars}, and computedSentences(state), the lines the engine runs.

import { el, field, clear, setOptions, setValue, uniqueId } from '../../kit/dom.js';
import { tokenLabel, excerpt } from '../../kit/format.js';
import { splitLines } from '../../kit/text.js';
import { experimentsFor, REAL_MODEL } from '../experiments.js';
import { isPretrainedName } from '../../hub/source.js';

const MAX_CHIPS = 300;

/**
 * The tokens as chips (text + id); a click makes one the query. render(trace, q) rebuilds only when
 * the tokens change. A list taller than its box scrolls: the query's chip is kept in view inside it
 * (the box, not the page: after "Next token" that is the new token, at the end), and `cue` says how
 * many tokens the box holds and that it scrolls, while there is more to see.
 */
function createChips(chips, onSelectQuery, cue) {
  let chipsKey = null;
  let selected = -1;
  let total = 0;
  function refreshCue() {
    const below = chips.scrollHeight - chips.clientHeight - chips.scrollTop > 2;
    const above = chips.scrollTop > 2;
    cue.hidden = !below && !above;
    if (!cue.hidden) cue.textContent = `${total} tokens: ${below ? 'scroll the list for the rest \u2193' : 'scroll up for the first ones \u2191'}`;
    chips.dataset.cut = [above ? 'up' : '', below ? 'down' : ''].filter(Boolean).join(' ');
  }
  function showSelected() {
    const chip = chips.children[selected];
    if (chip && chips.scrollHeight > chips.clientHeight) {
      const top = chip.getBoundingClientRect().top - chips.getBoundingClientRect().top + chips.scrollTop;
      if (top < chips.scrollTop) chips.scrollTop = Math.max(0, top - 4);
      else if (top + chip.offsetHeight > chips.scrollTop + chips.clientHeight) chips.scrollTop = top + chip.offsetHeight - chips.clientHeight + 4;
    }
    refreshCue();
  }
  chips.addEventListener('scroll', refreshCue, { passive: true });
  return function render(trace, q) {
    const key = trace.tokens.map((t) => `${t.id}\u0000${t.text}\u0000${t.typed ?? ''}`).join('\u0001');
    if (chipsKey === key) {
      if (selected !== q) {
        chips.children[selected]?.firstChild?.setAttribute('aria-pressed', 'false');
        chips.children[q]?.firstChild?.setAttribute('aria-pressed', 'true');
        selected = q;
        showSelected();
      }
      return;
    }
    total = trace.tokens.length;
    chipsKey = key;
    clear(chips);
    const n = Math.min(trace.tokens.length, MAX_CHIPS);
    const items = [];
    for (let i = 0; i < n; i++) {
      const t = trace.tokens[i];
      const pad = t.id === 0;
      // a token the tokenizer added (<s>, [CLS], [SEP]: no place in the text) is marked as such
      const added = Boolean(t.special);
      const b = el('button', pad ? 'chip is-pad' : t.unknown ? 'chip is-unknown' : added ? 'chip is-added' : 'chip', { type: 'button', testid: 'token-chip', attrs: { 'aria-pressed': i === q ? 'true' : 'false', 'aria-label': `Token ${i}: ${tokenLabel(t.text, 40)}${t.unknown ? ` (${tokenLabel(t.typed, 40)}, not in the vocabulary)` : ''}${added ? ' (added by the tokenizer)' : ''}, id ${t.id}` } },
        el('bdi', 'chip-text', { text: tokenLabel(t.text, 28) }),
        el('span', 'chip-id', { text: String(t.id) }));
      b.dataset.index = String(i);
      if (t.unknown) b.title = `\u201c${tokenLabel(t.typed, 40)}\u201d is not in the model\u2019s vocabulary`;
      else if (added) b.title = `${tokenLabel(t.text, 40)} was added by the tokenizer: it is not in your text`;
      b.addEventListener('click', () => onSelectQuery(i));
      items.push(el('li', null, {}, b));
    }
    if (trace.tokens.length > MAX_CHIPS) items.push(el('li', 'chips-more', { text: `+ ${trace.tokens.length - MAX_CHIPS} more` }));
    chips.append(...items);
    selected = q;
    showSelected();
  };
}

/** How many batch lines there are and which are computed. */
function batchStatusText(n, max) {
  if (n <= max) return `${n} of at most ${max} sentences computed.`;
  const extra = n === max + 1 ? `Line ${max + 1} is` : `Lines ${max + 1}\u2013${n} are`;
  return `${n} sentences: the first ${max} are computed. ${extra} kept here and in the link, not computed.`;
}

/** "12 tokens (3 of them [PAD]), T = 12: every matrix below has a row per token. …" */
function countText(trace) {
  const T = trace.tokens.length;
  const pads = T - trace.realTokens;
  return `${T} token${T === 1 ? '' : 's'}${pads ? ` (${pads} of them [PAD])` : ''}, T = ${T}: every matrix below has a row per token (T of them). Click one to make it the query.`;
}

/** The words a trained model reads as [UNK], or ''. */
function unknownText(trace) {
  const unknown = [...new Set(trace.tokens.filter((t) => t.unknown).map((t) => t.typed))];
  if (!unknown.length) return '';
  return `Not in this model\u2019s vocabulary, so read as [UNK]: ${unknown.slice(0, 6).map((w) => `\u201c${tokenLabel(w, 16)}\u201d`).join(', ')}${unknown.length > 6 ? ` and ${unknown.length - 6} more` : ''}.`;
}

/**
 * The one-sentence box, shown whole: a textarea as tall as its text (up to the
 * stylesheet's max-height, then it scrolls). Typing sends the sentence after a
 * pause, Enter or leaving the box at once; Enter adds no line, and a pasted line
 * break becomes a space, as in a one-line box. Returns {input, fit()}.
 */
function createSentenceBox(onSentence, maxChars) {
  const input = el('textarea', 'control control-sentence', { rows: 1, maxLength: maxChars, spellcheck: false, autocomplete: 'off', dir: 'auto', testid: 'sentence' });
  let timer = 0;
  const sendNow = () => {
    clearTimeout(timer);
    onSentence(input.value);
  };
  input.addEventListener('input', () => {
    if (/[\r\n]/.test(input.value)) {
      const at = input.selectionStart;
      input.value = input.value.replace(/\r\n?|\n/g, ' ');
      input.setSelectionRange(at, at);
    }
    fit();
    clearTimeout(timer);
    timer = setTimeout(() => onSentence(input.value), 150);
  });
  input.addEventListener('change', sendNow);
  input.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' || e.isComposing) return;
    e.preventDefault();
    sendNow();
  });

  let fittedValue = null;
  let fittedWidth = 0;
  function fit() {
    if (!input.getClientRects().length) return; // not laid out (hidden): the ResizeObserver fits it when shown
    input.style.height = 'auto';
    const cs = input.ownerDocument.defaultView.getComputedStyle(input);
    input.style.height = `${input.scrollHeight + parseFloat(cs.borderTopWidth) + parseFloat(cs.borderBottomWidth)}px`;
    fittedValue = input.value;
    fittedWidth = input.clientWidth;
  }
  // a new width wraps the text differently
  const win = input.ownerDocument.defaultView;
  if (win?.ResizeObserver) {
    new win.ResizeObserver(() => {
      if (input.clientWidth !== fittedWidth) fit();
    }).observe(input);
  }
  return {
    input,
    /** Fits the height when the text changed since the last fit. */
    fitIfChanged() {
      if (fittedValue !== input.value) fit();
    },
  };
}

/**
 * The row under the box (issue #40, 4): the experiments that work on this model (experiments.js)
 * and one click to a real model for sentences the toy models cannot read. onTry(patch).
 */
function createTryRow(onTry, allowed) {
  const list = el('div', 'try-list');
  const real = el('button', 'btn btn-small try-real', { type: 'button', testid: 'try-real', text: `Your own sentence, read by a real model: ${REAL_MODEL.slice(3).split('/').pop()} (its size first)\u2026` });
  real.addEventListener('click', () => onTry({ model: REAL_MODEL }));
  const row = el('div', 'try-row', { testid: 'try' }, el('span', 'try-label', { text: 'Try:' }), list, real);
  let key = null;
  return {
    row,
    update(state) {
      const items = experimentsFor(state);
      const shown = allowed && !isPretrainedName(state.model);
      const k = JSON.stringify([shown, items.map((x) => x.text)]);
      if (k === key) return;
      key = k;
      row.hidden = !shown;
      list.replaceChildren(...items.map((x) => {
        const b = el('button', 'btn btn-small try-one', { type: 'button', text: x.text, testid: 'try-one' });
        b.addEventListener('click', () => onTry(x.patch));
        return b;
      }));
    },
  };
}

export function createSentenceView(root, { limits, computedSentences, onSentence, onBatchText, onBatch, onShown, onSelectQuery, onTry = () => {}, visible = null }) {
  const { maxBatch, maxBatchChars } = limits;
  const box = createSentenceBox(onSentence, limits.maxChars);
  const { input } = box;
  const sentenceField = field('Sentence', input, { className: 'field field-wide' });
  const textarea = el('textarea', 'control control-batch', { rows: 4, spellcheck: false, dir: 'auto', maxLength: maxBatchChars, testid: 'batch-sentences' });
  const batchField = field('Batch sentences', textarea, { className: 'field field-wide', hint: `One sentence per line; the first ${maxBatch} are computed. Shorter ones are padded with [PAD].` });
  // how many lines there are and which are computed: said as soon as a line is typed, not after
  const batchStatus = el('p', 'field-hint batch-status', { testid: 'batch-status', attrs: { 'aria-live': 'polite' } });
  batchField.append(batchStatus);
  const batchBox = el('input', null, { type: 'checkbox', id: uniqueId('batch') });
  const batchToggle = el('div', 'field field-check', {}, batchBox, el('label', 'field-label', { htmlFor: batchBox.id, text: 'Batch mode' }));
  const shown = el('select', 'control');
  const shownField = field('Sentence shown', shown);
  const batchRow = el('div', 'batch-row', {}, batchToggle);
  const count = el('p', 'token-count', { testid: 'token-count', attrs: { 'aria-live': 'polite' } });
  const unknownLine = el('p', 'token-count token-unknown', { testid: 'token-unknown', hidden: true });
  const chips = el('ol', 'chips', { testid: 'chips', attrs: { 'aria-label': 'Tokens (select one as the query)' } });
  const chipsCue = el('p', 'chips-cue', { testid: 'chips-cue', hidden: true });
  // the page's own row: an embed shows only the controls its host lists
  const tryRow = createTryRow(onTry, visible === null);
  root.append(sentenceField, tryRow.row, batchRow, batchField, shownField, count, unknownLine, chips, chipsCue);
  if (visible && !visible.includes('batch')) batchRow.hidden = true;

  let batchTimer = 0;
  textarea.addEventListener('input', () => {
    showBatchStatus(splitLines(textarea.value).length);
    clearTimeout(batchTimer);
    batchTimer = setTimeout(() => onBatchText(textarea.value), 250);
  });
  textarea.addEventListener('change', () => {
    clearTimeout(batchTimer);
    onBatchText(textarea.value);
  });
  batchBox.addEventListener('change', () => onBatch(batchBox.checked));
  shown.addEventListener('change', () => onShown(Number(shown.value)));

  function showBatchStatus(n) {
    batchStatus.classList.toggle('is-over', n > maxBatch);
    batchStatus.textContent = batchStatusText(n, maxBatch);
  }
  const renderChips = createChips(chips, onSelectQuery, chipsCue);

  return {
    /** Writes the state into the controls (never while the user is typing in them). */
    update(trace, state, v) {
      const active = root.getRootNode().activeElement;
      if (active !== input) setValue(input, state.sentence);
      const batchText = state.sentences.join('\n');
      if (active !== textarea && splitLines(textarea.value).join('\n') !== batchText) textarea.value = batchText;
      if (active !== textarea) showBatchStatus(state.sentences.length);
      // batch mode pads sentences for random weights; a trained model reads one sentence
      const trained = state.model !== 'random';
      const batch = state.batch && !trained;
      batchBox.checked = batch;
      batchBox.disabled = trained;
      batchBox.title = trained ? 'Batch mode works with random weights' : '';
      sentenceField.hidden = batch;
      if (!batch) box.fitIfChanged();
      batchField.hidden = !batch;
      shownField.hidden = !batch;
      setOptions(shown, computedSentences(state).map((s, i) => ({ value: i, text: `${i + 1}: ${excerpt(s, 24)}` })));
      setValue(shown, state.shown);
      tryRow.update(state);
      if (trace) {
        renderChips(trace, v.q);
        count.textContent = countText(trace);
        unknownLine.textContent = unknownText(trace);
        unknownLine.hidden = unknownLine.textContent === '';
      }
    },
  };
}
