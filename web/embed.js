// The iframe form: embed.html#sentence=…&mask=causal&step=masked&controls=sentence
// renders only the playground, with the element's attributes taken from the URL
// hash. A later change of the hash updates the element.

import './attention-playground.js';

const AttentionPlayground = customElements.get('attention-playground');

const ALLOWED = new Set(AttentionPlayground.observedAttributes);

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
