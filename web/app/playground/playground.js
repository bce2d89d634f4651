// mountPlayground(root, options): builds the playground inside any element
// (a page's <main> or, later, a custom element's shadow root) and starts it.
// All DOM lookups stay inside `root`.
//
//   const pg = mountPlayground(el, { initialState, notices, onStateChange, keyboardTarget: document });
//   pg.setState({ step: 'softmax' });

import { el } from '../kit/dom.js';
import { createController } from './controller.js';
import { figureToSvg, figureToPng, download } from './export.js';
import { createNotation } from '../kit/notation-legend.js';

/**
 * "Save PNG", "Save SVG" and "Copy link" under the step panel. linkFor(state)
 * gives the link that reproduces the state (the page: its own URL);
 * linkStatus(url, copied) may word the status after "Copy link" (the element:
 * where the link leads), a Promise of a string.
 */
function createExportBar(bar, controller, { linkFor = null, linkStatus = null } = {}) {
  const doc = bar.ownerDocument;
  const status = el('span', 'export-status', { attrs: { role: 'status', 'aria-live': 'polite' } });
  const linkBox = el('input', 'control export-link', { type: 'text', readOnly: true, attrs: { 'aria-label': 'Link to this view' } });
  linkBox.hidden = true;
  const name = () => `attention-${controller.getState().step}`;
  const say = (text) => { status.textContent = text; };
  const png = el('button', 'btn btn-small', { type: 'button', text: 'Save PNG' });
  const svg = el('button', 'btn btn-small', { type: 'button', text: 'Save SVG' });
  const link = el('button', 'btn btn-small', { type: 'button', text: 'Copy link' });
  // no figure: before the first trace, and on a Learn step without a backward (no answer set)
  const noFigure = () => say('This step has no figure to save yet.');
  png.addEventListener('click', async () => {
    const fig = controller.figure();
    if (!fig) return noFigure();
    try {
      download(doc, await figureToPng(fig, controller.palette(), doc), `${name()}.png`);
      say('PNG saved.');
    } catch (e) {
      say(`The PNG could not be made: ${e.message}`);
    }
  });
  svg.addEventListener('click', () => {
    const fig = controller.figure();
    if (!fig) return noFigure();
    download(doc, new Blob([figureToSvg(fig, controller.palette(), { doc })], { type: 'image/svg+xml' }), `${name()}.svg`);
    say('SVG saved.');
  });
  link.addEventListener('click', async () => {
    const url = linkFor ? linkFor(controller.getState()) : doc.defaultView.location.href;
    linkBox.value = url;
    let copied = true;
    try {
      await doc.defaultView.navigator.clipboard.writeText(url);
      linkBox.hidden = true;
    } catch {
      // no clipboard permission: show the link to copy by hand
      copied = false;
      linkBox.hidden = false;
      linkBox.select();
    }
    const text = copied ? 'Link copied: it opens this exact view.' : 'Copy this link:';
    say(linkStatus ? await linkStatus(url, copied).catch(() => text) : text);
  });
  bar.append(png, svg, link, status, linkBox);
}

function card(className, title) {
  const section = el('section', `card ${className}`);
  if (title) section.append(el('h2', 'card-title', { text: title }));
  return section;
}

/** Names a host may list in `controls`; `width` is the model width. */
export const CONTROL_NAMES = Object.freeze(['sentence', 'batch', 'model', 'width', 'heads', 'seed', 'positional', 'mask', 'scale', 'step', 'query', 'head', 'layer', 'theme', 'export']);
const MODEL_CONTROLS = { model: 'model', width: 'dModel', heads: 'heads', seed: 'seed', positional: 'positional', mask: 'mask', scale: 'scale' };

/**
 * @param {Element|ShadowRoot} root
 * @param {{initialState?: object, notices?: string[], controls?: string[]|null,
 *          view?: 'full'|'compact'|'figure', onStateChange?: (state) => void,
 *          keyboardTarget?: EventTarget, loadEngine?: () => Promise<object>}} options
 *   controls: null shows every control; otherwise only the CONTROL_NAMES listed
 *   (an empty list shows none: a fixed figure with hover). view 'compact' drops
 *   the title, the about line and the keyboard hint (for embedding); 'figure' also
 *   the step's prose, formula, notation and every figure but its first row.
 */
