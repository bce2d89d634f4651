// Where a pretrained checkpoint's files come from: the Hugging Face Hub (by
// id, cached in the browser's Cache Storage) or files the user dropped or
// picked. No DOM and no engine: the loader worker (hub/worker.js) and the
// page both import it.
//
//   parseHubId('openai-community/gpt2')            → 'openai-community/gpt2' (or null)
//   const src = filesSource(fileList);             // File objects: a folder or single files
//   await src.text('config.json')                  → string ('' when an optional file is absent)
//   await src.weights()                            → a Blob of model.safetensors (read in slices)
//   await readRanges(blob, [{begin, end}], 4 << 20, (offset, bytes) => …)   // through one reused buffer
//
// The Hub's and a server's files, downloaded and kept in Cache Storage: download.js
// (hubSource, urlSource, isCachedModel, fileSize).
//
// Errors carry err.code (a string): not_found (a 404, naming the file and its
// address), network (no answer, or a download that broke off), bad_download
// (the server sent something that is not the file), storage (the browser would
// not keep it), cancelled, missing_file (a dropped folder without a file the
// model needs); err.file names the file.

import { familyInfo } from '../../families.js';

export const DEFAULT_HUB_BASE = 'https://huggingface.co';
export const HUB_CACHE = 'attention-playground-hub-v1';

/** The files of a checkpoint: the ones it must have, and the tokenizer's options. */
export const CONFIG_FILE = 'config.json';
export const WEIGHTS_FILE = 'model.safetensors';
/** Tokenizer files by what pretrained.js's finish() calls them. */
export const TOKENIZER_FILES = Object.freeze({
  tokenizerJson: 'tokenizer.json',
  vocabJson: 'vocab.json',
  mergesTxt: 'merges.txt',
  vocabTxt: 'vocab.txt',
  tokenizerConfigJson: 'tokenizer_config.json',
});

const ID_PART = '[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9_])?';
const ID_RE = new RegExp(`^${ID_PART}(?:/${ID_PART})?$`);

/** A Hub model id from what the user typed (an id, or its huggingface.co address), or null. */
export function parseHubId(text) {
  let s = String(text ?? '').trim();
  const m = /^https?:\/\/(?:www\.)?huggingface\.co\/(.+)$/.exec(s);
  if (m) s = m[1].replace(/\/(?:tree|resolve|blob)\/.*$/, '').replace(/\/+$/, '');
  if (!ID_RE.test(s) || s.includes('..')) return null;
  return s;
}

/** Model names in the picker and the URL: "hf:<id>" (a link reopens it), "url:<address>" (a folder
 * a host serves, <attention-playground model-src="./models/my-gpt2/">), "local:<folder>" (dropped files). */
export const isHubName = (m) => typeof m === 'string' && m.startsWith('hf:') && parseHubId(m.slice(3)) === m.slice(3);
export const isUrlName = (m) => typeof m === 'string' && m.startsWith('url:') && modelFolderUrl(m.slice(4)) === m.slice(4);
export const isLocalName = (m) => typeof m === 'string' && /^local:[^\u0000-\u001f\u007f]{1,120}$/.test(m);
export const isPretrainedName = (m) => isHubName(m) || isUrlName(m) || isLocalName(m);

