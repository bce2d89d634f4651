// The Learn part behind every model that has one: the backward for the
// sentence (with and without 1/√d_k, and before the last step by hand), the
// targets (the model's own answers, with the ones the user picked over them),
// and the steps by hand the link lists, taken on the trained weights and undone
// one by one. One algorithm over a port, the model's requests:
//
//   port.config              {layers, heads, vocab, scale}
//   port.layerScope          true: a step on "every parameter" ("lr:a") is one on every head
//                            of the layer on screen (a pretrained model); false: on the whole model
//   port.noAnswer            what the page says when the model sets no answer on a sentence
//   port.defaults(sentence)  {defaults, error}: the trained weights' own answers (−1: none; error: why none)
//   port.backward({sentence, targets, scale, layer})   the backward trace (scale null: the model's own)
//   port.sgd({sentence, targets, lr, scope, layer, head})   one step by hand
//   port.undo()              back to the weights before the last step
//   port.queue(fn)           (optional) runs fn after every request queued before it
//
// A Trainer in the page answers at once, and then so does this module (the
// page draws the backward in the same frame); a worker answers through
// Promises, and then every call returns one, queued on port.queue so that the
// worker sees the steps by hand before the backward or the trace after them.
// The algorithm is written once, as generators that yield the port's answers
// (drive() below runs them either way).
//
//   const learn = createLearn(port);
//   learn.sync(state)                   // the weights = trained + state.sgd: {applied, problem}
//   learn.compute(state)                // {on, off, before, defaults, targets, problem, synced}
//   learn.pick(value, state, vocabulary)  // v.learn, what the Learn steps read
//   learn.data(state, trace, {computing, vocabulary, onAnswer})   // v.learn for the state,
//                                        // asked once per state; an older state's answer is dropped

import { topTokens } from '../model-trace.js';

/** "lr:L.H" or "lr:a" (state.js) as a step's options. */
export function parseSgdStep(s) {
  const [lr, where] = s.split(':');
  if (where === 'a') return { lr: Number(lr), scope: 'all' };
  const [layer, head] = where.split('.').map(Number);
  return { lr: Number(lr), scope: 'head', layer, head };
}

/**
 * The words the loss step shows at position q (its table and its exported figure):
 * the five likeliest under probabilities P, then the answer y when it is not among
 * them (y < 0: none). [{id, text, p}]
 */
export function lossWords(P, q, vocabulary, y) {
  const items = topTokens(P, q, vocabulary, 5);
  if (y >= 0 && !items.some((it) => it.id === y)) items.push({ id: y, text: vocabulary[y] ?? String(y), p: P.data[q * P.cols + y] });
  return items;
}

/** The link's text of one step by hand. */
export function sgdStepText(lr, scope, layer, head) {
  return `${lr}:${scope === 'all' ? 'a' : `${layer}.${head}`}`;
}

/** The targets "pos:id" list with position q set to id (null: back to the task's). */
export function withTarget(list, q, id) {
  const rest = list.filter((x) => Number(x.split(':')[0]) !== q);
  return id === null ? rest : [...rest, `${q}:${id}`].sort((a, b) => Number(a.split(':')[0]) - Number(b.split(':')[0]));
}

/** The key a state's backward is for: an answer with another key is for an older state. */
export function learnKey(state) {
  return JSON.stringify([state.model, state.sentence, state.targets, state.layer, state.sgd]);
}

/**
 * A vocabulary by full token id from the texts a trace knows (`#id` for the rest):
 * a pretrained model's trace names only its tokens and each position's likeliest.
 */
export function idTexts(V, tokenTexts) {
  return new Proxy(new Array(V), {
    get: (target, k) => (typeof k === 'string' && /^\d+$/.test(k) ? tokenTexts?.get(Number(k)) ?? `#${k}` : Reflect.get(target, k)),
  });
}

const isPromise = (x) => typeof x?.then === 'function';

