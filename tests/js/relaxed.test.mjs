// The relaxed-SIMD flavour (./build_wasm.sh --relaxed, as bench/run.sh builds it and runs this file before it times it):
// every fast-path test of fast.test.mjs again, on its module, in a Node that runs relaxed
// SIMD (Node 20 behind --experimental-wasm-relaxed-simd). Its products are fused, so its
// last bits differ from the exact build's; the tests' tolerances against the Eigen
// reference (1e-5) are the same.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { REPO_ROOT } from './helpers.mjs';

const wasm = path.join(REPO_ROOT, 'web/generated/relaxed/attention_core.wasm');

/** The flag this Node needs for relaxed SIMD ([] when it runs it by default). */
function relaxedFlags() {
  const probe = spawnSync(process.execPath, ['--experimental-wasm-relaxed-simd', '-e', '0']);
  return probe.status === 0 ? ['--experimental-wasm-relaxed-simd'] : [];
}

test('the relaxed build holds f32x4.relaxed_madd and runs where relaxed SIMD does', () => {
  assert.ok(fs.existsSync(wasm), `${wasm} is missing: build it with ./build_wasm.sh --relaxed`);
  const flags = relaxedFlags();
  const r = spawnSync(process.execPath, [...flags, '-e', `process.exit(WebAssembly.validate(require('fs').readFileSync(${JSON.stringify(wasm)})) ? 0 : 3)`]);
  assert.equal(r.status, 0, `this Node (${process.version} ${flags.join(' ')}) does not validate the relaxed module: ${r.stderr}`);
  // it really holds the fused instruction (wasm-objdump, as build_wasm.sh's check)
  const listing = spawnSync('wasm-objdump', ['-d', wasm], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  assert.equal(listing.status, 0, listing.stderr);
  const fused = listing.stdout.split('\n').filter((l) => l.trimEnd().endsWith('f32x4.relaxed_madd')).length;
  assert.ok(fused >= 8, `relaxed_madd instructions: ${fused}`);
});

/** The child's environment: the relaxed flavour, and not node --test's own reporting channel
 * (NODE_TEST_CONTEXT would make the child report to this runner instead of printing TAP). */
function childEnv() {
  const env = { ...process.env, ATTN_TEST_FLAVOUR: 'relaxed' };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

test('every fast-path test passes on the relaxed flavour (forward within 1e-5 of the Eigen reference, kept weights, masks, memory)', () => {
  const r = spawnSync(process.execPath, [...relaxedFlags(), '--test', '--test-concurrency=1', '--test-reporter=tap', path.join(REPO_ROOT, 'tests/js/fast.test.mjs')], {
    env: childEnv(), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024,
  });
  const count = (what) => Number((r.stdout.match(new RegExp(`^# ${what} (\\d+)$`, 'm')) ?? [])[1] ?? NaN);
  assert.equal(r.status, 0, `fast.test.mjs failed on the relaxed flavour:\n${r.stdout.split('\n').filter((l) => /not ok|error|expected|actual/.test(l)).join('\n')}\n${r.stderr}`);
  assert.ok(count('pass') >= 10, `tests that passed: ${count('pass')}`);
  assert.equal(count('fail'), 0);
});
