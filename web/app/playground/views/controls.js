// The model picker (two trained models, a lab model, random weights, the
// pretrained models loaded) and the settings of random weights: width, heads,
// seed, positional encoding, mask, scale. A model with learned weights fixes
// them all: they show its values, disabled, with the reason its description
// gives. Each control has a visible label; changes go out through onChange(patch).
// What the pickers offer comes in as `choices` (from the state's tables, through the
// controller): {widths, heads, positionals, masks, models, modelLabel}; what the model
// on screen is, as its source's description ({line, fixed}, sources/registry.js).

import { el, field, setOptions, setValue, uniqueId } from '../../kit/dom.js';

const POSITIONAL_TEXT = { none: 'none', sinusoidal: 'sinusoidal', learned: 'learned', rope: 'rotary (RoPE)', alibi: 'ALiBi' };
const MASK_TEXT = { none: 'none', causal: 'causal', padding: 'padding', 'causal+padding': 'causal + padding', custom: 'custom (click cells)' };

/** The seed box: a whole number from 0 to 2³²−1 goes out (after a pause in typing, or on change); anything else is marked invalid. */
function createSeedInput(onSeed) {
  const seed = el('input', 'control', { type: 'number', min: '0', max: '4294967295', step: '1', inputMode: 'numeric' });
  let seedTimer = 0;
  const commitSeed = () => {
    clearTimeout(seedTimer);
    const n = Number(seed.value);
    if (seed.value !== '' && Number.isInteger(n) && n >= 0 && n <= 4294967295) {
      seed.removeAttribute('aria-invalid');
      onSeed(n);
    } else {
      seed.setAttribute('aria-invalid', 'true');
    }
  };
  seed.addEventListener('input', () => {
    clearTimeout(seedTimer);
    seedTimer = setTimeout(commitSeed, 300);
  });
  seed.addEventListener('change', commitSeed);
  return seed;
}

/** The head choices for a width: divisors of it from the offered head counts, plus the current count. */
function headOptions(state, headChoices) {
  const hs = headChoices.filter((h) => h <= state.dModel && state.dModel % h === 0);
  if (!hs.includes(state.heads)) hs.push(state.heads);
  hs.sort((a, b) => a - b);
  return hs.map((h) => ({ value: h, text: `${h}  (d_k = ${state.dModel / h})` }));
}

/**
 * Under the mask: why a padding mask changes nothing on a single sentence, and
 * a button to batch mode (where sentences of different lengths get [PAD]).
 */
function createMaskNote(toBatchMode, { canBatch }) {
  const why = el('span', null);
  const toBatch = el('button', 'btn btn-small', { type: 'button', text: 'Switch to batch mode', testid: 'mask-to-batch', hidden: !canBatch });
  toBatch.addEventListener('click', toBatchMode);
  const element = el('p', 'field-hint mask-note', { testid: 'mask-note', hidden: true, attrs: { role: 'note' } }, why, ' ', toBatch);
  return {
    element,
    update(state, hidden = false) {
      element.hidden = hidden || state.batch || (state.mask !== 'padding' && state.mask !== 'causal+padding');
      if (element.hidden) return;
      why.textContent = state.mask === 'padding'
        ? 'One sentence has no [PAD] tokens, so the padding mask hides nothing: every weight is as with no mask. Padding appears when sentences of different lengths are batched.'
        : 'One sentence has no [PAD] tokens, so causal + padding is just causal here. Padding appears when sentences of different lengths are batched.';
    },
  };
}

/** The picker's last entry: opens the pretrained-model loader (views/hub-loader.js); never a model. */
export const LOAD_MODEL_VALUE = 'load:';