/**
 * Runs a generator that yields the port's answers: at once while they are plain
 * values, through Promises from the first one that is a Promise on. Returns the
 * generator's value, or a Promise of it.
 */
function drive(gen) {
  const go = (method, arg) => {
    for (;;) {
      const r = gen[method](arg);
      if (r.done) return r.value;
      if (isPromise(r.value)) return r.value.then((x) => go('next', x), (e) => go('throw', e));
      method = 'next';
      arg = r.value;
    }
  };
  return go('next', undefined);
}

const PICK = 'pick a word as the answer at a position (click a token of the sentence to choose the position), and the backward starts from there.';

/** The note of a sentence the model sets no answer on: why (the model's error, or its port's words), then what to do. */
function noAnswerText(why) {
  return why.endsWith(':') ? `${why} ${PICK}` : `${why} ${PICK[0].toUpperCase()}${PICK.slice(1)}`;
}

/** The options of one step by hand (parseSgdStep's) on the state's sentence and targets. */
function sgdOptions(step, state, targets) {
  return step.scope === 'all'
    ? { sentence: state.sentence, targets, lr: step.lr, scope: 'all', layer: state.layer, head: -1 }
    : { sentence: state.sentence, targets, lr: step.lr, scope: 'head', layer: step.layer, head: step.head };
}

