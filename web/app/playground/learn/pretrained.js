// The Learn part on a pretrained GPT-2 / BERT model: the same data as learn.js
// (the views cannot tell them apart), asked of the model's worker (hub.js's
// backward, sgd, undo) instead of computed from a Trainer. Every request goes
// through one queue, so the worker sees the steps by hand before the backward
// or forward trace that follows them; an answer for an older state is the
// caller's to drop (the key says which state it is for).
//
//   const pl = createPretrainedLearn();
//   await pl.sync(handle, state)                     // the worker's weights = trained + state.sgd; {applied, problem}
//   const value = await pl.compute(handle, state)     // {on, off, before, defaults, targets, problem}
//   pl.pick(value, state, handle, tokenTexts)          // v.learn (learn.js's compute shape)
//
// The targets: the worker's defaults (GPT-2 the next token, BERT the trained model's
// top fill at each [MASK]) computed once per sentence on the trained weights, so a
// step by hand does not move them; the picked ones over them. A step on "every
// parameter" (the link's "lr:a") is a step on every head of the layer on screen.

import { parseSgdStep } from './learn.js';

/** The key a state's backward is for: an answer with another key is for an older state. */
export function pretrainedLearnKey(state) {
  return JSON.stringify([state.model, state.sentence, state.targets, state.layer, state.sgd]);
}

/** What the steps by hand are taken on (a change puts the trained weights back). */
const syncKey = (state) => JSON.stringify([state.model, state.sentence, state.targets, state.sgd.some((s) => s.endsWith(':a')) ? state.layer : null]);

/** The sgd request of one step text on the layer on screen. */
function sgdOptions(text, state, targets) {
  const st = parseSgdStep(text);
  return st.scope === 'all'
    ? { sentence: state.sentence, targets, lr: st.lr, layer: state.layer, head: -1 }
    : { sentence: state.sentence, targets, lr: st.lr, layer: st.layer, head: st.head };
}

