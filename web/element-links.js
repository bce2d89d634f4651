// Where an <attention-playground>'s links lead (web/element.js): the full
// playground's address (the playground-url attribute, the one baked in at build
// time, or index.html beside this script), whether it is known to be there, and
// what "Copy link" says about it.

import { baseUrl, playgroundUrl as builtPlaygroundUrl } from './embed-resources.js';

/**
 * Reads a playground-url: an absolute http(s) URL, or a relative one (resolved
 * against `base`, the host page). Anything else (javascript:, data:, blob:, …)
 * gives null. The result has no fragment: the state goes there.
 */
export function resolvePlaygroundUrl(raw, base) {
  const text = String(raw).replace(/[\t\n\r]/g, '').trim();
  if (text === '') return null;
  let url;
  try {
    url = new URL(text, base);
  } catch {
    return null;
  }
  const relative = !/^[a-z][a-z0-9+.-]*:/i.test(text);
  const ok = url.protocol === 'http:' || url.protocol === 'https:' || (relative && url.protocol === 'file:' && new URL(base).protocol === 'file:');
  if (!ok) return null;
  url.hash = '';
  return url.href;
}

/** The playground a link opens without the attribute, and how we know it. */
export function defaultPlayground() {
  const built = builtPlaygroundUrl ? resolvePlaygroundUrl(builtPlaygroundUrl, baseUrl) : null;
  if (built) return { url: built, source: 'build' };
  return { url: new URL('index.html', baseUrl).href, source: 'script' };
}

const PLAYGROUND_TITLE = /<title>\s*Attention Playground\s*<\/title>/i;
const probes = new Map();
/**
 * Is the playground at `url`? 'found', 'missing' (no such page, or another page),
 * or 'unknown': only a same-origin http(s) page can be checked (elsewhere CORS
 * hides the answer and a strict Content-Security-Policy forbids the request).
 * One request per URL and page.
 */
export function probePlayground(url) {
  const target = new URL(url);
  if (!/^https?:$/.test(target.protocol) || target.origin !== window.location.origin) return Promise.resolve('unknown');
  if (!probes.has(url)) {
    probes.set(url, fetch(url, { credentials: 'same-origin', cache: 'no-cache' }).then(
      async (r) => (r.ok && PLAYGROUND_TITLE.test(await r.text()) ? 'found' : 'missing'),
      () => 'unknown'));
  }
  return probes.get(url);
}

/**
 * Is the playground where links lead, without asking the network? A URL the page
 * or the build named: yes. The default, index.html beside this file: yes when the
 * file came from another site (the playground's own, which serves it with the
 * site); not on the page's own origin or from disk, where a lone copied file is
 * the common case (the full playground then opens in place).
 */
export function playgroundThere({ url, source }) {
  if (source !== 'script') return true;
  const target = new URL(url);
  return /^https?:$/.test(target.protocol) && target.origin !== window.location.origin;
}

/** What "Copy link" says, once it knows whether the playground is where the link leads. */
export function linkStatusText(where, verdict, copied) {
  if (verdict === 'missing') {
    return copied
      ? `Link copied, but it needs the playground at ${where}, and there is none there (page authors: set playground-url).`
      : `This link needs the playground at ${where}, and there is none there (page authors: set playground-url). Copy it:`;
  }
  if (verdict === 'unknown') {
    return copied
      ? `Link copied: it opens this view in the playground at ${where}, if the playground is there (this page cannot check).`
      : `Copy this link (it opens this view in the playground at ${where}, if the playground is there):`;
  }
  return copied
    ? `Link copied: it opens this exact view in the playground at ${where}.`
    : `Copy this link (it opens this exact view in the playground at ${where}):`;
}
