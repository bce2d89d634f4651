// The model sources of the playground, one per model name: where a name
// leads (random weights, a model trained here, a pretrained model in a
// worker) is decided here and nowhere else. The controller talks to every
// source through the same interface:
//
//   name, featured ({layer, head} a fresh page opens on, or null)
//   learned        the weights were learned (steps by hand move them)
//   batches        it runs several padded sentences at once (batch mode)
//   remote         its traces come later, from a worker
//   describe()     {about (the page's line), line (the picker's), fixed: null (the
//                  controls act on it) | {config (null while loading), seed, note}}
//   trace(state, {onSynced}) → {trace, …} or a Promise of it: the step data of the state
//                  (onSynced({applied, problem}): how many of the link's steps by hand held)
//   select(result, state) → this source's last result seen at the state's layer or
//                  batch sentence, or null: run again
//   learn(state, result, {onAnswer}) → v.learn, what the Learn steps read ({unavailable} without)
//   generation     null, or {available, reason, layers}; generate(sentence, ids, options) when available
//   fit(state) → null, or {patch, problems}: link values this model cannot take (a generated
//                  id past its vocabulary), put back to their defaults, and why (the link's notice)
//   busy()         (optional) it computes something the page still waits for (a worker's request)
//   dispose()
//
//   const sources = createSources({ fetchShipped, loadLab, hubBase, loadPretrained });
//   sources.start(engine);
//   sources.get(name) ?? await sources.open(name);   // rejects with {page: {title, text, link, retry}}
//   sources.leave(name);   // the page moved to another model: a source still computing for it ends

import { createRandomSource, RANDOM_DESCRIPTION } from './random.js';
import { createTrainedSource, TRAINED_ABOUT } from './trained.js';
import { createPretrainedSource } from './pretrained.js';
import { createModelCache, ModelNotFound, modelLabel } from '../models.js';
import { isPretrainedName, sourceOf, pretrainedLabel, failureText, weightsAbout } from '../../hub/hub.js';

/** An error whose `page` is what the page says: {title, text, link}. */
function pageError(e, page) {
  return Object.assign(e instanceof Error ? e : new Error(page.text), { page });
}

/** What a trained model that could not be loaded says; labLink: the training lab's link of a lab model. */
function trainedLoadError(e, name, labLink) {
  return e instanceof ModelNotFound
    ? { title: 'This model is not in this browser:', text: `${e.message}. Meanwhile, pick another model.`, link: labLink ? { href: `train.html#${labLink}`, text: 'Open the training lab with its settings \u2192' } : null }
    : { title: `The ${modelLabel(name)} model could not be loaded:`, text: String(e?.message ?? e) };
}

/**
 * fetchShipped, loadLab: models.js createModelCache's. loadPretrained(source, name, {asked}) →
 * Promise<handle>: loads a pretrained model in its worker (loader.js; asked: the reader asked
 * for it just now; rejects with code 'superseded' when another load took its place). hubBase():
 * where hf: names are fetched from now (the link's mirror, or the page's).
 */
export function createSources({ fetchShipped, loadLab, hubBase, loadPretrained }) {
  const models = createModelCache({ fetchShipped, loadLab });
  const loaded = new Map(); // name → source
  const opening = new Map(); // name → Promise<source>
  let engine = null;

  function add(source) {
    if (loaded.get(source.name) !== source) loaded.get(source.name)?.dispose();
    loaded.set(source.name, source);
    return source;
  }

  function openTrained(name, labLink) {
    return models.load(engine, name).then(
      (entry) => loaded.get(name) ?? add(createTrainedSource(entry)),
      (e) => { throw pageError(e, trainedLoadError(e, name, labLink)); },
    );
  }

  function openPretrained(name, from, asked) {
    const where = from ?? sourceOf(name, hubBase());
    if (!where) return Promise.reject(pageError(null, { title: 'This model came from files on your computer:', text: 'a link cannot bring them back. Load them again with \u201cLoad a model\u2026\u201d.' }));
    return loadPretrained(where, name, { asked: asked || Boolean(from) }).then((handle) => add(createPretrainedSource(name, handle, where)), (e) => {
      if (e?.code === 'superseded') throw e;
      const cancelled = e?.code === 'cancelled';
      throw pageError(e, {
        title: `${pretrainedLabel(name)} could not be loaded:`,
        text: cancelled ? 'the download was cancelled. Pick a model, or Load a model\u2026 again.' : failureText(e),
        // files from a server can be asked for again (a failed load left none of them in the cache)
        retry: !cancelled && where.kind !== 'files' && e?.code !== 'too_large',
      });
    });
  }

  return {
    /** The engine is there: random weights need nothing more, the others load on first use. */
    start(e) {
      engine = e;
      add(createRandomSource(e));
    },
    /** The source of a name once loaded, else null. */
    get: (name) => loaded.get(name) ?? null,
    /** Whether a name's source is being loaded. */
    opening: (name) => opening.has(name),
    /**
     * Loads a name's source (once at a time; `from`: the files or Hub id the user just gave
     * for a pretrained model, loaded anew; asked: the reader asked for this name just now,
     * "Download again"). labLink: the link's training lab settings.
     */
    open(name, { from = null, asked = false, labLink = '' } = {}) {
      if (!from && !asked && opening.has(name)) return opening.get(name);
      const p = isPretrainedName(name) ? openPretrained(name, from, asked) : openTrained(name, labLink);
      opening.set(name, p);
      const done = () => { if (opening.get(name) === p) opening.delete(name); };
      p.then(done, done);
      return p;
    },
    /** What the page says of a name's model: its source's description, or its kind's while it loads. */
    describe(name) {
      const source = loaded.get(name);
      if (source) return source.describe();
      if (name === 'random') return RANDOM_DESCRIPTION;
      return { about: isPretrainedName(name) ? weightsAbout(name) : TRAINED_ABOUT, line: 'Loading\u2026', fixed: { config: null } };
    },
    /** The picker's names beyond its fixed ones: the pretrained models loaded, and the one on screen. */
    listed(current) {
      const names = [...loaded.values()].filter((s) => s.exclusive).map((s) => s.name);
      return [...new Set([...names, ...(isPretrainedName(current) ? [current] : [])])];
    },
    /** The page moved away from model `name`: if its source still computes for it (a worker busy
     * with a trace nobody waits for now), it ends, rather than keep a core spinning. */
    leave(name) {
      const s = loaded.get(name);
      if (!s?.busy?.()) return;
      s.dispose();
      loaded.delete(name);
    },
    /** A source about to run: the models that fill a worker, but this one, are freed. */
    use(source) {
      if (!source.exclusive) return;
      for (const s of [...loaded.values()]) {
        if (s.exclusive && s !== source) {
          s.dispose();
          loaded.delete(s.name);
        }
      }
    },
    dispose() {
      for (const s of loaded.values()) s.dispose();
      loaded.clear();
    },
  };
}