export function createControls(root, { onChange, choices, visible = null, labModel = () => null, onLoadModel = null }) {
  const { widths: WIDTHS, heads: HEAD_CHOICES, positionals: POSITIONALS, masks: MASKS, models: MODELS, modelLabel } = choices;
  const model = el('select', 'control', { testid: 'model-picker' });
  const modelAbout = el('p', 'model-about', { testid: 'model-about' });
  const fixedNote = el('p', 'field-hint model-fixed', { testid: 'model-fixed', hidden: true });
  let shownModel = null;
  model.addEventListener('change', () => {
    if (model.value !== LOAD_MODEL_VALUE) {
      onChange({ model: model.value });
      return;
    }
    // the picker stays on the model on screen while the loader is open
    if (shownModel !== null) setValue(model, shownModel);
    onLoadModel?.();
  });
  const width = el('select', 'control');
  const heads = el('select', 'control');
  const seed = createSeedInput((n) => onChange({ seed: n }));
  const positional = el('select', 'control');
  const mask = el('select', 'control');
  const scale = el('input', null, { type: 'checkbox' });
  // the kinds this page's steps explain (rotary has step 4b; ALiBi's bias in the score steps is not yet drawn)
  setOptions(positional, POSITIONALS.filter((p) => p in POSITIONAL_TEXT).map((p) => ({ value: p, text: POSITIONAL_TEXT[p] })));
  setOptions(mask, MASKS.map((m) => ({ value: m, text: MASK_TEXT[m] })));

  width.addEventListener('change', () => onChange({ dModel: Number(width.value) }));
  heads.addEventListener('change', () => onChange({ heads: Number(heads.value) }));
  positional.addEventListener('change', () => onChange({ positional: positional.value }));
  mask.addEventListener('change', () => onChange({ mask: mask.value }));
  scale.addEventListener('change', () => onChange({ scale: scale.checked }));
  scale.id = uniqueId('scale');
  const scaleField = el('div', 'field field-check', {},
    scale, el('label', 'field-label', { htmlFor: scale.id, text: 'Scale by 1/\u221ad_k' }));
  const modelField = field('Model', model, { className: 'field field-wide' });
  modelField.append(modelAbout);
  const fields = {
    dModel: field('Model width', width),
    heads: field('Heads', heads),
    seed: field('Seed', seed),
    positional: field('Positional encoding', positional),
    mask: field('Mask', mask),
    scale: scaleField,
  };
  const maskNote = createMaskNote(() => onChange({ batch: true }), { canBatch: !visible || visible.includes('batch') });
  const grid = el('div', 'controls-grid', {}, fields.dModel, fields.heads, fields.seed, fields.positional, fields.mask, maskNote.element, fields.scale);
  // where "Load a model…" opens its panel: right under the picker
  const loaderSlot = el('div', 'model-loader-slot');
  root.append(modelField, loaderSlot, grid, fixedNote);
  if (visible) for (const [name, f] of Object.entries(fields)) f.hidden = !visible.includes(name);
  if (visible && !visible.includes('model')) modelField.hidden = true;
  const settingControls = [width, heads, seed, positional, mask, scale];

  /** The fixed values of a model with learned weights in the disabled controls, and why (fixed: {config, seed, note}; config null while it loads). */
  function showFixed({ config: c, seed: fixedSeed, note }) {
    for (const x of settingControls) {
      x.disabled = true;
      x.title = 'Fixed by training: this control acts on random weights';
    }
    if (!c) {
      fixedNote.hidden = true;
      return;
    }
    setOptions(width, [{ value: c.dModel, text: String(c.dModel) }]);
    setOptions(heads, [{ value: c.heads, text: `${c.heads}  (d_k = ${c.dModel / c.heads})` }]);
    setValue(width, c.dModel);
    setValue(heads, c.heads);
    if (seed.getRootNode().activeElement !== seed) setValue(seed, fixedSeed);
    setValue(positional, c.positional);
    setValue(mask, c.causal ? 'causal' : 'none');
    scale.checked = c.scale;
    fixedNote.hidden = false;
    fixedNote.textContent = note;
  }

  return {
    loaderSlot,
    /** model: the description of the model on screen ({line, fixed}); listed: the loaded models the picker adds. */
    update(trace, state, { model: described, listed = [] }) {
      const lab = labModel();
      const options = MODELS.map((m) => ({ value: m, text: modelLabel(m) }));
      if (lab) options.unshift({ value: lab, text: `${modelLabel(lab)} (${lab.slice(4, 12)}\u2026)` });
      for (const name of listed) options.push({ value: name, text: modelLabel(name) });
      if (onLoadModel) options.push({ value: LOAD_MODEL_VALUE, text: 'Load a model\u2026' });
      setOptions(model, options);
      setValue(model, state.model);
      shownModel = state.model;
      modelAbout.textContent = described.line;
      if (described.fixed) {
        maskNote.update(null, true);
        showFixed(described.fixed);
        return;
      }
      for (const x of settingControls) {
        x.disabled = false;
        x.removeAttribute('title');
      }
      fixedNote.hidden = true;
      maskNote.update(state, fields.mask.hidden);
      const widths = WIDTHS.includes(state.dModel) ? WIDTHS : [...WIDTHS, state.dModel].sort((a, b) => a - b);
      setOptions(width, widths.map((c) => ({ value: c, text: String(c) })));
      setOptions(heads, headOptions(state, HEAD_CHOICES));
      setValue(width, state.dModel);
      setValue(heads, state.heads);
      if (seed.getRootNode().activeElement !== seed) setValue(seed, state.seed);
      setValue(positional, state.positional);
      setValue(mask, state.mask);
      scale.checked = state.scale;
    },
  };
}
