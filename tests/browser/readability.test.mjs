// Readability of the maps at any length (issue #16): the weight map's colour
// scale (auto / 0–1 / row max, named in the legend), masked cells unlike tiny
// weights, the panel's width used at T ≈ 44, thumbnails no taller than 2:1,
// the cut of a map that scrolls shown on a phone with the selected cell in
// view, the lines view's top-k above 64 tokens, and numbers that are never clipped.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, pageScrollWidth, readoutValues } from './harness.mjs';

const PHONE = { width: 390, height: 844 };
const WORDS = 'the quick brown fox jumps over a lazy dog while it rains on tired cats and'.split(' ');
/** A sentence of n word tokens (no punctuation), for the URL. */
const sentence = (n) => Array.from({ length: n }, (_, i) => WORDS[i % WORDS.length]).join('+');

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

/** RGB of the centre of cell (i, j) of heatmap `id`, read from its canvas. */
function cellRgb(page, id, i, j) {
  return page.evaluate(([x, a, b]) => {
    const c = document.querySelector(`[data-testid="hm-${x}"] canvas`);
    const d = c.dataset;
    const s = c.width / parseFloat(c.style.width);
    const px = Math.floor((Number(d.x0) + (b + 0.5) * Number(d.cw)) * s);
    const py = Math.floor((Number(d.y0) + (a + 0.5) * Number(d.ch)) * s);
    return [...c.getContext('2d').getImageData(px, py, 1, 1).data].slice(0, 3);
  }, [id, i, j]);
}

/** RGB of every cell of row i (columns from..to, step), flattened. */
async function rowRgb(page, id, i, cols) {
  const out = [];
  for (const j of cols) out.push(...await cellRgb(page, id, i, j));
  return out;
}

const distance = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

test('T = 300: the auto colour scale is relative to the row maximum, named in the legend, and draws other colours than 0–1', async () => {
  const { page, errors } = await h.open(`#step=softmax&s=${sentence(300)}&q=5&k=3`);
  const name = page.getByTestId('scale-softmax');
  assert.equal(await name.getAttribute('data-scale'), 'row');
  assert.equal(await name.getAttribute('data-choice'), 'auto');
  assert.match(await name.textContent(), /row max.*auto: rows nearly uniform/);
  const cols = Array.from({ length: 40 }, (_, n) => 10 + n * 7);
  const auto = await rowRgb(page, 'softmax', 40, cols);
  await page.locator('[data-testid="hm-softmax"] .hm-scale-btn[data-scale="fixed"]').click();
  assert.equal(await name.getAttribute('data-scale'), 'fixed');
  assert.match(await name.textContent(), /^scale: 0\u20131$/);
  assert.equal(await page.locator('[data-testid="hm-softmax"] .hm-scale-btn[data-scale="fixed"]').getAttribute('aria-pressed'), 'true');
  const fixed = await rowRgb(page, 'softmax', 40, cols);
  const d = cols.map((_, n) => distance(auto.slice(3 * n, 3 * n + 3), fixed.slice(3 * n, 3 * n + 3)));
  const changed = d.filter((x) => x > 20).length;
  assert.ok(changed >= cols.length / 4, `only ${changed} of ${cols.length} cells changed colour between auto and 0–1`);
  // on 0–1, weights ≈ 1/300 are all the palette's palest colour: nearly one colour for the whole row
  const spread = (rgb) => Math.max(...cols.map((_, n) => distance(rgb.slice(3 * n, 3 * n + 3), rgb.slice(0, 3))));
  assert.ok(spread(auto) > 3 * spread(fixed), `auto spreads the row over the ramp (${spread(auto).toFixed(0)} vs ${spread(fixed).toFixed(0)})`);
  await page.locator('[data-testid="hm-softmax"] .hm-scale-btn[data-scale="row"]').click();
  assert.equal(await name.getAttribute('data-scale'), 'row');
  assert.match(await name.textContent(), /^scale: row max/);
  assert.deepEqual(await rowRgb(page, 'softmax', 40, cols), auto, 'row max drawn by hand = what auto chose');
  assert.deepEqual(errors, []);
  await page.close();
});

test('T = 12 (the default sentence): auto keeps the 0–1 scale, and says so', async () => {
  const { page } = await h.open('#step=softmax');
  const name = page.getByTestId('scale-softmax');
  assert.equal(await name.getAttribute('data-scale'), 'fixed');
  assert.equal(await name.textContent(), 'scale: 0\u20131 (auto)');
  await page.close();
});

