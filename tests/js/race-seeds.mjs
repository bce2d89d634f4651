// Runs a race of the concept lab (web/app/concepts/races.js) to a step count at
// several seeds: the numbers behind a race's `spread`, the spread the page states.
// Not a test file (node --test picks only *.test.mjs). Two ways in:
//   in a worker thread (tests/js/races.test.mjs spreads the seeds over the cores):
//     new Worker(url, { workerData: { race, variant, steps, seeds } }) posts [{seed, arms}]
//     (arms: run.final().arms of each seed)
//   by hand, to measure a spread again:
//     node tests/js/race-seeds.mjs masks        (the race's spread seeds and steps)
//   prints each seed's finish line and [low, high] of each arm's spread measure.

import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { createEngine } from '../../web/engine.js';
import { createRaceRun, RACES } from '../../web/app/concepts/races.js';

/** The finish line of `race` at each seed: [{seed, arms}]. */
export function finishLinesHere(engine, { race, variant, steps, seeds }) {
  const out = [];
  for (const seed of seeds) {
    const run = createRaceRun(engine, race, { seed, variant });
    try {
      for (let arm = 0; arm < run.trainers; arm++) run.advance(arm, steps);
      out.push({ seed, arms: run.final().arms });
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
  for (const { seed, arms } of lines) console.log(`seed ${seed}: ${arms.map((a) => a[measure]).join(', ')}`);
  const arms = lines[0].arms.map((_, i) => [Math.min(...lines.map((l) => l.arms[i][measure])), Math.max(...lines.map((l) => l.arms[i][measure]))]);
  console.log(`spread of ${measure}: ${JSON.stringify(arms)}`);
}
