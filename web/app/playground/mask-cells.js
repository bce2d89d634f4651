// The custom mask in the URL: its blocked cells, grouped by query row with
// runs of keys as ranges, so a causal-like mask of T tokens takes about 7
// characters a row instead of 5 a cell. Only characters a URL keeps as they
// are (digits, "_", "-", "."):
//
//   "0_1-11.1_2-11.7_2_5"  = query 0 may not see keys 1…11, query 1 keys 2…11,
//                            query 7 keys 2 and 5
//
// The older form, one "query-key" pair a cell ("7-2.7-5"), is still read.
// Cells inside the page are "query-key" strings (state.js canonicalCells).

const ROW_RE = /^(\d{1,4})((?:_\d{1,4}(?:-\d{1,4})?)+)$/;
const PAIR_RE = /^(\d{1,4})-(\d{1,4})$/;

/** The URL text of canonical cells (sorted by query, then key). */
export function encodeCells(cells) {
  const rows = new Map();
  for (const c of cells) {
    const [q, k] = c.split('-').map(Number);
    if (!rows.has(q)) rows.set(q, []);
    rows.get(q).push(k);
  }
  const out = [];
  for (const [q, keys] of [...rows].sort((a, b) => a[0] - b[0])) {
    keys.sort((a, b) => a - b);
    const runs = [];
    for (let i = 0; i < keys.length; i++) {
      let j = i;
      while (j + 1 < keys.length && keys[j + 1] === keys[j] + 1) j++;
      runs.push(j > i ? `${keys[i]}-${keys[j]}` : String(keys[i]));
      i = j;
    }
    out.push(`${q}_${runs.join('_')}`);
  }
  return out.join('.');
}

/**
 * Reads the URL text: {cells} ("query-key" strings, unsorted, maybe repeated)
 * or {error}, a phrase that follows the quoted value ("… has a part …").
 */
export function decodeCells(raw, { maxIndex, maxCells }) {
  if (raw === '') return { cells: [] };
  const cells = [];
  const parts = raw.split('.');
  const tooFar = (part, n) => ({ error: `has a part \u201c${part}\u201d with token ${n}, past the last index ${maxIndex}` });
  for (const part of parts) {
    if (part === '') return { error: 'has an empty part (two dots in a row, or a dot at an end)' };
    const pair = PAIR_RE.exec(part);
    if (pair) {
      const q = Number(pair[1]);
      const k = Number(pair[2]);
      if (q > maxIndex || k > maxIndex) return tooFar(part, Math.max(q, k));
      cells.push(`${q}-${k}`);
    } else {
      const row = ROW_RE.exec(part);
      if (!row) return { error: `has a part \u201c${part}\u201d that is not a query and its hidden keys, like 7_2-4_9 (query 7 may not see keys 2 to 4 and 9)` };
      const q = Number(row[1]);
      if (q > maxIndex) return tooFar(part, q);
      for (const run of row[2].slice(1).split('_')) {
        const [a, b = a] = run.split('-').map(Number);
        if (b < a) return { error: `has a part \u201c${part}\u201d whose key range ${a}-${b} runs backwards` };
        if (b > maxIndex) return tooFar(part, b);
        if (cells.length + (b - a + 1) > maxCells) return { error: `hides more than ${maxCells} cells` };
        for (let k = a; k <= b; k++) cells.push(`${q}-${k}`);
      }
    }
    if (cells.length > maxCells) return { error: `hides more than ${maxCells} cells` };
  }
  return { cells };
}
