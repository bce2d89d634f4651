// Option lists the demo views share.

export const PE_OPTIONS = Object.freeze([
  { value: 'none', text: 'none' },
  { value: 'sinusoidal', text: 'sinusoidal' },
  { value: 'learned', text: 'learned' },
]);
