// The runs behind the controller: it asks the model's source
// (sources/registry.js) for the state's trace, loading the model first (once),
// and keeps what came back: the result on screen, why a run or the model
// failed, and why a step by hand in the link could not be taken. A source's
// trace may come later (from a worker): the newest request wins, and one for a
// model no longer picked is dropped. Nothing here knows what kind of model it
// runs: the source says (remote, batches, learned, featured).
//
//   const runs = createRuns(sources, page);
//   runs.run();              // a compute field changed
//   runs.reselect();         // the layer or the batch sentence changed: the same run seen there
//   runs.trace()             // the trace on screen: only one of the model picked
//   runs.learn()             // v.learn on a Learn step
//   runs.status(trace), runs.errors(), runs.notices()   // what the panel and the message bar say
//   runs.retry()             // "Download again": the model on screen, loaded anew
//   runs.feature(name)       // the user asked for this model here: its first trace opens on its featured head
//
// page: the controller's side: state() and replace(state) (a change the run brings, made
// quietly: no run, no render), ran() (a trace came: count it), later() (a trace that came
// later is on screen: place the query, persist, render), opened(name) (the model on screen
// has loaded), pick(name) (a model the user loaded is ready: put it on screen), feature({layer,
// head, query}) (its first trace came: open on its featured head), notice(problems)
// (link values the model could not take, put back to their defaults), persist(), render().

import { describeError } from './errors.js';
import { modelLabel } from './models.js';

const isPromise = (x) => typeof x?.then === 'function';

