// What to try at the sentence box (issue #40, 4): for each shipped model, the
// changes to the sentence whose effect the model shows, each checked against
// the engine by tests/js/first-minutes-engine.test.mjs (the featured head's
// row of the query puts the most weight on `expect`); and, for sentences the
// toy models cannot read, one click to the smallest real model the page runs.
//
//   experimentsFor(state)   → [{text, patch}] the buttons under the box (none for the sentence on screen)

/** The smallest trained checkpoint the page runs (a Llama-family decoder, 135 M parameters, 269 MB). */
export const REAL_MODEL = 'hf:HuggingFaceTB/SmolLM2-135M';

const CORE = 'The animal didn\'t cross the street because it was too';

/** model → [{text, sentence, query (the token index), expect (the key token's text)}]; head: the
 * model's featured {layer, head} (models.js SHIPPED_MODELS, the test checks they agree). Pure data:
 * the sentence view reads it. */
export const EXPERIMENT_HEADS = Object.freeze({ coreference: Object.freeze({ layer: 1, head: 0 }), language: Object.freeze({ layer: 1, head: 2 }) });

export const EXPERIMENTS = Object.freeze({
  coreference: Object.freeze([
    { text: 'Change \u201ctired\u201d to \u201cwide\u201d: where will \u201cit\u201d look now?', sentence: `${CORE} wide.`, query: 7, expect: 'street' },
    { text: 'Back to \u201ctired\u201d: does \u201cit\u201d return to the animal?', sentence: `${CORE} tired.`, query: 7, expect: 'animal' },
    { text: 'A zebra and a wall: what is \u201cit\u201d, too high to climb?', sentence: 'The zebra looked at the wall but it was too high to climb.', query: 7, expect: 'wall' },
  ]),
  language: Object.freeze([
    { text: 'Say a phrase twice: at the second \u201cchildren\u201d, does the head look at what followed the first?', sentence: 'the children played in the garden all afternoon and the children played in the garden', query: 10, expect: 'played' },
    { text: 'Back to the car: at the second \u201cbuy\u201d, which word does it look at?', sentence: 'she was able to buy a car . she was able to buy a car', query: 12, expect: 'a' },
  ]),
});

/** The experiments to offer on this state: the model's, less the one on screen; each opens on the featured head. */
export function experimentsFor(state) {
  const list = EXPERIMENTS[state.model] ?? [];
  const f = EXPERIMENT_HEADS[state.model];
  return list.filter((x) => x.sentence !== state.sentence).map((x) => ({
    text: x.text,
    patch: { sentence: x.sentence, query: x.query, ...(f ? { layer: f.layer, head: f.head } : {}) },
  }));
}