export function createLearn(port) {
  const config = port.config;
  // the steps taken on the port's weights: on which sentence and targets (key), and the
  // trained weights' own answers for the sentence ({sentence, defaults, error})
  const m = { key: null, history: [], defaults: null };
  const values = new Map(); // learnKey → a computed value (the last few: a step's "before" is the last one's "now")
  const run = (gen) => (port.queue ? port.queue(() => drive(gen)) : drive(gen));

  /** What the steps by hand are taken on (a change puts the trained weights back). */
  const syncKey = (state) => JSON.stringify([state.sentence, state.targets, port.layerScope && state.sgd.some((s) => s.endsWith(':a')) ? state.layer : null]);

  /** The trained weights' answers for the sentence ({defaults, error}); asked with no step taken. */
  function* defaultsOf(sentence) {
    if (m.defaults?.sentence !== sentence) m.defaults = { sentence, ...(yield port.defaults(sentence)) };
    return m.defaults;
  }

  /** The defaults with the picked targets over them ({defaults, targets (null: none anywhere), error}). */
  function targetsOf(d, state) {
    const T = d.defaults.length;
    const targets = d.defaults.slice();
    for (const x of state.targets) {
      const [pos, id] = x.split(':').map(Number);
      if (pos < T && id < config.vocab) targets[pos] = id;
    }
    return { defaults: d.defaults, targets: targets.some((y) => y >= 0) ? targets : null, error: d.error ?? null };
  }

  /** The port's weights made the trained ones plus state.sgd's steps: {applied, problem}. */
  function* syncSteps(state) {
    const key = syncKey(state);
    let keep = 0;
    if (m.key === key) while (keep < m.history.length && keep < state.sgd.length && m.history[keep] === state.sgd[keep]) keep++;
    while (m.history.length > keep) {
      yield port.undo();
      m.history.pop();
    }
    m.key = key;
    if (keep === state.sgd.length) return { applied: keep, problem: null };
    const { targets, error } = targetsOf(yield* defaultsOf(state.sentence), state);
    for (let i = keep; i < state.sgd.length; i++) {
      const st = parseSgdStep(state.sgd[i]);
      if (st.scope === 'head' && (st.layer >= config.layers || st.head >= config.heads)) {
        return { applied: i, problem: `step ${i + 1} names layer ${st.layer + 1}, head ${st.head + 1}, which this model does not have` };
      }
      try {
        if (!targets) throw new Error(error ?? 'no position has a target');
        yield port.sgd(sgdOptions(st, state, targets));
      } catch (e) {
        return { applied: i, problem: `step ${i + 1} could not be taken: ${String(e?.message ?? e)}` };
      }
      m.history.push(state.sgd[i]);
    }
    return { applied: state.sgd.length, problem: null };
  }

  /** The backward of the layer on screen with the scale on and off, and before the last step. */
  function* computeSteps(state) {
    const synced = yield* syncSteps(state);
    const { defaults, targets, error } = targetsOf(yield* defaultsOf(state.sentence), state);
    if (synced.applied < state.sgd.length) return { defaults, targets: defaults, problem: `A step by hand ${synced.problem}.`, synced };
    if (!targets) return { defaults, targets: defaults, problem: noAnswerText(error ? error.replace(/\.?$/, '.') : port.noAnswer), synced };
    const ask = (scale) => port.backward({ sentence: state.sentence, targets, scale, layer: state.layer });
    let on;
    let off;
    let before = null;
    try {
      on = yield ask(true);
      off = yield ask(false);
      if (m.history.length) {
        const last = m.history[m.history.length - 1];
        const prior = values.get(learnKey({ ...state, sgd: m.history.slice(0, -1) }));
        if (prior?.on) before = config.scale === false ? prior.off : prior.on;
        else {
          // the weights before the last step: undone, traced, and the same step again (it gives the same weights bit for bit)
          yield port.undo();
          try {
            before = yield ask(null);
          } finally {
            yield port.sgd(sgdOptions(parseSgdStep(last), state, targets));
          }
        }
      }
    } catch (e) {
      return { defaults, targets, problem: `The backward could not be computed: ${String(e?.message ?? e)}`, synced };
    }
    const value = { defaults, targets, on, off, before, problem: null, synced };
    values.set(learnKey(state), value);
    while (values.size > 8) values.delete(values.keys().next().value);
    return value;
  }

  /** v.learn from a computed value: the backward the scale switch picks, and the model's own. */
  function pick(value, state, vocabulary = null) {
    const modelScale = config.scale !== false;
    const words = vocabulary ? { vocabulary } : {};
    if (value.problem) return { ...value, bw: null, modelScale, ...words };
    return { ...value, bw: state.learnScale ? value.on : value.off, now: modelScale ? value.on : value.off, modelScale, history: state.sgd, ...words };
  }

  let asked = null; // the key of the backward asked last
  let answer = null; // {key, value}: the last answer, for that key

  /**
   * v.learn for the state: the answer for its key, or `computing` while it is asked (once per
   * key; an answer for an older key is dropped). onAnswer(value) is called when a later
   * answer for the state on screen comes in; vocabulary: pick's.
   */
  function data(state, tr, { computing = null, vocabulary = null, onAnswer = () => {} } = {}) {
    const key = learnKey(state);
    if (answer?.key === key) {
      // the backward reads the text again; the forward may carry generated ids that read differently
      const n = answer.value.targets?.length ?? 0;
      if (n && n !== tr.tokens.length) return { unavailable: `The backward reads this text as ${n} tokens and the forward shows ${tr.tokens.length} (tokens written by \u201cNext token\u201d can read differently as text): edit the sentence to follow the backward.` };
      return pick(answer.value, state, vocabulary);
    }
    if (asked === key) return computing;
    asked = key;
    const failed = (e) => ({ defaults: [], targets: [], problem: `The backward could not be computed: ${String(e?.message ?? e)}` });
    let out;
    try {
      out = compute(state);
    } catch (e) {
      out = failed(e);
    }
    if (!isPromise(out)) {
      answer = { key, value: out };
      return data(state, tr, { computing, vocabulary, onAnswer });
    }
    out.then((v) => v, failed).then((value) => {
      if (asked !== key) return; // asked for an older state: dropped
      answer = { key, value };
      onAnswer(value);
    });
    return computing;
  }

  /** The steps by hand on the port's weights: {applied, problem} (a Promise for a worker). */
  const sync = (state) => run(syncSteps(state));
  /** The backward values pick() reads (a Promise for a worker). */
  const compute = (state) => run(computeSteps(state));

  return { sync, compute, pick, data };
}
