// Pieces every concept demo's view uses: the frame (idea, misconception, claim,
// controls, verdict, figures), labelled controls, metrics that carry their
// exact value in data-value, token chips, and small matrix helpers.
// Text always goes in through textContent (views/dom.js), never as markup.

import { el, field, setOptions, setValue, uniqueId } from '../kit/dom.js';
import { formatValue, tokenText } from '../kit/format.js';
import { DEMO_META } from './meta.js';
import { MAX_TEXT } from './limits.js';

// ---- numbers -----------------------------------------------------------------------

/** A difference for the verdicts: "0 (exactly)" (or "0" when short), "1.19e−7", "0.384" (formatValue, 3 digits). */
export function formatDiff(x, { short = false } = {}) {
  if (x === null || x === undefined || Number.isNaN(x)) return '\u2014';
  if (x === 0) return short ? '0' : '0 (exactly)';
  return formatValue(x, 3);
}

/** A sum printed with enough digits to see it is (or is not) 1: "1.000000", "−7.053000" (formatValue, 7 digits). */
export function formatSum(x, digits = 7) {
  if (Number.isNaN(x)) return '\u2014';
  return formatValue(x, digits);
}

/** Row i of a {rows, cols, data} matrix (a view, not a copy). */
export function rowOf(m, i) {
  return m.data.subarray(i * m.cols, (i + 1) * m.cols);
}

/** max over the entries of |a − b| for two equally long arrays. */
export function maxAbs(a, b) {
  let m = 0;
  for (let j = 0; j < a.length; j++) {
    const d = Math.abs(a[j] - b[j]);
    if (d > m || Number.isNaN(d)) m = d;
  }
  return m;
}

/** A 1×n or k×n matrix from rows (Float32Array copies). */
export function stackRows(rows) {
  const cols = rows[0]?.length ?? 0;
  const data = new Float32Array(rows.length * cols);
  rows.forEach((r, i) => data.set(r, i * cols));
  return { rows: rows.length, cols, data };
}

export function clampIndex(i, n) {
  return Math.max(0, Math.min(n - 1, i));
}

/** The engine's message as a sentence for a learner. */
export function explainError(message) {
  if (/no tokens/i.test(message)) return 'The sentence is empty: type a few words.';
  return `The engine could not run this: ${message}.`;
}

// ---- the frame ---------------------------------------------------------------------

/**
 * Builds the common parts of a demo inside root:
 *   header (idea number, title, misconception, claim), a controls card,
 *   a status line for errors, a row of metrics (the verdict), the figures.
 */
export function createDemoFrame(root, name, { claim }) {
  const meta = DEMO_META[name];
  root.classList.add('cx-demo');
  const claimEl = el('p', 'cx-claim', { testid: 'claim' });
  for (const sentence of [].concat(claim)) claimEl.append(el('span', null, { text: `${sentence} ` }));
  const head = el('header', 'cx-demo-head', {},
    el('p', 'cx-kicker', { text: `Idea ${meta.number} of 7` }),
    el('h2', 'cx-demo-title', { text: meta.title, tabIndex: -1 }),
    el('p', 'cx-myth', {}, el('span', 'cx-myth-label', { text: 'Misconception' }), el('span', 'cx-myth-text', { text: `\u201c${meta.myth}\u201d` })),
    claimEl);
  const controls = el('div', 'cx-controls', { attrs: { role: 'group', 'aria-label': 'Settings of this demo' } });
  const controlsCard = el('div', 'card cx-controls-card', {}, controls);
  const status = el('p', 'cx-status', { testid: 'demo-status', hidden: true, attrs: { role: 'status' } });
  const body = el('div', 'cx-body');
  root.append(head, controlsCard, status, body);
  return {
    root,
    controls,
    body,
    title: head.querySelector('.cx-demo-title'),
    /** Shows an error (or clears it with null); the last good numbers stay. */
    setError(message) {
      status.hidden = !message;
      status.textContent = message ? explainError(message) : '';
      root.classList.toggle('is-stale', Boolean(message));
    },
    /** A titled card in the body: {card, content}. */
    card(title, className = '') {
      const card = el('section', `card cx-card ${className}`.trim());
      if (title) card.append(el('h3', 'cx-card-title', { text: title }));
      body.append(card);
      return card;
    },
  };
}

