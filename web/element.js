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
//   model-src (a pretrained GPT-2 or BERT checkpoint, instead of model: "hf:<Hub id>",
//   e.g. "hf:distilgpt2", fetched from the Hugging Face Hub, or the address of a folder
//   that holds its files, e.g. "./models/my-gpt2/": config.json, model.safetensors and
//   tokenizer.json; kept in the browser's Cache Storage after the first visit),
//   hub-base (where hf: ids are fetched from; https://huggingface.co by default),
//   model-load (auto: the element loads its model-src as it opens, the default, since the page's
//   author chose it; click: it first says where the files come from and how big they are, and
//   waits for the reader's click; embed.html always sets click, its hash being a link anyone
//   can write),
//   sentence, d-model, heads, seed, positional (none|sinusoidal|learned),
//   mask (none|causal|padding|causal+padding), scale (true|false), step (one of
//   STEPS), query, head (0-based), theme (system|light|dark), view
//   (compact|full|figure: the step's main figure alone, no controls unless listed), controls ("none", "all", or a comma list of CONTROL_NAMES:
//   sentence,batch,width,heads,seed,positional,mask,scale,step,query,head,theme),
//   playground-url (where "Copy link" and link() send the reader: an http(s) or
//   relative URL of the full playground; by default the URL baked in at build time
//   (PLAYGROUND_URL=… ./build_wasm.sh), else index.html beside this script, which
//   is right in web/ and dist/site/ and wrong for a lone copied file or node_modules;
//   "Copy link" checks a same-origin playground and says when none is there).
//   lesson (one of the seven lessons: context, qkv, scores, scale, heads, order, masks) shows
//   that lesson instead of the playground, with screen (1-5) where it opens; an unknown
//   name shows a message naming it and the list of lessons.
// Under every figure, "Open in the full playground": a link when the playground's
// place is known (playgroundThere), else the whole playground in place, in a dialog.
// Events (bubbling, composed): "attention-change" on every state change and
// "attention-step" when the step changes, each with detail {state}.
// Methods: play(), pause(), goToStep(name), getState(), ready(), exportSvg(),
// exportPng() (a Promise of a Blob), link().
// Everything lives in a shadow root: the host page's CSS cannot reach in and
// ours cannot leak out; the host may theme it with the --ap-* custom properties
// (--ap-font-size: the base text size; the host's font size and `rem` do not reach in).
// Instances are independent and share one compiled WebAssembly module.
// What they share is loaded in element-assets.js (the engine, the shipped models, the
// stylesheet); where their links lead is worked out in element-links.js.

