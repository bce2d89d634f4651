// <attention-playground>: the playground as a custom element, for tutorial pages.
//
//   <script src="attention-playground.js" defer></script>   (or type="module")
//   <attention-playground sentence="The cat sat on the mat." mask="causal"
//       step="masked" controls="sentence"></attention-playground>
//
// Attributes set the initial state and can change later (the element follows):
//   model (random|coreference|language: seeded random weights, the default, so
//   every embed written before the trained models shows what it showed, or a
//   trained model), layer (0-based, trained models),
//   sentence, d-model, heads, seed, positional (none|sinusoidal|learned),
//   mask (none|causal|padding|causal+padding), scale (true|false), step (one of
//   STEPS), query, head (0-based), theme (system|light|dark), view
//   (compact|full), controls ("none", "all", or a comma list of CONTROL_NAMES:
//   sentence,batch,width,heads,seed,positional,mask,scale,step,query,head,theme).
// Events (bubbling, composed): "attention-change" on every state change and
// "attention-step" when the step changes, each with detail {state}.
// Methods: play(), pause(), goToStep(name), getState(), ready(), exportSvg(),
// exportPng() (a Promise of a Blob), link().
// Everything lives in a shadow root: the host page's CSS cannot reach in and
// ours cannot leak out; the host may theme it with the --ap-* custom properties.
// Instances are independent and share one compiled WebAssembly module.

import { mountPlayground, CONTROL_NAMES } from './app/playground.js';
import { STEPS, FIELDS, MODELS, normalizeState, serializeState } from './app/state.js';
import { createEngine } from './engine.js';
import { figureToSvg, figureToPng } from './app/export.js';
import { moduleFactory, cssText, baseUrl, builtinModels } from './embed-resources.js';

/** attribute → state field */
const ATTRIBUTES = Object.freeze({
  model: 'model',
  layer: 'layer',
  sentence: 'sentence',
  'd-model': 'dModel',
  heads: 'heads',
  seed: 'seed',
  positional: 'positional',
  mask: 'mask',
  scale: 'scale',
  step: 'step',
  query: 'query',
  head: 'head',
  theme: 'theme',
});
const LAYOUT_ATTRIBUTES = Object.freeze(['controls', 'view']);
/** Without a `model` attribute an element shows random weights (the page opens on a trained model). */
const ELEMENT_MODEL = 'random';

/**
 * The shipped checkpoints: carried inside the bundle (the coreference model),
 * else fetched from generated/models/ next to this file (the language model,
 * and every model when unbundled).
 */
function fetchShipped(name, file) {
  const inside = builtinModels?.[name];
  if (inside) return Promise.resolve(inside());
  const url = new URL(`generated/models/${file}`, baseUrl).href;
  return fetch(url).then((r) => {
    if (!r.ok) throw new Error(`the ${name} model is a second file, ${url}, which could not be loaded (HTTP ${r.status})`);
    return r.arrayBuffer();
  }, () => {
    throw new Error(`the ${name} model is a second file, ${url}, which could not be loaded (put it next to attention-playground.js, and serve the page over http)`);
  }).then((b) => new Uint8Array(b));
}

let enginePromise = null;
/** One engine (one compiled module) for every instance on the page. */
function sharedEngine() {
  if (!enginePromise) {
    enginePromise = (moduleFactory ? createEngine({ moduleFactory }) : createEngine()).catch((e) => {
      enginePromise = null;
      throw e;
    });
  }
  return enginePromise;
}

let sheet = null;
function styleSheet() {
  if (!sheet && cssText !== null) {
    // A constructed stylesheet is not an inline <style>, so a strict
    // Content-Security-Policy (style-src 'self') allows it.
    sheet = new CSSStyleSheet();
    sheet.replaceSync(cssText);
  }
  return sheet;
}

/** Reads one attribute into a state value; returns undefined when invalid. */
function attributeValue(field, raw) {
  const f = FIELDS[field];
  switch (f.kind) {
    case 'text': return raw;
    case 'int': {
      if (!/^\s*\d{1,10}\s*$/.test(raw)) return undefined;
      const n = Number(raw);
      return n >= f.min && n <= f.max ? n : undefined;
    }
    case 'bool': {
      const v = raw.trim().toLowerCase();
      if (v === '' || v === 'true' || v === '1' || v === 'on') return true;
      if (v === 'false' || v === '0' || v === 'off') return false;
      return undefined;
    }
    case 'choice': return f.choices.find((c) => String(c) === raw.trim());
    case 'model': {
      const v = raw.trim();
      return MODELS.includes(v) ? v : undefined;
    }
    default: return undefined;
  }
}

export class AttentionPlayground extends HTMLElement {
  static get observedAttributes() {
    return [...Object.keys(ATTRIBUTES), ...LAYOUT_ATTRIBUTES];
  }

  constructor() {
    super();
    this._shadow = this.attachShadow({ mode: 'open' });
    const s = styleSheet();
    if (s) {
      this._shadow.adoptedStyleSheets = [s];
    } else {
      const link = document.createElement('link');
      link.rel = 'stylesheet';
      link.href = new URL('./style.css', baseUrl).href;
      this._shadow.append(link);
    }
    this._mount = document.createElement('div');
    this._mount.className = 'ap-host';
    this._shadow.append(this._mount);
    this._pg = null;
    this._state = null;
    this._lastStep = null;
  }

