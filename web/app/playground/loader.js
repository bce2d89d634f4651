// "Load a model…" on the playground (the controller's part; the view is
// views/hub-loader.js): a Hub id or a folder of files the user gives, or a
// link's pretrained model, loaded in its worker (hub.js openPretrained) with
// its progress (bytes, MB/s), Cancel, and why it failed ("Download again" when
// its files came from a server: a failed load leaves none of them in the
// cache). One load at a time: a new one cancels the last, and so does picking
// another model; the page keeps the model it shows until the new one works.
// A model a link names waits for the reader's go-ahead (ask.js) unless it
// loaded here before, or the page's author named it (allowed).
//
//   const loader = createModelLoader(slot, { hubBase: () => base, setHub, inPage, loadEngine, engine, allowed, current, label, onAsk, render });
//   const handle = await loader.load({ kind: 'hub', base, id }, 'hf:<id>', { asked });
//   loader.show(); loader.update();   // the picker's "Load a model…"; from the controller's render()
//   loader.leave(name);                // the page moved to model `name`: a load of another one ends

import { createHubLoaderView } from './views/hub-loader.js';
import { openPretrained, pretrainedLabel, failureText } from '../hub/hub.js';
import { createAsk } from './ask.js';

/**
 * current(): the model on screen; label(name): a model's label; onAsk(source, name): the
 * user asked for a model (the controller opens it and puts it on screen); render(): redraw;
 * engine(): the page's engine; allowed: names that load without asking (the page author's).
 */
export function createModelLoader(slot, { hubBase, setHub = () => {}, inPage, loadEngine, engine, allowed = [], current, label, onAsk, render }) {
  let load = null; // {name, source, abort: AbortController, asking, progress, file, since} while one loads
  let open = false;
  let error = null; // {title, text, retry}: why the last load failed
  let last = null; // {source, name}: what the user asked for last ("Download again")
  // names the reader or the author asked for: they load without the question
  const yes = new Set(allowed);
  // names the page offered with one click (the real model under the sentence box): its size is asked at once
  const offered = new Set();
  const ask = createAsk({ engine, render });

  const userAsks = (source, name) => {
    last = { source, name };
    onAsk(source, name);
  };
  const view = createHubLoaderView(slot, {
    // the panel's mirror goes into the state (and the link) before the model is asked for
    onHub(id, base) {
      if (base !== hubBase()) setHub(base);
      userAsks({ kind: 'hub', base, id }, `hf:${id}`);
    },
    onFiles: (files, folder) => userAsks({ kind: 'files', files }, `local:${folder || 'your model'}`),
    onRetry: () => last && userAsks(last.source, last.name),
    onCancel: () => load?.abort.abort(),
    onClose() {
      open = false;
      render();
    },
  });

  function update() {
    const busy = Boolean(load && !load.asking);
    view.update({ open: open || busy, busy, label: busy ? pretrainedLabel(load.name) : '', progress: load?.progress ?? null, error: load ? null : error, hub: hubBase() });
  }

  /**
   * Loads a pretrained model in its worker: the handle, or a rejection (code 'superseded'
   * when a newer load took its place: nothing to say then). asked: the reader asked for it
   * just now ("Load a model…", "Download again"); else a link's model waits for the question.
   */
  async function loadModel(source, name, { asked = false } = {}) {
    load?.abort.abort();
    const mine = { name, source, abort: new AbortController(), asking: false, progress: null, file: null, since: 0 };
    load = mine;
    error = null;
    const superseded = () => Object.assign(new Error('another model is loading'), { code: 'superseded' });
    try {
      if (!asked && source.kind !== 'files' && !yes.has(name)) {
        mine.asking = true;
        render();
        await ask.wait(source, name, mine.abort.signal, { offered: offered.has(name) });
        mine.asking = false;
      }
      if (load !== mine) throw superseded();
      render();
      const handle = await openPretrained(source, {
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
      });
      if (load !== mine) {
        handle.dispose();
        throw superseded();
      }
      load = null;
      open = false;
      yes.add(name);
      return handle;
    } catch (e) {
      if (load !== mine || e?.code === 'superseded') throw superseded();
      load = null;
      // a model the page opened on (a link): the message bar and the panel say why, not the loader
      const here = current() === name;
      error = e?.code === 'cancelled' || here ? null : {
        title: `${pretrainedLabel(name)} could not be loaded:`,
        text: `${failureText(e)}. The page still shows ${label(current())}.`,
        retry: source.kind !== 'files' && e?.code !== 'too_large',
      };
      throw e;
    }
  }

  return {
    load: loadModel,
    show() {
      open = true;
    },
    update,
    /** The question about a link's model, for the message bar (or null), and its buttons. */
    message: () => ask.message(),
    act: (action) => ask.act(action),
    /** The reader clicked the page's offer of model `name`: its question asks for the size at once. */
    offer: (name) => offered.add(name),
    /** The step panel's note while model `name` waits for the reader (or null). */
    status: (name) => ask.status(name),
    /** The page moved to model `name`: a load (or question) of another model ends, its worker with it. */
    leave(name) {
      if (!load || load.name === name) return;
      const gone = load;
      load = null;
      gone.abort.abort();
      render();
    },
    destroy() {
      load?.abort.abort();
    },
  };
}
