// The words a newcomer meets unexplained (issue #40, 5), each with one line:
// where a term first appears in a step's text it becomes a <dfn> that shows
// its line beside it on hover, keyboard focus or a tap (style.css .gloss),
// and carries it as its title for a screen reader. Text stays text (no markup).
//
//   frame.explain(...paragraphs)      // kit/common.js glosses each step's text
//   el('p', null, {}, ...glossed('the residual stream x', new Set()))

import { el } from './dom.js';

/** term → its one line. The longest terms first, so "token ids" wins over "token id". */
export const GLOSSARY = Object.freeze({
  'residual stream': 'the running sum each layer reads and adds its result to: one row of C numbers per token',
  LayerNorm: 'rescales each token\u2019s row to mean 0 and variance 1, then applies a learned gain and bias',
  RMSNorm: 'divides each token\u2019s row by its root mean square, then applies a learned gain',
  'token ids': 'each token\u2019s number in the model\u2019s vocabulary; it picks that row of the embedding table',
  'token id': 'the token\u2019s number in the model\u2019s vocabulary; it picks that row of the embedding table',
  logits: 'one raw score per vocabulary word; softmax turns them into probabilities',
  d_k: 'the width of one head: C/H numbers in each query and key',
  Jacobian: 'how much each softmax output moves when each score moves: the gradient that training follows',
  'Frobenius norm': 'the square root of the sum of every entry squared: one number for the size of a matrix',
  nats: 'entropy measured with the natural log: 0 when a row is all on one key, ln T when it is even',
});

const TERMS = Object.keys(GLOSSARY).sort((a, b) => b.length - a.length);
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const TERM_RE = new RegExp(`(?<![\\w])(${TERMS.map(escape).join('|')})(?![\\w])`, 'g');

/** One term as a focusable definition showing its line (the singular's line for "token ids"). */
export function glossTerm(term) {
  const line = GLOSSARY[term];
  return el('dfn', 'gloss', { text: term, title: line, tabIndex: 0, dataset: { gloss: line }, testid: `gloss-${term.replace(/\W+/g, '-')}` });
}

/** The text as nodes: each glossary term's first use (not yet in `seen`) a glossTerm, the rest strings. */
export function glossed(text, seen = new Set()) {
  const out = [];
  let at = 0;
  for (const m of text.matchAll(TERM_RE)) {
    const term = m[1];
    const key = term === 'token ids' ? 'token id' : term;
    if (seen.has(key)) continue;
    seen.add(key);
    if (m.index > at) out.push(text.slice(at, m.index));
    out.push(glossTerm(term));
    at = m.index + term.length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}
