// What the pages' URL states share (playground/state.js, concepts/state.js,
// train/state.js): the themes a link may name, reading a scalar field of a
// state's table from its URL text, and the head count that fits a width.

/** The themes a link may name ('system' follows the browser). */
export const THEMES = Object.freeze(['system', 'light', 'dark']);

/** Reads an int, choice or bool field from its URL text: {value} or {error}; null for other kinds. */
export function parseScalarField(f, raw) {
  switch (f.kind) {
    case 'int': {
      if (!/^\d{1,10}$/.test(raw)) return { error: `must be a whole number from ${f.min} to ${f.max}` };
      const n = Number(raw);
      if (n < f.min || n > f.max) return { error: `must be a whole number from ${f.min} to ${f.max}` };
      return { value: n };
    }
    case 'choice': {
      const found = f.choices.find((c) => String(c) === raw);
      if (found === undefined) return { error: `must be one of ${f.choices.join(', ')}` };
      return { value: found };
    }
    case 'bool':
      if (raw === '1' || raw === 'true') return { value: true };
      if (raw === '0' || raw === 'false') return { value: false };
      return { error: 'must be 0 or 1' };
    default:
      return null;
  }
}

/** Largest divisor of c that is at most h (so c % heads == 0 always holds). */
export function fitHeads(c, h) {
  for (let x = Math.min(h, c); x >= 1; x--) if (c % x === 0) return x;
  return 1;
}
