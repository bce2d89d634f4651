// What every <attention-playground> on a page shares, loaded once: the engine
// (one compiled WebAssembly module), the shipped models that are not inside the
// bundle (from their scripts beside it) and the stylesheet of the shadow roots.
// (web/element.js is the element; embed-resources.js, replaced in the bundle,
// says where these come from.)

import { createEngine } from './engine.js';
import { moduleFactory, cssText, baseUrl, builtinModels } from './embed-resources.js';

let enginePromise = null;
/** One engine (one compiled module) for every instance on the page. */
export function sharedEngine() {
  if (!enginePromise) {
    enginePromise = (moduleFactory ? createEngine({ moduleFactory }) : createEngine()).catch((e) => {
      enginePromise = null;
      throw e;
    });
  }
  return enginePromise;
}

/**
 * The stylesheet as the shadow root needs it. `rem` means the host page's <html>
 * font size, even inside a shadow root (html { font-size: 40px } made every label
 * 2.5 times too big), so each `N rem` becomes `calc(N * var(--ap-rem))`, where
 * --ap-rem is the element's own base size (--ap-font-size, 16px by default; style.css).
 * At-rule preludes (@media, @container) are left alone: var() is not allowed there.
 */
export function shadowCss(css) {
  return css.split('\n').map((line) => (line.includes('@') ? line
    : line.replace(/(^|[^\w.-])(\d*\.?\d+)rem\b/g, (m, pre, n) => `${pre}calc(${n} * var(--ap-rem, 1rem))`))).join('\n');
}

let sheet = null;
function styleSheet() {
  if (!sheet && cssText !== null) {
    // A constructed stylesheet is not an inline <style>, so a strict
    // Content-Security-Policy (style-src 'self') allows it.
    sheet = new CSSStyleSheet();
    sheet.replaceSync(shadowCss(cssText));
  }
  return sheet;
}

/** Styles a shadow root: the bundled stylesheet, adopted; unbundled (development
 * only), a link to style.css as it is, so `rem` follows the host page there. */
export function styleShadowRoot(shadow) {
  const s = styleSheet();
  if (s) {
    shadow.adoptedStyleSheets = [s];
  } else {
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = new URL('./style.css', baseUrl).href;
    shadow.append(link);
  }
}

// ---- the shipped models -------------------------------------------------------------

/** The global that build_wasm.sh's model scripts (generated/models/NAME.js) fill: {name: base64}. */
const MODEL_SCRIPTS = '__attentionPlaygroundModels';
const modelLoads = new Map();

/**
 * A shipped model that is not inside this file, from its script beside it,
 * generated/models/NAME.js (build_wasm.sh writes one per model). A <script> loads
 * from wherever this file came from, another origin (no CORS needed) or file://,
 * where fetch() of the .safetensors would be refused. One load per page.
 */
function loadModelScript(name) {
  const url = new URL(`generated/models/${name}.js`, baseUrl).href;
  if (!modelLoads.has(url)) {
    modelLoads.set(url, new Promise((resolve, reject) => {
      const script = document.createElement('script');
      script.src = url;
      script.async = true;
      script.onload = () => {
        script.remove();
        const text = globalThis[MODEL_SCRIPTS]?.[name];
        if (typeof text !== 'string') {
          reject(new Error(`${url} loaded but holds no ${name} model (was it made by build_wasm.sh?)`));
          return;
        }
        delete globalThis[MODEL_SCRIPTS][name];
        resolve(Uint8Array.from(atob(text), (c) => c.charCodeAt(0)));
      };
      script.onerror = () => {
        script.remove();
        modelLoads.delete(url);
        reject(new Error(`the ${name} model is a second file, ${url}, which could not be loaded. `
          + `Copy generated/models/${name}.js (from dist/site/ or the npm package) so that it sits at that address, next to attention-playground.js`));
      };
      document.head.append(script);
    }));
  }
  // each caller gets its own copy of the bytes
  return modelLoads.get(url).then((bytes) => bytes.slice());
}

/** The shipped checkpoints: inside the bundle (the coreference model), else from their scripts. */
export function fetchShipped(name) {
  const inside = builtinModels?.[name];
  return inside ? Promise.resolve(inside()) : loadModelScript(name);
}
