// Issue #16's rule, checked on a live page: every number the reader can see is
// written with the proper minus (U+2212, also in exponents), never a hyphen-minus,
// and no element holding a number or a token label is narrower than its text.

import { NOTATION } from '../../web/app/kit/notation.js';

/**
 * Problems inside the element matching `root`: [{text, why}], empty when all is well.
 * Looks at rendered text nodes (not hidden, not form controls) that contain a digit.
 */
export function numberProblems(page, root) {
  return page.evaluate((sel) => {
    const out = [];
    const base = document.querySelector(sel);
    if (!base) return [{ text: sel, why: 'root not found' }];
    const walker = document.createTreeWalker(base, NodeFilter.SHOW_TEXT);
    const checked = new Set();
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      const text = n.nodeValue;
      if (!el || !/\d/.test(text)) continue;
      if (el.closest('[hidden], script, style, textarea, select, option, details:not([open]) > :not(summary)')) continue;
      if (!el.getClientRects().length) continue;
      // a hyphen-minus that is a sign ("-0.4", "(-2") or an exponent's sign ("1.2e-5")
      if (/(^|[\s(=\u2248:,[/])-\d|\de-\d/.test(text)) out.push({ text: text.trim().slice(0, 80), why: 'hyphen-minus' });
      if (checked.has(el)) continue;
      checked.add(el);
      const st = getComputedStyle(el);
      if (st.display.startsWith('inline') && st.display !== 'inline-block') continue; // inline boxes cannot clip
      if (/auto|scroll/.test(st.overflowX)) continue; // a scroll box: reachable
      if (el.closest('.sr-only')) continue; // text for screen readers only, not drawn
      if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1) out.push({ text: el.textContent.trim().slice(0, 80), why: `clipped: scrollWidth ${el.scrollWidth} > clientWidth ${el.clientWidth}` });
    }
    // token labels: shown whole, never cut with an ellipsis
    for (const el of base.querySelectorAll('.cx-bar-label, .chip-text, .tr-tok, .tr-pred-in, .tr-pred-out, .bars-key, .prediction-word, .lines-svg text')) {
      if (!el.getClientRects().length || el.closest('[hidden]')) continue;
      if (el instanceof SVGTextElement) {
        // an SVG label: its drawn box inside its svg (an svg clips what falls outside)
        const box = el.getBBox();
        const svg = el.ownerSVGElement;
        const vb = svg.viewBox.baseVal;
        const W = vb && vb.width ? vb.width : svg.width.baseVal.value;
        if (box.x < -0.5 || box.x + box.width > W + 0.5) out.push({ text: el.textContent, why: `svg label outside its svg: x ${box.x.toFixed(1)} … ${(box.x + box.width).toFixed(1)} of ${W}` });
        if ([el, ...el.querySelectorAll('tspan')].some((t) => /\u2026$/.test(t.textContent))) out.push({ text: el.textContent, why: 'token label cut with …' });
        continue;
      }
      if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0) out.push({ text: el.textContent, why: `token label clipped (.${el.className}: scrollWidth ${el.scrollWidth} > clientWidth ${el.clientWidth})` });
      if (/\u2026$/.test(el.textContent)) out.push({ text: el.textContent, why: 'token label cut with …' });
    }
    return out;
  }, root);
}

/** The Notation legend of the page: its summary and its text. */
export async function notationLegend(page) {
  const legend = page.getByTestId('notation');
  return { summary: await legend.locator('summary').textContent(), text: await legend.textContent() };
}

/** What every Notation legend must state: each item of the one list (web/app/kit/notation.js), symbol then meaning. */
export const NOTATION_ITEMS = NOTATION.map(([symbol, meaning]) => new RegExp(`${escapeRegExp(symbol)}\\s*${escapeRegExp(meaning)}`));

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Problems of the token labels drawn on the heatmap canvases inside `root`
 * (listed by the heatmap in data-row-labels / data-col-labels as [index, font px,
 * line, …]): a label cut with "…", a line wider than its gutter (measured in the
 * drawn font), a font below 9 px, or a row label that is not its token whole
 * (the token chips give the tokens, when the map has one row per token).
 * Returns [{map, text, why}] and how many labels were checked.
 */
export function canvasLabelProblems(page, root) {
  return page.evaluate((sel) => {
    const out = [];
    let checked = 0;
    const base = document.querySelector(sel);
    const tokens = [...document.querySelectorAll('[data-testid="token-chip"] .chip-text')].map((c) => c.textContent);
    const ctx = document.createElement('canvas').getContext('2d');
    for (const canvas of base.querySelectorAll('canvas.hm-canvas')) {
      if (!canvas.getClientRects().length || canvas.closest('[hidden]')) continue;
      const d = canvas.dataset;
      const map = canvas.closest('[data-testid^="hm-"]')?.dataset.testid ?? '?';
      const rows = Number(d.rows);
      const check = (json, room, isRow) => {
        if (!json) return;
        for (const [index, px, ...lines] of JSON.parse(json)) {
          checked++;
          const text = lines.join('');
          if (px < 9) out.push({ map, text, why: `font ${px}px below 9px` });
          if (/\u2026$/.test(text) && !(isRow && tokens[index]?.endsWith('\u2026'))) out.push({ map, text, why: 'label cut with …' });
          for (const line of lines) {
            ctx.font = `600 ${px}px ${d.labelFont}`;
            const w = ctx.measureText(line).width;
            if (w > room + 0.5) out.push({ map, text: line, why: `line ${w.toFixed(1)}px wider than its room ${room}px` });
          }
          if (isRow && rows === tokens.length && text !== tokens[index] && text !== `${index} \u00b7 ${tokens[index]}`) out.push({ map, text, why: `row ${index} label is not the token "${tokens[index]}"` });
        }
      };
      check(d.rowLabels, Number(d.labelW) - 8, true);
      if (d.colMode === 'vertical') check(d.colLabels, Number(d.headH) - 8, false);
      else if (d.colMode === 'horizontal') check(d.colLabels, Number(d.cw) - 4, false);
    }
    return { problems: out, checked };
  }, root);
}
