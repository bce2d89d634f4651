// "Load a model…" on the playground (the controller's part; the view is
// views/hub-loader.js): a Hub id or a folder of files the user gives, or a
// link's pretrained model, loaded in its worker (hub.js openPretrained) with
// its progress (bytes, MB/s), Cancel, and why it failed. One load at a time:
// a new one cancels the last; the page keeps the model it shows until the
// new one works.
//
//   const loader = createModelLoader(slot, { hubBase, inPage, loadEngine, current, label, onAsk, render });
//   const handle = await loader.load({ kind: 'hub', base, id }, 'hf:<id>');
//   loader.show(); loader.update();   // the picker's "Load a model…"; from the controller's render()

import { createHubLoaderView } from './views/hub-loader.js';
import { openPretrained, pretrainedLabel } from '../hub/hub.js';

/**
 * current(): the model on screen; label(name): a model's label; onAsk(source, name): the
 * user asked for a model (the controller opens it and puts it on screen); render(): redraw.
 */
export function createModelLoader(slot, { hubBase, inPage, loadEngine, current, label, onAsk, render }) {
  let load = null; // {name, abort: AbortController, progress, file, since} while one loads
  let open = false;
  let error = null; // {title, text}: why the last load failed

  const view = createHubLoaderView(slot, {
    onHub: (id) => onAsk({ kind: 'hub', base: hubBase, id }, `hf:${id}`),
    onFiles: (files, folder) => onAsk({ kind: 'files', files }, `local:${folder || 'your model'}`),
    onCancel: () => load?.abort.abort(),
    onClose() {
      open = false;
      render();
    },
  });

  function update() {
    view.update({ open: open || Boolean(load), busy: Boolean(load), label: load ? pretrainedLabel(load.name) : '', progress: load?.progress ?? null, error: load ? null : error });
  }

  /**
   * Loads a pretrained model in its worker: the handle, or a rejection (code 'superseded'
   * when a newer load took its place: nothing to say then).
   */
  function loadModel(source, name) {
    load?.abort.abort();
    const mine = { name, abort: new AbortController(), progress: null, file: null, since: 0 };
    load = mine;
    error = null;
    render();
    const superseded = () => Object.assign(new Error('another model is loading'), { code: 'superseded' });
    return openPretrained(source, {
      signal: mine.abort.signal,
      inPage,
      loadEngine,
      onProgress(p) {
        if (load !== mine) return;
        const now = performance.now();
        if (p.file !== mine.file || p.phase !== mine.progress?.phase) {
          mine.file = p.file;
          mine.since = now;
        }
        const seconds = (now - mine.since) / 1000;
        mine.progress = { ...p, rate: seconds > 0.5 ? p.loaded / seconds : 0 };
        update();
      },
    }).then((handle) => {
      if (load !== mine) {
        handle.dispose();
        throw superseded();
      }
      load = null;
      open = false;
      return handle;
    }, (e) => {
      if (load !== mine) throw superseded();
      load = null;
      // a model the page opened on (a link): the message bar and the panel say why, not the loader
      const here = current() === name;
      error = e?.code === 'cancelled' || here ? null : { title: `${pretrainedLabel(name)} could not be loaded:`, text: `${String(e?.message ?? e)}. The page still shows ${label(current())}.` };
      throw e;
    });
  }

  return {
    load: loadModel,
    show() {
      open = true;
    },
    update,
    destroy() {
      load?.abort.abort();
    },
  };
}
