// The theme toggle: system → light → dark → system.

import { el } from './dom.js';

const NEXT = { system: 'light', light: 'dark', dark: 'system' };
const TEXT = { system: 'System', light: 'Light', dark: 'Dark' };
const ICON = { system: '\u25d0', light: '\u2600', dark: '\u263e' };

export function createThemeToggle(root, { onChange }) {
  const icon = el('span', 'icon', { attrs: { 'aria-hidden': 'true' } });
  const text = el('span');
  const button = el('button', 'btn btn-quiet theme-toggle', { type: 'button', testid: 'theme-toggle' }, icon, text);
  let current = 'system';
  button.addEventListener('click', () => onChange(NEXT[current]));
  root.append(button);
  return {
    update(trace, state) {
      current = state.theme;
      icon.textContent = ICON[current];
      text.textContent = `Theme: ${TEXT[current]}`;
      button.title = `Switch to ${TEXT[NEXT[current]].toLowerCase()} theme`;
    },
  };
}
