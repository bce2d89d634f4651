// Each race of the concept lab is one table (web/app/concepts/races.js): what the
// worker trains and what the page shows of it. The view (race-view.js, race-maps.js) reads the
// table and names no race; every race's table has every part the view reads.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { RACES, RACE_NAMES, armLabel } from '../../web/app/concepts/races.js';

// the view's code (race-view.js and its maps, race-maps.js), without its comments (its usage line names a race as an example)
const VIEWS = ['race-view.js', 'race-maps.js'].map((file) => [file, readFileSync(new URL(`../../web/app/concepts/${file}`, import.meta.url), 'utf8')
  .replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')]);

test('race-view.js and race-maps.js hold no per-race branch: no race is named in them', () => {
  for (const [file, VIEW] of VIEWS) {
    for (const name of RACE_NAMES) {
      assert.ok(!new RegExp(`['"\`]${name}['"\`]|\\b${name}:`).test(VIEW), `${file} names the ${name} race`);
    }
    assert.ok(!/switch\s*\(\s*race\s*\)/.test(VIEW), `${file} switches on the race`);
  }
});

/** A finished history of a race, as the page keeps it (two checks, a final evaluation). */
function finishedHistory(def) {
  const arms = def.single ? 1 : def.arms.length;
  const row = (step) => [step, 0.5, 0.75, 2, 1, 0.1];
  const armNumbers = () => ({ accuracy: 0.8, causal: 0.7, antiDiagonal: 0.9, cover: 0.6, heads: [], at2: 0.7, at4: 0.6 });
  return {
    rows: Array.from({ length: arms }, () => Array.from({ length: 100 }, (_, i) => row(i + 1))),
    evals: [25, 50].map((step) => ({ step, arms: def.arms.map(armNumbers) })),
    live: null,
    final: { step: 100, samples: 512, arms: def.arms.map(armNumbers) },
    step: 100,
    mode: 'done',
  };
}

for (const name of RACE_NAMES) {
  test(`${name} race: its table has text, a chance level, results, charts, checks, a verdict and maps`, () => {
    const def = RACES[name];
    const variants = def.variant ? def.variant.choices : [null];
    for (const v of variants) {
      for (const part of ['setup', 'watch', 'condition']) {
        const t = def.text[part](v);
        assert.equal(typeof t, 'string');
        assert.ok(t.length > 20 && !/undefined|NaN|\[object/.test(t), `${part}(${v}): ${t}`);
      }
    }
    assert.ok(def.chance === null || (def.chance.value > 0 && def.chance.value < 1 && /^1\/\d+$/.test(def.chance.label)), JSON.stringify(def.chance));
    if (def.chance) assert.equal(def.chance.value, 1 / Number(def.chance.label.slice(2)), 'the chance label is its value');
    for (const [what, list, key] of [['results', def.results, 'id'], ['charts', def.charts, 'id'], ['checks', def.checks, 'header']]) {
      assert.ok(list.length > 0, `${what} is empty`);
      assert.equal(new Set(list.map((x) => x[key])).size, list.length, `${what}: ${key}s repeat`);
    }
    const h = finishedHistory(def);
    const v = variants[0];
    const ctx = { arms: def.arms, label: (i, form = 'label') => armLabel(name, i, v, form) };
    for (const r of def.results) {
      assert.equal(typeof r.label(h), 'string');
      for (let a = 0; a < (def.single ? 1 : def.arms.length); a++) assert.equal(typeof r.value(h, a), 'number', `${r.id}`);
    }
    for (const c of def.charts) {
      const series = c.series(h, v, ctx);
      assert.ok(series.length > 0 && series.every((x) => typeof x.name === 'string' && !x.name.includes('undefined')), c.id);
    }
    for (const c of def.checks) assert.equal(typeof c.value(h, h.evals[1], 0, def.evalEvery), 'number', c.header);
    const verdict = def.verdict(h, v, ctx);
    assert.ok(verdict.startsWith('At the finish') || verdict.startsWith('Without the mask'), verdict);
    assert.ok(!/undefined|NaN/.test(verdict), verdict);
    assert.ok(['arms', 'sentences', 'none'].includes(def.maps));
    if (def.maps !== 'none') assert.ok(def.mapsTitle && typeof def.mapsNote(v) === 'string' && def.mapsNote(v).length > 20);
  });
}
