// The numbers the page shows are the engine's: every value in the DOM (the
// selected row of each matrix, the formula's result, the hover tooltip) is
// compared with a fresh run of the engine inside the page.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, STEPS, waitStep, hoverCell } from './harness.mjs';
import { numberProblems, canvasLabelProblems } from './number-check.mjs';

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

/**
 * In the page: runs the engine for the state in the URL and checks every
 * data-value of the current step against it. Returns {checked, mismatches}.
 */
function checkInPage(step) {
  return /* in the page */ (async (stepName) => {
    const { parseHash } = await import('/app/playground/state.js');
    const { createEngine } = await import('/engine.js');
    const s = parseHash(location.hash).state;
    const engine = await createEngine();
    const settings = { dModel: s.dModel, heads: s.heads, seed: s.seed, positional: s.positional, mask: s.mask, scale: s.scale };
    const lengths = (s.batch ? s.sentences : [s.sentence]).map((x) => engine.tokenize(x).length);
    const T = Math.max(...lengths);
    if (s.mask === 'custom') {
      const data = new Uint8Array(T * T).fill(1);
      for (const c of s.customMask) {
        const [i, j] = c.split('-').map(Number);
        if (i < T && j < T) data[i * T + j] = 0;
      }
      settings.customMask = { rows: T, cols: T, data };
    }
    let trace;
    if (!s.batch) trace = engine.run({ ...settings, sentence: s.sentence });
    else trace = engine.run({ ...settings, sentence: s.sentences[s.shown], padTo: T });
    const H = trace.heads.length;
    const D = trace.config.dHead;
    const C = trace.config.dModel;
    const head = Math.min(s.head, H - 1);
    const hd = trace.heads[head];
    const get = (m) => (i, j) => m.data[i * m.cols + j];
    const slice = (w) => (i, j) => w.data[i * w.cols + head * D + j];
    // ALiBi (pe=alibi): head h adds −m·|i − j| to S′ before the mask, m = 2^(−8(h+1)/H) for H a power
    // of two (Press et al. 2022), worked out here from the head count, not read from the engine
    let slope = 0;
    if (s.positional === 'alibi') {
      if (H & (H - 1)) throw new Error(`the ALiBi reference here takes a power-of-two head count, not ${H}`);
      slope = 2 ** (-8 * (head + 1) / H);
    }
    const bias = (i, j) => -Math.fround(slope * Math.abs(i - j));
    const masked = (i, j) => (trace.mask.data[i * T + j] ? Math.fround(hd.scaled.data[i * T + j] + bias(i, j)) : -Infinity);
    const M = {
      embeddings: get(trace.embeddings), positional: get(trace.positional), input: get(trace.input),
      'input-x': get(trace.embeddings), 'input-p': get(trace.positional),
      'projection-q': get(hd.query), 'projection-k': get(hd.key), 'projection-v': get(hd.value),
      'projection-input': get(trace.input), 'projection-wq': slice(trace.wQuery),
      scores: get(hd.scores), 'scores-q': get(hd.query), 'scores-k': get(hd.key),
      'scaled-before': get(hd.scores), scaled: get(hd.scaled),
      mask: get(trace.mask), masked, alibi: bias,
      softmax: get(hd.weights), lines: get(hd.weights), 'weighted-v': get(hd.value), weighted: get(hd.output),
      concat: get(trace.concat), 'output-concat': get(trace.concat), 'output-wo': get(trace.wOutput), output: get(trace.output),
    };
    const q = Math.min(s.query, T - 1);
    const k = Math.min(s.key, T - 1);
    const d = Math.min(s.dim, C - 1);
    const dd = Math.min(d, D - 1);
    const RESULT = {
      embeddings: [M.embeddings, q, d], positional: [M.positional, q, d], input: [M.input, q, d],
      projections: [M['projection-q'], q, dd], scores: [M.scores, q, k], scaled: [M.scaled, q, k],
      masked: [masked, q, k], softmax: [M.softmax, q, k], weighted: [M.weighted, q, dd],
      heads: [M.weighted, q, dd], concat: [M.concat, q, d], output: [M.output, q, d],
    };
    const close = (a, b) => (a === b) || (Number.isFinite(a) && Number.isFinite(b) && Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b)));
    const section = document.querySelector(`section[data-step="${stepName}"]`);
    const mismatches = [];
    let checked = 0;
    for (const li of section.querySelectorAll('[data-testid^="cell-"]')) {
      const m = /^cell-(.+)-(\d+)-(\d+)$/.exec(li.dataset.testid);
      const f = M[m[1]];
      if (!f) {
        mismatches.push(`no reference for ${m[1]}`);
        continue;
      }
      const want = f(Number(m[2]), Number(m[3]));
      const got = Number(li.dataset.value);
      checked++;
      if (!close(got, want)) mismatches.push(`${li.dataset.testid}: page ${got}, engine ${want}`);
    }
    const [f, i, j] = RESULT[stepName];
    const result = Number(section.querySelector('[data-testid="formula-result"]').dataset.value);
    checked++;
    if (!close(result, f(i, j))) mismatches.push(`formula result: page ${result}, engine ${f(i, j)}`);
    // the formula's printed value is the result rounded (formatValue: U+2212 minus,
    // also in the exponent): within half a unit of its last digit
    const shown = section.querySelector('[data-testid="formula-result"]').textContent.replace(/\u2212/g, '-');
    const [mant, ex] = shown.split('e');
    const half = 0.5 * 10 ** (-((mant.split('.')[1] ?? '').length) + Number(ex ?? 0));
    if (Number.isFinite(result) && !(Math.abs(Number(shown) - result) <= half * (1 + 1e-9) + 1e-12)) mismatches.push(`formula text ${shown} vs ${result}`);
    const sum = section.querySelector('[data-testid="softmax-sum"]');
    if (sum && Math.abs(Number(sum.dataset.value) - 1) > 1e-5 && trace.mask.data.subarray(q * T, (q + 1) * T).some(Boolean)) mismatches.push(`softmax row sum ${sum.dataset.value}`);
    return { checked, mismatches, q, k };
  })(step);
}