/** An absolute http(s) folder address ending in "/" (relative ones resolved against base), or null. */
export function modelFolderUrl(text, base = undefined) {
  let u;
  try {
    u = new URL(String(text).trim(), base);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  u.hash = '';
  u.search = '';
  if (!u.pathname.endsWith('/')) u.pathname += '/';
  return u.href.length <= 2000 ? u.href : null;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A Hub mirror's address as the user or a link gave it: {base} (its origin and path, no
 * trailing "/"), or {error} saying why not. Only https, or http on this computer
 * (localhost, 127.0.0.1, [::1]): the page fetches models from there.
 */
export function parseHubMirror(text) {
  const raw = String(text ?? '').trim();
  if (raw === '') return { base: DEFAULT_HUB_BASE };
  let u;
  try {
    u = new URL(raw);
  } catch {
    return { error: 'is not an address: write it as https://host or http://localhost:port' };
  }
  const local = LOOPBACK.has(u.hostname);
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && local)) {
    return { error: 'must be an https address (or http on this computer: localhost, 127.0.0.1)' };
  }
  if (u.username || u.password || u.search || u.hash) return { error: 'must be a plain address, without a name, password, ? or #' };
  const base = `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
  return base.length <= 300 ? { base } : { error: 'is longer than 300 characters' };
}

export function hubError(code, message, file = null) {
  const e = new Error(message);
  e.code = code;
  e.file = file;
  return e;
}

/**
 * The refusal of a model too large for the engine, from engine.checkHubConfig(config.json)'s
 * answer, before its weights are downloaded; null when it fits.
 */
export function tooLarge(size) {
  return size.fits ? null : hubError('too_large', `${size.message}, as its ${CONFIG_FILE} says: its ${WEIGHTS_FILE} was not downloaded. Pick a smaller model`, CONFIG_FILE);
}

export function cancelled() {
  return hubError('cancelled', 'the download was cancelled');
}

/** The address of one file of a Hub model. */
export function hubFileUrl(base, id, file) {
  return `${String(base).replace(/\/+$/, '')}/${id}/resolve/main/${file}`;
}

/** The model family config.json names: its model_type as given. */
export function familyOf(configText) {
  try {
    const c = JSON.parse(configText);
    return typeof c?.model_type === 'string' ? c.model_type : '';
  } catch {
    return '';
  }
}

/** The tokenizer files to read for a family among the names available (the family's choices,
 * in the order they are tried: families.js), or null when none fits. */
export function pickTokenizer(family, has) {
  const choices = familyInfo(family)?.tokenizerFiles ?? [];
  return choices.find((set) => set.every((f) => has(f))) ?? null;
}

/** "tokenizer.json, or vocab.json and merges.txt": what a family's tokenizer needs, in words. */
export function tokenizerNeeds(family) {
  return familyInfo(family)?.tokenizerNeeds ?? 'tokenizer.json';
}

/**
 * Reads the byte ranges [{begin, end}] of a Blob (in increasing order) through one buffer of
 * `chunkBytes`, calling `await onChunk(offset, bytes)` each time it is full (at a range's end
 * with what it holds). Every chunk is a view of the same memory: a read hands the buffer to the
 * stream and back (a BYOB reader), so the chunk given before is detached, and nothing waits for
 * the garbage collector (a slice's arrayBuffer() per chunk made 4 MiB of garbage each, 170 MB
 * of them at once in Chromium while loading GPT-2 small). onChunk must copy what it keeps.
 * Stops at the blob's end (a short file: fewer bytes than the ranges ask for).
 */
export async function readRanges(blob, ranges, chunkBytes, onChunk) {
  if (!(chunkBytes > 0)) throw new RangeError(`chunkBytes must be positive, got ${chunkBytes}`);
  let buffer = new ArrayBuffer(chunkBytes);
  for (const { begin, end } of ranges) {
    const stop = Math.min(end, blob.size);
    if (stop <= begin) continue;
    let reader = null;
    try {
      reader = blob.slice(begin, stop).stream().getReader({ mode: 'byob' });
    } catch {
      reader = null; // no byte stream here: a slice per chunk, as before
    }
    if (!reader) {
      for (let a = begin; a < stop; a += chunkBytes) {
        const b = Math.min(stop, a + chunkBytes);
        await onChunk(a, new Uint8Array(await blob.slice(a, b).arrayBuffer()));
      }
      continue;
    }
    let offset = begin;
    let filled = 0;
    try {
      for (;;) {
        const { value, done } = await reader.read(new Uint8Array(buffer, filled, chunkBytes - filled));
        if (value) {
          buffer = value.buffer;
          filled += value.byteLength;
        }
        if (filled === chunkBytes || (done && filled > 0)) {
          await onChunk(offset, new Uint8Array(buffer, 0, filled));
          offset += filled;
          filled = 0;
        }
        if (done) break;
      }
    } catch (e) {
      reader.cancel().catch(() => {}); // a cancelled load or a refused chunk: the rest is not read
      throw e;
    }
    reader.releaseLock();
  }
}

// ---- files the user gave ------------------------------------------------------------------

/**
 * A source over File objects (a dropped folder, picked files). Names are the
 * files' own (a folder's sub-paths are dropped: the first file of each name wins).
 */
export function filesSource(files) {
  const byName = new Map();
  for (const f of files) {
    const name = String(f.name ?? '').split('/').pop();
    if (name && !byName.has(name)) byName.set(name, f);
  }
  const need = (name) => {
    const f = byName.get(name);
    if (!f) throw hubError('missing_file', `there is no ${name} among the files given`, name);
    return f;
  };
  return {
    kind: 'files',
    has: (name) => byName.has(name),
    names: () => [...byName.keys()],
    async text(name, { optional = false } = {}) {
      if (optional && !byName.has(name)) return '';
      return need(name).text();
    },
    async weights() {
      return need(WEIGHTS_FILE);
    },
  };
}
