// format.js: the one number rule (formatValue) over many random values —
// it round-trips within half a unit of its last digit, is never longer than
// valueWidth(digits), and writes the minus sign as U+2212 (never '-').

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatValue, valueWidth, parseValue, MINUS, formatPercent, formatTick, formatBytes, headMark, superscript, tokenText, tokenLabel, quoted, excerpt, DIGITS } from '../../web/app/kit/format.js';
import { prng as rng } from './helpers.mjs'; // seeded, so a failure names a reproducible value


/** Values spread over every magnitude a float32 or a double can hold, both signs, float32-rounded half the time. */
function randomValues(n, seed) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < n; i++) {
    const mag = 10 ** (r() * 90 - 45); // 1e−45 … 1e45
    let x = (r() < 0.5 ? -1 : 1) * mag * (1 + r() * 9);
    if (r() < 0.5) x = Math.fround(x);
    if (r() < 0.05) x = 10 ** Math.round(r() * 12 - 6) * (r() < 0.5 ? -1 : 1) * (1 - 5e-4 * r()); // near a rounding boundary
    if (Number.isFinite(x) && x !== 0) out.push(x);
  }
  // typical attention numbers: weights near 1/T, scores, and the boundaries of the fixed range
  out.push(1 / 315, 1 / 44, 4.2e-5, 0.000494, 0.0009995, 0.001, 999.4999, 999.5, -999.5, 1, -1, 0.5, 2 ** -149, 3.4028234663852886e38, 1e-300, -1.7976931348623157e308);
  return out;
}

for (const digits of [1, 2, 3, 4, 6]) {
  test(`formatValue(x, ${digits}) round-trips within half a unit of its last digit, fits valueWidth, uses U+2212`, () => {
    const width = valueWidth(digits);
    for (const x of randomValues(4000, 1000 + digits)) {
      const s = formatValue(x, digits);
      assert.ok(s.length <= width, `${x} → "${s}" is ${s.length} > ${width} characters`);
      assert.ok(!s.includes('-'), `${x} → "${s}" uses a hyphen-minus`);
      assert.equal(s.startsWith(MINUS), x < 0, `${x} → "${s}": the sign`);
      assert.equal((s.match(/\u2212/g) ?? []).length, (x < 0 ? 1 : 0) + (/e\u2212/.test(s) ? 1 : 0), `${x} → "${s}": minus signs`);
      const back = parseValue(s);
      const unit = 10 ** (Math.floor(Math.log10(Math.abs(back))) - digits + 1); // the last digit's place
      assert.ok(Math.abs(back - x) <= 0.5 * unit * (1 + 1e-9) + Number.EPSILON * Math.abs(x), `${x} → "${s}" → ${back}: off by ${Math.abs(back - x)} > half of ${unit}`);
      // the number of significant digits shown is exactly `digits`
      const mantissa = s.replace(MINUS, '').split('e')[0].replace('.', '').replace(/^0+/, '');
      assert.equal(mantissa.length, digits, `${x} → "${s}" shows ${mantissa.length} significant digits`);
      // fixed notation exactly on 0.001 ≤ |x| < 10^digits (after rounding), scientific elsewhere
      const fixed = !s.includes('e');
      assert.equal(fixed, Math.abs(back) >= 0.001 && Math.abs(back) < 10 ** digits, `${x} → "${s}": notation`);
    }
  });
}

test('formatValue: zero, negative zero, infinities and NaN', () => {
  assert.equal(formatValue(0), '0');
  assert.equal(formatValue(-0), '0');
  assert.equal(formatValue(Infinity), '\u221e');
  assert.equal(formatValue(-Infinity), `${MINUS}\u221e`);
  assert.equal(formatValue(NaN), 'NaN');
});

test('formatValue: the examples its comment gives', () => {
  assert.equal(formatValue(0.213), '0.213');
  assert.equal(formatValue(-0.00494), `${MINUS}0.00494`);
  assert.equal(formatValue(12.34), '12.3');
  assert.equal(formatValue(-412.3), `${MINUS}412`);
  assert.equal(formatValue(0.000494), `4.94e${MINUS}4`);
  assert.equal(formatValue(12345), '1.23e4');
  assert.equal(formatValue(1 / 315, 3), '0.00317');
});

