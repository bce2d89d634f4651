// One table per rule, read everywhere: the model's and the training settings'
// ranges (model_schema.hpp, settings:: in trainer.hpp) and the task registry
// (task_registry.hpp) reach JS through buildInfo() and the generated
// constants. These tests fail when a JS or CLI limit differs from the C++
// table: createTrainer's checks (trainer.js), the training lab's URL fields
// (train/state.js), attn train's flags, the lab's and the races' task lists.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../web/engine.js';
import { ENGINE_CONSTANTS } from '../../web/generated/engine_constants.js';
import { normalizeTrainSettings, TRAIN_SETTINGS, TASKS } from '../../web/trainer.js';
import { MODEL_FIELDS, TASKS as LAB_TASKS, taskTitle, taskDefaults } from '../../web/app/train/state.js';
import { RACES } from '../../web/app/concepts/races.js';
import { cliRun } from './helpers.mjs';

let engine;
let tasks;
before(async () => {
  engine = await createEngine();
  tasks = engine.tasks();
});

const rows = () => engine.info.trainSettings;
const numeric = (row) => row.type === 'whole' || row.type === 'real';

test('the generated constants carry the engine\'s tables as the module exports them', () => {
  assert.deepEqual(ENGINE_CONSTANTS.trainSettings, engine.info.trainSettings);
  assert.deepEqual(ENGINE_CONSTANTS.taskTable, engine.info.taskTable);
  // the model's rows first, every createTrainer setting a row
  const js = rows().filter((r) => r.js).map((r) => r.js);
  assert.deepEqual(js.slice(0, 10), ['context', 'layers', 'dModel', 'heads', 'mlp', 'layernorm', 'positional', 'causal', 'scale', 'tied']);
  for (const key of ['length', 'maxVocab', 'lr', 'beta1', 'beta2', 'weightDecay', 'clip', 'warmup', 'batch', 'seed']) assert.ok(js.includes(key), key);
  // the limits docs/training.md documents (base/limits.hpp)
  const row = (name) => rows().find((r) => r.js === name);
  assert.deepEqual([row('layers').lo, row('layers').hi], [1, 12]);
  assert.deepEqual([row('dModel').hi, row('mlp').hi, row('context').lo, row('context').hi], [512, 2048, 0, 512]);
  assert.deepEqual(row('positional').values, engine.info.positionals);
});

test('createTrainer takes exactly the C++ range of every setting: the bounds in, one past them out', () => {
  for (const row of TRAIN_SETTINGS) {
    const base = { task: 'reverse' };
    if (numeric(row)) {
      for (const v of [row.lo, row.hi]) assert.equal(normalizeTrainSettings({ ...base, [row.js]: v }, tasks)[row.js], v, `${row.js} ${v}`);
      const step = row.type === 'whole' ? 1 : Math.max(Math.abs(row.hi) * 1e-3, 1e-3);
      for (const v of [row.lo - step, row.hi + step]) {
        assert.throws(() => normalizeTrainSettings({ ...base, [row.js]: v }, tasks), (e) => e instanceof RangeError && e.code === 'bad_input' && e.message.includes(row.js), `${row.js} ${v}`);
      }
    } else if (row.type === 'boolean') {
      assert.equal(normalizeTrainSettings({ ...base, [row.js]: true }, tasks)[row.js], true);
      assert.throws(() => normalizeTrainSettings({ ...base, [row.js]: 'yes' }, tasks), (e) => e.code === 'bad_input');
    } else {
      for (const v of row.values) assert.equal(normalizeTrainSettings({ ...base, [row.js]: v }, tasks)[row.js], v);
      assert.throws(() => normalizeTrainSettings({ ...base, [row.js]: 'rotary' }, tasks), (e) => e.code === 'bad_input');
    }
  }
});

test('the C++ refuses one past every model bound itself (what a caller bypassing trainer.js meets)', () => {
  for (const row of rows().filter((r) => r.model && r.type === 'whole')) {
    const settings = normalizeTrainSettings({ task: 'reverse', heads: 1, dModel: 512 }, tasks);
    // the module itself (engine._m), past trainer.js's checks: an error record naming the setting
    const record = engine._m.trainingMemory({ ...settings, [row.js]: row.hi + 1 }).__attnError;
    assert.ok(record, row.js);
    assert.equal(record.errorCode, 'bad_input', row.js);
    assert.match(record.errorMessage, new RegExp(`settings\\.${row.name} ${row.hi + 1} is outside ${row.lo}…${row.hi}`), row.js);
  }
});

test('the training lab\'s URL fields take the engine\'s kinds, ranges and choices', () => {
  const kinds = { whole: 'int', real: 'number', boolean: 'bool', choice: 'choice' };
  for (const [name, f] of Object.entries(MODEL_FIELDS)) {
    const row = rows().find((r) => r.js === name);
    assert.ok(row, name);
    assert.equal(f.kind, kinds[row.type], name);
    if (f.kind === 'int' || f.kind === 'number') assert.deepEqual([f.min, f.max], [row.lo, row.hi], name);
    if (f.kind === 'choice') assert.deepEqual([...f.choices], row.values, name);
  }
});

test('the training lab\'s task defaults are the engine\'s recipe values of every lab field', () => {
  for (const t of tasks) {
    const d = taskDefaults(t);
    assert.deepEqual(Object.keys(d), Object.keys(MODEL_FIELDS), t.name);
    for (const key of Object.keys(MODEL_FIELDS)) {
      if (key === 'lr') assert.ok(Math.abs(d.lr - t.defaults.lr) <= 1e-7 * t.defaults.lr, t.name);
      else assert.equal(d[key], t.defaults[key], `${t.name} ${key}`);
    }
  }
  assert.throws(() => taskDefaults({ name: 'made-up', defaults: { layers: 1 } }), /defaults of the task "made-up" have no length/);
});

