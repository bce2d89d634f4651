// The npm package ./build_wasm.sh --dist packs (dist/attention-playground-*.tgz):
// it installs with `npm install ./file.tgz` into a project made by `npm init -y`
// (a CommonJS project) and works from node_modules: the engine computes and
// trains, the Node snippet of docs/js-api.md runs as written, the types, the element, the
// shipped models and the licences are there.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, tempDir } from './helpers.mjs';

const dist = path.join(REPO_ROOT, 'dist');
const tarball = existsSync(dist) ? readdirSync(dist).find((f) => /^attention-playground-.*\.tgz$/.test(f)) : undefined;

/** The fenced ```js block of docs/js-api.md that starts with `// use.mjs`, verbatim. */
function useSnippet() {
  const doc = readFileSync(path.join(REPO_ROOT, 'docs', 'js-api.md'), 'utf8');
  const m = doc.match(/```js\n(\/\/ use\.mjs[\s\S]*?)```/);
  assert.ok(m, 'docs/js-api.md has a ```js block starting with // use.mjs');
  return m[1];
}

let project;
let installed;
before(() => {
  assert.ok(tarball, 'dist/attention-playground-*.tgz is missing: run ./build_wasm.sh --dist');
  // one project for every test here, made the way a newcomer makes one
  project = tempDir('ap-pkg-');
  execFileSync('npm', ['init', '-y'], { cwd: project, stdio: 'pipe' });
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', '--loglevel=error', path.join(dist, tarball)], { cwd: project, stdio: 'pipe' });
  installed = path.join(project, 'node_modules', 'attention-playground');
});

test('the packed tarball installs into an empty project and its engine runs and trains from node_modules', () => {
  const pkg = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8'));
  for (const file of ['attention-playground.js', 'engine.js', 'trainer.js', 'tokenizer.js', 'pretrained.js', 'validate.js', 'matrices.js', 'results.js', 'families.js',
    'engine.d.ts', 'types.d.ts', 'trainer.d.ts', 'tokenizer.d.ts', 'pretrained.d.ts', 'generated/attention_core.wasm', 'generated/attention_core.node.cjs']) {
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

test('the Node snippet of docs/js-api.md, verbatim, runs in an `npm init -y` project: it computes and opens the shipped language model', () => {
  const consumer = JSON.parse(readFileSync(path.join(project, 'package.json'), 'utf8'));
  assert.notEqual(consumer.type, 'module', 'npm init -y makes a CommonJS project (the case docs/js-api.md covers)');
  const snippet = useSnippet();
  writeFileSync(path.join(project, 'readme-use.mjs'), snippet);
  const r = spawnSync('node', ['readme-use.mjs'], { cwd: project, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const [tokens, guesses] = r.stdout.trim().split('\n');
  assert.equal(tokens, "[ 'The', 'cat', 'sat', '.' ]");
  // the shipped language model's guesses, one per word; after "on" it says "the"
  assert.equal(guesses.split(', ').length, 5, guesses);
  assert.match(guesses, /^the → .*, on → the, the → /);
  // what docs/js-api.md warns of: the same lines in a .js file of this project do not load
  writeFileSync(path.join(project, 'readme-use.js'), snippet);
  const js = spawnSync('node', ['readme-use.js'], { cwd: project, encoding: 'utf8' });
  assert.notEqual(js.status, 0);
  assert.match(js.stderr, /Cannot use import statement outside a module/);
});

test('the project is MIT-licensed: LICENSE at the top, "license": "MIT" and LICENSE in the package, WordNet\u2019s licence beside its data', () => {
  const licence = readFileSync(path.join(REPO_ROOT, 'LICENSE'), 'utf8');
  assert.match(licence, /^MIT License\n/);
  assert.match(licence, /Copyright \(c\) 2026 the Attention Playground authors/);
  const pkg = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8'));
  assert.equal(pkg.license, 'MIT');
  assert.equal(readFileSync(path.join(installed, 'LICENSE'), 'utf8'), licence);
  assert.ok(existsSync(path.join(REPO_ROOT, 'models', 'WORDNET-LICENSE')), 'models/WORDNET-LICENSE beside models/wordnet-examples.txt');
  assert.match(readFileSync(path.join(installed, 'generated', 'models', 'WORDNET-LICENSE'), 'utf8'), /WordNet/);
});

test('the package\u2019s types resolve from node_modules: tsc --strict accepts a caller importing them from \u2018attention-playground\u2019', () => {
  // engine.d.ts re-exports the types of trainer, tokenizer and pretrained .d.ts: each must be packed
  writeFileSync(path.join(project, 'types-use.mts'), `
    import { createEngine, type Trainer, type ModelTrace, type PretrainedModel, type PretrainedTokenizer, type Matrix } from 'attention-playground';
    const engine = await createEngine();
    const t: Trainer = engine.createTrainer({ task: 'reverse' });
    const trace: ModelTrace = t.trace({ text: '1 2 3' });
    const m: Matrix = trace.layers[0].heads[0].weights;
    const later: [PretrainedModel | null, PretrainedTokenizer | null] = [null, null];
    console.log(m.rows, later.length);
  `);
  const tsc = path.join(REPO_ROOT, 'tests', 'node_modules', '.bin', 'tsc');
  const r = spawnSync(tsc, ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', 'false', 'types-use.mts'], { cwd: project, encoding: 'utf8' });
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
});
