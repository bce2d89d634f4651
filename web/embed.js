// The iframe form: embed.html#sentence=…&mask=causal&step=masked&controls=sentence
// renders only the playground, with the element's attributes taken from the URL
// hash. A later change of the hash updates the element.
//
// Inside an iframe it tells the parent page its content height, so the parent can
// size the iframe to fit (no inner scrollbar, no empty band): on load and at every
// change it posts
//   { type: 'attention-playground:height', height }   (height: whole CSS pixels)
// to window.parent. The README has the few lines of listener a page needs.

import './attention-playground.js';

const AttentionPlayground = customElements.get('attention-playground');

// playground-url is not taken from the hash: a crafted embed.html link must not
// point "Copy link" somewhere else; here the playground is beside this page.
const ALLOWED = new Set(AttentionPlayground.observedAttributes.filter((a) => a !== 'playground-url'));
const HEIGHT_MESSAGE = 'attention-playground:height';

function attributesFromHash() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  const out = new Map();
  for (const [k, v] of params) if (ALLOWED.has(k)) out.set(k, v);
  return out;
}

const element = document.createElement('attention-playground');
for (const [k, v] of attributesFromHash()) element.setAttribute(k, v);
document.body.append(element);

window.addEventListener('hashchange', () => {
  const next = attributesFromHash();
  for (const name of ALLOWED) {
    if (next.has(name)) element.setAttribute(name, next.get(name));
    else element.removeAttribute(name);
  }
});

if (window.parent !== window) {
  let last = -1;
  const post = () => {
    // the element's own box (body has no margin): unlike the document's scroll
    // height, it can shrink below the iframe's current height
    const height = Math.ceil(element.getBoundingClientRect().height);
    if (height === last || height === 0) return;
    last = height;
    window.parent.postMessage({ type: HEIGHT_MESSAGE, height }, '*');
  };
  new ResizeObserver(post).observe(element);
  post();
}
