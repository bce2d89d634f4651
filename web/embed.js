// The iframe form: embed.html#sentence=…&mask=causal&step=masked&controls=sentence
// renders only the playground, with the element's attributes taken from the URL
// hash. A later change of the hash updates the element.
//
// Inside an iframe it tells the parent page its content height, so the parent can
// size the iframe to fit (no inner scrollbar, no empty band): once the figure is
// drawn (also while the iframe is off-screen) and at every change it posts
//   { type: 'attention-playground:height', height }   (height: whole CSS pixels)
// to window.parent. docs/embedding.md has the few lines of listener a page needs.

import './attention-playground.js';

const AttentionPlayground = customElements.get('attention-playground');

// playground-url is not taken from the hash: a crafted embed.html link must not
// point "Copy link" somewhere else; here the playground is beside this page. Nor is
// model-load: a model the hash names (model-src, hub-base) is a link's, fetched only
// once the reader clicks (model-load="click", set below).
const FIXED = new Set(['playground-url', 'model-load']);
const ALLOWED = new Set(AttentionPlayground.observedAttributes.filter((a) => !FIXED.has(a)));
const HEIGHT_MESSAGE = 'attention-playground:height';

function attributesFromHash() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  const out = new Map();
  for (const [k, v] of params) if (ALLOWED.has(k)) out.set(k, v);
  return out;
}

const element = document.createElement('attention-playground');
// the playground is beside this page: "Open in the full playground" links there
element.setAttribute('playground-url', 'index.html');
element.setAttribute('model-load', 'click');
for (const [k, v] of attributesFromHash()) element.setAttribute(k, v);
document.body.append(element);

window.addEventListener('hashchange', () => {
  const next = attributesFromHash();
  for (const name of ALLOWED) {
    if (next.has(name)) element.setAttribute(name, next.get(name));
    else element.removeAttribute(name);
  }
});

/**
 * Chromium runs no animation frames (and no ResizeObserver) in an iframe that is
 * off-screen, such as a figure below the fold of a lesson: the playground would
 * draw at its full width only once scrolled to, and grow then, pushing the lesson
 * down. Until the first real frame, frame callbacks run from a timer instead, and
 * `after` runs after each; from the first real frame on, the browser's own.
 */
function framesUntilSeen(after) {
  const native = window.requestAnimationFrame.bind(window);
  const nativeCancel = window.cancelAnimationFrame.bind(window);
  const pending = new Map();
  let next = 1 << 30; // far from the browser's own ids
  let seen = false;
  window.requestAnimationFrame = (callback) => {
    if (seen) return native(callback);
    const id = next++;
    pending.set(id, setTimeout(() => {
      pending.delete(id);
      callback(performance.now());
      after();
    }, 16));
    return id;
  };
  window.cancelAnimationFrame = (id) => {
    if (pending.has(id)) {
      clearTimeout(pending.get(id));
      pending.delete(id);
    } else nativeCancel(id);
  };
  native(() => {
    seen = true;
    window.requestAnimationFrame = native;
  });
}

if (window.parent !== window) {
  let last = -1;
  let ready = false;
  const post = () => {
    // the element's own box (body has no margin): unlike the document's scroll
    // height, it can shrink below the iframe's current height
    const height = Math.ceil(element.getBoundingClientRect().height);
    if (!ready || height === last || height === 0) return;
    last = height;
    window.parent.postMessage({ type: HEIGHT_MESSAGE, height }, '*');
  };
  framesUntilSeen(post);
  new ResizeObserver(post).observe(element);
  // the first height once the engine has run and the step is drawn, not the
  // loading placeholder's: the iframe keeps its height attribute until then
  element.ready().then(() => new Promise((resolve) => window.requestAnimationFrame(resolve))).then(() => {
    ready = true;
    post();
  });
}
