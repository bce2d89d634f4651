// The model's settings: width, heads, seed, positional encoding, mask, scale.
// Each control has a visible label; changes go out through onChange(patch).

import { el, field, setOptions, setValue, uniqueId } from './dom.js';
import { WIDTHS, HEAD_CHOICES, POSITIONALS, MASKS } from '../state.js';

const POSITIONAL_TEXT = { none: 'none', sinusoidal: 'sinusoidal', learned: 'learned' };
const MASK_TEXT = { none: 'none', causal: 'causal', padding: 'padding', 'causal+padding': 'causal + padding', custom: 'custom (click cells)' };

export function createControls(root, { onChange, visible = null }) {
  const width = el('select', 'control');
  const heads = el('select', 'control');
  const seed = el('input', 'control', { type: 'number', min: '0', max: '4294967295', step: '1', inputMode: 'numeric' });
  const positional = el('select', 'control');
  const mask = el('select', 'control');
  const scale = el('input', null, { type: 'checkbox' });
  setOptions(positional, POSITIONALS.map((p) => ({ value: p, text: POSITIONAL_TEXT[p] })));
  setOptions(mask, MASKS.map((m) => ({ value: m, text: MASK_TEXT[m] })));

  width.addEventListener('change', () => onChange({ dModel: Number(width.value) }));
  heads.addEventListener('change', () => onChange({ heads: Number(heads.value) }));
  positional.addEventListener('change', () => onChange({ positional: positional.value }));
  mask.addEventListener('change', () => onChange({ mask: mask.value }));
  scale.addEventListener('change', () => onChange({ scale: scale.checked }));
  let seedTimer = 0;
  const commitSeed = () => {
    clearTimeout(seedTimer);
    const n = Number(seed.value);
    if (seed.value !== '' && Number.isInteger(n) && n >= 0 && n <= 4294967295) {
      seed.removeAttribute('aria-invalid');
      onChange({ seed: n });
    } else {
      seed.setAttribute('aria-invalid', 'true');
    }
  };
  seed.addEventListener('input', () => {
    clearTimeout(seedTimer);
    seedTimer = setTimeout(commitSeed, 300);
  });
  seed.addEventListener('change', commitSeed);

  scale.id = uniqueId('scale');
  const scaleField = el('div', 'field field-check', {},
    scale, el('label', 'field-label', { htmlFor: scale.id, text: 'Scale by 1/\u221ad_k' }));
  const fields = {
    dModel: field('Model width', width),
    heads: field('Heads', heads),
    seed: field('Seed', seed),
    positional: field('Positional encoding', positional),
    mask: field('Mask', mask),
    scale: scaleField,
  };
  const grid = el('div', 'controls-grid', {}, ...Object.values(fields));
  root.append(grid);
  if (visible) for (const [name, f] of Object.entries(fields)) f.hidden = !visible.includes(name);

  return {
    update(trace, state) {
      const widths = WIDTHS.includes(state.dModel) ? WIDTHS : [...WIDTHS, state.dModel].sort((a, b) => a - b);
      setOptions(width, widths.map((c) => ({ value: c, text: String(c) })));
      const hs = HEAD_CHOICES.filter((h) => h <= state.dModel && state.dModel % h === 0);
      if (!hs.includes(state.heads)) hs.push(state.heads);
      hs.sort((a, b) => a - b);
      setOptions(heads, hs.map((h) => ({ value: h, text: `${h}  (d_k = ${state.dModel / h})` })));
      setValue(width, state.dModel);
      setValue(heads, state.heads);
      if (seed.getRootNode().activeElement !== seed) setValue(seed, state.seed);
      setValue(positional, state.positional);
      setValue(mask, state.mask);
      scale.checked = state.scale;
    },
  };
}
