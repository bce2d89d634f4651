// web/engine.d.ts (with the files it re-exports: types, trainer, tokenizer,
// pretrained .d.ts) against the code: tsc type-checks a usage file of every public
// API (tests/types/usage.ts, strict), and every method the declarations give the
// Engine and Trainer classes exists at run time, and the other way round.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createEngine, Engine, Trainer, PretrainedTokenizer } from '../../web/engine.js';
import { REPO_ROOT } from './helpers.mjs';

test('tsc --noEmit --strict accepts the usage file of every public API (and its @ts-expect-error misuses)', () => {
  const tsc = path.join(REPO_ROOT, 'tests', 'node_modules', '.bin', 'tsc');
  try {
    execFileSync(tsc, ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', 'false',
      path.join(REPO_ROOT, 'tests', 'types', 'usage.ts')], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    assert.fail(`tsc failed:\n${e.stdout}${e.stderr}`);
  }
});

/** Method names declared in `declare class NAME { … }` of web/FILE. */
function declaredMethods(file, className) {
  const source = readFileSync(path.join(REPO_ROOT, 'web', file), 'utf8');
  const start = source.indexOf(`export declare class ${className} {`);
  assert.ok(start >= 0, `${file} declares class ${className}`);
  const body = source.slice(start, source.indexOf('\n}', start));
  return [...body.matchAll(/^\s+([a-zA-Z]\w*)\(/gm)].map((m) => m[1]).sort();
}

function runtimeMethods(cls) {
  return Object.getOwnPropertyNames(cls.prototype).filter((n) => n !== 'constructor' && !n.startsWith('_') && typeof Object.getOwnPropertyDescriptor(cls.prototype, n).value === 'function').sort();
}

test('the declared methods of Engine, Trainer and PretrainedTokenizer are exactly the runtime ones', async () => {
  assert.deepEqual(declaredMethods('engine.d.ts', 'Engine'), runtimeMethods(Engine));
  assert.deepEqual(declaredMethods('trainer.d.ts', 'Trainer'), runtimeMethods(Trainer));
  assert.deepEqual(declaredMethods('tokenizer.d.ts', 'PretrainedTokenizer'), runtimeMethods(PretrainedTokenizer));
  const engine = await createEngine();
  assert.ok(engine instanceof Engine);
});