const CONFIGS = [
  '',
  '#mask=causal&c=32&h=8&q=5&k=2&d=3&head=6&seed=9',
  '#pe=learned&scale=0&c=24&h=3&s=Colourless+green+ideas+sleep+furiously&q=4&k=0&d=20',
  '#batch=1&bi=1&mask=padding&q=2&k=1',
  '#mask=custom&cm=7-1.7-3.7-7.2-0&q=7&k=3',
  '#batch=1&bi=0&mask=custom&cm=0-0.1-2&q=1&k=2',
  '#pe=alibi&mask=causal&h=4&head=2&q=6&k=3',
];

for (const hash of CONFIGS) {
  test(`the numbers shown equal the engine's on every step (${hash || 'defaults'})`, async () => {
    const { page, errors } = await h.open(hash);
    let total = 0;
    for (const step of STEPS) {
      await page.locator(`.step-btn[data-step="${step}"]`).click();
      await waitStep(page, step);
      const { checked, mismatches } = await page.evaluate(checkInPage, step);
      assert.deepEqual(mismatches, [], `${step}`);
      assert.ok(checked >= 2, `${step}: checked ${checked} values`);
      total += checked;
    }
    assert.ok(total > 100);
    assert.deepEqual(errors, []);
  });
}

test('hovering a cell shows the engine\'s exact value and where it came from', async () => {
  const { page } = await h.open('#step=scores&mask=causal');
  const cases = [['scores', 2, 3], ['scores', 0, 11]];
  for (const [id, i, j] of cases) {
    await hoverCell(page, id, i, j);
    const tip = page.getByTestId('tooltip-value');
    await page.waitForFunction(([a, b]) => document.querySelector('[data-testid="tooltip"]').textContent.includes(`S[${a}, ${b}]`), [i, j]);
    const shown = Number(await tip.getAttribute('data-value'));
    const want = await page.evaluate(async ([a, b]) => {
      const { createEngine } = await import('/engine.js');
      const { parseHash } = await import('/app/playground/state.js');
      const s = parseHash(location.hash).state;
      const t = (await createEngine()).run({ sentence: s.sentence, dModel: s.dModel, heads: s.heads, seed: s.seed, positional: s.positional, mask: s.mask, scale: s.scale });
      return t.heads[s.head].scores.data[a * t.tokens.length + b];
    }, [i, j]);
    assert.equal(shown, want);
    const text = await page.getByTestId('tooltip').textContent();
    assert.match(text, /q.·k.|Σ_d/, 'provenance');
    // seven significant digits by formatValue (U+2212 minus), and the value it shows is the engine's
    const tipText = await tip.textContent();
    assert.match(tipText, /^\u2212?(\d\.\d{6}(e\u2212?\d+)?|\d+\.\d+)$/);
    assert.ok(Math.abs(Number(tipText.replace(/\u2212/g, '-')) - want) <= 5e-7 * Math.max(1e-3, Math.abs(want)) * 10, tipText);
  }
  // a masked cell says so
  await page.locator('.step-btn[data-step="masked"]').click();
  await waitStep(page, 'masked');
  await hoverCell(page, 'masked', 0, 5);
  await page.waitForFunction(() => /blocked/.test(document.querySelector('[data-testid="tooltip"]').textContent));
  assert.equal(await page.getByTestId('tooltip-value').getAttribute('data-value'), '-Infinity');
});

