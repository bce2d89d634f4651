// Colours for canvas drawing, read from the CSS custom properties of the
// playground's root, so light/dark themes and the palettes live in style.css.
//   diverging: blue (negative) – neutral – orange (positive), for signed values
//   sequential: light → dark (light theme) / dark → bright (dark theme), for weights in [0, 1]
// Both are colour-blind safe (no red/green pair).

const LUT_SIZE = 256;

function parseColor(text) {
  const t = text.trim();
  let m = /^#([0-9a-f]{6})$/i.exec(t);
  if (m) {
    const n = parseInt(m[1], 16);
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  }
  m = /^#([0-9a-f]{3})$/i.exec(t);
  if (m) return m[1].split('').map((c) => parseInt(c + c, 16));
  m = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)/i.exec(t);
  if (m) return [Number(m[1]), Number(m[2]), Number(m[3])];
  return null;
}

function toLinear(c) {
  const x = c / 255;
  return x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
}

function luminance([r, g, b]) {
  return 0.2126 * toLinear(r) + 0.7152 * toLinear(g) + 0.0722 * toLinear(b);
}

/** Interpolates between colour stops (evenly spaced) into a LUT_SIZE×3 table. */
function buildLut(stops) {
  const lut = new Uint8ClampedArray(LUT_SIZE * 3);
  const dark = new Uint8Array(LUT_SIZE); // 1 where white text reads better
  for (let i = 0; i < LUT_SIZE; i++) {
    const t = (i / (LUT_SIZE - 1)) * (stops.length - 1);
    const k = Math.min(stops.length - 2, Math.floor(t));
    const f = t - k;
    const a = stops[k];
    const b = stops[k + 1];
    const rgb = [0, 1, 2].map((c) => Math.round(a[c] + (b[c] - a[c]) * f));
    lut.set(rgb, i * 3);
    dark[i] = luminance(rgb) < 0.2 ? 1 : 0;
  }
  return { lut, dark };
}

/** Reads the palette from an element's computed style. */
export function readPalette(element) {
  const cs = getComputedStyle(element);
  const v = (name, fallback) => {
    const c = parseColor(cs.getPropertyValue(name));
    return c ?? parseColor(fallback);
  };
  const css = (name, fallback) => (cs.getPropertyValue(name).trim() || fallback);
  const seqStops = [];
  for (let i = 0; i < 9; i++) {
    const c = parseColor(cs.getPropertyValue(`--seq-${i}`));
    if (c) seqStops.push(c);
  }
  if (seqStops.length < 2) seqStops.push([255, 255, 217], [8, 29, 88]);
  const diverging = buildLut([v('--div-neg', '#2166ac'), v('--div-mid', '#f7f7f7'), v('--div-pos', '#d96a05')]);
  const sequential = buildLut(seqStops);
  return {
    diverging,
    sequential,
    masked: css('--masked', '#9aa0a6'),
    maskedRgb: v('--masked', '#9aa0a6'),
    maskedText: css('--masked-text', '#1b1f24'),
    allowRgb: v('--mask-allow', '#eef0f3'),
    bandText: css('--band-text', '#111111'),
    empty: css('--cell-empty', '#eeeeee'),
    surface: css('--surface', '#ffffff'),
    text: css('--text', '#1b1f24'),
    muted: css('--muted', '#5b6470'),
    select: css('--select', '#111111'),
    selectHalo: css('--select-halo', '#ffffff'),
    accent: css('--accent', '#3557d8'),
    darkText: '#111111',
    lightText: '#ffffff',
    font: css('--font-sans', 'system-ui, sans-serif'),
    mono: css('--font-mono', 'ui-monospace, monospace'),
    headColors: [0, 1, 2, 3, 4, 5, 6, 7].map((i) => css(`--head-${i}`, '#888888')),
  };
}

/**
 * Colour of a value: index into a LUT. kind 'diverging' maps [-range, range],
 * 'sequential' maps [0, range].
 */
export function lutIndex(x, kind, range) {
  let t;
  if (kind === 'sequential') t = range > 0 ? x / range : 0;
  else t = range > 0 ? 0.5 + x / (2 * range) : 0.5;
  if (!(t >= 0)) t = 0;
  if (t > 1) t = 1;
  return Math.round(t * (LUT_SIZE - 1));
}

export function lutCss(lut, index) {
  const o = index * 3;
  return `rgb(${lut.lut[o]}, ${lut.lut[o + 1]}, ${lut.lut[o + 2]})`;
}