  connectedCallback() {
    if (!this._pg) this._create();
  }

  disconnectedCallback() {
    // keep the state, so moving the element in the DOM does not reset it
    if (this._pg) {
      this._state = this._pg.getState();
      this._pg.destroy();
      this._pg = null;
    }
  }

  attributeChangedCallback(name, oldValue, value) {
    if (!this._pg || oldValue === value) return;
    if (LAYOUT_ATTRIBUTES.includes(name)) {
      this._state = this._pg.getState();
      this._pg.destroy();
      this._pg = null;
      this._create();
      return;
    }
    const field = ATTRIBUTES[name];
    const fallback = field === 'model' ? ELEMENT_MODEL : FIELDS[field].default;
    const v = value === null ? fallback : attributeValue(field, value);
    if (v === undefined) {
      this._warn(name, value);
      return;
    }
    this._pg.setState({ [field]: v });
  }

  // ---- the element's API --------------------------------------------------------
  /** Starts the step-by-step animation. */
  play() { this._pg?.play(); }
  /** Pauses the animation. */
  pause() { this._pg?.pause(); }
  /** True while the animation plays. */
  get playing() { return Boolean(this._pg?.playing); }
  /** Shows a step by name (see STEPS); throws RangeError for an unknown name. */
  goToStep(name) {
    if (!STEPS.includes(name)) throw new RangeError(`unknown step "${name}" (expected one of ${STEPS.join(', ')})`);
    this._pg?.setState({ step: name });
  }
  /** A copy of the current state. */
  getState() { return this._pg ? this._pg.getState() : { ...this._state }; }
  /** Resolves to true once the engine runs (false if it could not start). */
  ready() { return this._pg ? this._pg.ready() : Promise.resolve(false); }
  /** The current view as a standalone SVG document (string). */
  exportSvg() {
    const fig = this._pg?.figure();
    if (!fig) throw new Error('nothing to export yet: the engine has not run');
    return figureToSvg(fig, this._pg.palette());
  }
  /** The current view as a PNG (Promise of a Blob). */
  exportPng() {
    const fig = this._pg?.figure();
    if (!fig) return Promise.reject(new Error('nothing to export yet: the engine has not run'));
    return figureToPng(fig, this._pg.palette(), document);
  }
  /** A link to the full playground in the current state. */
  link() {
    return new URL(`index.html#${serializeState(this.getState())}`, baseUrl).href;
  }
  static get steps() { return STEPS; }
  static get controlNames() { return CONTROL_NAMES; }

  // ---- internals ------------------------------------------------------------------
  _initialState() {
    const state = { ...(this._state ?? {}) };
    if (!this._state) {
      for (const [attr, field] of Object.entries(ATTRIBUTES)) {
        const raw = this.getAttribute(attr);
        if (raw === null) continue;
        const v = attributeValue(field, raw);
        if (v === undefined) this._warn(attr, raw);
        else state[field] = v;
      }
      if (state.model === undefined) state.model = ELEMENT_MODEL;
    }
    return normalizeState(state);
  }

  _controls() {
    const raw = this.getAttribute('controls');
    if (raw === null || raw.trim() === 'all') return null;
    if (raw.trim() === 'none' || raw.trim() === '') return [];
    const names = raw.split(',').map((x) => x.trim()).filter(Boolean);
    const unknown = names.filter((n) => !CONTROL_NAMES.includes(n));
    if (unknown.length) this._warn('controls', unknown.join(','));
    return names.filter((n) => CONTROL_NAMES.includes(n));
  }

  _create() {
    const view = this.getAttribute('view') === 'full' ? 'full' : 'compact';
    this._pg = mountPlayground(this._mount, {
      initialState: this._initialState(),
      controls: this._controls(),
      view,
      keyboardTarget: this._mount,
      loadEngine: sharedEngine,
      fetchShipped,
      // a fresh element opens a shipped model on its featured head, unless it says where
      freshStart: !this._state && !this.hasAttribute('layer') && !this.hasAttribute('head'),
      onStateChange: (state) => this._changed(state),
      // "Copy link" opens the full playground (index.html next to this file) in this state
      linkFor: (state) => new URL(`index.html#${serializeState(state)}`, baseUrl).href,
      conceptsHref: new URL('concepts.html', baseUrl).href,
    });
  }

  _changed(state) {
    const detail = { state: { ...state } };
    this.dispatchEvent(new CustomEvent('attention-change', { detail, bubbles: true, composed: true }));
    if (state.step !== this._lastStep) {
      this._lastStep = state.step;
      this.dispatchEvent(new CustomEvent('attention-step', { detail: { ...detail, step: state.step }, bubbles: true, composed: true }));
    }
  }

  _warn(name, value) {
    console.warn(`<attention-playground>: attribute ${name}="${value}" is not valid; using the default.`);
  }
}

if (!customElements.get('attention-playground')) customElements.define('attention-playground', AttentionPlayground);
