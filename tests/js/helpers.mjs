// Shared helpers of the Node test suite (not a test file itself: node --test
// only picks *.test.mjs). Nothing here loads the wasm module; each test file
// calls createEngine() once.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (tests/js/../..). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The native CLI: $ATTN_CLI, else build/attn under the repository root. */
export const CLI = process.env.ATTN_CLI ? path.resolve(process.env.ATTN_CLI) : path.resolve(REPO_ROOT, 'build/attn');

const TEMP_DIRS = [];
/**
 * A new folder under the system's temp dir (its name starts with `prefix`), removed with all it
 * holds when this process exits, whether its tests passed, failed or threw (folders made by hand
 * left about 400 MB in /tmp each full run; `tests/js/architecture.test.mjs` keeps test files to
 * this). Not removed when the process is killed.
 */
export function tempDir(prefix) {
  if (TEMP_DIRS.length === 0) {
    process.on('exit', () => {
      for (const dir of TEMP_DIRS) rmSync(dir, { recursive: true, force: true });
    });
  }
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  TEMP_DIRS.push(dir);
  return dir;
}

/** Runs the CLI with --format json and returns the parsed trace (throws if it fails). */
export function cliTrace(args) {
  const out = execFileSync(CLI, [...args, '--format', 'json'], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(out);
}

/** Runs the CLI without throwing: {status, stdout, stderr}. */
export function cliRun(args) {
  const r = spawnSync(CLI, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** Engine settings → the equivalent CLI arguments. */
export function cliArgs(s) {
  const args = ['--sentence', s.sentence];
  if (s.dModel !== undefined) args.push('--d-model', String(s.dModel));
  if (s.heads !== undefined) args.push('--heads', String(s.heads));
  if (s.seed !== undefined) args.push('--seed', String(s.seed));
  if (s.positional !== undefined) args.push('--positional', s.positional);
  if (s.mask !== undefined) args.push('--mask', s.mask);
  if (s.padTo) args.push('--pad-to', String(s.padTo));
  if (s.scale === false) args.push('--no-scale');
  if (s.lowercase) args.push('--lowercase');
  if (s.shareHeads) args.push('--share-heads');
  return args;
}

/** mulberry32 (bench/numeric.mjs, shared with the benchmarks). */
export { prng, relativeError } from '../../bench/numeric.mjs';

/**
 * Difference between a float and its reference: absolute when |ref| <= 1,
 * relative otherwise.
 */
export function scaledDiff(actual, expected) {
  const d = Math.abs(actual - expected);
  return Math.abs(expected) > 1 ? d / Math.abs(expected) : d;
}

/**
 * Compares an engine matrix {rows, cols, data} with a CLI matrix (array of
 * rows). Returns {maxDiff, where, problem}: problem is a string when shapes or
 * finiteness disagree.
 */
export function compareMatrix(name, engineMatrix, cliMatrix) {
  const rows = cliMatrix.length;
  const cols = rows ? cliMatrix[0].length : 0;
  if (engineMatrix.rows !== rows || engineMatrix.cols !== cols) {
    return { maxDiff: Infinity, where: name, problem: `${name}: engine shape ${engineMatrix.rows}x${engineMatrix.cols}, CLI shape ${rows}x${cols}` };
  }
  if (!(engineMatrix.data instanceof Float32Array)) {
    return { maxDiff: Infinity, where: name, problem: `${name}: data is not a Float32Array` };
  }
  let maxDiff = 0;
  let where = `${name}`;
  for (let i = 0; i < rows; i++) {
    if (cliMatrix[i].length !== cols) return { maxDiff: Infinity, where: name, problem: `${name}: CLI row ${i} is ragged` };
    for (let j = 0; j < cols; j++) {
      const a = engineMatrix.data[i * cols + j];
      const b = cliMatrix[i][j];
      if (!Number.isFinite(a) || typeof b !== 'number' || !Number.isFinite(b)) {
        return { maxDiff: Infinity, where: `${name}[${i}][${j}]`, problem: `${name}[${i}][${j}]: engine ${a}, CLI ${b} (not finite)` };
      }
      const d = scaledDiff(a, b);
      if (d > maxDiff) {
        maxDiff = d;
        where = `${name}[${i}][${j}] (engine ${a}, CLI ${b})`;
      }
    }
  }
  return { maxDiff, where, problem: null };
}

/** Every float matrix of a trace: [name, engine matrix, CLI matrix]. */
export function matrixPairs(trace, json) {
  const pairs = [
    ['embeddings', trace.embeddings, json.embeddings],
    ['positional', trace.positional, json.positional],
    ['input', trace.input, json.input],
    ['w_query', trace.wQuery, json.w_query],
    ['w_key', trace.wKey, json.w_key],
    ['w_value', trace.wValue, json.w_value],
    ['w_output', trace.wOutput, json.w_output],
    ['concat', trace.concat, json.concat],
    ['output', trace.output, json.output],
  ];
  json.heads.forEach((h, i) => {
    for (const key of ['query', 'key', 'value', 'scores', 'scaled', 'weights', 'output']) {
      pairs.push([`heads[${i}].${key}`, trace.heads[i]?.[key], h[key]]);
    }
  });
  return pairs;
}

/** The CLI's tokens in the engine's shape (without the UTF-16 offsets). */
export function plainTokens(tokens) {
  return tokens.map(({ text, id, start, end }) => ({ text, id, start, end }));
}

/** A {rows, cols, data: Uint8Array} mask as an array of rows of booleans. */
export function maskRows(mask) {
  const out = [];
  for (let i = 0; i < mask.rows; i++) out.push(Array.from(mask.data.subarray(i * mask.cols, (i + 1) * mask.cols), (v) => v !== 0));
  return out;
}

/** Largest |row sum − 1| over the rows of a {rows, cols, data} matrix. */
export function maxRowSumError(m) {
  let worst = 0;
  for (let i = 0; i < m.rows; i++) {
    let sum = 0;
    for (let j = 0; j < m.cols; j++) sum += m.data[i * m.cols + j];
    worst = Math.max(worst, Math.abs(sum - 1));
  }
  return worst;
}

/** n×n identity as an array of rows. */
export function identityRows(n) {
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
}

