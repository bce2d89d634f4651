// Page bootstrap: reads the state from the URL hash, mounts the playground
// into <main id="app">, and mirrors every state change back into the hash.

import { mountPlayground } from './playground.js';
import { parseHash, serializeState } from './state.js';
import { loadModel } from '../kit/model-store.js';

const root = document.getElementById('app');
const { state, problems, empty } = parseHash(location.hash);
let written = location.hash.replace(/^#/, '');
let pending = null;
let timer = 0;

function writeUrl() {
  timer = 0;
  delete root.dataset.urlPending;
  const hash = serializeState(pending);
  if (hash !== written) {
    written = hash;
    history.replaceState(null, '', `#${hash}`);
  }
}

function mirrorTheme(theme) {
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

const playground = mountPlayground(root, {
  initialState: state,
  notices: problems,
  keyboardTarget: document,
  // a model trained in the lab ("Open in playground"): its checkpoint in this origin's IndexedDB
  loadLab: (key) => loadModel(key),
  freshStart: Boolean(empty),
  // …on the heads step, where the meaning is (the tour from step 1 is a button there)
  freshStep: 'heads',
  // where "Load a model…" fetches Hub models from: huggingface.co, or a mirror a host names
  // with <script>window.attentionPlaygroundHub = 'https://…'</script> before this module
  ...(typeof window.attentionPlaygroundHub === 'string' ? { hubBase: window.attentionPlaygroundHub } : {}),
  trainHref: 'train.html',
  lessonsHref: 'lessons.html',
  onStateChange(s) {
    mirrorTheme(s.theme);
    pending = s;
    // replaceState costs several milliseconds: write the URL after the frame is painted
    if (!timer) {
      root.dataset.urlPending = '1';
      timer = setTimeout(writeUrl, 60);
    }
  },
});
mirrorTheme(state.theme);

// A link pasted into the address bar of an open page.
window.addEventListener('hashchange', () => {
  if (timer) {
    // the pasted link wins over a write still waiting
    clearTimeout(timer);
    timer = 0;
    delete root.dataset.urlPending;
  }
  const hash = location.hash.replace(/^#/, '');
  if (hash === written) return;
  written = hash;
  const parsed = parseHash(location.hash);
  playground.setState(parsed.state, parsed.problems);
});
