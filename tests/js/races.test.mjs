// The concept lab's heads race (web/app/concepts/races.js) in Node, over race
// seeds 1–5: the same pure computation the race worker runs for a link with
// that seed, to its finish line. Its claim holds at every seed (two heads ahead
// of one, by a wide margin), and the spread the page prints (RACES.heads.spread,
// through race-text.js) is exactly what these runs measure.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../web/engine.js';
import { createRaceRun, RACES } from '../../web/app/concepts/races.js';
import { RACE_TEXT, spreadText } from '../../web/app/concepts/race-text.js';
import { formatValue } from '../../web/app/format.js';

const engine = await createEngine();

test('heads race, seeds 1–5: 2 heads finish at least 90% and 20 points ahead of 1 head; the page states the measured spread', () => {
  const def = RACES.heads;
  const [first, last] = def.spread.seeds;
  const finals = [];
  for (let seed = first; seed <= last; seed++) {
    const run = createRaceRun(engine, 'heads', { seed, variant: def.variant.default });
    try {
      for (let arm = 0; arm < run.trainers; arm++) run.advance(arm, def.spread.steps);
      const f = run.final();
      finals.push(f.arms);
      const [one, two] = f.arms;
      console.log(`# heads race, seed ${seed}: 1 head ${one.accuracy.toFixed(4)} (cover ${one.cover.toFixed(3)}), 2 heads ${two.accuracy.toFixed(4)} (cover ${two.cover.toFixed(3)})`);
      assert.ok(two.accuracy >= 0.9, `seed ${seed}: 2 heads ${two.accuracy}`);
      assert.ok(two.accuracy - one.accuracy >= 0.2, `seed ${seed}: 2 heads ${two.accuracy} vs 1 head ${one.accuracy}`);
      assert.ok(two.cover > 0.8, `seed ${seed}: coverage with 2 heads ${two.cover}`);
      assert.ok(one.cover <= 0.5 + 1e-6, `seed ${seed}: one head cannot cover both letters: ${one.cover}`);
    } finally {
      run.dispose();
    }
  }
  assert.equal(def.spread.steps, def.steps, 'the spread is of the race as its link runs it');
  // the page's numbers are these runs' lowest and highest, as the page prints them
  const shown = (x) => formatValue(100 * x, 3);
  def.spread.arms.forEach(([low, high], arm) => {
    const acc = finals.map((f) => f[arm].accuracy);
    assert.equal(shown(low), shown(Math.min(...acc)), `arm ${arm}: lowest of ${acc}`);
    assert.equal(shown(high), shown(Math.max(...acc)), `arm ${arm}: highest of ${acc}`);
  });
  assert.ok(RACE_TEXT.heads.condition(def.variant.default).includes(spreadText('heads')));
});
