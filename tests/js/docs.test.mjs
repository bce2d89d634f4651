// The documentation stays true to the tree: README.md is a front page of at
// most 150 lines; every relative link in README.md and docs/*.md leads to a
// file that exists (and a #fragment to one of its headings); every repository
// path written in code (`src/…`, `web/…`, `tests/…`, `bench/…`, `models/…`,
// `docs/…`) exists, unless the build writes it (a git-ignored path); and the
// README's snippets are copies of the ones docs/ holds, which the tests run.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './helpers.mjs';

const DOCS = path.join(REPO_ROOT, 'docs');
const FILES = ['README.md', ...readdirSync(DOCS).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const read = (rel) => readFileSync(path.join(REPO_ROOT, rel), 'utf8');

/** The fenced blocks of a Markdown text: [{lang, body}]. */
function fencedBlocks(text) {
  return [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1], body: m[2] }));
}
const withoutFences = (text) => text.replace(/^```\w*\n[\s\S]*?^```$/gm, '');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading) {
  return heading.replace(/`/g, '').trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}
function anchors(text) {
  const seen = new Map();
  const out = new Set();
  for (const m of withoutFences(text).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The build's outputs (the root .gitignore): such a path need not exist in a fresh clone. */
const ignoreRules = read('.gitignore').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
function isBuilt(rel) {
  return ignoreRules.some((rule) => {
    if (rule.startsWith('*')) return rel.endsWith(rule.slice(1));
    if (rule.startsWith('/')) {
      const r = rule.slice(1).replace(/\/$/, '');
      if (r.endsWith('*')) return rel.split('/')[0].startsWith(r.slice(0, -1));
      return rel === r || rel.startsWith(`${r}/`);
    }
    return rel.split('/').includes(rule.replace(/\/$/, ''));
  });
}

/** True when a repository path exists; `*` in the last part is a wildcard. */
function pathExists(rel) {
  const clean = rel.replace(/\/$/, '');
  if (!clean.includes('*')) return existsSync(path.join(REPO_ROOT, clean));
  const dir = path.dirname(clean);
  const re = new RegExp(`^${path.basename(clean).split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return existsSync(path.join(REPO_ROOT, dir)) && readdirSync(path.join(REPO_ROOT, dir)).some((f) => re.test(f));
}

const PATH_RE = /(?<![\w./@-])(?:src|web|tests|bench|models|docs)\/[^\s`'"()[\]{},;:<>|]*/g;
/** Every repository path written in code: inline code spans and fenced blocks. */
function codePaths(text) {
  const spans = [...withoutFences(text).matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
  const blocks = fencedBlocks(text).map((b) => b.body);
  const out = [];
  for (const code of [...spans, ...blocks]) {
    for (const m of code.matchAll(PATH_RE)) {
      const p = m[0].replace(/[.…]+$/, '');
      const rest = code.slice(m.index + m[0].length);
      if (/^[<…]/.test(rest)) continue;  // a placeholder: models/<name>.safetensors
      out.push(p);
    }
  }
  return out;
}

test('README.md is a front page: at most 150 lines, led by the playground\'s picture', () => {
  const lines = read('README.md').split('\n');
  if (lines.at(-1) === '') lines.pop();
  assert.ok(lines.length <= 150, `README.md has ${lines.length} lines`);
  assert.match(lines.slice(0, 15).join('\n'), /!\[[^\]]*\]\(docs\/images\/playground\.png\)/);
});

test('every relative link in README.md and docs/*.md leads to a file of the tree, and a #fragment to a heading', () => {
  const problems = [];
  for (const file of FILES) {
    const text = read(file);
    for (const m of withoutFences(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1];
      if (/^[a-z]+:/i.test(target)) continue;  // http:, https:, mailto:
      const [rel, fragment] = target.split('#');
      const resolved = rel ? path.posix.normalize(path.posix.join(path.posix.dirname(file), rel)) : file;
      if (!existsSync(path.join(REPO_ROOT, resolved))) {
        problems.push(`${file}: ${target} (no ${resolved})`);
        continue;
      }
      if (fragment !== undefined && !anchors(read(resolved)).has(fragment)) problems.push(`${file}: ${target} (no heading #${fragment} in ${resolved})`);
    }
  }
  assert.deepEqual(problems, []);
});

test('every repository path written in README.md and docs/*.md exists (or is one the build writes)', () => {
  const problems = [];
  let checked = 0;
  for (const file of FILES) {
    for (const p of codePaths(read(file))) {
      if (isBuilt(p)) continue;
      checked += 1;
      if (!pathExists(p)) problems.push(`${file}: ${p}`);
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(checked > 100, `only ${checked} paths found: is the path pattern still right?`);
});

test('the path check itself: it finds paths, knows built ones, and refuses a missing one', () => {
  assert.deepEqual(codePaths('see `src/base/limits.hpp` and `web/app/` or\n```sh\nbench/run.sh --sizes 1\n```\n'), ['src/base/limits.hpp', 'web/app/', 'bench/run.sh']);
  assert.deepEqual(codePaths('`attention-playground/models/<name>.safetensors`, `models/<name>.safetensors`'), []);
  assert.ok(isBuilt('web/generated/attention_core.js') && isBuilt('web/attention-playground.js') && isBuilt('tests/node_modules/x'));
  assert.ok(!isBuilt('web/engine.js'));
  assert.ok(pathExists('tests/fuzz/fuzz_*.cpp'));
  assert.ok(!pathExists('src/core/model.hpp'));
  assert.equal(slug('Attention: `bench/run.sh`'), 'attention-benchrunsh');
  assert.equal(slug('A pretrained model: GPT-2 small shaped'), 'a-pretrained-model-gpt-2-small-shaped');
});

test('the README\u2019s snippets are copies of docs/embedding.md\u2019s, which the browser tests run as written', () => {
  const tested = fencedBlocks(read('docs/embedding.md')).filter((b) => b.lang === 'html').map((b) => b.body);
  const shown = fencedBlocks(read('README.md')).filter((b) => b.lang === 'html').map((b) => b.body);
  assert.equal(shown.length, 2, 'the README shows the element and the iframe');
  for (const s of shown) assert.ok(tested.some((t) => t.startsWith(s)), `not in docs/embedding.md:\n${s}`);
});
