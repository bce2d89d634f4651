// A model trained here: a shipped checkpoint or one trained in the lab
// (models.js loads each once, into a Trainer in the page). Its trace holds
// every layer, and the layer picker only chooses which one the steps show;
// its Learn part runs on the same Trainer (learn.js over trainerPort), so a
// step by hand moves what the forward steps show too. The Trainer answers at
// once: the trace and the backward are there in the frame that asks.

import { layerTrace } from '../model-trace.js';
import { createLearn } from '../learn/learn.js';
import { SHIPPED_MODELS, modelLabel } from '../models.js';

export const TRAINED_ABOUT = 'These weights were learned: the model was trained on a task, saved as a checkpoint and loaded here. Everything is computed in your browser by a C++ engine compiled to WebAssembly.';

/**
 * The Learn port (learn.js) of a Trainer in the page: the task's answers, the
 * backward and the steps by hand; undo puts back the weights kept before each step.
 */
export function trainerPort(trainer) {
  const weights = [trainer.parameters()]; // before step 1, after step 1, …
  return {
    config: trainer.config,
    layerScope: false,
    noAnswer: 'The model\u2019s task sets no answer on this sentence:',
    defaults(sentence) {
      try {
        return { defaults: Array.from(trainer.backwardTrace({ text: sentence }).targets), error: null };
      } catch (e) {
        if (e?.code !== 'bad_input') throw e;
        // the task sets none here (a coreference sentence without its "it"): only the picked ones
        return { defaults: new Array(trainer.trace({ text: sentence }).length).fill(-1), error: null };
      }
    },
    backward: ({ sentence, targets, scale }) => trainer.backwardTrace({ text: sentence, targets, scale }),
    sgd({ sentence, targets, lr, scope, layer, head }) {
      trainer.sgdStep({ text: sentence, targets, lr, scope, layer, head });
      weights.push(trainer.parameters());
    },
    undo() {
      weights.pop();
      trainer.setParameters(weights[weights.length - 1]);
    },
  };
}

/** entry: a loaded model (models.js: {name, trainer, task, about}). */
export function createTrainedSource(entry) {
  const { name, trainer } = entry;
  const learn = createLearn(trainerPort(trainer));
  const c = trainer.config;
  const seed = trainer.settings?.seed ?? 0;
  const featured = SHIPPED_MODELS[name]?.featured ?? null;
  const model = { name, task: entry.task, about: entry.about, seed, featured, vocabulary: trainer.vocabulary, pretrained: null };
  const description = Object.freeze({
    about: TRAINED_ABOUT,
    line: entry.about,
    fixed: Object.freeze({
      config: c,
      seed,
      note: `Fixed by training: the ${modelLabel(name).replace(/ \(trained\)$/, '')} model has C = ${c.dModel}, ${c.heads} heads, ${c.positional} positions, ${c.causal ? 'a causal mask' : 'no mask'} and was trained from seed ${seed}. These controls act on random weights.`,
    }),
  });

  return {
    name,
    featured,
    learned: true,
    batches: false,
    remote: false,
    describe: () => description,
    /** The sentence's trace on the trained weights plus the link's steps by hand (onSynced: how many held). */
    trace(state, { onSynced = () => {} } = {}) {
      onSynced(learn.sync(state));
      const run = trainer.trace({ text: state.sentence });
      return { run, trace: layerTrace(run, state.layer, model) };
    },
    /** Another layer of the same trace. */
    select: (result, state) => ({ ...result, trace: layerTrace(result.run, state.layer, model) }),
    learn: (state, result, { onAnswer } = {}) => learn.data(state, result.trace, { onAnswer }),
    generation: null,
    dispose() {},
  };
}
