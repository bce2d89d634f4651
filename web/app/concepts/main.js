// The concept lab's bootstrap: loads the engine once, reads the open demo and
// its settings from the URL hash, mounts each demo the first time it is shown,
// and mirrors every change of a demo's state back into the hash (each demo
// keeps its own state for the session, so switching demos loses nothing).
//
// A demo is a controller module exporting createXxxDemo(root, ctx) → {update(state), hide?()},
// with ctx = {engine, onState(patch), tooltip, palette()}: it runs the engine (cached),
// measures, and hands the numbers to its view (views/<idea>.js), which draws inside
// root only. See controller.js.

import { createEngine } from '../../engine.js';
import { el } from '../kit/dom.js';
import { createTooltip } from '../kit/tooltip.js';
import { createThemeToggle } from '../kit/theme.js';
import { createMessages } from '../kit/messages.js';
import { createNotation } from '../kit/notation-legend.js';
import { readPalette } from '../kit/palette.js';
import { DEMOS, parseConceptHash, serializeConceptHash, normalizeDemoState, defaultDemoState } from './state.js';
import { DEMO_META } from './meta.js';
import { createContextDemo } from './context.js';
import { createQkvDemo } from './qkv.js';
import { createScoresDemo } from './scores.js';
import { createScaleDemo } from './scale.js';
import { createHeadsDemo } from './heads.js';
import { createOrderDemo } from './order.js';
import { createMasksDemo } from './masks.js';

const FACTORIES = {
  context: createContextDemo,
  qkv: createQkvDemo,
  scores: createScoresDemo,
  scale: createScaleDemo,
  heads: createHeadsDemo,
  order: createOrderDemo,
  masks: createMasksDemo,
};

const doc = document;
const main = doc.getElementById('concepts');
const navLinks = [...doc.querySelectorAll('.cx-nav-link')];
const tooltip = createTooltip(doc.getElementById('cx-tips'));