test('formatPercent: formatValue of 100·x with a "%", and a dash when not finite', () => {
  assert.equal(formatPercent(0.973), '97.3%');
  assert.equal(formatPercent(1), '100%');
  assert.equal(formatPercent(1 / 26), '3.85%');
  assert.equal(formatPercent(0), '0%');
  assert.equal(formatPercent(-0.5), `${MINUS}50.0%`);
  assert.equal(formatPercent(NaN), '\u2014');
  assert.equal(formatPercent(0.5, 2), '50%');
});

test('formatTick: the shortest exact formatValue text, fixed when up to 6 digits are exact', () => {
  const cases = [[0, '0'], [0.5, '0.5'], [1, '1'], [-1.5, `${MINUS}1.5`], [128, '128'], [2000, '2000'], [10000, '10000'], [0.0001, `1e${MINUS}4`], [2.5e7, '2.5e7'], [0.125, '0.125']];
  for (const [v, text] of cases) {
    assert.equal(formatTick(v), text, String(v));
    assert.equal(parseValue(formatTick(v)), v);
  }
  assert.ok(!formatTick(-0.0002).includes('-'));
});

test('headMark and superscript: heads counted from 1 in a parenthesised superscript', () => {
  assert.equal(headMark(0), '\u207d\u00b9\u207e');
  assert.equal(headMark(11), '\u207d\u00b9\u00b2\u207e');
  assert.equal(superscript(4567890), '\u2074\u2075\u2076\u2077\u2078\u2079\u2070');
});

test('tokenText: the whole token, control characters made visible', () => {
  const long = 'antidisestablishmentarianism';
  assert.equal(tokenText(long), long);
  assert.equal(tokenText('a\nb\u0000'), 'a\ufffdb\ufffd');
  assert.equal(tokenText(12), '12');
});

test('DIGITS: one documented choice per place, every one a formatValue precision', () => {
  assert.deepEqual({ ...DIGITS }, { cell: 3, cellNarrow: 2, legend: 3, formula: 4, exact: 7 });
  assert.equal(formatValue(-0.000494123, DIGITS.formula), '\u22124.941e\u22124');
  assert.equal(formatValue(0.21300001, DIGITS.exact), '0.2130000');
  assert.equal(formatValue(-12.3456, DIGITS.exact), '\u221212.34560');
});

test('token labels are never cut: tokenLabel and quoted keep the whole token; excerpt cuts only a running sentence', () => {
  const word = 'Pneumonoultramicroscopicsili';
  assert.equal(tokenLabel(word, 12), word);
  assert.equal(tokenLabel('a\u0000b'), 'a\ufffdb');
  assert.equal(quoted(word, 10), `\u201c${word}\u201d`);
  assert.equal(excerpt('short sentence', 60), 'short sentence');
  const long = 'the cat sat on the mat and then it sat on the other mat again';
  const cut = excerpt(long, 24);
  assert.ok(cut.endsWith('\u2026') && Array.from(cut).length <= 24, cut);
  assert.ok(long.startsWith(cut.slice(0, -1)), 'a prefix of the sentence');
  assert.ok(!/\s\u2026$/.test(cut) && long[cut.length - 1] === ' ', `cut at a word boundary: "${cut}"`);
});

test('formatBytes: bytes, kB, MB and GB in decimal units by formatValue, never scientific', () => {
  assert.equal(formatBytes(0), '0 B');
  assert.equal(formatBytes(285), '285 B');
  assert.equal(formatBytes(999.4), '999 B');
  assert.equal(formatBytes(999.6), '1.00 kB');
  assert.equal(formatBytes(1.5e5), '150 kB');
  assert.equal(formatBytes(42e6), '42.0 MB');
  assert.equal(formatBytes(768 * 2 ** 20), '805 MB');
  assert.equal(formatBytes(2 ** 34), '17.2 GB');
  assert.equal(formatBytes(999.4e6), '999 MB');
  assert.equal(formatBytes(999.6e6), '1.00 GB'); // rounds to 1000 MB: said in GB, never "1.00e3 MB"
  assert.equal(formatBytes(2.5e15), '2,500,000 GB');
  assert.equal(formatBytes(-1), '\u2014');
  for (let b = 1; b < 1e16; b *= 3.7) assert.doesNotMatch(formatBytes(b), /e/, `${b} bytes`);
});
