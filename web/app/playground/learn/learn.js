// The Learn part behind the controller: the trained model's backward for the
// sentence (Trainer.backwardTrace, with and without 1/√d_k), the targets (the
// task's, with the ones the user picked), and the steps by hand (Trainer.sgdStep)
// that the link lists: replayed from the shipped weights, undone exactly
// (Trainer.setParameters with the weights kept before each step).
//
//   const learn = createLearn();
//   learn.sync(entry, state)                    // weights = shipped + state.sgd; {applied, problem}
//   learn.compute(entry, state)                 // {bw, on, off, before, now, targets, …} or {problem}
//
// Each model's weights are one trainer's (models.js): the forward steps read them too.

import { topTokens } from '../model-trace.js';

/** "lr:L.H" or "lr:a" (state.js) as sgdStep's options. */
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

export function createLearn() {
  const models = new WeakMap(); // entry → {key, history: [step text], weights: [Float32Array before step 1, after 1, …]}
  let cache = null; // {entry, version, key, value}
  let version = 0;

  function slot(entry) {
    if (!models.has(entry)) models.set(entry, { key: null, history: [], weights: [entry.trainer.parameters()] });
    return models.get(entry);
  }

  /** What a step is taken on: the sentence and the picked targets (a change puts the shipped weights back). */
  const sentenceKey = (state) => JSON.stringify([state.sentence, state.targets]);

  /**
   * The trainer's weights made those of the shipped model plus state.sgd's steps, on
   * this sentence and these targets (steps taken on another sentence are undone first).
   * Returns {applied: how many of state.sgd hold, problem: why the next one failed, or null}.
   */
  function sync(entry, state) {
    const m = slot(entry);
    const t = entry.trainer;
    const key = sentenceKey(state);
    let keep = 0;
    if (m.key === key) while (keep < m.history.length && keep < state.sgd.length && m.history[keep] === state.sgd[keep]) keep++;
    if (keep < m.history.length) {
      t.setParameters(m.weights[keep]);
      m.history.length = keep;
      m.weights.length = keep + 1;
      version++;
    }
    m.key = key;
    const targets = keep < state.sgd.length ? targetsOf(entry, state).targets : null;
    for (let i = keep; i < state.sgd.length; i++) {
      const step = parseSgdStep(state.sgd[i]);
      if (step.scope === 'head' && (step.layer >= t.config.layers || step.head >= t.config.heads)) {
        return { applied: i, problem: `step ${i + 1} names layer ${step.layer + 1}, head ${step.head + 1}, which this model does not have` };
      }
      try {
        if (!targets) throw new Error('no position has a target');
        t.sgdStep({ text: state.sentence, targets, ...step });
      } catch (e) {
        return { applied: i, problem: `step ${i + 1} could not be taken: ${String(e?.message ?? e)}` };
      }
      m.history.push(state.sgd[i]);
      m.weights.push(t.parameters());
      version++;
    }
    return { applied: state.sgd.length, problem: null };
  }

  /** The task's targets for the sentence with the picked ones over them (null when none is set anywhere). */
  function targetsOf(entry, state) {
    let defaults;
    try {
      defaults = Array.from(entry.trainer.backwardTrace({ text: state.sentence }).targets);
    } catch (e) {
      if (e?.code !== 'bad_input') throw e;
      // the task sets none here (a coreference sentence without its "it"): only the picked ones
      defaults = new Array(entry.trainer.trace({ text: state.sentence }).length).fill(-1);
    }
    const T = defaults.length;
    const targets = defaults.slice();
    const vocab = entry.trainer.config.vocab;
    for (const x of state.targets) {
      const [pos, id] = x.split(':').map(Number);
      if (pos < T && id < vocab) targets[pos] = id;
    }
    return { defaults, targets: targets.some((y) => y >= 0) ? targets : null };
  }


  /**
   * The backward on the weights now, with the scale on and off, and (after a step by
   * hand) on the weights before the last step: {on, off, bw (the one state.learnScale
   * picks), now (the model's own scale), before, defaults, targets, history} or {problem}.
   */
  function compute(entry, state) {
    const key = JSON.stringify([sentenceKey(state), state.sgd]);
    if (cache && cache.entry === entry && cache.version === version && cache.key === key) return pick(cache.value, state, entry);
    const t = entry.trainer;
    const { defaults, targets: tg } = targetsOf(entry, state);
    let value;
    if (!tg) {
      value = { defaults, targets: defaults, problem: 'The model\u2019s task sets no answer on this sentence: pick a word as the answer at a position (click a token of the sentence to choose the position), and the backward starts from there.' };
    } else {
      const text = state.sentence;
      const on = t.backwardTrace({ text, targets: tg, scale: true });
      const off = t.backwardTrace({ text, targets: tg, scale: false });
      let before = null;
      const m = slot(entry);
      if (m.history.length) {
        t.setParameters(m.weights[m.history.length - 1]);
        try {
          before = t.backwardTrace({ text, targets: tg });
        } finally {
          t.setParameters(m.weights[m.history.length]);
        }
      }
      value = { defaults, targets: tg, on, off, before, problem: null };
    }
    cache = { entry, version, key, value };
    return pick(value, state, entry);
  }

  function pick(value, state, entry) {
    const modelScale = entry.trainer.config.scale;
    if (value.problem) return { ...value, bw: null, modelScale };
    return { ...value, bw: state.learnScale ? value.on : value.off, now: modelScale ? value.on : value.off, modelScale, history: state.sgd };
  }

  return { sync, compute };
}
