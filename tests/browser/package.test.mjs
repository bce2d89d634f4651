// The npm package in a browser: a blank page that loads the element from
// node_modules (after `npm install ./attention-playground-X.Y.Z.tgz`) renders
// working <attention-playground>s, with random weights and both shipped models,
// no console errors and no request outside its own origin.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, launchBrowser, startServer, WAIT } from './harness.mjs';
import { tempDir } from '../js/helpers.mjs';

test('a blank page using the packed element from node_modules shows the attention of its sentence', async () => {
  const dist = path.join(ROOT, 'dist');
  const tarball = existsSync(dist) ? readdirSync(dist).find((f) => /^attention-playground-.*\.tgz$/.test(f)) : undefined;
  assert.ok(tarball, 'dist/attention-playground-*.tgz is missing: run ./build_wasm.sh --dist');
  const site = tempDir('ap-site-');
  writeFileSync(path.join(site, 'package.json'), JSON.stringify({ name: 'teacher-site', private: true }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', '--loglevel=error', path.join(dist, tarball)], { cwd: site, stdio: 'pipe' });
  writeFileSync(path.join(site, 'index.html'), `<!doctype html>
<meta charset="utf-8"><title>A teacher's page</title><link rel="icon" href="data:,">
<p>Here is attention at work:</p>
<attention-playground id="random" sentence="Dogs chase cats." step="softmax" controls="step,query"></attention-playground>
<attention-playground id="coreference" model="coreference" sentence="The trophy did not fit in the suitcase because it was too big." step="softmax" controls="step,query"></attention-playground>
<attention-playground id="language" model="language" sentence="The cat sat on the mat." step="softmax" controls="step,query"></attention-playground>
<script src="node_modules/attention-playground/attention-playground.js" defer></script>`);
  const server = await startServer(site);
  const browser = await launchBrowser();
  try {
    const page = await browser.context.newPage();
    const errors = [];
    const foreign = [];
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('request', (r) => { if (!r.url().startsWith(server.url) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) foreign.push(r.url()); });
    await page.goto(server.url);
    await page.waitForFunction(() => [...document.querySelectorAll('attention-playground')].every((el) => {
      const root = el.shadowRoot;
      return root?.querySelector('[data-testid="message-error"]')
        || (root?.querySelector('.ap')?.dataset.state === 'ready' && root.querySelector('[data-testid="panel"]')?.dataset.rendered === 'softmax');
    }), null, { timeout: WAIT });
    const seen = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('attention-playground')].map((el) => [el.id, {
      model: el.getState().model,
      error: el.shadowRoot.querySelector('[data-testid="message-error"]')?.textContent ?? null,
      tokens: [...el.shadowRoot.querySelectorAll('[data-testid="token-chip"]')].map((x) => x.textContent.trim()),
    }])));
    assert.ok(seen.random.tokens.join(' ').includes('Dogs'), `token chips: ${seen.random.tokens.join(' | ')}`);
    // both shipped models load from node_modules: coreference from inside the file,
    // language from its script beside it, generated/models/language.js
    for (const name of ['coreference', 'language']) {
      assert.equal(seen[name].error, null, `${name}: ${seen[name].error}`);
      assert.equal(seen[name].model, name);
      assert.ok(seen[name].tokens.length > 3, `${name} tokens: ${seen[name].tokens.join(' | ')}`);
    }
    const modelRequests = requests.filter((u) => /generated\/models\//.test(u));
    assert.deepEqual(modelRequests, [`${server.url}node_modules/attention-playground/generated/models/language.js`]);
    assert.deepEqual(errors, []);
    assert.deepEqual(foreign, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