export function createRuns(sources, page) {
  let started = false; // the engine is there
  let result = null; // {name, source, sentence, trace, …}: the source's answer for the model `name`
  let runError = null; // {title, text}: why the last run failed
  let modelError = null; // {model, title, text, link} when the picked model could not be loaded
  let learnProblem = null; // why a step by hand in the link could not be taken
  let seq = 0; // the newest trace asked for
  let waiting = false; // a trace asked for has not come yet
  let featureNext = null; // a model the user just loaded: its first trace moves to its featured head

  const state = () => page.state();
  const sourceOnScreen = () => sources.get(state().model);

  /** Loads a model's source; from: the files or Hub id the user just gave ("Load a model…"); asked: "Download again". */
  function open(name, from = null, asked = false) {
    sources.open(name, { from, asked, labLink: state().from }).then(() => {
      if (modelError?.model === name) modelError = null;
      if (state().model === name) page.opened(name);
      else if (from) {
        // a model the user loaded opens on its featured head once its first trace is there
        featureNext = name;
        page.pick(name);
      }
    }, (e) => {
      if (e?.code === 'superseded') return;
      if (state().model === name) {
        modelError = { model: name, ...e.page };
        result = null;
      }
      page.render();
    });
  }

  /** Asks the model's source for the state's trace (loading the model first, once). */
  function run() {
    if (!started) return;
    const name = state().model;
    const source = sources.get(name);
    if (!source) {
      // a model whose load failed is not asked again while the page says why
      if (!sources.opening(name) && modelError?.model !== name) open(name);
      return;
    }
    sources.use(source);
    modelError = null;
    // a link value this model cannot take (a generated id past its vocabulary) falls back, with a note
    const fit = source.fit?.(state());
    if (fit) {
      page.replace({ ...state(), ...fit.patch });
      page.notice(fit.problems);
    }
    // batch mode pads several sentences for random weights; a trained model reads one
    if (state().batch && !source.batches) page.replace({ ...state(), batch: false });
    const mine = ++seq;
    const current = () => mine === seq && state().model === name;
    const { sentence } = state();
    const onSynced = (synced) => {
      if (!current()) return;
      learnProblem = synced.problem;
      if (synced.applied < state().sgd.length) page.replace({ ...state(), sgd: state().sgd.slice(0, synced.applied) });
    };
    const shown = (r) => {
      result = { ...r, name, source, sentence };
      runError = null;
      page.ran();
    };
    const failed = (e) => {
      const same = result?.name === name;
      runError = describeError(e, same);
      if (!same) result = null;
    };
    let out;
    waiting = false;
    try {
      out = source.trace(state(), { onSynced });
    } catch (e) {
      failed(e);
      return;
    }
    if (!isPromise(out)) {
      shown(out);
      return;
    }
    waiting = true;
    out.then((r) => {
      if (!current()) return;
      waiting = false;
      shown(r);
      const f = featureNext === name ? source.featured : null;
      if (featureNext === name) featureNext = null;
      if (f) page.feature(f);
      else page.later();
    }, (e) => {
      if (!current()) return;
      waiting = false;
      failed(e);
      page.render();
    });
  }

  /** The layer or the batch sentence changed: the same run seen there, or a new one. */
  function reselect() {
    const source = sourceOnScreen();
    if (!source) return;
    // a trace still to come is of the view before: ask again
    if (result?.source !== source) {
      if (waiting) run();
      return;
    }
    const r = source.select(result, state());
    if (r) result = r;
    else run();
  }

  /** A backward that came later (a worker's) for the state on screen; a step by hand it could not take is dropped. */
  function learnAnswer(value) {
    if (value.synced && value.synced.applied < state().sgd.length) {
      learnProblem = value.synced.problem;
      page.replace({ ...state(), sgd: state().sgd.slice(0, value.synced.applied) });
      page.persist();
      run();
    }
    page.render();
  }

  return {
    feature(name) {
      featureNext = name;
    },
    /** The engine is there: run from now on. */
    start(engine) {
      started = true;
      sources.start(engine);
    },
    run,
    open,
    reselect,
    /** "Download again": the model on screen, whose load failed, loaded anew (the reader asked). */
    retry() {
      const name = state().model;
      if (modelError?.model !== name) return;
      modelError = null;
      open(name, null, true);
      page.render();
    },
    /** The last answer of a source (maybe of another model than the one picked), or null. */
    get result() {
      return result;
    },
    /** The trace on screen: only one of the model that is picked. */
    trace: () => (result?.name === state().model ? result.trace : null),
    /** Whether the trace on screen is of the sentence in the state (a later one may still be of the last). */
    current: () => result?.sentence === state().sentence,
    /** The model on screen's source, once loaded. */
    source: sourceOnScreen,
    /** What the Learn steps read: the source's backward for the state, or {unavailable: why}. */
    learn: () => sourceOnScreen().learn(state(), result, { onAnswer: learnAnswer }),
    /** Why a run could not be made (batch mode without a sentence). */
    fail(error) {
      runError = error;
    },
    /** The note that stands for the step panel while there is no trace (or null). */
    status(trace) {
      const s = state();
      const source = sourceOnScreen();
      if (modelError && modelError.model === s.model) return ['error', `${modelError.title} ${modelError.text}`];
      if (!source) return ['loading', `Loading the ${modelLabel(s.model)} model\u2026`];
      if (source.remote && !trace && !runError) return ['loading', `Running ${modelLabel(s.model)} on the sentence\u2026`];
      if (!trace) return ['empty', runError ? `${runError.title} ${runError.text}` : 'Type a sentence to begin.'];
      return null;
    },
    /** The message bar's error: the model's, else the run's. */
    errors() {
      if (modelError && modelError.model === state().model) {
        const actions = modelError.retry ? [{ id: 'retry', text: 'Download again', testid: 'model-retry' }] : [];
        return [{ id: 'model', kind: 'error', title: modelError.title, text: modelError.text, link: modelError.link, actions }];
      }
      return runError ? [{ id: 'run', kind: 'error', ...runError }] : [];
    },
    /** The message bar's notice: a step by hand in the link that could not be taken. */
    notices: () => (learnProblem ? [{ id: 'learn', kind: 'notice', title: 'A step by hand in the link could not be taken:', text: `${learnProblem}; the steps before it were.` }] : []),
  };
}