/** Issue #16 on the current page: no number with a hyphen-minus or clipped, no label cut (DOM and canvas). */
async function assertReadable(page, where) {
  assert.deepEqual(await numberProblems(page, '#app'), [], `${where}: numbers`);
  const { problems, checked } = await canvasLabelProblems(page, '#app');
  assert.deepEqual(problems, [], `${where}: canvas labels`);
  return checked;
}

test('no visible number has a hyphen-minus or is clipped, and no token label is cut, on all twelve steps', async () => {
  const { page, errors } = await h.open('');
  let labels = 0;
  for (const step of STEPS) {
    await page.locator(`.step-btn[data-step="${step}"]`).click();
    await waitStep(page, step);
    labels += await assertReadable(page, step);
  }
  assert.ok(labels > 100, `${labels} canvas labels checked`);
  assert.deepEqual(errors, []);
});

test('a 300-token text at softmax: numbers unclipped with U+2212, labels whole', async () => {
  const words = ['the', 'cat', 'sat', 'on', 'a', 'mat'];
  const sentence = Array.from({ length: 300 }, (_, i) => words[i % words.length]).join(' ');
  const { page, errors } = await h.open(`#step=softmax&q=150&s=${encodeURIComponent(sentence)}`);
  await waitStep(page, 'softmax');
  assert.equal(await page.locator('[data-testid="hm-softmax"] canvas').getAttribute('data-rows'), '300');
  const labels = await assertReadable(page, 'softmax, 300 tokens');
  assert.ok(labels > 20, `${labels} canvas labels checked`);
  assert.deepEqual(errors, []);
});

const LONG = 'Pneumonoultramicroscopicsili'; // 28 letters

for (const viewport of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
  test(`a 28-letter word at ${viewport.width}\u00d7${viewport.height}: shown whole in the chips and on every map of every step`, async () => {
    const { page, errors } = await h.open(`#s=${encodeURIComponent(`The ${LONG} cat sat on the mat`)}`, { viewport });
    assert.ok((await page.locator('.chip-text').allTextContents()).includes(LONG), 'the chip holds the whole word');
    for (const step of STEPS) {
      await page.locator(`.step-btn[data-step="${step}"]`).click();
      await waitStep(page, step);
      await assertReadable(page, `${step} at ${viewport.width}`);
      if (!['scores', 'softmax', 'output'].includes(step)) continue;
      // the word's row label on the step's main map, drawn whole (on one line or two)
      const drawn = JSON.parse(await page.locator(`[data-testid="hm-${step}"] canvas`).getAttribute('data-row-labels'));
      assert.equal(drawn.find(([i]) => i === 1).slice(2).join(''), LONG, step);
    }
    assert.deepEqual(errors, []);
  });
}