test('masked weights (exact zeros from the causal mask) are drawn grey, unlike tiny weights, and the legend names them', async () => {
  const T = 300;
  const q = 250;
  const { page, errors } = await h.open(`#step=softmax&s=${sentence(T)}&mask=causal&q=${q}&k=0`);
  await page.locator('[data-testid="hm-softmax"] .hm-scale-btn[data-scale="fixed"]').click();
  const legend = page.getByTestId('masked-legend-softmax');
  assert.equal(await legend.isVisible(), true);
  assert.match(await legend.textContent(), /masked \(exactly 0\)/);
  // the smallest allowed weight of row q, and a masked cell in the same row
  const row = (await readoutValues(page, 'softmax')).filter((c) => c.col <= q);
  const tiny = row.reduce((a, b) => (b.value < a.value ? b : a));
  assert.ok(tiny.value > 0 && tiny.value < 1e-3, `a tiny weight: ${tiny.value}`);
  const maskedValue = (await readoutValues(page, 'softmax')).find((c) => c.col === T - 1).value;
  assert.equal(maskedValue, 0, 'the masked weight is exactly 0 in the readout');
  const i = q + 10; // a row that is not selected (no outline)
  const tinyRgb = await cellRgb(page, 'softmax', i, tiny.col === q ? 1 : tiny.col);
  const maskedRgb = await cellRgb(page, 'softmax', i, T - 2);
  assert.ok(distance(tinyRgb, maskedRgb) > 40, `masked ${maskedRgb} vs tiny ${tinyRgb}`);
  // and the same on the auto scale
  await page.locator('[data-testid="hm-softmax"] .hm-scale-btn[data-scale="auto"]').click();
  assert.deepEqual(await cellRgb(page, 'softmax', i, T - 2), maskedRgb, 'masked cells keep their grey on every scale');
  assert.deepEqual(errors, []);
  await page.close();
});

test('T = 44 on a desktop: the weight map uses the panel\u2019s width, not half of it', async () => {
  const { page } = await h.open(`#step=softmax&s=${sentence(44)}&q=5&k=3`);
  const g = await page.evaluate(() => {
    const c = document.querySelector('[data-testid="hm-softmax"] canvas');
    const panel = document.querySelector('section[data-step="softmax"] .figures');
    return { w: c.getBoundingClientRect().width, panel: panel.getBoundingClientRect().width, cw: Number(c.dataset.cw), ch: Number(c.dataset.ch) };
  });
  assert.ok(g.w >= 0.85 * g.panel, `map ${g.w.toFixed(0)} px of a ${g.panel.toFixed(0)} px panel`);
  assert.ok(g.cw >= 14, `cells ${g.cw} px wide`);
  assert.ok(g.ch >= 11, `rows ${g.ch} px tall (every label drawn)`);
  assert.ok(g.w <= g.panel + 1, 'and no wider than the panel');
  await page.close();
});

test('T = 315: the Q and K thumbnails are at most twice as tall as wide, scroll with a cue, and keep the selected row in view', async () => {
  const { page, errors } = await h.open(`#step=scores&s=${sentence(315)}&q=300&k=2`);
  for (const id of ['scores-q', 'scores-k']) {
    const g = await page.evaluate((x) => {
      const box = document.querySelector(`[data-testid="hm-${x}"] .hm-scroll`);
      const c = box.querySelector('canvas');
      const r = box.getBoundingClientRect();
      return { w: r.width, h: r.height, scrollH: box.scrollHeight, rows: Number(c.dataset.rows), scrollTop: box.scrollTop, y0: Number(c.dataset.y0), ch: Number(c.dataset.ch) };
    }, id);
    assert.equal(g.rows, 315);
    assert.ok(g.h <= 2 * g.w + 1, `${id}: ${g.w.toFixed(0)} × ${g.h.toFixed(0)} px`);
    assert.ok(g.scrollH > g.h, `${id}: the rest scrolls`);
    assert.equal(await page.getByTestId(`cue-down-${id}`).isVisible(), true, `${id}: "scroll ↓" is shown`);
    if (id === 'scores-q') {
      const top = g.y0 + 300 * g.ch - g.scrollTop;
      assert.ok(top >= 0 && top + g.ch <= g.h, `the selected row 300 is in view (at ${top} of ${g.h})`);
    }
  }
  assert.deepEqual(errors, []);
  await page.close();
});

