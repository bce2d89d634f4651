// The step panel: the current step's title, then that step's own view. Step
// views are created the first time they are shown; only the current one is
// updated, so a step change never pays for the other eleven. `steps` are the
// registries (step-registry.js, learn/step-registry.js): each entry's id, title and view factory.

import { el } from '../../kit/dom.js';

/** Steps whose numbers belong to no layer (the model's input). */
const BEFORE_LAYERS = new Set(['embeddings', 'positional']);

/**
 * How far to scroll (px, 0 = not at all) so that a figure with bounding box r
 * shows between y = top and y = bottom: a figure that fits is in view when it
 * is wholly inside; a taller one when it fills at least 90% of the space.
 * (tests/browser/harness.mjs waitFigureInView checks the same rule.)
 */
export function figureOffset(r, top, bottom) {
  const avail = bottom - top;
  if (avail <= 0) return 0;
  if (r.height <= avail) {
    if (r.top >= top - 1 && r.bottom <= bottom + 1) return 0;
    return r.top < top ? r.top - top : r.bottom - bottom;
  }
  const visible = Math.min(r.bottom, bottom) - Math.max(r.top, top);
  return visible >= 0.9 * avail ? 0 : r.top - top;
}

/** The box of the first line of text shown in `section` (null when it shows none). */
function firstLineBox(section) {
  const doc = section.ownerDocument;
  const walk = doc.createTreeWalker(section, 4 /* NodeFilter.SHOW_TEXT */);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (!n.data.trim()) continue;
    const range = doc.createRange();
    range.selectNodeContents(n);
    const box = range.getClientRects()[0]; // none for hidden text
    if (box && box.height > 0) return box;
  }
  return null;
}

export function createStepPanel(root, ctx, steps) {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const counter = el('span', 'panel-counter', { testid: 'step-counter' });
  const title = el('h2', 'panel-title', { testid: 'step-title' });
  const header = el('div', 'panel-header', {}, counter, title);
  const status = el('div', 'panel-status', { testid: 'panel-status', hidden: true });
  const body = el('div', 'panel-body');
  root.append(header, status, body);
  const views = new Map();
  const sections = new Map();
  let current = null;

  function viewFor(step) {
    if (!views.has(step)) {
      const section = el('section', null, { attrs: { 'aria-label': byId.get(step).title } });
      body.append(section);
      sections.set(step, section);
      views.set(step, byId.get(step).view(section, ctx));
    }
    return views.get(step);
  }

  function setHeader(step, trace) {
    const info = byId.get(step);
    // the Learn part counts its own steps (learn/steps.js: part 'learn')
    // an extra step (steps.js's EXTRA_STEPS: RoPE) has its own number ("4b") and counts in no part
    const part = steps.filter((s) => s.part === info.part && !s.after);
    const n = info.after ? info.number : part.indexOf(info) + 1;
    // the embeddings and positions come before every layer: no layer for them
    const layered = trace?.model && trace.model.layers > 1 && !BEFORE_LAYERS.has(step);
    counter.textContent = `${info.part === 'learn' ? 'Learn' : 'Step'} ${n} of ${part.length}${layered ? ` \u00b7 layer ${trace.model.layer + 1} of ${trace.model.layers}` : ''}`;
    title.textContent = trace && info.titleFor ? info.titleFor(trace) : info.title;
    root.dataset.step = step;
  }

  return {
    /**
     * How far the page must scroll (follow.js) after a step change so that the
     * step's heading and its first line of text are in view below `top` (the
     * bottom of what covers the page, e.g. the sticky stepper), with its main
     * figure (the first row of figures) when heading, text and figure fit
     * together; else the heading goes to the top. 0 when that is so already.
     */
    revealOffset({ top = 0 } = {}) {
      const section = sections.get(current);
      if (!section || body.hidden) return 0;
      const fig = section.querySelector('.figures > .figure-row:not([hidden])') ?? section.querySelector('.figures');
      const head = header.getBoundingClientRect();
      const line = firstLineBox(section);
      const from = top + 8;
      const to = root.ownerDocument.defaultView.innerHeight - 8;
      const bottom = Math.max(head.bottom, line?.bottom ?? 0, fig?.getBoundingClientRect().bottom ?? 0);
      if (bottom - head.top <= to - from) return figureOffset({ top: head.top, bottom, height: bottom - head.top }, from, to);
      return Math.abs(head.top - from) < 2 ? 0 : head.top - from;
    },
    /** Shows a status (loading, no tokens yet, engine failed) instead of the step. */
    status(kind, text) {
      status.hidden = false;
      status.className = `panel-status is-${kind}`;
      status.replaceChildren(...(kind === 'loading' ? [el('span', 'spinner', { attrs: { 'aria-hidden': 'true' } })] : []), el('span', null, { text }));
      status.setAttribute('role', kind === 'error' ? 'alert' : 'status');
      body.hidden = true;
    },
    /** The colour-scale choice of the current step's main weight map ('fixed' when it has none). */
    figureScale() {
      return (current && viewFor(current).figureScale?.()) || 'fixed';
    },
    update(trace, v) {
      const step = v.state.step;
      setHeader(step, trace);
      if (!trace) return;
      status.hidden = true;
      body.hidden = false;
      const view = viewFor(step);
      if (current !== step) {
        for (const [name, s] of sections) s.hidden = name !== step;
        current = step;
      }
      view.update(trace, v);
      root.dataset.rendered = step;
    },
  };
}
