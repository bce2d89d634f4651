// The npm package ./build_wasm.sh --dist packs (dist/attention-playground-*.tgz):
// it installs with `npm install ./file.tgz` into an empty project and works from
// node_modules: the engine computes and trains, the types and the element are there.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './helpers.mjs';

const dist = path.join(REPO_ROOT, 'dist');
const tarball = existsSync(dist) ? readdirSync(dist).find((f) => /^attention-playground-.*\.tgz$/.test(f)) : undefined;

test('the packed tarball installs into an empty project and its engine runs and trains from node_modules', () => {
  assert.ok(tarball, 'dist/attention-playground-*.tgz is missing: run ./build_wasm.sh --dist');
  const project = mkdtempSync(path.join(tmpdir(), 'ap-pkg-'));
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', '--loglevel=error', path.join(dist, tarball)], { cwd: project, stdio: 'pipe' });
  const installed = path.join(project, 'node_modules', 'attention-playground');
  const pkg = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8'));
  for (const file of ['attention-playground.js', 'engine.js', 'trainer.js', 'validate.js', 'engine.d.ts', 'generated/attention_core.wasm', 'generated/attention_core.node.cjs']) {
    assert.ok(existsSync(path.join(installed, file)), `${file} is in the package`);
  }
  // the shipped models and their licence, byte for byte, where the element looks for them
  for (const file of ['coreference.safetensors', 'language.safetensors', 'WORDNET-LICENSE']) {
    const packed = path.join(installed, 'generated', 'models', file);
    assert.ok(existsSync(packed), `generated/models/${file} is in the package`);
    assert.ok(readFileSync(packed).equals(readFileSync(path.join(REPO_ROOT, 'models', file))), `generated/models/${file} is models/${file}`);
  }
  assert.equal(pkg.types, './engine.d.ts');
  assert.equal(pkg.exports['./element'], './attention-playground.js');
  writeFileSync(path.join(project, 'use.mjs'), `
    import { createEngine } from 'attention-playground';
    const engine = await createEngine();
    const trace = engine.run({ sentence: 'The cat sat.', heads: 2 });
    const t = engine.createTrainer({ task: 'reverse' });
    t.step(300);
    console.log(JSON.stringify({ tokens: trace.tokens.map((x) => x.text), accuracy: t.evaluate().accuracy }));
  `);
  const out = JSON.parse(execFileSync('node', ['use.mjs'], { cwd: project, encoding: 'utf8' }));
  assert.deepEqual(out.tokens, ['The', 'cat', 'sat', '.']);
  assert.ok(out.accuracy >= 0.99, `accuracy ${out.accuracy}`);
});
