// A pretrained model (GPT-2, BERT, … from the Hub or a folder of its files):
// its weights live in its own worker (hub/hub.js), which traces one layer in
// full, takes the Learn part's backward and steps by hand (learn.js over
// workerPort), and writes the next token when the model is causal. Every
// request but "Next token" goes through one queue, so the worker sees the
// steps by hand before the trace that follows them; the answers come later,
// and one for an older state is dropped (the controller's, learn.js's).

import { layerTrace } from '../model-trace.js';
import { createLearn, idTexts } from '../learn/learn.js';
import { pretrainedAbout, pretrainedLabel, weightsAbout, ALL_LAYERS_MAX_CHARS } from '../../hub/hub.js';
import { familyInfo } from '../../../families.js';
import { featuredHead } from '../featured.js';

/** One queue of requests: fn runs after every request queued before it (a failed one too). */
function createQueue() {
  let queue = Promise.resolve();
  return (fn) => {
    const run = queue.then(fn);
    queue = run.catch(() => {});
    return run;
  };
}

/**
 * The Learn port (learn.js) of a worker's handle (hub.js: backward, sgd, undo, rawTrace):
 * the model's own answers are GPT-2's next token and BERT's top fill at each [MASK], asked
 * once per sentence on the trained weights; a step on "every parameter" is one on every
 * head of the layer on screen.
 */
export function workerPort(handle) {
  return {
    config: handle.info.config,
    layerScope: true,
    noAnswer: 'The model sets no answer on this sentence.',
    queue: createQueue(),
    async defaults(sentence) {
      try {
        const bw = await handle.backward({ sentence, targets: null, scale: null, layer: 0 });
        return { defaults: Array.from(bw.defaults), error: null };
      } catch (e) {
        if (e?.code !== 'bad_input' && !/\[MASK\]|one-token/.test(String(e?.message))) throw e;
        // no answer of the model's own here (a BERT sentence without [MASK], one GPT-2 token): only picked ones
        const raw = await handle.rawTrace(sentence, 0, { allWeights: false });
        // the CLI's way to give a target is not the page's (its picker, in the note's next sentence)
        return { defaults: new Array(raw.tokens.length).fill(-1), error: String(e?.message ?? e).replace(/, or give a target \(--target [^)]*\)/, '') };
      }
    },
    backward: ({ sentence, targets, scale, layer }) => handle.backward({ sentence, targets, scale, layer }),
    sgd: ({ sentence, targets, lr, layer, head }) => handle.sgd({ sentence, targets, lr, layer, head }),
    undo: () => handle.undo(),
  };
}

/** The top tokens of a worker's trace as a compact probabilities matrix over their own vocabulary. */
function topMatrix(top, T) {
  const vocabulary = [];
  const column = new Map();
  for (let i = 0; i < top.ids.length; i++) {
    if (!column.has(top.ids[i])) {
      column.set(top.ids[i], vocabulary.length);
      vocabulary.push(top.texts[i]);
    }
  }
  const V = vocabulary.length;
  const data = new Float32Array(T * V);
  for (let i = 0; i < T; i++) for (let j = 0; j < top.k; j++) data[i * V + column.get(top.ids[i * top.k + j])] = top.p[i * top.k + j];
  return { probabilities: { rows: T, cols: V, data }, vocabulary };
}

/**
 * A worker's trace (one layer in full, the others' weights only) as the model trace
 * model-trace.js reads, with the five likeliest tokens per position as the
 * probabilities, and the model's description beside it.
 */
function stepTraceOf(raw, layer, sentence, { name, about, info, featured }) {
  const c = raw.config;
  const { probabilities, vocabulary } = topMatrix(raw.top, raw.tokens.length);
  const modelTrace = {
    // post-LN (BERT): nothing normalises x before attention, so X′ = x (the step says why)
    config: { ...c, layernorm: !c.postNorm },
    tokens: raw.tokens,
    length: raw.length,
    sentence,
    embeddings: raw.embeddings,
    positional: raw.positional,
    ropeFrequencies: raw.ropeFrequencies,
    mask: raw.mask,
    layers: raw.layers,
    finalNormed: null,
    logits: null,
    probabilities,
    grammar: -1,
    generated: raw.generated,
    undoSentence: raw.undoSentence,
  };
  return layerTrace(modelTrace, layer, {
    name, task: null, about, seed: 0, featured, vocabulary,
    // the texts of the full vocabulary's ids the trace knows (its tokens, each position's top ones)
    tokenTexts: new Map([...raw.tokens.map((t) => [t.id, t.text]), ...Array.from(raw.top.ids, (id, i) => [id, raw.top.texts[i]])]),
    pretrained: { family: c.family, postNorm: c.postNorm, maskId: info.maskId, parameterCount: info.parameterCount },
  });
}