test('phone (390×844): a map that still does not fit after shrinking its cells shows the cut, keeps the selected cell in view, and numbers are never clipped', async () => {
  const { page, errors } = await h.open('#step=scores&q=5&k=11', { viewport: PHONE });
  assert.ok(await pageScrollWidth(page) <= 390);
  const g = await page.evaluate(() => {
    const box = document.querySelector('[data-testid="hm-scores"] .hm-scroll');
    const c = box.querySelector('canvas');
    return { box: box.clientWidth, scrollW: box.scrollWidth, scrollLeft: box.scrollLeft, x0: Number(c.dataset.x0), cw: Number(c.dataset.cw), cols: Number(c.dataset.cols), cut: box.dataset.cut };
  });
  assert.equal(g.cols, 12);
  assert.ok(g.cw >= 30 && g.cw < 38, `cells shrink to a readable ${g.cw} px (the desktop minimum was 38)`);
  assert.ok(g.scrollW > g.box, 'it still does not fit');
  // the selected key (the last column) was scrolled into view
  const left = g.x0 + 11 * g.cw - g.scrollLeft;
  assert.ok(left >= 0 && left + g.cw <= g.box + 1, `column 11 at ${left}..${left + g.cw} of ${g.box}`);
  // scrolled to the end, there is nothing more to the right: no cue
  assert.equal(await page.getByTestId('cue-right-scores').isVisible(), false);
  await page.locator('[data-testid="hm-scores"] .hm-scroll').evaluate((b) => { b.scrollLeft = 0; b.dispatchEvent(new Event('scroll')); });
  assert.equal(await page.getByTestId('cue-right-scores').isVisible(), true, 'at the start, "scroll →" is shown');
  assert.equal(await page.getByTestId('cue-right-scores').textContent(), 'scroll \u2192');
  assert.equal(await page.locator('[data-testid="hm-scores"] .hm-scroll').getAttribute('data-cut'), 'right');
  // the cells are as wide as their widest number: measure every printed number in the cells' font
  const widest = await page.evaluate(async () => {
    const c = document.querySelector('[data-testid="hm-scores"] canvas');
    const { formatValue } = await import('/app/kit/format.js');
    const values = [...document.querySelectorAll('[data-testid="row-scores"] li')].map((li) => Number(li.dataset.value));
    const ctx = document.createElement('canvas').getContext('2d');
    ctx.font = `500 10.5px ${getComputedStyle(document.querySelector('.ap')).getPropertyValue('--font-sans') || 'sans-serif'}`;
    return { w: Math.max(...values.map((v) => ctx.measureText(formatValue(v, 2)).width)), cw: Number(c.dataset.cw) };
  });
  assert.ok(widest.w + 2 <= widest.cw, `the widest number of the selected row (${widest.w.toFixed(1)} px) fits its ${widest.cw} px cell`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('T = 300: the lines view shows the query\u2019s 12 heaviest keys, says so, and their weights are the engine\u2019s', async () => {
  const { page, errors } = await h.open(`#step=softmax&s=${sentence(300)}&q=5&k=3`);
  const note = page.getByTestId('lines-note');
  assert.match(await note.textContent(), /^300 tokens: the 12 keys with the largest weights for query 5 \(\d+% of its weight\)\. The heatmap shows all 300\.$/);
  const shown = await page.locator('[data-testid^="cell-lines-5-"]').evaluateAll((els) => els.map((e) => ({ col: Number(/-(\d+)$/.exec(e.dataset.testid)[1]), value: Number(e.dataset.value) })));
  assert.equal(shown.length, 12);
  const row = await readoutValues(page, 'softmax');
  const top = [...row].sort((a, b) => b.value - a.value || a.col - b.col).slice(0, 12).map((c) => c.col).sort((a, b) => a - b);
  assert.deepEqual(shown.map((s) => s.col), top, 'the 12 largest weights of row 5, in sentence order');
  for (const s of shown) assert.equal(s.value, row.find((c) => c.col === s.col).value);
  // at 64 tokens or fewer, every key has its line again
  const { page: short } = await h.open(`#step=softmax&s=${sentence(40)}&q=5`);
  assert.equal(await short.getByTestId('lines-note').isVisible(), false);
  assert.equal(await short.locator('[data-testid^="cell-lines-5-"]').count(), 40);
  assert.deepEqual(errors, []);
  await page.close();
  await short.close();
});

for (const [name, viewport] of [['desktop', undefined], ['phone', PHONE]]) {
  test(`T = 315 (${name}): the numbers of the bar list are never clipped and follow the one rule`, async () => {
    const { page, errors } = await h.open(`#step=softmax&s=${sentence(315)}&q=5&k=3`, viewport ? { viewport } : {});
    const cells = await page.locator('[data-testid="softmax-bars"] .bars-row:not(.bars-header) .num').evaluateAll((els) => els.slice(0, 120).map((e) => ({ text: e.textContent, clipped: e.scrollWidth > e.clientWidth + 0.5, w: e.clientWidth })));
    assert.ok(cells.length >= 100);
    const clipped = cells.filter((c) => c.clipped);
    assert.deepEqual(clipped, [], 'no clipped number');
    for (const c of cells) {
      assert.ok(!c.text.includes('-'), `"${c.text}" uses the minus sign U+2212`);
      assert.match(c.text, /^(\u2212?\d(\.\d+)?e\u2212?\d+|\u2212?\d+(\.\d+)?|\u2212\u221e|0)$/, `"${c.text}"`);
    }
    assert.ok(cells.some((c) => c.text.includes('e\u2212')), 'some weights are in scientific notation at T = 315');
    assert.ok(await pageScrollWidth(page) <= (viewport?.width ?? 1280));
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('the heads grid names its colour scale: row max for a long sentence, 0–1 for the default one', async () => {
  const { page } = await h.open(`#step=heads&s=${sentence(300)}`);
  assert.equal(await page.getByTestId('heads-scale').getAttribute('data-scale'), 'row');
  assert.match(await page.getByTestId('heads-scale').textContent(), /row max \(auto/);
  const { page: short } = await h.open('#step=heads');
  assert.equal(await short.getByTestId('heads-scale').getAttribute('data-scale'), 'fixed');
  await page.close();
  await short.close();
});
