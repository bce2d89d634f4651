// The npm package in a browser: a blank page that loads the element from
// node_modules (after `npm install ./attention-playground-X.Y.Z.tgz`) renders a
// working <attention-playground>, with no console errors and no request
// outside its own origin.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, launchBrowser, startServer } from './harness.mjs';

test('a blank page using the packed element from node_modules shows the attention of its sentence', async () => {
  const dist = path.join(ROOT, 'dist');
  const tarball = existsSync(dist) ? readdirSync(dist).find((f) => /^attention-playground-.*\.tgz$/.test(f)) : undefined;
  assert.ok(tarball, 'dist/attention-playground-*.tgz is missing: run ./build_wasm.sh --dist');
  const site = mkdtempSync(path.join(tmpdir(), 'ap-site-'));
  writeFileSync(path.join(site, 'package.json'), JSON.stringify({ name: 'teacher-site', private: true }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', '--loglevel=error', path.join(dist, tarball)], { cwd: site, stdio: 'pipe' });
  writeFileSync(path.join(site, 'index.html'), `<!doctype html>
<meta charset="utf-8"><title>A teacher's page</title><link rel="icon" href="data:,">
<p>Here is attention at work:</p>
<attention-playground sentence="Dogs chase cats." step="softmax" controls="step,query"></attention-playground>
<script src="node_modules/attention-playground/attention-playground.js" defer></script>`);
  const server = await startServer(site);
  const browser = await launchBrowser();
  try {
    const page = await browser.context.newPage();
    const errors = [];
    const foreign = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('request', (r) => { if (!r.url().startsWith(server.url) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) foreign.push(r.url()); });
    await page.goto(server.url);
    await page.waitForFunction(() => {
      const el = document.querySelector('attention-playground');
      return el?.shadowRoot && el.getState && el.getState()?.step === 'softmax' && el.shadowRoot.querySelector('canvas');
    }, null, { timeout: 30000 });
    const tokens = await page.evaluate(() => [...document.querySelector('attention-playground').shadowRoot.querySelectorAll('.chip')].map((x) => x.textContent.trim()).filter(Boolean));
    assert.ok(tokens.join(' ').includes('Dogs'), `token chips: ${tokens.join(' | ')}`);
    assert.deepEqual(errors, []);
    assert.deepEqual(foreign, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
