// "Load a model…": the panel that takes a Hugging Face Hub id or a model's
// files (dropped, picked one by one, or a whole folder), then shows the
// download's progress (bytes, MB/s, Cancel) and, when it fails, why. A view:
// it reports what the user asked for and draws what it is told.
//
//   const loader = createHubLoaderView(parent, { onHub: (id, hubBase) => …, onFiles: (files, name) => …, onRetry, onCancel, onClose });
//   loader.update({ open, busy, label, progress: {phase, file, loaded, total, cached, rate}, error: {title, text, retry}, hub });
//   (hub: where Hub ids are fetched from now, shown in the mirror's box until the user edits it)
//   (error.retry: offer "Download again", which calls onRetry)

import { el, uniqueId } from '../../kit/dom.js';
import { parseHubId, parseHubMirror, DEFAULT_HUB_BASE } from '../../hub/source.js';
import { formatBytes } from '../../kit/format.js';

/** The ids the box suggests (each fetched only when the user asks). */
export const SUGGESTED_IDS = Object.freeze(['openai-community/gpt2', 'distilgpt2', 'bert-base-uncased']);

/** Every file under a dropped item (a folder is read through, one level of names kept). */
async function droppedFiles(dataTransfer) {
  const entries = [...(dataTransfer.items ?? [])].map((it) => it.webkitGetAsEntry?.()).filter(Boolean);
  if (!entries.length) return { files: [...(dataTransfer.files ?? [])], name: null };
  const files = [];
  const readDir = (dir) => new Promise((resolve) => {
    const reader = dir.createReader();
    const all = [];
    const next = () => reader.readEntries((batch) => {
      if (!batch.length) resolve(all);
      else {
        all.push(...batch);
        next();
      }
    }, () => resolve(all));
    next();
  });
  const walk = async (entry, depth) => {
    if (entry.isFile) files.push(await new Promise((resolve, reject) => entry.file(resolve, reject)));
    else if (entry.isDirectory && depth < 3) for (const e of await readDir(entry)) await walk(e, depth + 1);
  };
  for (const e of entries) await walk(e, 0);
  const folder = entries.length === 1 && entries[0].isDirectory ? entries[0].name : null;
  return { files, name: folder };
}

/** "123 MB of 548 MB · 12.3 MB/s" */
export function progressText(p) {
  const what = p.phase === 'read' ? 'Reading into the engine' : p.cached ? 'From this browser\u2019s cache' : 'Downloading';
  const amount = p.total ? `${formatBytes(p.loaded)} of ${formatBytes(p.total)}` : formatBytes(p.loaded);
  const rate = p.rate && p.phase !== 'read' && !p.cached ? ` \u00b7 ${formatBytes(p.rate)}/s` : '';
  return `${what} ${p.file}: ${amount}${rate}`;
}

const reducedMotion = () => Boolean(globalThis.matchMedia?.('(prefers-reduced-motion: reduce)').matches);