/** A paragraph of explanation in our own words, updatable. */
export function createNote(parent, className = 'cx-note') {
  const p = el('p', className);
  parent.append(p);
  let last = null;
  return {
    element: p,
    set(text) {
      if (text === last) return;
      last = text;
      p.textContent = text;
    },
    set hidden(v) {
      p.hidden = v;
    },
  };
}

/**
 * A named number: label, value (formatted), a short note; the exact value is in
 * data-value (String(x), so −0, 1e−8 and NaN survive) for screen readers' titles and tests.
 * tone: 'zero' (exactly or effectively zero: the misconception's prediction fails or holds)
 * or 'nonzero' / 'good' / 'bad' / null.
 */
export function createMetric(parent, { label, testid, wide = false }) {
  const value = el('output', 'cx-metric-value num', { testid });
  const note = el('span', 'cx-metric-note');
  const labelEl = el('span', 'cx-metric-label', { text: label });
  const box = el('div', `cx-metric${wide ? ' is-wide' : ''}`, {}, labelEl, value, note);
  parent.append(box);
  return {
    element: box,
    set(x, { text, noteText = '', tone = null, label: newLabel } = {}) {
      value.textContent = text ?? formatDiff(x);
      value.dataset.value = String(x);
      value.title = typeof x === 'number' && Number.isFinite(x) ? formatValue(x, 7) : '';
      note.textContent = noteText;
      if (newLabel) labelEl.textContent = newLabel;
      box.classList.remove('is-zero', 'is-nonzero', 'is-good', 'is-bad');
      if (tone) box.classList.add(`is-${tone}`);
    },
  };
}

/** A row of metrics. */
export function createVerdict(parent) {
  const row = el('div', 'cx-verdict', { attrs: { 'aria-live': 'polite' } });
  parent.append(row);
  return row;
}

// ---- controls -------------------------------------------------------------------

/** A text box that reports every edit (the engine is fast enough to follow typing). */
export function textField(parent, label, { onInput, testid, hint, wide = true }) {
  const input = el('input', 'control', { type: 'text', maxLength: MAX_TEXT, spellcheck: false, autocomplete: 'off', testid });
  input.addEventListener('input', () => onInput(input.value));
  const wrap = field(label, input, { hint, className: `field cx-field${wide ? ' is-wide' : ''}` });
  parent.append(wrap);
  return { input, set: (v) => setValue(input, v) };
}

/** One sentence per line (batch). Reports the list of non-empty lines. */
export function linesField(parent, label, { onInput, testid, hint, maxLength }) {
  const input = el('textarea', 'control', { rows: 3, spellcheck: false, testid, ...(maxLength ? { maxLength } : {}) });
  input.addEventListener('input', () => onInput(input.value.split('\n').map((x) => x.trim()).filter(Boolean)));
  parent.append(field(label, input, { hint, className: 'field cx-field is-wide' }));
  return {
    input,
    set(lines) {
      const now = input.value.split('\n').map((x) => x.trim()).filter(Boolean);
      if (now.join('\n') !== lines.join('\n')) input.value = lines.join('\n');
    },
  };
}

/** Options of a head picker: "1 of 4", … */
export function headOptions(H) {
  return Array.from({ length: H }, (_, x) => ({ value: x, text: `${x + 1} of ${H}` }));
}

/** A <select>; options [{value, text}] may change later. */
export function selectField(parent, label, { options = [], onChange, testid, parse = String }) {
  const select = el('select', 'control', { testid });
  setOptions(select, options);
  select.addEventListener('change', () => onChange(parse(select.value)));
  parent.append(field(label, select, { className: 'field cx-field' }));
  return {
    select,
    setOptions: (o) => setOptions(select, o),
    set: (v) => setValue(select, v),
  };
}

/** A checkbox with its label on the right. */
export function checkField(parent, label, { onChange, testid, hint }) {
  const input = el('input', null, { type: 'checkbox', testid });
  input.addEventListener('change', () => onChange(input.checked));
  const id = uniqueId('c');
  input.id = id;
  const wrap = el('div', 'field field-check cx-field cx-check', {}, input, el('label', 'field-label', { text: label, htmlFor: id }));
  if (hint) wrap.append(el('span', 'field-hint', { text: hint }));
  parent.append(wrap);
  return {
    input,
    set(v) {
      if (input.checked !== v) input.checked = v;
    },
  };
}