/** A list as a link's notice quotes it: its first 24 characters. */
function quoted(list) {
  const text = list.join(',');
  return `\u201c${text.length > 24 ? `${text.slice(0, 23)}\u2026` : text}\u201d`;
}

/** Which weights and sentence a trace is of (the Learn steps need the same). */
const weightsKey = (s) => JSON.stringify([s.model, s.sentence, s.layer, s.sgd, s.sgd.length ? s.targets : null]);

/** name: the picker's value ("hf:<id>", "url:<url>", "local:<name>"); handle: hub.js openPretrained's; where: its source ({kind, base, id} …). */
export function createPretrainedSource(name, handle, where = null) {
  const { info } = handle;
  const c = info.config;
  const port = workerPort(handle);
  const learn = createLearn(port);
  const about = pretrainedAbout(name, info);
  const label = pretrainedLabel(name);
  const family = familyInfo(c.family);
  const writes = Boolean(family?.generates);
  const description = Object.freeze({
    about: weightsAbout(name, where?.base),
    line: about,
    fixed: Object.freeze({
      config: c,
      seed: 0,
      note: `Fixed by the checkpoint: ${label} has C = ${c.dModel}, ${c.heads} heads, ${c.positional} positions and ${c.causal ? 'a causal mask' : 'no mask'}. These controls act on random weights.`,
    }),
  });

  const self = {
    name,
    featured: null,
    learned: true,
    batches: false,
    remote: true,
    // its weights fill a worker: one such model is kept at a time
    exclusive: true,
    describe: () => description,
    /**
     * The layer on screen of the sentence's trace, on the trained weights plus the link's
     * steps by hand (taken first; onSynced: how many held): a Promise.
     */
    trace(state, { onSynced = () => {} } = {}) {
      const asked = { ...state };
      const { sentence } = state;
      const layer = Math.min(state.layer, c.layers - 1);
      learn.sync(asked).then(onSynced, () => {});
      return port.queue(() => handle.rawTrace(sentence, layer, { allWeights: sentence.length <= ALL_LAYERS_MAX_CHARS, generated: state.gen }))
        .then((raw) => {
          // the head and query it opens on, from its first trace with every layer's weights (featured.js)
          self.featured ??= featuredHead(raw.layers, raw.tokens);
          return { layer: state.layer, learnKey: weightsKey(asked), trace: stepTraceOf(raw, layer, sentence, { name, about, info, featured: self.featured }) };
        });
    },
    /** A link's generated ids past this model's vocabulary (state.js knows no vocabulary): none are used, with a note. */
    fit(state) {
      const past = state.gen.find((id) => id >= c.vocab);
      if (past === undefined) return null;
      return { patch: { gen: [] }, problems: [`generated tokens ${quoted(state.gen)} name token ${past}, past the vocabulary of ${label} (ids 0\u2013${c.vocab - 1}); the sentence is read as typed`] };
    },
    /** Whether its worker computes a request the page still waits for. */
    busy: () => handle.busy(),
    /** The worker traces one layer in full: another layer is another trace (null). */
    select: (result, state) => (result.layer === state.layer ? result : null),
    learn(state, result, { onAnswer } = {}) {
      const computing = { unavailable: `Computing the backward of layer ${state.layer + 1} of ${label}\u2026`, pending: true };
      // the forward on screen must be of these weights and this sentence (a step by hand asks a new one)
      if (result?.source !== self || result.learnKey !== weightsKey(state)) return computing;
      return learn.data(state, result.trace, { computing, vocabulary: idTexts(c.vocab, result.trace.model.tokenTexts), onAnswer });
    },
    // the family says whether it writes (a causal model, one token at a time); the others read every token after each one
    generation: Object.freeze({
      available: writes,
      reason: writes ? null : `${family?.title ?? 'This model'} is not causal: every token reads the tokens after it, so it cannot write a text one token at a time.`,
      layers: c.layers,
    }),
    /** The next token after the sentence (the worker's KV cache reuses the earlier keys and values). */
    generate: writes ? (sentence, generated, options) => handle.generate(sentence, generated, options) : null,
    dispose: () => handle.dispose(),
  };
  return self;
}