test('attn train\'s model and training flags take exactly the C++ range of their rows', () => {
  for (const row of rows().filter((r) => r.flag)) {
    const run = (...v) => cliRun(['train', '--task', 'reverse', '--steps', '0', row.flag, ...v]);
    if (row.type === 'whole') {
      const out = run(String(row.hi + 1));
      assert.equal(out.status, 2, row.flag);
      assert.match(out.stderr, new RegExp(`${row.flag} expects a whole number from ${row.lo} to ${row.hi}`), row.flag);
      assert.doesNotMatch(run(String(row.hi)).stderr, /expects/, `${row.flag} ${row.hi}`);
      assert.doesNotMatch(run(String(row.lo)).stderr, /expects/, `${row.flag} ${row.lo}`);
    } else if (row.type === 'real') {
      const out = run(String(row.hi * 2 + 1));
      assert.equal(out.status, 2, row.flag);
      assert.match(out.stderr, new RegExp(`${row.flag} expects a number from`), row.flag);
    } else if (row.values.length) {
      for (const v of row.values) assert.equal(run(v).status, 0, `${row.flag} ${v}`);
      assert.match(run('sideways').stderr, new RegExp(`${row.flag} expects`));
    } else {
      assert.equal(cliRun(['train', '--task', 'reverse', '--steps', '0', row.flag]).status, 0, row.flag);
      assert.equal(cliRun(['train', '--task', 'reverse', '--steps', '0', `--no-${row.flag.slice(2)}`]).status, 0, row.flag);
    }
  }
});

test('one task list: the engine, the CLI, trainer.js, the training lab and the races read the registry', () => {
  const names = engine.info.taskTable.map((t) => t.name);
  assert.deepEqual(TASKS, names);
  assert.deepEqual(LAB_TASKS, names);
  assert.deepEqual(tasks.map((t) => t.name), names);
  tasks.forEach((t, i) => {
    assert.equal(t.title, engine.info.taskTable[i].title);
    assert.equal(taskTitle(t.name), t.title);
    assert.equal(t.causal, engine.info.taskTable[i].causal);
  });
  assert.equal(taskTitle('previous-token'), 'Previous token');
  const help = cliRun(['train', '--help']);
  assert.match(help.stdout, new RegExp(`TASK: ${names.join(', ')} `));
  // every race trains tasks of the registry, with settings inside the engine's ranges
  for (const [name, race] of Object.entries(RACES)) {
    const variant = race.variant?.default;
    for (const s of race.settings({ seed: 1, variant })) {
      assert.ok(names.includes(s.task), `${name}: ${s.task}`);
      assert.doesNotThrow(() => normalizeTrainSettings(s, tasks), name);
    }
  }
});

test('each task\'s size range is the registry\'s: its edges train, one past them is refused', () => {
  for (const t of engine.info.taskTable) {
    if (t.name === 'text') continue; // needs a corpus: tests/core/test_task_registry.cpp
    const hi = t.length.rule === 'even' && t.length.hi % 2 ? t.length.hi - 1 : t.length.hi;
    const ok = engine.estimateTrainingMemory({ task: t.name, length: hi, batch: 1 });
    assert.equal(typeof ok.bytes, 'number', t.name);
    assert.throws(() => engine.estimateTrainingMemory({ task: t.name, length: t.length.hi + 1, batch: 1 }), (e) => e.message.includes(`${t.length.lo}..${t.length.hi}`), t.name);
  }
});

test('the trainer handle registry is module-wide and reported by engine.stats()', () => {
  const other = engine.stats().liveTrainers;
  const a = engine.createTrainer({ task: 'reverse' });
  const b = engine.createTrainer({ task: 'copy' });
  const s = engine.stats();
  assert.equal(s.liveTrainers, other + 2);
  assert.ok(s.trainerParameterBytes >= 4 * (a.parameterCount + b.parameterCount));
  a.dispose();
  assert.equal(engine.stats().liveTrainers, other + 1);
  b.dispose();
  assert.equal(engine.stats().liveTrainers, other);
});

test('every kind of handle lives in the module-wide tables: engines and tokenizers are counted, freed by dispose, and a freed one is refused', async () => {
  const before = engine.stats();
  const second = await createEngine();
  const vocab = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'hello', 'world'].join('\n');
  const tok = engine.createTokenizer({ 'vocab.txt': vocab });
  const during = engine.stats();
  assert.equal(during.liveEngines, before.liveEngines + 1);
  assert.equal(during.liveTokenizers, before.liveTokenizers + 1);
  assert.deepEqual(tok.encode('hello world').map((t) => t.piece), ['[CLS]', 'hello', 'world', '[SEP]']);
  second.dispose();
  tok.dispose();
  tok.dispose(); // a second dispose is harmless
  const after = engine.stats();
  assert.equal(after.liveEngines, before.liveEngines);
  assert.equal(after.liveTokenizers, before.liveTokenizers);
  assert.equal(after.liveLoaders, before.liveLoaders);
  assert.equal(after.liveModels, before.liveModels);
  assert.throws(() => second.stats(), (e) => e.code === 'bad_state' && /engine has been disposed/.test(e.message));
  assert.throws(() => tok.encode('hello'), (e) => e.code === 'bad_state' && /tokenizer has been disposed/.test(e.message));
});
