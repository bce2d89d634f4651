// The models the playground can show: the two trained checkpoints shipped
// with it (models/*.safetensors, trained by our own `attn train`, see the
// README), a model trained in the lab ("lab:<key>", its bytes in this
// browser's IndexedDB, app/kit/model-store.js), and seeded random weights.
//
//   const cache = createModelCache({ fetchShipped: (name, file) => bytes, loadLab: (key) => record|null });
//   const entry = await cache.load(engine, 'coreference');   // {name, trainer, task, about, record}
//   cache.get('coreference')                                 // the same entry once loaded, else null
//
// A checkpoint is read by the engine alone (engine.loadTrainer: the C++ reader,
// fuzzed and tested, gives every number the steps show, the LayerNorm gains and
// biases the formulas quote among them, the task and the settings).

import { isLabModel } from './state.js';
import { isPretrainedName, pretrainedLabel } from '../hub/hub.js';

/** The shipped models: what they were trained on (one line) and the head to open on. */
export const SHIPPED_MODELS = Object.freeze({
  coreference: Object.freeze({
    label: 'coreference (trained)',
    file: 'coreference.safetensors',
    data: 'the coreference grammar (12 animals, 8 obstacles, the adjectives that fit each, 4 sentence shapes)',
    featured: Object.freeze({ layer: 1, head: 0 }),
    example: Object.freeze({ sentence: 'The animal didn\'t cross the street because it was too tired.', query: 7 }),
  }),
  language: Object.freeze({
    label: 'language (trained)',
    file: 'language.safetensors',
    data: 'WordNet 3.0\u2019s 48,224 example sentences (Princeton University), each said twice, 90% of them',
    featured: Object.freeze({ layer: 1, head: 2 }),
    // a phrase said twice: at the second "buy" the induction head looks at what followed the first
    example: Object.freeze({ sentence: 'she was able to buy a car . she was able to buy a car', query: 12 }),
  }),
});
export const RANDOM_LABEL = 'random weights (seeded)';

/** The label of a model picker value. */
export function modelLabel(name) {
  if (name === 'random') return RANDOM_LABEL;
  if (SHIPPED_MODELS[name]) return SHIPPED_MODELS[name].label;
  if (isLabModel(name)) return 'trained in the lab';
  if (isPretrainedName(name)) return pretrainedLabel(name);
  return name;
}

/** Raised when a lab model's key is not in this browser's storage. */
export class ModelNotFound extends Error {
  constructor(name) {
    super('this model was trained in the lab in another browser; retrain it there from its link');
    this.name = 'ModelNotFound';
    this.model = name;
  }
}

// ---- what a model is, in one line --------------------------------------------------

function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** "2 layers × 4 heads, C = 32, MLP 64, vocabulary 65, 21,504 parameters" */
export function sizeText(trainer) {
  const c = trainer.config;
  const parts = [`${plural(c.layers, 'layer')} \u00d7 ${plural(c.heads, 'head')}`, `C = ${c.dModel}`];
  parts.push(c.mlp ? `MLP ${c.mlp}` : 'attention-only');
  parts.push(`vocabulary ${c.vocab.toLocaleString('en-US')}`);
  parts.push(`${trainer.parameterCount.toLocaleString('en-US')} parameters`);
  return parts.join(', ');
}

/** The one line a trained model carries: what it was trained on and how big it is. */
export function aboutText(name, trainer, record = null) {
  const steps = trainer.stepCount.toLocaleString('en-US');
  if (SHIPPED_MODELS[name]) {
    return `Trained here by our own engine on ${SHIPPED_MODELS[name].data}: ${steps} steps, ${sizeText(trainer)}.`;
  }
  const task = trainer.settings?.task ?? 'a task';
  const when = record?.savedAt ? `, saved ${new Date(record.savedAt).toLocaleString()}` : '';
  return `Trained in the lab in this browser on the ${task} task: ${steps} steps, ${sizeText(trainer)}${when}.`;
}

// ---- loading -------------------------------------------------------------------------

/**
 * Loads each model once per page. fetchShipped(name, file) → Promise<Uint8Array>;
 * loadLab(key) → Promise<{bytes, …}|null> (null: not stored in this browser).
 */
export function createModelCache({ fetchShipped, loadLab }) {
  const entries = new Map(); // name → entry
  const pending = new Map(); // name → Promise<entry>

  async function bytesOf(name) {
    if (SHIPPED_MODELS[name]) return { bytes: await fetchShipped(name, SHIPPED_MODELS[name].file), record: null };
    if (isLabModel(name)) {
      const record = loadLab ? await loadLab(name.slice(4)) : null;
      if (!record?.bytes) throw new ModelNotFound(name);
      return { bytes: record.bytes instanceof Uint8Array ? record.bytes : new Uint8Array(record.bytes), record };
    }
    throw new RangeError(`unknown model "${name}"`);
  }

  return {
    /** The loaded entry, or null while it is not loaded (yet). */
    get: (name) => entries.get(name) ?? null,
    /** Loads (once) and returns {name, trainer, task, about, record}. */
    load(engine, name) {
      if (entries.has(name)) return Promise.resolve(entries.get(name));
      if (!pending.has(name)) {
        const p = bytesOf(name).then(({ bytes, record }) => {
          const trainer = engine.loadTrainer(bytes);
          const entry = Object.freeze({ name, trainer, task: trainer.settings?.task ?? null, record, about: aboutText(name, trainer, record) });
          entries.set(name, entry);
          pending.delete(name);
          return entry;
        }, (e) => {
          pending.delete(name);
          throw e;
        });
        pending.set(name, p);
      }
      return pending.get(name);
    },
  };
}
