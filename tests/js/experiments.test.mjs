// The experiments the sentence box offers (web/app/playground/experiments.js,
// issue #40, 4) do what they say on the shipped models: in the engine, the
// featured head's row of the query puts the most weight on the expected word,
// so the page suggests only changes whose effect the model shows.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createEngine } from '../../web/engine.js';
import { EXPERIMENTS, EXPERIMENT_HEADS, experimentsFor, REAL_MODEL } from '../../web/app/playground/experiments.js';
import { SHIPPED_MODELS } from '../../web/app/playground/models.js';
import { isHubName } from '../../web/app/hub/source.js';
import { REPO_ROOT } from './helpers.mjs';

let engine;
before(async () => { engine = await createEngine(); });
after(() => engine?.dispose?.());

for (const [name, list] of Object.entries(EXPERIMENTS)) {
  test(`${name}: each experiment's query looks most at the word it names, in the featured head`, () => {
    const trainer = engine.loadTrainer(new Uint8Array(readFileSync(path.join(REPO_ROOT, 'models', SHIPPED_MODELS[name].file))));
    try {
      const { layer, head } = SHIPPED_MODELS[name].featured;
      assert.deepEqual(EXPERIMENT_HEADS[name], SHIPPED_MODELS[name].featured);
      for (const x of list) {
        const tr = trainer.trace({ text: x.sentence });
        assert.ok(tr.tokens.every((t) => !t.unknown), `${x.sentence}: every word is in the vocabulary`);
        const w = tr.layers[layer].heads[head].weights;
        const row = Array.from(w.data.subarray(x.query * w.cols, (x.query + 1) * w.cols));
        const best = row.indexOf(Math.max(...row));
        assert.equal(tr.tokens[best].text, x.expect, `${x.text}: row ${x.query} (${tr.tokens[x.query].text}) looks most at ${tr.tokens[best].text} (${row[best]})`);
      }
    } finally {
      trainer.dispose();
    }
  });
}

test('experimentsFor: the model\u2019s experiments less the sentence on screen, each opening on the featured head', () => {
  const on = experimentsFor({ model: 'coreference', sentence: EXPERIMENTS.coreference[1].sentence });
  assert.deepEqual(on.map((x) => x.text), [EXPERIMENTS.coreference[0].text, EXPERIMENTS.coreference[2].text]);
  assert.deepEqual(on[0].patch, { sentence: EXPERIMENTS.coreference[0].sentence, query: 7, layer: 1, head: 0 });
  assert.deepEqual(experimentsFor({ model: 'random', sentence: 'x' }), []);
  assert.ok(isHubName(REAL_MODEL));
});
