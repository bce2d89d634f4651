// Runs a race of the concept lab (web/app/concepts/races.js) to a step count at
// several seeds: the numbers behind a race's `spread`, the spread the page states.
// Not a test file (node --test picks only *.test.mjs). Two ways in:
//   in a worker thread (tests/js/races.test.mjs spreads the seeds over the cores):
//     new Worker(url, { workerData: { race, variant, steps, seeds, samples? } }) posts [{seed, arms}]
//     (arms: run.final().arms of each seed, or run.evaluate(samples).arms)
//   by hand, to measure a spread again:
//     node tests/js/race-seeds.mjs masks        (the race's spread seeds and steps)
//     node tests/js/race-seeds.mjs long         (accuracy at n and at 4n of each kind: ~1 CPU minute)
//   prints each seed's finish line and [low, high] of each arm's spread measure.

import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { createEngine } from '../../web/engine.js';
import { createRaceRun, RACES } from '../../web/app/concepts/races.js';

/** The finish line of `race` at each seed: [{seed, arms}]. */
export function finishLinesHere(engine, { race, variant, steps, seeds, samples = null }) {
  const out = [];
  for (const seed of seeds) {
    const run = createRaceRun(engine, race, { seed, variant });
    try {
      for (let arm = 0; arm < run.trainers; arm++) run.advance(arm, steps);
      // samples: a smaller evaluation than the finish line's (a test's budget)
      out.push({ seed, arms: samples ? run.evaluate(samples).arms : run.final().arms });
    } finally {
      run.dispose();
    }
  }
  return out;
}

if (!isMainThread) {
  const engine = await createEngine();
  parentPort.postMessage(finishLinesHere(engine, workerData));
} else if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const race = process.argv[2];
  const { seeds: [first, last], steps, measure = 'accuracy' } = RACES[race].spread;
  const seeds = Array.from({ length: last - first + 1 }, (_, i) => first + i);
  const engine = await createEngine();
  const lines = finishLinesHere(engine, { race, variant: RACES[race].variant?.default, steps, seeds });
  // a spread of one measure per arm ([low, high]) or of several ({field: [low, high] | null}, the long race)
  const fields = Array.isArray(RACES[race].spread.arms[0]) ? [measure] : Object.keys(RACES[race].spread.arms[0]);
  for (const { seed, arms } of lines) console.log(`seed ${seed}: ${arms.map((a) => fields.map((f) => a[f]).join(' / ')).join(', ')}`);
  const range = (i, f) => (lines[0].arms[i][f] == null ? null : [Math.min(...lines.map((l) => l.arms[i][f])), Math.max(...lines.map((l) => l.arms[i][f]))]);
  const arms = lines[0].arms.map((_, i) => (fields.length === 1 ? range(i, measure) : Object.fromEntries(fields.map((f) => [f, range(i, f)]))));
  console.log(`spread of ${fields.join(', ')}: ${JSON.stringify(arms)}`);
}
