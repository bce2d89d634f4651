// src/tools/bundle_element.py reads Emscripten's glue and our modules with
// regular expressions, so it must refuse, loudly, anything it does not
// recognise rather than write a bundle that silently differs from the modules.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, tempDir } from './helpers.mjs';

const SCRIPT = path.join(REPO_ROOT, 'src', 'tools', 'bundle_element.py');
const GLUE = path.join(REPO_ROOT, 'build', 'wasm', 'attention_core.js');
const WASM = path.join(REPO_ROOT, 'build', 'wasm', 'attention_core.wasm');

/** A copy of web/ and of the glue in a temp dir; `change(dir)` edits them; returns the run. */
function bundle(change, extra = []) {
  const dir = tempDir('ap-bundle-');
  cpSync(path.join(REPO_ROOT, 'web'), path.join(dir, 'web'), { recursive: true, filter: (src) => !src.includes(`${path.sep}generated`) });
  // of the generated files, only the engine's constants (a module engine.js imports)
  mkdirSync(path.join(dir, 'web', 'generated'));
  copyFileSync(path.join(REPO_ROOT, 'web', 'generated', 'engine_constants.js'), path.join(dir, 'web', 'generated', 'engine_constants.js'));
  copyFileSync(GLUE, path.join(dir, 'glue.js'));
  copyFileSync(WASM, path.join(dir, 'attention_core.wasm')); // (the wasm the glue names, beside it)
  change?.(dir);
  const out = path.join(dir, 'out.js');
  const r = spawnSync('python3', [SCRIPT, path.join(dir, 'web', 'element.js'), path.join(dir, 'glue.js'), path.join(dir, 'web', 'style.css'), out, ...extra], { encoding: 'utf8' });
  return { ...r, out };
}

function edit(file, f) {
  writeFileSync(file, f(readFileSync(file, 'utf8')));
}

test('the real modules and glue bundle into one classic script', () => {
  const r = bundle();
  assert.equal(r.status, 0, r.stderr);
  const js = readFileSync(r.out, 'utf8');
  assert.ok(!/^\s*(import|export)\s/m.test(js), 'no import/export left');
  assert.ok(!js.includes('import.meta'));
});

test('unrecognised glue or module syntax fails with a message, never a silent bundle', () => {
  const cases = [
    ['glue without its default export', (d) => edit(path.join(d, 'glue.js'), (s) => s.replace(/export\s+default\s+createAttentionCore\s*;?/, ''))],
    ['glue that names no wasm file', (d) => edit(path.join(d, 'glue.js'), (s) => s.replace(/wasmBinaryFile\s*=\s*"attention_core\.wasm"/g, 'wasmBinaryFile="attention_core"'))],
    ['glue whose wasm is not beside it', (d) => rmSync(path.join(d, 'attention_core.wasm'))],
    ['a wasm file that is not WebAssembly', (d) => writeFileSync(path.join(d, 'attention_core.wasm'), 'not wasm')],
    ['glue with the wasm inlined (-sSINGLE_FILE)', (d) => edit(path.join(d, 'glue.js'), (s) => s.replace('wasmBinaryFile="attention_core.wasm"', 'wasmBinaryFile="data:application/octet-stream;base64,AGFzbQ=="'))],
    ['a re-export', (d) => edit(path.join(d, 'web', 'engine.js'), (s) => `${s}\nexport { at as at2 } from './trainer.js';\n`)],
    ['a default export', (d) => edit(path.join(d, 'web', 'trainer.js'), (s) => `${s}\nexport default 1;\n`)],
    ['a side-effect import', (d) => edit(path.join(d, 'web', 'trainer.js'), (s) => `import './engine.js';\n${s}`)],
    ['an import of a package', (d) => edit(path.join(d, 'web', 'trainer.js'), (s) => `import { x } from 'left-pad';\n${s}`)],
  ];
  for (const [name, change] of cases) {
    const r = bundle(change);
    assert.notEqual(r.status, 0, `${name}: the bundler must fail`);
    assert.ok(r.stderr.trim().length > 0, `${name}: a message on stderr`);
  }
});

test('--playground-url bakes an absolute http(s) URL in as the default playground, and refuses anything else', () => {
  const r = bundle(null, ['--playground-url=https://example.org/attention/index.html']);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(readFileSync(r.out, 'utf8').includes('const playgroundUrl = "https://example.org/attention/index.html";'));
  assert.ok(readFileSync(bundle().out, 'utf8').includes('const playgroundUrl = null;'), 'without the option: null');
  for (const bad of ['javascript:alert(1)', 'index.html', 'https://example.org/"+alert(1)+"', 'data:text/html,x']) {
    const b = bundle(null, [`--playground-url=${bad}`]);
    assert.notEqual(b.status, 0, `${bad}: the bundler must fail`);
    assert.match(b.stderr, /--playground-url must be an absolute http\(s\) URL/);
  }
});
