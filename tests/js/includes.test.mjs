// ARCHITECTURE.md's layers of the C++ source, checked on the #include lines (read as
// text: nothing is compiled). src/ is split by job into folders, each allowed to include
// its own folder and the folders below it:
//
//   base < kernels < text < attention < model < families < checkpoints < train < {cli, bindings}
//
// A failure names the file, the line and the folder it reaches up to.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join, resolve, dirname, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'src');

/** The core's folders, lowest first: each may include itself and those before it. */
export const LAYERS = ['base', 'kernels', 'text', 'attention', 'model', 'families', 'checkpoints', 'train'];
/** The two front ends: either may include every core folder, never the other front end. */
const FRONTS = ['cli', 'bindings'];

const rel = (abs) => relative(ROOT, abs).split(sep).join('/');

function sources(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (/\.(cpp|hpp|h)$/.test(name)) out.push(p);
  }
  return out;
}

/** [{line, path}] of a source's quoted includes (comments are not includes). */
export function includesOf(src) {
  const out = [];
  src.split('\n').forEach((text, i) => {
    const m = /^\s*#\s*include\s+"([^"]+)"/.exec(text);
    if (m) out.push({ line: i + 1, path: m[1] });
  });
  return out;
}

/** Why an include from folder `from` of `to` breaks the layers, or null when it is allowed. */
export function layerViolation(from, to) {
  const top = to.split('/')[0];
  const inCore = (f) => LAYERS.includes(f);
  if (!inCore(top) && !FRONTS.includes(top)) return null; // a file beside the includer, a tool's header
  if (inCore(from)) {
    if (FRONTS.includes(top)) return `the core never includes a front end (${top}/)`;
    if (LAYERS.indexOf(top) > LAYERS.indexOf(from)) return `${from}/ is below ${top}/ (${LAYERS.join(' < ')})`;
    return null;
  }
  if (FRONTS.includes(from) && FRONTS.includes(top) && top !== from) return `${from}/ never includes the other front end (${top}/)`;
  return null;
}

const FOLDERS = readdirSync(SRC).filter((n) => statSync(join(SRC, n)).isDirectory());

test('the rule reads includes and judges them: lower and same folders allowed, higher and the other front end not', () => {
  assert.deepEqual(includesOf('#include "model/model.hpp"\n// #include "train/x.hpp"\n  #  include "a.hpp"\n#include <vector>'),
    [{ line: 1, path: 'model/model.hpp' }, { line: 3, path: 'a.hpp' }]);
  assert.equal(layerViolation('model', 'base/types.hpp'), null);
  assert.equal(layerViolation('model', 'model/layers.hpp'), null);
  assert.match(layerViolation('model', 'train/trainer.hpp'), /model\/ is below train\//);
  assert.match(layerViolation('base', 'bindings/convert.hpp'), /never includes a front end/);
  assert.equal(layerViolation('cli', 'train/trainer.hpp'), null);
  assert.match(layerViolation('cli', 'bindings/convert.hpp'), /other front end/);
  assert.equal(layerViolation('bindings', 'guarded.hpp'), null);
});

test('every folder of src/ is a layer, a front end or the tools', () => {
  const known = new Set([...LAYERS, ...FRONTS, 'tools']);
  assert.deepEqual(FOLDERS.filter((f) => !known.has(f)), []);
  for (const f of LAYERS) assert.ok(existsSync(join(SRC, f)) || f === 'families', `src/${f} is missing`);
});

test('no C++ file includes a folder above its own (ARCHITECTURE.md: the layers of src/)', () => {
  const bad = [];
  for (const folder of FOLDERS.filter((f) => f !== 'tools')) {
    for (const file of sources(join(SRC, folder))) {
      for (const { line, path } of includesOf(readFileSync(file, 'utf8'))) {
        const why = layerViolation(folder, path);
        if (why) bad.push(`${rel(file)}:${line}: #include "${path}": ${why}`);
      }
    }
  }
  assert.deepEqual(bad, []);
});

test('every quoted include of a core folder names a file that exists (no stale path after a move)', () => {
  const missing = [];
  for (const file of sources(SRC).concat(sources(join(ROOT, 'tests')), sources(join(ROOT, 'bench')))) {
    for (const { line, path } of includesOf(readFileSync(file, 'utf8'))) {
      const top = path.split('/')[0];
      if ((LAYERS.includes(top) || FRONTS.includes(top)) && !existsSync(join(SRC, path))) missing.push(`${rel(file)}:${line}: ${path}`);
    }
  }
  assert.deepEqual(missing, []);
});

test('no folder of src/ holds more than 25 files (a folder a newcomer can read)', () => {
  const big = FOLDERS.map((f) => [f, readdirSync(join(SRC, f)).filter((n) => statSync(join(SRC, f, n)).isFile()).length])
    .filter(([, n]) => n > 25).map(([f, n]) => `src/${f}: ${n} files`);
  assert.deepEqual(big, []);
});