/** A seed box: commits whole numbers 0 … 2³²−1 after a short pause or on change. */
export function seedField(parent, { onChange, testid = 'seed' }) {
  const input = el('input', 'control cx-seed', { type: 'number', min: '0', max: '4294967295', step: '1', inputMode: 'numeric', testid });
  let timer = 0;
  const commit = () => {
    clearTimeout(timer);
    const n = Number(input.value);
    if (input.value !== '' && Number.isInteger(n) && n >= 0 && n <= 4294967295) {
      input.removeAttribute('aria-invalid');
      onChange(n);
    } else {
      input.setAttribute('aria-invalid', 'true');
    }
  };
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(commit, 300);
  });
  input.addEventListener('change', commit);
  parent.append(field('Seed (random weights)', input, { className: 'field cx-field' }));
  return {
    input,
    set(v) {
      if (document.activeElement !== input) setValue(input, v);
    },
  };
}

/**
 * Token chips that select a token: buttons with aria-pressed.
 * update(tokens, selected, {marked}) where marked is a Set of highlighted indices.
 */
export function tokenChips(parent, { label, onPick, testid = 'token' }) {
  const list = el('ul', 'chips cx-chips', { attrs: { 'aria-label': label } });
  const wrap = el('div', 'cx-chips-wrap', {}, el('span', 'field-label', { text: label }), list);
  parent.append(wrap);
  let key = null;
  let buttons = [];
  return {
    element: wrap,
    update(tokens, selected, { marked = null } = {}) {
      if (key !== tokens) {
        key = tokens;
        list.replaceChildren();
        buttons = tokens.map((t, i) => {
          const b = el('button', 'chip', { type: 'button', testid: `${testid}-chip` },
            el('span', 'chip-text', { text: tokenText(t.text) }), el('span', 'chip-id', { text: String(i) }));
          b.addEventListener('click', () => onPick(i));
          list.append(el('li', null, {}, b));
          return b;
        });
      }
      buttons.forEach((b, i) => {
        b.setAttribute('aria-pressed', i === selected ? 'true' : 'false');
        b.classList.toggle('is-marked', Boolean(marked?.has(i)));
      });
    },
  };
}

/** Token texts of a trace, for heatmap labels (one array per trace). */
const labelCache = new WeakMap();
export function labelsOf(trace) {
  let l = labelCache.get(trace);
  if (!l) {
    l = trace.tokens.map((t) => t.text);
    labelCache.set(trace, l);
  }
  return l;
}

/** "“word”", the token shown whole */
export function q(text) {
  return `\u201c${tokenText(text)}\u201d`;
}

/** A small table: header cells and rows of cells ({text, value?, testid?, className?} or strings). */
export function createTable(parent, { caption, headers, testid, className = '' }) {
  // the caption sits above the scrolling box, so a wide table never hides it
  const table = el('table', `cx-table ${className}`.trim(), { testid });
  const thead = el('thead');
  const tr = el('tr');
  for (const h of headers) tr.append(el('th', null, { text: h, attrs: { scope: 'col' } }));
  thead.append(tr);
  const tbody = el('tbody');
  table.append(thead, tbody);
  const scroll = el('div', 'cx-table-scroll', { tabIndex: 0, attrs: { role: 'region' } }, table);
  const wrap = el('div', `cx-table-wrap ${className ? `${className}-wrap` : ''}`.trim());
  if (caption) {
    const id = uniqueId('cap');
    wrap.append(el('p', 'cx-table-caption', { id, text: caption }));
    table.setAttribute('aria-labelledby', id);
    scroll.setAttribute('aria-labelledby', id);
  } else {
    scroll.setAttribute('aria-label', headers.join(', '));
  }
  wrap.append(scroll);
  parent.append(wrap);
  return {
    element: scroll,
    /** rows: [{cells: [...], className}] */
    set(rows) {
      tbody.replaceChildren();
      for (const r of rows) {
        const row = el('tr', r.className ?? null, { testid: r.testid });
        r.cells.forEach((c, k) => {
          const cell = typeof c === 'object' && c !== null ? c : { text: String(c) };
          const td = el(k === 0 && r.rowHeader !== false ? 'th' : 'td', cell.className ?? null, { text: cell.text, testid: cell.testid });
          if (k === 0 && r.rowHeader !== false) td.setAttribute('scope', 'row');
          if (cell.value !== undefined) td.dataset.value = String(cell.value);
          if (cell.title) td.title = cell.title;
          row.append(td);
        });
        tbody.append(row);
      }
    },
  };
}