export function createPretrainedLearn() {
  let queue = Promise.resolve();
  const slots = new Map(); // model name → {key, history: [step text], defaults: {sentence, defaults | error}}
  const values = new Map(); // pretrainedLearnKey → a computed value (the last few: a step's "before" is the last one's "now")

  /** Runs fn after every request queued before it. */
  function enqueue(fn) {
    const run = queue.then(fn);
    queue = run.catch(() => {});
    return run;
  }

  const slot = (name) => {
    if (!slots.has(name)) slots.set(name, { key: null, history: [], defaults: null });
    return slots.get(name);
  };

  /** The trained weights' defaults for the sentence ({defaults} or {error}); called with no step taken. */
  async function defaultsOf(h, m, state) {
    if (m.defaults?.sentence === state.sentence) return m.defaults;
    let d;
    try {
      const bw = await h.backward({ sentence: state.sentence, targets: null, scale: null, layer: 0 });
      d = { sentence: state.sentence, defaults: Array.from(bw.defaults) };
    } catch (e) {
      if (e?.code !== 'bad_input' && !/\[MASK\]|one-token/.test(String(e?.message))) throw e;
      // no answer of the model's own here (a BERT sentence without [MASK], one GPT-2 token): only picked ones
      const raw = await h.rawTrace(state.sentence, 0, { allWeights: false });
      // the CLI's way to give a target is not the page's (its picker, in the note's next sentence)
      d = { sentence: state.sentence, defaults: new Array(raw.tokens.length).fill(-1), error: String(e?.message ?? e).replace(/, or give a target \(--target [^)]*\)/, '') };
    }
    m.defaults = d;
    return d;
  }

  /** The defaults with the picked targets over them ({defaults, targets (null: none anywhere), error}). */
  function targetsOf(h, d, state) {
    const T = d.defaults.length;
    const targets = d.defaults.slice();
    for (const x of state.targets) {
      const [pos, id] = x.split(':').map(Number);
      if (pos < T && id < h.info.config.vocab) targets[pos] = id;
    }
    return { defaults: d.defaults, targets: targets.some((y) => y >= 0) ? targets : null, error: d.error ?? null };
  }

  async function syncNow(h, state) {
    const m = slot(state.model);
    const key = syncKey(state);
    let keep = 0;
    if (m.key === key) while (keep < m.history.length && keep < state.sgd.length && m.history[keep] === state.sgd[keep]) keep++;
    while (m.history.length > keep) {
      await h.undo();
      m.history.pop();
    }
    m.key = key;
    if (keep === state.sgd.length) return { applied: keep, problem: null };
    const { targets, error } = targetsOf(h, await defaultsOf(h, m, state), state);
    for (let i = keep; i < state.sgd.length; i++) {
      const st = parseSgdStep(state.sgd[i]);
      if (st.scope === 'head' && (st.layer >= h.info.config.layers || st.head >= h.info.config.heads)) {
        return { applied: i, problem: `step ${i + 1} names layer ${st.layer + 1}, head ${st.head + 1}, which this model does not have` };
      }
      try {
        if (!targets) throw new Error(error ?? 'no position has a target');
        await h.sgd(sgdOptions(state.sgd[i], state, targets));
      } catch (e) {
        return { applied: i, problem: `step ${i + 1} could not be taken: ${String(e?.message ?? e)}` };
      }
      m.history.push(state.sgd[i]);
    }
    return { applied: state.sgd.length, problem: null };
  }

  /** The worker's weights made the trained ones plus state.sgd's steps: {applied, problem}. */
  function sync(h, state) {
    return enqueue(() => syncNow(h, state));
  }

  /** The backward of the layer on screen with the scale on and off, and before the last step: resolves to the value pick() reads. */
  function compute(h, state) {
    return enqueue(async () => {
      const synced = await syncNow(h, state);
      const m = slot(state.model);
      const { defaults, targets, error } = targetsOf(h, await defaultsOf(h, m, state), state);
      if (synced.applied < state.sgd.length) return { defaults, targets: defaults, problem: `A step by hand ${synced.problem}.`, synced };
      if (!targets) {
        const why = error ? `${error.replace(/\.?$/, '.')} ` : 'The model sets no answer on this sentence. ';
        return { defaults, targets: defaults, problem: `${why}Pick a word as the answer at a position (click a token of the sentence to choose the position), and the backward starts from there.`, synced };
      }
      const ask = (scale) => h.backward({ sentence: state.sentence, targets, scale, layer: state.layer });
      let on;
      let off;
      let before = null;
      try {
        on = await ask(true);
        off = await ask(false);
        if (m.history.length) {
          const last = m.history[m.history.length - 1];
          const prior = values.get(pretrainedLearnKey({ ...state, sgd: m.history.slice(0, -1) }));
          if (prior?.on) before = h.info.config.scale === false ? prior.off : prior.on;
          else {
            // the weights before the last step: undone, traced, and the same step again (it gives the same weights bit for bit)
            await h.undo();
            try {
              before = await ask(null);
            } finally {
              await h.sgd(sgdOptions(last, state, targets));
            }
          }
        }
      } catch (e) {
        return { defaults, targets, problem: `The backward could not be computed: ${String(e?.message ?? e)}`, synced };
      }
      const value = { defaults, targets, on, off, before, problem: null, synced };
      values.set(pretrainedLearnKey(state), value);
      while (values.size > 8) values.delete(values.keys().next().value);
      return value;
    });
  }

  /** v.learn from a computed value (learn.js's pick, with the full vocabulary's texts the trace knows). */
  function pick(value, state, h, tokenTexts) {
    const modelScale = h.info.config.scale !== false;
    const V = h.info.config.vocab;
    const vocabulary = new Proxy(new Array(V), {
      get: (target, k) => (typeof k === 'string' && /^\d+$/.test(k) ? tokenTexts?.get(Number(k)) ?? `#${k}` : Reflect.get(target, k)),
    });
    if (value.problem) return { ...value, bw: null, modelScale, vocabulary };
    return { ...value, bw: state.learnScale ? value.on : value.off, now: modelScale ? value.on : value.off, modelScale, history: state.sgd, vocabulary };
  }

  /** Forgets a closed model's steps. */
  function forget(name) {
    slots.delete(name);
  }

  return { sync, compute, pick, forget, enqueue };
}