import { mountPlayground, CONTROL_NAMES } from './app/playground/playground.js';
import { STEPS, FIELDS, MODELS, normalizeState, serializeState } from './app/playground/state.js';
import { figureToSvg, figureToPng } from './app/playground/export.js';
import { bundled } from './embed-resources.js';
import { isHubName, modelFolderUrl } from './app/hub/source.js';
import { sharedEngine, fetchShipped, styleShadowRoot } from './element-assets.js';
import { resolvePlaygroundUrl, defaultPlayground, probePlayground, playgroundThere, linkStatusText } from './element-links.js';
import { mountLessons } from './app/lessons/lessons.js';
import { parseLessonHash, lessonHash } from './app/lessons/state.js';

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
const LAYOUT_ATTRIBUTES = Object.freeze(['controls', 'view', 'playground-url', 'model-src', 'hub-base', 'model-load', 'lesson', 'screen']);
/** Without a `model` attribute an element shows random weights (the page opens on a trained model). */
const ELEMENT_MODEL = 'random';

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
    styleShadowRoot(this._shadow);
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
    // the playground in place goes with the element (its close handler frees it)
    this._shadow.querySelector('dialog.ap-full')?.close();
    // keep the state, so moving the element in the DOM does not reset it
    if (this._pg) {
      this._state = this._pg.getState();
      this._pg.destroy();
      this._pg = null;
    }
    this._lessons?.destroy();
    this._lessons = null;
  }

  attributeChangedCallback(name, oldValue, value) {
    if ((!this._pg && !this._lessons) || oldValue === value) return;
    if (LAYOUT_ATTRIBUTES.includes(name) || this._lessons) {
      if (this._pg) this._state = this._pg.getState();
      this._pg?.destroy();
      this._pg = null;
      this._lessons?.destroy();
      this._lessons = null;
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
  ready() { return (this._pg ?? this._lessons)?.ready() ?? Promise.resolve(false); }
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
  /** A link to the full playground (see playgroundUrl) in the current state. */
  link() {
    return this._linkFor(this.getState());
  }
  /** Where links lead: the playground-url attribute if valid, else the default (see the header). */
  get playgroundUrl() { return this._playground().url; }
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
    const src = this._modelSrc();
    if (src) state.model = src;
    return normalizeState(state);
  }

  /** model-src as a model name: "hf:<id>", or "url:<folder address>" (relative to the host page). */
  _modelSrc() {
    const raw = this.getAttribute('model-src');
    if (raw === null || raw.trim() === '') return null;
    const text = raw.trim();
    if (isHubName(text)) return text;
    const url = /^hf:/.test(text) ? null : modelFolderUrl(text, document.baseURI);
    if (!url) {
      this._warn('model-src', raw);
      return null;
    }
    return `url:${url}`;
  }

  /** The model names that load without the reader's click: the author's model-src, unless model-load="click". */
  _allowedModels() {
    const src = this._modelSrc();
    return src && this.getAttribute('model-load')?.trim() !== 'click' ? [src] : [];
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
    if (this.hasAttribute('lesson')) {
      this._createLesson();
      return;
    }
    const asked = this.getAttribute('view');
    const view = asked === 'full' || asked === 'figure' ? asked : 'compact';
    this._pg = mountPlayground(this._mount, {
      initialState: this._initialState(),
      // a bare figure has no controls unless the host lists some
      controls: view === 'figure' && !this.hasAttribute('controls') ? [] : this._controls(),
      view,
      keyboardTarget: this._mount,
      loadEngine: sharedEngine,
      fetchShipped,
      // a pretrained model (model-src): in the page when this is the one-file bundle (no worker file beside it)
      pretrainedInPage: bundled,
      ...(this.getAttribute('hub-base') ? { hubBase: this.getAttribute('hub-base') } : {}),
      allowedModels: this._allowedModels(),
      // a fresh element opens a shipped model on its featured head, unless it says where
      freshStart: !this._state && !this.hasAttribute('layer') && !this.hasAttribute('head'),
      onStateChange: (state) => this._changed(state),
      // "Copy link" opens the full playground (playground-url) in this state, and says whether it is there
      linkFor: (state) => this._linkFor(state),
      linkStatus: (url, copied) => this._linkStatus(copied),
      conceptsHref: new URL('concepts.html', this._playground().url).href,
      lessonsHref: new URL('lessons.html', this._playground().url).href,
    });
    this._addOpenBar();
  }

  /**
   * lesson="scale" (screen="2", counted from 1): that one lesson instead of the playground.
   * An unknown name shows a message naming it and the list of lessons (links to the lessons page).
   */
  _createLesson() {
    const params = new URLSearchParams();
    params.set('lesson', this.getAttribute('lesson').trim());
    if (this.hasAttribute('screen')) params.set('screen', this.getAttribute('screen').trim());
    const initial = parseLessonHash(params.toString());
    if (initial.lesson && initial.problems.length) this._warn('screen', this.getAttribute('screen'));
    const page = (s) => new URL(`lessons.html#${lessonHash(s)}`, this._playground().url).href;
    this._lessons = mountLessons(this._mount, {
      loadEngine: sharedEngine,
      fetchShipped,
      fixed: Boolean(initial.lesson),
      initial,
      href: page,
      linkFor: (path) => new URL(path, this._playground().url).href,
    });
  }

  /**
   * "Open in the full playground", always shown: a link to the playground (new
   * tab) when it is known to be there, else the full playground in place, in a
   * dialog over the page (this file holds all of it), so that it works by default
   * for one copied file too.
   */
  _addOpenBar() {
    const bar = document.createElement('p');
    bar.className = 'ap-open';
    this._mount.querySelector('.ap')?.append(bar);
    this._openBar = bar;
    const there = playgroundThere(this._playground());
    bar.dataset.mode = there ? 'link' : 'inplace';
    if (there) {
      const a = document.createElement('a');
      a.className = 'ap-link';
      a.target = '_blank';
      a.rel = 'noopener';
      a.textContent = 'Open in the full playground \u2197';
      a.dataset.testid = 'open-playground';
      bar.append(a);
      this._updateOpenLink();
    } else {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'btn btn-small';
      b.textContent = 'Open in the full playground';
      b.dataset.testid = 'open-playground';
      b.addEventListener('click', () => this._openInPlace());
      bar.append(b);
    }
  }

  _updateOpenLink() {
    const a = this._openBar?.querySelector('a');
    if (a && this._pg) a.href = this._linkFor(this._pg.getState());
  }

  /** The whole playground (every control, the full view) in a modal dialog, in this element's state. */
  _openInPlace() {
    const dialog = document.createElement('dialog');
    dialog.className = 'ap-full';
    dialog.setAttribute('aria-label', 'Attention Playground');
    const close = document.createElement('button');
    close.type = 'button';
    close.className = 'btn ap-full-close';
    close.textContent = 'Close';
    close.dataset.testid = 'close-playground';
    const mount = document.createElement('div');
    mount.className = 'ap-host';
    dialog.append(mount);
    this._shadow.append(dialog);
    const pg = mountPlayground(mount, {
      initialState: this._pg ? this._pg.getState() : this._initialState(),
      controls: null,
      view: 'full',
      keyboardTarget: mount,
      loadEngine: sharedEngine,
      fetchShipped,
      pretrainedInPage: bundled,
      ...(this.getAttribute('hub-base') ? { hubBase: this.getAttribute('hub-base') } : {}),
      allowedModels: this._allowedModels(),
      linkFor: (state) => this._linkFor(state),
      linkStatus: (url, copied) => this._linkStatus(copied),
      conceptsHref: new URL('concepts.html', this._playground().url).href,
    });
    // inside the playground's root, so that it has its colours and theme
    const bar = document.createElement('div');
    bar.className = 'ap-full-bar';
    bar.append(close);
    mount.querySelector('.ap')?.prepend(bar);
    // in place means the playground's pages are not known to be here: no link to the concept lab
    mount.querySelector('[data-testid="concepts-link"]')?.remove();
    close.addEventListener('click', () => dialog.close());
    dialog.addEventListener('close', () => {
      pg.destroy();
      dialog.remove();
    });
    dialog.showModal();
    close.focus();
  }

  /** {url, source}: source 'attribute', 'build' or 'script' (index.html beside this file). */
  _playground() {
    const raw = this.getAttribute('playground-url');
    if (raw !== null) {
      const url = resolvePlaygroundUrl(raw, this.ownerDocument.baseURI);
      if (url) return { url, source: 'attribute' };
      const fallback = defaultPlayground();
      if (this._warnedUrl !== raw) {
        this._warnedUrl = raw;
        console.warn(`<attention-playground>: playground-url="${raw}" is not an http(s) or relative URL; links lead to ${fallback.url} instead.`);
      }
      return fallback;
    }
    return defaultPlayground();
  }

  _linkFor(state) {
    const url = new URL(this._playground().url);
    url.hash = serializeState(state);
    return url.href;
  }

  async _linkStatus(copied) {
    const { url, source } = this._playground();
    let verdict = await probePlayground(url);
    // a URL the page or the build named, on another origin, is taken at its word
    if (verdict === 'unknown' && source !== 'script') verdict = 'found';
    return linkStatusText(url, verdict, copied);
  }

  _changed(state) {
    this._updateOpenLink();
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