export function mountPlayground(root, options = {}) {
  const shown = options.controls ? new Set(options.controls) : null;
  const has = (name) => !shown || shown.has(name);
  const app = el('div', 'ap');
  const brand = el('div', 'ap-brand', {},
    el('h1', 'ap-title', { text: 'Attention Playground' }),
    el('p', 'ap-tagline', { text: 'How a transformer\u2019s multi-head self-attention turns a sentence into context-aware vectors, step by step, with the real numbers.' }),
    el('p', 'ap-links', {},
      el('a', 'ap-link', { href: options.conceptsHref ?? 'concepts.html', text: 'Concepts: seven ideas, live \u2192', testid: 'concepts-link' }),
      ...(options.trainHref ? [el('a', 'ap-link', { href: options.trainHref, text: 'Training lab: train a small transformer and watch its heads learn \u2192', testid: 'train-link' })] : [])));
  const theme = el('div', 'ap-theme');
  const header = el('header', 'ap-header', {}, brand, theme);
  const messages = el('div', 'ap-messages');

  const sentenceCard = card('card-sentence', 'Your sentence');
  const sentence = el('div', 'sentence');
  const generation = el('div', 'generation-slot');
  sentenceCard.append(sentence, generation);
  const controlsCard = card('card-controls', 'Model');
  const controls = el('div', 'controls');
  controlsCard.append(controls);
  const about = el('p', 'ap-about', { text: 'Weights are random but seeded, so a link reproduces every number. Everything is computed in your browser by a C++ engine compiled to WebAssembly.' });
  const side = el('div', 'ap-side', {}, sentenceCard, controlsCard, about);

  const stepperCard = card('card-stepper');
  const stepper = el('div', 'stepper');
  stepperCard.append(stepper);
  const panelCard = card('card-panel');
  const selection = el('div', 'selection', { attrs: { role: 'group', 'aria-label': 'What to show' } });
  const panel = el('div', 'panel', { testid: 'panel' });
  const exportBar = el('div', 'export-bar', { attrs: { role: 'group', 'aria-label': 'Export' } });
  const notation = createNotation();
  panelCard.append(selection, notation, panel, exportBar);
  const main = el('div', 'ap-main', {}, stepperCard, panelCard);
  const layoutEl = el('div', 'ap-layout', {}, side, main);
  const tipLayer = el('div', 'ap-tip-layer');
  const hint = el('p', 'ap-keys', { text: 'Keyboard: \u2190 \u2192 step, Space play/pause, Tab to every control; inside a matrix, arrows move between cells.' });
  app.append(header, messages, layoutEl, hint, tipLayer);
  const frame = el('div', 'ap-frame', {}, app);
  root.replaceChildren(frame);

  const modelControls = Object.keys(MODEL_CONTROLS).filter(has);
  const controller = createController({ root: app, theme, messages, sentence, generation, controls, stepper, selection, panel, tipLayer, about }, {
    ...options,
    controls: shown ? [...modelControls.map((n) => MODEL_CONTROLS[n]), ...(has('batch') ? ['batch'] : [])] : null,
    // the tour moves on with the stepper's Next: no stepper, no tour
    tourable: has('step'),
  });
  // hide what the host did not ask for (after the views have built their parts)
  if (shown) {
    sentenceCard.hidden = !has('sentence');
    controlsCard.hidden = modelControls.length === 0;
    stepperCard.hidden = !has('step');
    theme.hidden = !has('theme');
    const [queryField, headField, layerField] = selection.children;
    if (queryField) queryField.hidden = !has('query');
    if (headField) headField.hidden = !has('head');
    if (layerField) layerField.dataset.hostHidden = has('layer') ? '' : '1';
    selection.hidden = !has('query') && !has('head') && !has('layer');
    if (sentenceCard.hidden && controlsCard.hidden) side.hidden = true;
    app.classList.toggle('ap--no-side', side.hidden);
  }
  createExportBar(exportBar, controller, options);
  if (shown && !has('export')) exportBar.hidden = true;
  // 'figure': a bare figure for a slide or a worksheet (issue #40 item 6): the step's main figure
  // only, no prose, formula or legend of notation, sized to its content (style.css .ap--figure)
  if (options.view === 'figure') {
    app.classList.add('ap--figure');
    notation.hidden = true;
  }
  if (options.view === 'compact' || options.view === 'figure') {
    app.classList.add('ap--compact');
    brand.hidden = true;
    about.hidden = true;
    hint.hidden = true;
    if (theme.hidden) header.hidden = true;
  }
  return controller;
}
