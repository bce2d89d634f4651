// The model families the engine runs (GPT-2, BERT, …): the C++ registry
// (src/families/family.hpp) as buildInfo().families exports it, read from
// generated/engine_constants.js so that it is known before the wasm loads. No DOM,
// no engine: the engine modules, the hub's worker and the page's views all import it.
// Nothing else in web/ names a family: it asks here.
//
//   familyInfo('gpt2')  → {name, title: 'GPT-2', architectures, modelTypes, tokenizer,
//                          tokenizerFiles: [['tokenizer.json'], ['vocab.json', 'merges.txt']],
//                          tokenizerNeeds, generates: true, predictions, learnTarget}
//   familyInfo('')      → null (our own models), as for an unknown name

import { ENGINE_CONSTANTS } from './generated/engine_constants.js';

/** Every family, in the registry's order. */
export const FAMILIES = ENGINE_CONSTANTS.families;
/** Their names ('gpt2', …): ModelConfig.family, createTokenizer's family option. */
export const FAMILY_NAMES = Object.freeze(FAMILIES.map((f) => f.name));

/** The family of this name, or null (our own models: ''). */
export function familyInfo(name) {
  return FAMILIES.find((f) => f.name === name) ?? null;
}

/** "gpt2 or bert": the names, for messages. */
export function familyChoices() {
  return FAMILY_NAMES.length < 2 ? FAMILY_NAMES.join('') : `${FAMILY_NAMES.slice(0, -1).join(', ')} or ${FAMILY_NAMES.at(-1)}`;
}
