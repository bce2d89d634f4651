// Injection strings as a sentence, in batch sentences and in the URL hash are
// shown as text and never run.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, runCount, waitRunAfter, STEPS, waitStep, hoverCell } from './harness.mjs';

const PAYLOADS = [
  '<img src=x onerror="window.__pwned=1">',
  '"><script>window.__pwned=2</script>',
  '<img src=x onerror=alert(1)>',
  '"><script>alert(1)</script>',
  '<svg onload=alert(1)>',
  "javascript:alert(1)//' onmouseover='alert(1)",
];

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

async function assertInert(page, dialogs, label) {
  assert.deepEqual(dialogs, [], `${label}: no dialog`);
  assert.equal(await page.evaluate(() => window.__pwned), undefined, `${label}: no script ran`);
  assert.equal(await page.locator('.ap img, .ap script, .ap iframe, .ap svg[onload]').count(), 0, `${label}: no element from the text`);
}

test('injection strings typed as a sentence render as text and do not execute', async () => {
  const { page, errors, dialogs } = await h.open();
  const typeSentence = async (text) => {
    const n = await runCount(page);
    await page.getByLabel('Sentence', { exact: true }).fill(text);
    await waitRunAfter(page, n);
    const chips = (await page.getByTestId('token-chip').locator('.chip-text').allTextContents()).join('');
    assert.equal(chips, text.replace(/\s+/g, ''), 'every character is shown as text');
  };
  // each string alone, as the whole sentence
  for (const payload of PAYLOADS) {
    await typeSentence(payload);
    await assertInert(page, dialogs, payload);
  }
  // all of them in one sentence, through every step (each draws the tokens in its own way:
  // chips, labels, bars, lines, tooltips), then a tooltip on the scores
  await typeSentence(PAYLOADS.join(' '));
  for (const step of STEPS) {
    await page.locator(`.step-btn[data-step="${step}"]`).click();
    await waitStep(page, step);
    await assertInert(page, dialogs, `all strings, step ${step}`);
  }
  await page.locator('.step-btn[data-step="scores"]').click();
  await waitStep(page, 'scores');
  // a cell mid-map: the map of ~80 tokens is taller than the space below the sticky stepper,
  // which covers its first rows once Playwright scrolls them into view
  const mid = Math.floor(Number(await page.locator('[data-testid="hm-scores"] canvas').getAttribute('data-rows')) / 2);
  await hoverCell(page, 'scores', mid, mid + 1);
  await page.getByTestId('tooltip').waitFor();
  await assertInert(page, dialogs, 'all strings, a tooltip');
  assert.deepEqual(errors, []);
});

test('injection strings in the URL hash render as text and do not execute', async () => {
  // one page, each link loaded into it as a new document (h.reload): every string in the sentence
  // field at once and as the query, every string as a batch line, then each string as a step name and
  // as a field name of its own link (those are refused with a notice that quotes them)
  const { page, errors, dialogs } = await h.open();
  const all = PAYLOADS.map(encodeURIComponent);
  const links = [
    { hash: `#s=${all.join('%20')}&q=${all[0]}&step=softmax`, tokens: PAYLOADS.join(' ') },
    { hash: `#batch=1&bs=${all.join('%0A')}%0Aok&step=heads`, tokens: PAYLOADS[0] },
    ...all.map((enc) => ({ hash: `#step=${enc}&${enc}=1` })),
  ];
  for (const { hash, tokens } of links) {
    await h.reload(page, hash);
    await assertInert(page, dialogs, hash);
    const text = await page.locator('.ap').textContent();
    if (tokens) {
      const chips = (await page.getByTestId('token-chip').locator('.chip-text').allTextContents()).join('');
      assert.ok(chips.startsWith(tokens.replace(/\s+/g, '')), `${hash}: shown as tokens`);
    } else {
      assert.ok(text.includes('<') || text.includes('javascript'), `${hash}: the notice quotes it as text`);
    }
    assert.deepEqual(errors, [], hash);
  }
  await page.close();
});

test('the page sets no inline handlers and uses no inline scripts or styles', async () => {
  const { page } = await h.open('#step=softmax');
  const found = await page.evaluate(() => {
    const out = [];
    for (const el of document.querySelectorAll('*')) {
      for (const a of el.attributes) if (/^on/i.test(a.name)) out.push(`${el.tagName} ${a.name}`);
    }
    for (const s of document.querySelectorAll('script')) if (!s.src) out.push('inline script');
    if (document.querySelectorAll('style').length) out.push('style element');
    return out;
  });
  assert.deepEqual(found, []);
});

test('the page runs under the strict Content-Security-Policy it will be embedded with', async () => {
  const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";
  const { page, errors } = await h.open('#step=softmax', {
    before: (p) => p.route(/\/(index\.html)?(#.*)?$/, async (route) => {
      const response = await route.fetch();
      await route.fulfill({ response, headers: { ...response.headers(), 'content-security-policy': CSP } });
    }),
  });
  for (const step of STEPS) {
    await page.locator(`.step-btn[data-step="${step}"]`).click();
    await waitStep(page, step);
  }
  // back on the softmax step (its heatmap is drawn only there), a hover shows the tooltip
  await page.locator('.step-btn[data-step="softmax"]').click();
  await waitStep(page, 'softmax');
  await hoverCell(page, 'softmax', 1, 1);
  await page.getByTestId('tooltip').waitFor();
  assert.deepEqual(errors, [], 'no CSP violation or error');
});
