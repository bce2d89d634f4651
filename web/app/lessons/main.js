// The lessons page's bootstrap: reads the lesson and screen from the URL hash,
// mounts the lessons, and keeps the hash in step with every screen the learner
// opens (so the Back button and a copied link both work).

import { createEngine } from '../../engine.js';
import { parseLessonHash, lessonHash } from './state.js';
import { mountLessons } from './lessons.js';

function fetchShipped(name, file) {
  return fetch(new URL(`../../generated/models/${file}`, import.meta.url)).then((r) => {
    if (!r.ok) throw new Error(`the ${name} model (generated/models/${file}) could not be loaded: HTTP ${r.status}`);
    return r.arrayBuffer();
  }).then((b) => new Uint8Array(b));
}

const root = document.getElementById('lessons');
const first = parseLessonHash(location.hash);
let written = location.hash.replace(/^#/, '');

const lessons = mountLessons(root, {
  loadEngine: () => createEngine(),
  fetchShipped,
  initial: first,
  href: (s) => `#${lessonHash(s)}`,
  // the teacher's index shows each screen's whole address, to paste into a course page
  pageHref: (s) => new URL(`#${lessonHash(s)}`, location.href).href,
  onNavigate(s) {
    const hash = lessonHash(s);
    if (hash === written) return;
    written = hash;
    history.pushState(null, '', `#${hash}`);
  },
});
root.querySelector('.boot')?.remove();

function follow() {
  const hash = location.hash.replace(/^#/, '');
  if (hash === written) return;
  written = hash;
  lessons.show(parseLessonHash(hash));
}
window.addEventListener('hashchange', follow);
window.addEventListener('popstate', follow);