// ---- state ------------------------------------------------------------------------
const first = parseConceptHash(location.hash);
let current = first.demo;
let theme = first.theme;
const states = Object.fromEntries(DEMOS.map((d) => [d, defaultDemoState(d)]));
states[current] = first.state;
let written = location.hash.replace(/^#/, '');
let urlTimer = 0;
let notices = first.problems;

const messages = createMessages(doc.getElementById('cx-messages'), {
  onDismiss: () => {
    notices = [];
    showMessages();
  },
});
let fatal = null;
function showMessages() {
  const list = [];
  if (fatal) list.push({ id: 'fatal', kind: 'error', title: 'The engine could not start:', text: fatal });
  if (notices.length) list.push({ id: 'url', kind: 'notice', title: 'Some settings in the link could not be used,', text: 'so defaults were used for them:', details: notices, dismissible: true });
  messages.update(list);
}
showMessages();

function writeUrl() {
  urlTimer = 0;
  delete doc.body.dataset.urlPending;
  // a link or a navigation click changed the hash and its hashchange event is
  // still queued: it wins, so do not overwrite it
  if (location.hash.replace(/^#/, '') !== written) return;
  const hash = serializeConceptHash(current, states[current], theme);
  if (hash !== written) {
    written = hash;
    history.replaceState(null, '', `#${hash}`);
  }
}

function scheduleUrl() {
  // replaceState costs a few milliseconds: write after the frame is painted
  if (urlTimer) return;
  doc.body.dataset.urlPending = '1';
  urlTimer = setTimeout(writeUrl, 60);
}

// ---- theme and palette --------------------------------------------------------------
let palette = null;
doc.getElementById('cx-notation')?.append(createNotation());
const themeToggle = createThemeToggle(doc.getElementById('cx-theme'), {
  onChange(next) {
    theme = next;
    applyTheme();
    scheduleUrl();
    render();
  },
});
function applyTheme() {
  if (theme === 'system') delete doc.documentElement.dataset.theme;
  else doc.documentElement.dataset.theme = theme;
  palette = null;
  themeToggle.update(null, { theme });
}
applyTheme();
window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
  palette = null;
  render();
});
const currentPalette = () => {
  if (!palette) palette = readPalette(doc.documentElement);
  return palette;
};

// ---- demos --------------------------------------------------------------------------
let engine = null;
const mounted = {}; // name → {section, demo, renders}

function sectionFor(name) {
  if (mounted[name]) return mounted[name];
  const section = el('section', 'cx-section', { id: `demo-${name}`, dataset: { demo: name }, testid: `demo-${name}`, attrs: { 'aria-labelledby': `demo-title-${name}` } });
  main.append(section);
  const entry = { section, demo: null, renders: 0 };
  mounted[name] = entry;
  entry.demo = FACTORIES[name](section, {
    engine,
    tooltip,
    palette: currentPalette,
    onState: (patch) => setDemoState(name, patch),
  });
  const title = section.querySelector('.cx-demo-title');
  if (title) title.id = `demo-title-${name}`;
  // the same idea as a lesson that asks before it shows (lessons.html; the ids are the same), under the title
  const lesson = el('p', 'cx-lesson', {}, el('a', 'cx-link', { href: `lessons.html#lesson=${name}&screen=1`, text: `Take the lesson first: predict, then see \u2192`, testid: `lesson-link-${name}` }));
  if (title) title.after(lesson);
  else section.prepend(lesson);
  section.append(pager(name));
  return entry;
}

/** "← previous idea · next idea →" under a demo. */
function pager(name) {
  const i = DEMOS.indexOf(name);
  const nav = el('nav', 'cx-pager', { attrs: { 'aria-label': 'Previous and next idea' } });
  if (i > 0) {
    const p = DEMOS[i - 1];
    nav.append(el('a', 'cx-link cx-prev', { href: `#demo=${p}`, text: `\u2190 ${DEMO_META[p].number}. ${DEMO_META[p].short}` }));
  }
  if (i < DEMOS.length - 1) {
    const n = DEMOS[i + 1];
    nav.append(el('a', 'cx-link cx-next', { href: `#demo=${n}`, text: `${DEMO_META[n].number}. ${DEMO_META[n].short} \u2192` }));
  }
  return nav;
}

function render() {
  if (!engine) return;
  const entry = sectionFor(current);
  for (const [name, m] of Object.entries(mounted)) {
    const hide = name !== current;
    if (hide && !m.section.hidden) m.demo.hide?.(); // a race there pauses
    m.section.hidden = hide;
  }
  entry.demo.update(states[current]);
  entry.renders += 1;
  entry.section.dataset.rendered = String(entry.renders);
  main.dataset.demo = current;
  main.dataset.state = 'ready';
}

function markNav() {
  for (const a of navLinks) {
    if (a.dataset.demo === current) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  doc.title = `${DEMO_META[current].number}. ${DEMO_META[current].short} \u00b7 Concepts \u00b7 Attention Playground`;
}
markNav();

function setDemoState(name, patch) {
  const next = normalizeDemoState(name, { ...states[name], ...patch });
  const same = Object.keys(next).every((k) => JSON.stringify(next[k]) === JSON.stringify(states[name][k]));
  if (same) return;
  states[name] = next;
  if (name !== current) return;
  scheduleUrl();
  render();
}

// A link pasted into the address bar, or a click in the navigation.
window.addEventListener('hashchange', () => {
  if (urlTimer) {
    clearTimeout(urlTimer);
    urlTimer = 0;
    delete doc.body.dataset.urlPending;
  }
  const hash = location.hash.replace(/^#/, '');
  if (hash === written) return;
  written = hash;
  const parsed = parseConceptHash(location.hash);
  const switched = parsed.demo !== current;
  current = parsed.demo;
  // "#demo=x" alone (the navigation) keeps what the learner did in that demo
  if (parsed.given.size > 0 || parsed.problems.length) states[current] = parsed.state;
  if (parsed.theme !== theme) {
    theme = parsed.theme;
    applyTheme();
  }
  notices = parsed.problems;
  showMessages();
  markNav();
  render();
  scheduleUrl();
  if (switched) {
    const title = mounted[current]?.section.querySelector('.cx-demo-title');
    title?.focus({ preventScroll: true });
    if (main.getBoundingClientRect().top < 0) main.scrollIntoView({ block: 'start' });
  }
});

// ---- start --------------------------------------------------------------------------
createEngine().then((e) => {
  engine = e;
  main.replaceChildren();
  render();
  scheduleUrl();
}, (error) => {
  fatal = String(error?.message ?? error);
  main.dataset.state = 'error';
  main.replaceChildren(el('p', 'cx-status', { text: `The demonstrations need the attention engine, which could not start: ${fatal}` }));
  showMessages();
});
