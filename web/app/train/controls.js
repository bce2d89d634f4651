// The lab's left column: the task picker (every task of the engine, its one
// sentence, the pattern a head that solves it should have, and its example
// sequence with the targets as tokens), the own-text box, and the model and
// training settings. Views never talk to the worker: they report changes.
//
//   const view = createSettingsView(root, { onChange(patch), onTask(name), onDefaults(), onCorpus(text), onCorpusFile(file) });
//   view.update(state, tasks, { disabled });

import { el, field, setOptions, setValue, clear } from '../kit/dom.js';
import { tokenText } from '../kit/format.js';
import { LAYER_CHOICES, HEAD_CHOICES, WIDTH_CHOICES, LR_CHOICES, BATCH_CHOICES, POSITIONALS, MAX_CORPUS, taskTitle } from './state.js';

// the kinds in words: rotary and ALiBi act inside attention (no position vectors)
const POSITIONAL_TEXT = { none: 'none', sinusoidal: 'sinusoidal', learned: 'learned', rope: 'rotary (RoPE)', alibi: 'ALiBi' };

export { taskTitle };

function withValue(choices, value) {
  return choices.includes(value) ? choices : [...choices, value].sort((a, b) => a - b);
}

function select(onChange, testid) {
  const s = el('select', 'control', { testid });
  s.addEventListener('change', () => onChange(s.value));
  return s;
}

function check(label, onChange, testid, hint) {
  const input = el('input', null, { type: 'checkbox', testid });
  input.addEventListener('change', () => onChange(input.checked));
  const wrap = field(label, input, { className: 'field field-check', hint });
  wrap.prepend(input);
  return { wrap, input };
}

