// The training lab's files: a checkpoint loaded (the button or a drop) or saved
// (Download .safetensors), the model handed to the playground (stored in this
// browser, app/kit/model-store.js), and a .txt file to train on.
//
//   const files = createFiles({ session, lab, send, notices, url, applyCorpus });
//   files.loadModel(file); files.loadText(file);
//   files.saved(m)              // the worker's 'saved' reply: download it or open the playground
//   files.bindDrop(document.body)

import { el } from '../kit/dom.js';
import { formatValue } from '../kit/format.js';
import { MAX_CORPUS } from './state.js';
import { storeModel } from '../kit/model-store.js';
import { SAMPLE_TEXT } from './sample-text.js';

const MAX_FILE_BYTES = 64 * 1024 * 1024;

async function readFile(file) {
  if (file.size > MAX_FILE_BYTES) throw new Error(`the file has ${formatValue(file.size / 1048576, 3)} MB, more than the ${MAX_FILE_BYTES / 1048576} MB this page reads`);
  return new Uint8Array(await file.arrayBuffer());
}

/** "copy-L2H4C64-seed42-step300.safetensors": the task, the shape, the seed and the step. */
function fileName(m, state) {
  const s = m.settings ?? state;
  return `${s.task}-L${s.layers}H${s.heads}C${s.dModel}-seed${s.seed}-step${m.step}.safetensors`;
}

export function createFiles({ session, lab, send, notices, url, applyCorpus }) {
  const doc = lab.ownerDocument;

  function download(bytes, m) {
    const href = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
    const a = el('a', null, { href, download: fileName(m, session.state) });
    doc.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(href), 10000);
  }

  async function toPlayground(bytes, m) {
    try {
      const key = await storeModel(bytes, { settings: m.settings, step: m.step, trainLink: url.trainLink(m.step) });
      // the lab's own URL holds this step before it leaves, so Back finds the copy just stored
      session.state.step = m.step;
      url.write();
      const params = new URLSearchParams();
      params.set('model', `lab:${key}`);
      params.set('from', url.trainLink(m.step));
      const probe = session.model?.probe;
      if (probe?.tokens?.length) params.set('s', probe.tokens.slice(0, probe.length).join(' '));
      const href = `index.html#${params.toString()}`;
      lab.dataset.playgroundLink = href;
      location.assign(href);
    } catch (e) {
      notices.notify('playground', 'error', 'The model could not be handed to the playground:', `${e.message}. Download it instead and load the file there.`, { dismissible: true });
    }
  }

  async function loadModel(file) {
    notices.clear('file');
    try {
      const bytes = await readFile(file);
      session.gen += 1;
      const text = session.state.task === 'text' ? session.state.corpus : '';
      send({ type: 'load', gen: session.gen, bytes: bytes.buffer, name: file.name, corpus: text, probeText: text || SAMPLE_TEXT }, [bytes.buffer]);
    } catch (e) {
      notices.notify('file', 'error', 'That file could not be loaded as a model:', `${e.message}. The model you had is unchanged.`, { dismissible: true });
      lab.dataset.fileError = '1';
    }
  }

  async function loadText(file) {
    notices.clear('file');
    try {
      const bytes = await readFile(file);
      let text;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        throw new Error('it is not UTF-8 text');
      }
      if (text.length > MAX_CORPUS) {
        text = text.slice(0, MAX_CORPUS);
        notices.notify('file', 'notice', 'The text was cut:', `only its first ${MAX_CORPUS.toLocaleString('en')} characters are used.`);
      }
      await applyCorpus(text);
    } catch (e) {
      notices.notify('file', 'error', 'That text file could not be read:', `${e.message}.`, { dismissible: true });
    }
  }

  return {
    loadModel,
    loadText,
    /** The worker's 'saved' reply: the checkpoint's bytes for a download or for the playground. */
    saved(m) {
      if (m.purpose === 'download') download(m.bytes, m);
      else if (m.purpose === 'playground') toPlayground(m.bytes, m);
    },
    /** A .safetensors file dropped anywhere on the page loads as a model, a text file as the text to train on. */
    bindDrop(zone) {
      zone.addEventListener('dragover', (e) => {
        if (!e.dataTransfer?.types.includes('Files')) return;
        e.preventDefault();
        doc.body.classList.add('is-dragging');
      });
      zone.addEventListener('dragleave', (e) => {
        if (e.target === doc.body || !doc.body.contains(e.relatedTarget)) doc.body.classList.remove('is-dragging');
      });
      zone.addEventListener('drop', (e) => {
        doc.body.classList.remove('is-dragging');
        const file = e.dataTransfer?.files?.[0];
        if (!file || !session.tasks) return;
        e.preventDefault();
        if (/\.(txt|text|md)$/i.test(file.name) || file.type.startsWith('text/')) loadText(file);
        else loadModel(file);
      });
    },
  };
}