export function createHubLoaderView(parent, { onHub, onFiles, onRetry = () => {}, onCancel, onClose }) {
  const title = el('h2', 'hub-title', { text: 'Load a pretrained model' });
  const close = el('button', 'btn btn-quiet hub-close', { type: 'button', text: 'Close', testid: 'hub-close' });
  close.addEventListener('click', () => onClose());
  const lead = el('p', 'hub-lead', { text: 'A GPT-2 or BERT model, from the Hugging Face Hub or from its files on your computer. It runs in this page, on our engine; your files are not sent anywhere.' });

  // the Hub
  const idInput = el('input', 'control hub-id', { type: 'text', placeholder: 'openai-community/gpt2', spellcheck: false, autocomplete: 'off', testid: 'hub-id' });
  idInput.setAttribute('autocapitalize', 'off');
  const listId = uniqueId('hub-ids');
  const list = el('datalist', null, { id: listId });
  for (const id of SUGGESTED_IDS) list.append(el('option', null, { value: id }));
  idInput.setAttribute('list', listId);
  const idLabel = el('label', 'field-label', { text: 'Hub model id', htmlFor: (idInput.id = uniqueId('hub-id')) });
  const fetchButton = el('button', 'btn btn-primary', { type: 'submit', text: 'Fetch', testid: 'hub-fetch' });
  const idHint = el('p', 'field-hint', { text: 'Downloaded once (GPT-2 is 548 MB), then kept in this browser: the next visit needs no network.' });
  // the mirror: where ids are fetched from (kept in the link); edited, it wins over what update() shows
  const mirrorInput = el('input', 'control hub-mirror', { type: 'url', placeholder: DEFAULT_HUB_BASE, spellcheck: false, autocomplete: 'off', testid: 'hub-mirror' });
  mirrorInput.setAttribute('autocapitalize', 'off');
  let mirrorEdited = false;
  mirrorInput.addEventListener('input', () => { mirrorEdited = true; });
  const mirrorLabel = el('label', 'field-label', { text: 'Fetched from (the Hub, or a mirror of it)', htmlFor: (mirrorInput.id = uniqueId('hub-mirror')) });
  const mirrorHint = el('p', 'field-hint', { text: `A copy of the Hub at another https address, or on this computer (http://localhost:…). Empty: ${DEFAULT_HUB_BASE}. The link keeps it.` });
  const form = el('form', 'hub-form', {}, idLabel, el('div', 'hub-row', {}, idInput, fetchButton), list, idHint, mirrorLabel, mirrorInput, mirrorHint);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const mirror = parseHubMirror(mirrorInput.value);
    if (mirror.error) {
      mirrorInput.setAttribute('aria-invalid', 'true');
      asked = 'hub';
      showError({ title: 'That is not a Hub address:', text: `“${mirrorInput.value.trim().slice(0, 80)}” ${mirror.error}.` });
      return;
    }
    mirrorInput.removeAttribute('aria-invalid');
    const id = parseHubId(idInput.value);
    if (!id) {
      asked = 'hub';
      idInput.setAttribute('aria-invalid', 'true');
      showError({ title: 'That is not a Hub model id:', text: 'write it as on huggingface.co, e.g. openai-community/gpt2 or distilgpt2.' });
      return;
    }
    idInput.removeAttribute('aria-invalid');
    asked = 'hub';
    mirrorEdited = false;
    onHub(id, mirror.base);
  });

  // files
  const filesInput = el('input', 'hub-file-input', { type: 'file', multiple: true, testid: 'hub-files' });
  const folderInput = el('input', 'hub-file-input', { type: 'file', multiple: true, testid: 'hub-folder' });
  folderInput.setAttribute('webkitdirectory', '');
  const pickFiles = el('button', 'btn', { type: 'button', text: 'Choose files\u2026' });
  const pickFolder = el('button', 'btn', { type: 'button', text: 'Choose a folder\u2026' });
  pickFiles.addEventListener('click', () => filesInput.click());
  pickFolder.addEventListener('click', () => folderInput.click());
  const fromInput = (input) => {
    const files = [...input.files];
    const folder = files[0]?.webkitRelativePath?.split('/')[0] || null;
    input.value = '';
    if (files.length) {
      asked = 'files';
      onFiles(files, folder);
    }
  };
  filesInput.addEventListener('change', () => fromInput(filesInput));
  folderInput.addEventListener('change', () => fromInput(folderInput));
  const drop = el('div', 'hub-drop', { testid: 'hub-drop' },
    el('p', 'hub-drop-text', { text: 'Drop a model folder or its files here: config.json, model.safetensors, and tokenizer.json (or vocab.json + merges.txt, or vocab.txt).' }),
    el('div', 'hub-row', {}, pickFiles, pickFolder),
    filesInput, folderInput);
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('is-over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('is-over'));
  drop.addEventListener('drop', async (e) => {
    e.preventDefault();
    drop.classList.remove('is-over');
    const { files, name } = await droppedFiles(e.dataTransfer);
    if (files.length) {
      asked = 'files';
      onFiles(files, name);
    }
  });

  // progress and errors
  const bar = el('progress', 'hub-bar', { max: 1, value: 0, testid: 'hub-bar' });
  const loading = el('p', 'hub-loading', { testid: 'hub-loading' });
  const barText = el('p', 'hub-progress-text', { testid: 'hub-progress-text', attrs: { 'aria-live': 'polite' } });
  const cancel = el('button', 'btn', { type: 'button', text: 'Cancel', testid: 'hub-cancel' });
  cancel.addEventListener('click', () => onCancel());
  const progress = el('div', 'hub-progress', { hidden: true, testid: 'hub-progress' }, loading, barText, el('div', 'hub-row', {}, bar, cancel));
  const error = el('div', 'message is-error hub-error', { hidden: true, testid: 'hub-error', attrs: { role: 'alert' } });

  const body = el('div', 'hub-body', {}, form, error, el('p', 'hub-or', { text: 'or' }), drop);
  const panel = el('section', 'hub-loader', { hidden: true, testid: 'hub-loader', attrs: { 'aria-label': 'Load a pretrained model' } },
    el('div', 'hub-head', {}, title, close), lead, body, progress);
  parent.append(panel);

  const retry = el('button', 'btn btn-small hub-retry', { type: 'button', text: 'Download again', testid: 'hub-retry' });
  retry.addEventListener('click', () => onRetry());

  // the error shows where the user acted: under the Hub's box, or under the drop zone
  let asked = 'hub';
  function showError(e) {
    const place = asked === 'files' ? drop : form;
    if (place.nextElementSibling !== error) place.after(error);
    const appears = Boolean(e) && error.hidden;
    error.hidden = !e;
    error.replaceChildren();
    if (e) error.append(el('strong', 'message-title', { text: e.title }), el('span', null, { text: ` ${e.text}` }));
    if (e?.retry) error.append(el('div', 'message-actions', {}, retry));
    if (appears && panel.isConnected) error.scrollIntoView?.({ block: 'nearest', behavior: reducedMotion() ? 'auto' : 'smooth' });
  }

  let wasOpen = false;
  return {
    element: panel,
    /** label: the model that loads (while busy). */
    update({ open = false, busy = false, label = '', progress: p = null, error: e = null, hub = DEFAULT_HUB_BASE } = {}) {
      panel.hidden = !open;
      if (!mirrorEdited && document.activeElement !== mirrorInput) mirrorInput.value = hub === DEFAULT_HUB_BASE ? '' : hub;
      if (open && !wasOpen) {
        idInput.focus({ preventScroll: true });
        panel.scrollIntoView?.({ block: 'nearest' });
      }
      wasOpen = open;
      // while a model loads, only its progress (and Cancel) is shown
      body.hidden = busy;
      for (const c of [idInput, mirrorInput, fetchButton, pickFiles, pickFolder]) c.disabled = busy;
      drop.classList.toggle('is-busy', busy);
      progress.hidden = !busy;
      loading.textContent = busy ? `Loading ${label}\u2026` : '';
      if (busy && p) {
        bar.max = p.total || 1;
        bar.value = p.total ? p.loaded : 0;
        if (!p.total) bar.removeAttribute('value');
        barText.textContent = progressText(p);
      } else if (busy) {
        bar.removeAttribute('value');
        barText.textContent = 'Starting\u2026';
      }
      showError(e);
    },
  };
}