export function createSettingsView(root, { onChange, onTask, onDefaults, onCorpus, onCorpusFile }) {
  // ---- task picker
  const taskCard = el('section', 'card tr-task-card', { attrs: { 'aria-labelledby': 'tr-task-title' } });
  const taskTitleEl = el('h2', 'card-title', { id: 'tr-task-title', text: 'Task' });
  const picker = el('div', 'tr-tasks', { attrs: { role: 'radiogroup', 'aria-label': 'Task' }, testid: 'task-picker' });
  const description = el('p', 'tr-task-desc', { testid: 'task-description' });
  const pattern = el('p', 'tr-task-pattern', { testid: 'task-pattern' });
  const example = el('div', 'tr-example', { testid: 'task-example' });
  taskCard.append(taskTitleEl, picker, description, pattern, example);

  // ---- own text
  const textArea = el('textarea', 'control tr-corpus', { rows: 6, maxLength: MAX_CORPUS, spellcheck: false, testid: 'corpus' });
  const textApply = el('button', 'btn btn-primary', { type: 'button', text: 'Train on this text', testid: 'corpus-apply' });
  const textFile = el('input', 'sr-only', { type: 'file', accept: '.txt,text/plain', testid: 'corpus-file' });
  const textFileBtn = el('button', 'btn', { type: 'button', text: 'Open a text file\u2026' });
  const textCount = el('span', 'field-hint', { testid: 'corpus-count' });
  textApply.addEventListener('click', () => onCorpus(textArea.value));
  textFileBtn.addEventListener('click', () => textFile.click());
  textFile.addEventListener('change', () => {
    if (textFile.files?.[0]) onCorpusFile(textFile.files[0]);
    textFile.value = '';
  });
  textArea.addEventListener('input', () => {
    textCount.textContent = `${textArea.value.length.toLocaleString('en')} characters (up to ${MAX_CORPUS.toLocaleString('en')}); paste text, drop a .txt file here, or open one.`;
  });
  // why the link's text could not be used, beside the field it would have filled
  const textProblem = el('p', 'tr-corpus-problem', { testid: 'corpus-problem', hidden: true, attrs: { role: 'alert' } });
  // the text is too short for the task size: said here, in the form's words, with the fix
  const shortText = el('span', null, { testid: 'corpus-short-text' });
  const shortFix = el('button', 'btn', { type: 'button', testid: 'corpus-short-fix' });
  const shortBox = el('div', 'tr-corpus-problem tr-corpus-short', { testid: 'corpus-short', hidden: true, attrs: { role: 'alert' } }, shortText, ' ', shortFix);
  let fixSize = 0;
  shortFix.addEventListener('click', () => {
    if (fixSize > 0) onChange({ length: fixSize });
  });
  const textBox = el('div', 'tr-corpus-box', { testid: 'corpus-box' },
    textProblem,
    field('Your text (the model learns to predict its next word)', textArea),
    textCount,
    shortBox,
    el('div', 'tr-row', {}, textApply, textFileBtn, textFile));
  taskCard.append(textBox);

  // ---- model and training
  const modelCard = el('section', 'card tr-model-card', { attrs: { 'aria-labelledby': 'tr-model-title' } });
  const modelTitle = el('h2', 'card-title', { id: 'tr-model-title', text: 'Model and training' });
  const grid = el('div', 'controls-grid');
  const layers = select((v) => onChange({ layers: Number(v) }), 'layers');
  const heads = select((v) => onChange({ heads: Number(v) }), 'heads');
  const width = select((v) => onChange({ dModel: Number(v) }), 'dmodel');
  const positional = select((v) => onChange({ positional: v }), 'positional');
  const lr = select((v) => onChange({ lr: Number(v) }), 'lr');
  const batch = select((v) => onChange({ batch: Number(v) }), 'batch');
  const seed = el('input', 'control', { type: 'number', min: 0, max: 4294967295, step: 1, inputMode: 'numeric', testid: 'seed' });
  seed.addEventListener('change', () => {
    const n = Number(seed.value);
    if (Number.isInteger(n) && n >= 0 && n <= 4294967295) onChange({ seed: n });
    else seed.setAttribute('aria-invalid', 'true');
  });
  const length = el('input', 'control', { type: 'number', min: 0, max: 512, step: 1, inputMode: 'numeric', testid: 'length' });
  length.addEventListener('change', () => {
    const n = Number(length.value);
    if (Number.isInteger(n) && n >= 0 && n <= 512) onChange({ length: n });
    else length.setAttribute('aria-invalid', 'true');
  });
  const mlp = check('MLP after attention (4 \u00d7 C)', (on) => onChange({ mlp: on ? -1 : 0 }), 'mlp');
  const layernorm = check('Layernorm', (on) => onChange({ layernorm: on }), 'layernorm');
  const causal = check('Causal mask', (on) => onChange({ causal: on }), 'causal');
  const scale = check('Scale scores by 1/\u221ad_k', (on) => onChange({ scale: on }), 'scale');
  const widthField = field('Width C = d_model', width, { hint: ' ' });
  const widthHint = widthField.querySelector('.field-hint');
  const defaults = el('button', 'btn btn-quiet', { type: 'button', text: 'Task defaults', testid: 'defaults' });
  defaults.addEventListener('click', () => onDefaults());
  grid.append(
    field('Layers', layers), field('Heads', heads),
    widthField, field('Positions', positional),
    field('Learning rate', lr), field('Batch size', batch),
    field('Seed', seed), field('Task size', length, { hint: '0 = the task\u2019s default' }),
    mlp.wrap, layernorm.wrap, causal.wrap, scale.wrap,
  );
  const params = el('p', 'field-hint tr-params', { testid: 'param-count' });
  modelCard.append(modelTitle, grid, el('div', 'tr-row', {}, defaults, params));
  root.append(taskCard, modelCard);

  let taskKey = '';
  let exampleKey = '';
  let corpusShown = null;

  function buildPicker(tasks, current) {
    const key = tasks.map((t) => t.name).join(',');
    if (key === taskKey) return;
    taskKey = key;
    clear(picker);
    for (const t of tasks) {
      const input = el('input', 'sr-only', { type: 'radio', name: 'tr-task', value: t.name, id: `tr-task-${t.name}`, testid: `task-${t.name}` });
      input.addEventListener('change', () => { if (input.checked) onTask(t.name); });
      const label = el('label', 'tr-task-chip', { htmlFor: input.id, text: taskTitle(t.name) });
      picker.append(input, label);
    }
  }

  function showExample(info, probe) {
    const tokens = probe?.tokens ?? info?.example?.tokens ?? [];
    const targets = probe ? probe.targetTokens : info?.example?.targets ?? [];
    const key = JSON.stringify([tokens, targets]);
    if (key === exampleKey) return;
    exampleKey = key;
    clear(example);
    if (!tokens.length) {
      example.append(el('p', 'field-hint', { text: 'The example comes from your text once the model is built.' }));
      return;
    }
    const table = el('div', 'tr-example-grid', { attrs: { role: 'table', 'aria-label': 'Example sequence and its targets' } });
    const row = (name, items, cls) => {
      const r = el('div', `tr-example-row ${cls}`, { attrs: { role: 'row' } }, el('span', 'tr-example-head', { text: name, attrs: { role: 'rowheader' } }));
      items.forEach((t) => r.append(el('span', `tr-tok${t == null ? ' is-none' : ''}`, { text: t == null ? '\u00b7' : tokenText(t), attrs: { role: 'cell', title: t == null ? 'no target here' : t } })));
      return r;
    };
    table.append(row('input', tokens, 'is-input'), row('target', targets, 'is-target'));
    example.append(el('p', 'tr-example-title', { text: 'Example (the probe the grid shows)' }), table);
  }

  return {
    /** state: the lab state; tasks: engine.tasks(); model: {probe with targetTokens, parameterCount} or null;
     * corpusProblem: a sentence on why the link's text was not used, or null;
     * textShort: {text, fit} when the text is too short for the task size (fit: the largest size that fits, 0 = none) */
    update(state, tasks, { model = null, disabled = false, corpusProblem = null, textShort = null } = {}) {
      buildPicker(tasks, state.task);
      for (const input of picker.querySelectorAll('input')) input.checked = input.value === state.task;
      const info = tasks.find((t) => t.name === state.task);
      description.textContent = info?.description ?? '';
      pattern.textContent = info ? `A head that solves it: ${info.pattern}` : '';
      showExample(info, model?.probe && model.settings?.task === state.task ? model.probe : null);
      textBox.hidden = state.task !== 'text';
      textProblem.hidden = !corpusProblem;
      textProblem.textContent = corpusProblem ?? '';
      shortBox.hidden = !textShort;
      shortText.textContent = textShort?.text ?? '';
      fixSize = textShort?.fit ?? 0;
      shortFix.hidden = !(fixSize > 0);
      shortFix.textContent = `Use task size ${fixSize}`;
      if (corpusProblem || textShort) textArea.setAttribute('aria-invalid', 'true');
      else textArea.removeAttribute('aria-invalid');
      if (state.task === 'text' && corpusShown !== state.corpus) {
        corpusShown = state.corpus;
        textArea.value = state.corpus;
        textArea.dispatchEvent(new Event('input'));
      }
      setOptions(layers, withValue(LAYER_CHOICES, state.layers).map((v) => ({ value: v, text: String(v) })));
      setValue(layers, state.layers);
      const headChoices = withValue(HEAD_CHOICES, state.heads).filter((h) => state.dModel % h === 0);
      setOptions(heads, headChoices.map((v) => ({ value: v, text: String(v) })));
      setValue(heads, state.heads);
      setOptions(width, withValue(WIDTH_CHOICES, state.dModel).map((v) => ({ value: v, text: String(v) })));
      widthHint.textContent = `d_k = C/H = ${state.dModel / state.heads} per head`;
      setValue(width, state.dModel);
      setOptions(positional, POSITIONALS.map((v) => ({ value: v, text: POSITIONAL_TEXT[v] ?? v })));
      setValue(positional, state.positional);
      setOptions(lr, withValue(LR_CHOICES, state.lr).map((v) => ({ value: v, text: String(v) })));
      setValue(lr, state.lr);
      setOptions(batch, withValue(BATCH_CHOICES, state.batch).map((v) => ({ value: v, text: String(v) })));
      setValue(batch, state.batch);
      if (document.activeElement !== seed) setValue(seed, state.seed);
      seed.removeAttribute('aria-invalid');
      if (document.activeElement !== length) setValue(length, state.length);
      length.removeAttribute('aria-invalid');
      mlp.input.checked = state.mlp > 0;
      mlp.wrap.querySelector('label').textContent = state.mlp > 0 ? `MLP after attention (width ${state.mlp})` : 'MLP after attention (4 \u00d7 C)';
      layernorm.input.checked = state.layernorm;
      causal.input.checked = state.causal;
      scale.input.checked = state.scale;
      params.textContent = model ? `${model.parameterCount.toLocaleString('en')} parameters` : '';
      for (const c of root.querySelectorAll('select, input, textarea, button')) c.disabled = disabled;
    },
    /** The text area (a drop target for text files). */
    get corpusArea() {
      return textArea;
    },
  };
}
