// The benchmark's tokenizer for its random models (bench/modern.sh), which have none: a
// SentencePiece-style tokenizer.json with a piece for every id, no merges, so that a text of n
// letters "a" is T = n + 1 tokens ("▁" and each "a"). Run as a script it writes DIR/tokenizer.json:
//   node bench/modern_tokenizer.mjs DIR

import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function benchTokenizerJson(vocabSize) {
  const pieces = ['<unk>', '<s>', '</s>', '\u2581', ...'abcdefghijklmnopqrstuvwxyz'];
  for (let i = 0; pieces.length < vocabSize; i++) pieces.push(`x${i}`);
  return JSON.stringify({
    version: '1.0', added_tokens: [], pre_tokenizer: null, post_processor: null, decoder: null,
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '\u2581' }, { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' }] },
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: true, byte_fallback: false, vocab: Object.fromEntries(pieces.map((p, i) => [p, i])), merges: [] },
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2];
  const { vocab_size: V } = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8'));
  writeFileSync(path.join(dir, 'tokenizer.json'), benchTokenizerJson(V));
}
