// The exported figure (Save SVG) draws what the page shows: each cell's fill is
// the colour of that cell on the page's canvas, on the colour scale the reader
// picked (auto / 0–1 / row max), masked cells grey and hatched, a legend line
// naming the scale, and numbers by formatValue (U+2212 minus, never "-").

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startHarness, waitStep, settled } from './harness.mjs';

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

/** Clicks "Save SVG" and returns the parsed file: cell fills, texts, hatch path. */
async function saveSvg(page) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Save SVG' }).click()]);
  const text = readFileSync(await download.path(), 'utf8');
  return page.evaluate((svgText) => {
    const doc = new DOMParser().parseFromString(svgText, 'image/svg+xml');
    const rects = [...doc.querySelectorAll('rect')].slice(1); // the first is the background
    return {
      parses: !doc.querySelector('parsererror'),
      fills: rects.map((r) => r.getAttribute('fill')),
      texts: [...doc.querySelectorAll('text')].map((t) => t.textContent),
      legend: [...doc.querySelectorAll('text.legend')].map((t) => t.textContent).join(' '),
      hatch: doc.querySelector('path.masked-hatch')?.getAttribute('d') ?? '',
    };
  }, text);
}

/**
 * The page's colour of every cell of a heatmap, read from its canvas near the
 * top middle of the cell (clear of the printed number and the gaps), "r,g,b";
 * null for the selected row and column (outlined).
 */
function pageColours(page, id) {
  return page.evaluate((hid) => {
    const canvas = document.querySelector(`[data-testid="hm-${hid}"] canvas.hm-canvas`);
    const d = canvas.dataset;
    const [x0, y0, cw, ch, rows, cols] = [d.x0, d.y0, d.cw, d.ch, d.rows, d.cols].map(Number);
    const scale = canvas.width / parseFloat(canvas.style.width);
    const ctx = canvas.getContext('2d');
    const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    const out = [];
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) {
        const x = Math.round((x0 + j * cw + cw / 2) * scale);
        const y = Math.round((y0 + i * ch + 3) * scale);
        const o = (y * canvas.width + x) * 4;
        out.push(`${px[o]},${px[o + 1]},${px[o + 2]}`);
      }
    }
    return out;
  }, id);
}

/** "rgb(1, 2, 3)" or "#010203" → "1,2,3" */
const rgb = (css) => (css.startsWith('#')
  ? [1, 3, 5].map((o) => parseInt(css.slice(o, o + 2), 16)).join(',')
  : css.replace(/^rgb\(|\)$/g, '').split(',').map((s) => s.trim()).join(','));
const HYPHEN_NUMBER = /(^|[\s(=:,[/])-\d|\de-\d/;

/**
 * Every cell's SVG fill equals the page's canvas colour, except the selected row
 * and column (outlined) and masked cells (hatched on the canvas; checked apart).
 */
function assertSameColours(svg, page, { rows, cols, q, k, masked = () => false }) {
  let compared = 0;
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      if (i === q || j === k || masked(i, j)) continue;
      assert.equal(rgb(svg.fills[i * cols + j]), page[i * cols + j], `cell ${i}, ${j}`);
      compared++;
    }
  }
  assert.ok(compared >= 20, `compared ${compared} cells`);
}

test('the exported weight map uses the page\u2019s colour scale, as the reader switches it, and marks masked cells', async () => {
  const { page, errors } = await h.open('#step=softmax&mask=causal&q=3&k=1');
  await waitStep(page, 'softmax');
  const T = Number(await page.locator('[data-testid="hm-softmax"] canvas').getAttribute('data-rows'));
  for (const choice of ['auto', 'row', 'fixed']) {
    await page.locator(`[data-testid="hm-softmax"] .hm-scale-btn[data-scale="${choice}"]`).click();
    await page.waitForFunction((c) => document.querySelector('[data-testid="scale-softmax"]').dataset.choice === c, choice);
    await settled(page);
    const kind = await page.getByTestId('scale-softmax').getAttribute('data-scale');
    const svg = await saveSvg(page);
    assert.ok(svg.parses);
    assert.equal(svg.fills.length, T * T);
    assertSameColours(svg, await pageColours(page, 'softmax'), { rows: T, cols: T, q: 3, k: 1, masked: (i, j) => j > i });
    // the legend names the scale the page uses (auto resolves to 0–1 or row max, and says auto)
    assert.match(svg.legend, kind === 'row' ? /colour scale: row max/ : /colour scale: 0\u20131/, `${choice}: ${svg.legend}`);
    assert.equal(/\(auto\)/.test(svg.legend), choice === 'auto', svg.legend);
    // causal: the cells above the diagonal are masked, grey and hatched, and the legend says so
    const grey = svg.fills[0 * T + 1];
    assert.equal(rgb(grey), await page.evaluate(() => getComputedStyle(document.getElementById('app')).getPropertyValue('--masked').trim()).then(rgb));
    for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) assert.equal(svg.fills[i * T + j], grey, `masked ${i}, ${j}`);
    assert.notEqual(svg.fills[0], grey);
    assert.ok(svg.hatch.length > 0, 'masked cells hatched');
    assert.match(svg.legend, /grey hatched = masked \(exactly 0\)/);
    assert.deepEqual(svg.texts.filter((t) => HYPHEN_NUMBER.test(t)), []);
  }
  assert.deepEqual(errors, []);
});

test('the exported score and masked maps have the page\u2019s colours, \u2212\u221e cells and formatValue numbers', async () => {
  const { page, errors } = await h.open('#step=masked&mask=causal&q=2&k=0');
  await waitStep(page, 'masked');
  const T = Number(await page.locator('[data-testid="hm-masked"] canvas').getAttribute('data-rows'));
  let svg = await saveSvg(page);
  assertSameColours(svg, await pageColours(page, 'masked'), { rows: T, cols: T, q: 2, k: 0, masked: (i, j) => j > i });
  assert.ok(svg.hatch.length > 0);
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) assert.equal(svg.fills[i * T + j], svg.fills[1], `masked ${i}, ${j}`);
  assert.match(svg.legend, /grey hatched = masked \(\u2212\u221e\)/);
  assert.ok(svg.texts.includes('\u2212\u221e'));
  // the diverging legend: −range … 0 … range by formatValue, the page's legend ends
  const [lo, hi] = await page.locator('[data-testid="hm-masked"] .hm-legend-ramp .hm-legend-text').allTextContents();
  assert.ok(svg.legend.includes(`colour: ${lo} (blue) \u2026 0 \u2026 ${hi} (orange)`), `${svg.legend} vs ${lo} … ${hi}`);
  assert.deepEqual(svg.texts.filter((t) => HYPHEN_NUMBER.test(t)), []);
  // negative numbers are printed with U+2212
  assert.ok(svg.texts.some((t) => /^\u22120\.\d+$|^\u2212\d/.test(t)), 'some negative score printed with \u2212');

  await page.locator('.step-btn[data-step="scaled"]').click();
  await waitStep(page, 'scaled');
  svg = await saveSvg(page);
  // the scaled map shares the unscaled scores' colour range on the page, and so in the export
  assertSameColours(svg, await pageColours(page, 'scaled'), { rows: T, cols: T, q: 2, k: 0 });
  assert.equal(svg.hatch, '');
  assert.deepEqual(errors, []);
});
