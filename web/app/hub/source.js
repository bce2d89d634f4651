// Where a pretrained checkpoint's files come from: the Hugging Face Hub (by
// id, cached in the browser's Cache Storage) or files the user dropped or
// picked. No DOM and no engine: the loader worker (hub-worker.js) and the
// page both import it.
//
//   parseHubId('openai-community/gpt2')            → 'openai-community/gpt2' (or null)
//   const src = hubSource({ base, id, signal, onProgress });
//   const src = urlSource({ url: 'https://host/models/my-gpt2/', signal, onProgress });
//   const src = filesSource(fileList);             // File objects: a folder or single files
//   await src.text('config.json')                  → string ('' when an optional file is absent)
//   await src.weights()                            → a Blob of model.safetensors (read in slices)
//   await readRanges(blob, [{begin, end}], 4 << 20, (offset, bytes) => …)   // through one reused buffer
//
// The Hub: https://huggingface.co/<id>/resolve/main/<file> (the base is
// configurable, so the tests serve a folder). Every file that was fetched
// once is kept in Cache Storage, with a list of the files the model has (a
// manifest, written once a load worked, so an absent optional file is known
// without asking again): the next visit loads it with no request at all. A
// download that is cancelled or fails stores nothing; a JSON file that does not
// parse (a sign-in page served where config.json should be) is not kept; a
// load that fails later forgets the model's files (src.forget()), so that the
// next try downloads them again rather than meet the same bad copy.
//
//   await isCachedModel({kind: 'hub', base, id})   → true when a load of it worked here (no request needed)
//   await fileSize({kind: 'url', url}, 'model.safetensors')   → bytes from a HEAD request, or null
//   await src.header(first8 => 8 + N)            → {bytes, fileSize} of model.safetensors' header alone
//                                                  (range requests), or null
//
// Errors carry err.code (a string): not_found (a 404, naming the file and its
// address), network (no answer, or a download that broke off), bad_download
// (the server sent something that is not the file), storage (the browser would
// not keep it), cancelled, missing_file (a dropped folder without a file the
// model needs); err.file names the file.

import { familyInfo } from '../../families.js';
import { formatBytes } from '../kit/format.js';

export const DEFAULT_HUB_BASE = 'https://huggingface.co';
export const HUB_CACHE = 'attention-playground-hub-v1';
const MANIFEST = '.attention-playground-files.json';

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

function cancelled() {
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

// ---- the Hub ------------------------------------------------------------------------------

async function openCache() {
  try {
    return typeof caches === 'object' && caches ? await caches.open(HUB_CACHE) : null;
  } catch {
    return null; // an opaque origin, a private window: load without keeping
  }
}

/** fetch() whose failures say which file: not_found (404), network, cancelled. */
async function fetchFile(url, file, signal) {
  let r;
  try {
    r = await fetch(url, { signal, cache: 'no-store' });
  } catch (e) {
    if (signal?.aborted) throw cancelled();
    throw hubError('network', `${file} could not be fetched from ${url}: ${e?.message ?? e} (is the network on?)`, file);
  }
  if (r.status === 404 || r.status === 401) throw hubError('not_found', `${file} was not found at ${url} (HTTP ${r.status})`, file);
  if (!r.ok) throw hubError('network', `${file} could not be fetched from ${url}: HTTP ${r.status}`, file);
  return r;
}

/**
 * The body of a response read through, with onProgress({file, loaded, total})
 * after each chunk: {response, failure()}, response a new Response that Cache
 * Storage keeps (streamed to its disk, not held here), failure() why its body
 * stopped (null while it has not): Chromium's cache.put rejects with a
 * DOMException of its own then ("Failed to execute 'put' on 'Cache': network
 * error", no file named), so the reason is kept here.
 */
function counted(response, file, address, onProgress, signal) {
  const total = Number(response.headers.get('content-length')) || 0;
  let loaded = 0;
  let failure = null;
  const fail = (controller, e) => {
    failure = e;
    controller.error(e);
  };
  const reader = response.body.getReader();
  const body = new ReadableStream({
    async pull(controller) {
      if (signal?.aborted) {
        reader.cancel().catch(() => {});
        fail(controller, cancelled());
        return;
      }
      let part;
      try {
        part = await reader.read();
      } catch (e) {
        const of = total ? `${formatBytes(loaded)} of ${formatBytes(total)}` : formatBytes(loaded);
        fail(controller, signal?.aborted ? cancelled()
          : hubError('network', `${file} stopped downloading from ${address} after ${of}: the connection broke off (${e?.message ?? e}). Nothing of it was kept; try again`, file));
        return;
      }
      if (part.done) {
        controller.close();
        return;
      }
      loaded += part.value.byteLength;
      onProgress?.({ file, loaded, total });
      controller.enqueue(part.value);
    },
    cancel() {
      reader.cancel().catch(() => {});
    },
  });
  const headers = new Headers({ 'content-type': response.headers.get('content-type') ?? 'application/octet-stream' });
  if (total) headers.set('content-length', String(total));
  return { response: new Response(body, { status: 200, headers }), failure: () => failure };
}

/** Throws bad_download unless a JSON file's text parses: a page served in its place (a Wi-Fi sign-in) must not be kept. */
function checkJson(text, file, address) {
  try {
    JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    const start = Array.from(text.slice(0, 80)).slice(0, 60).join('').replace(/\s+/g, ' ');
    throw hubError('bad_download', `${file} from ${address} is not JSON: it begins \u201c${start}\u201d. The server sent something else (a sign-in or error page?); nothing of it was kept`, file);
  }
}

/** Why cache.put failed: the body's own failure, a cancel, else the storage's (never the browser's DOMException as ours). */
function keepError(e, file, failure, signal) {
  if (failure) return failure;
  if (signal?.aborted) return cancelled();
  return hubError('storage', `${file} could not be kept in this browser\u2019s storage (${e?.name ?? 'Error'}: ${e?.message ?? e}). Free some disk space, or try again`, file);
}

/**
 * A source over a Hub model: each file from Cache Storage when it is there,
 * else downloaded (with progress) into it. onProgress({file, loaded, total,
 * cached}) reports every file, a cached one once with cached: true.
 */
export function hubSource({ base = DEFAULT_HUB_BASE, id, signal = null, onProgress = null }) {
  return cachedSource({ url: fileAddress({ kind: 'hub', base, id }), signal, onProgress });
}

/** The same over a folder a host serves (`url` ends in "/": url + "config.json", …). */
export function urlSource({ url, signal = null, onProgress = null }) {
  return cachedSource({ url: fileAddress({ kind: 'url', url }), signal, onProgress });
}

/** file → its address, for a model's place: {kind: 'hub', base, id} or {kind: 'url', url} (a folder). */
function fileAddress(where) {
  if (where.kind === 'hub') return (file) => hubFileUrl(where.base ?? DEFAULT_HUB_BASE, where.id, file);
  const folder = String(where.url).endsWith('/') ? String(where.url) : `${where.url}/`;
  return (file) => new URL(file, folder).href;
}

/** Deletes the cache's entries under a model's address; returns how many there were. */
async function forgetUnder(prefix) {
  const c = await openCache();
  if (!c) return 0;
  let n = 0;
  for (const req of await c.keys()) {
    if (req.url.startsWith(prefix) && await c.delete(req)) n += 1;
  }
  return n;
}

/**
 * Whether a model ({kind: 'hub', base, id} or {kind: 'url', url}) loaded here before: its list
 * of files is in the cache (written once a load worked), so it opens with no request at all.
 */
export async function isCachedModel(where) {
  const c = await openCache();
  return Boolean(c && await c.match(fileAddress(where)(MANIFEST)).catch(() => null));
}

/** The size of one of a model's files, from a HEAD request, or null when the server does not say (or does not answer). */
export async function fileSize(where, file, { signal = null } = {}) {
  try {
    const r = await fetch(fileAddress(where)(file), { method: 'HEAD', signal, cache: 'no-store' });
    const n = Number(r.headers.get('content-length'));
    return r.ok && Number.isSafeInteger(n) && n > 0 ? n : null;
  } catch {
    if (signal?.aborted) throw cancelled();
    return null;
  }
}

/**
 * Bytes [begin, end) of a file by a range request: {bytes, fileSize}, or null when the server
 * answers otherwise (a 200 with the whole file is not read: its body is cancelled).
 */
async function ranged(address, begin, end, signal) {
  let r;
  try {
    r = await fetch(address, { headers: { range: `bytes=${begin}-${end - 1}` }, signal, cache: 'no-store' });
  } catch {
    if (signal?.aborted) throw cancelled();
    return null; // no answer, or a cross-origin server that does not allow the header
  }
  const total = /^bytes \d+-\d+\/(\d+)$/.exec(r.headers.get('content-range') ?? '');
  if (r.status !== 206 || !total) {
    r.body?.cancel().catch(() => {});
    return null;
  }
  try {
    return { bytes: new Uint8Array(await r.arrayBuffer()), fileSize: Number(total[1]) };
  } catch {
    if (signal?.aborted) throw cancelled();
    return null;
  }
}

function cachedSource({ url, signal, onProgress }) {
  let cachePromise = null;
  const cache = () => (cachePromise ??= openCache());
  let manifest = null; // {files: {name: true|false}} once known
  const found = new Map(); // name → Response (in this visit)

  async function readManifest() {
    if (manifest) return manifest;
    const c = await cache();
    const r = c ? await c.match(url(MANIFEST)) : null;
    manifest = r ? await r.json().catch(() => ({ files: {} })) : { files: {} };
    if (!manifest || typeof manifest.files !== 'object') manifest = { files: {} };
    return manifest;
  }

  async function writeManifest() {
    const c = await cache();
    if (c) await c.put(url(MANIFEST), new Response(JSON.stringify(manifest), { headers: { 'content-type': 'application/json' } })).catch(() => {});
  }

  /** The file's response (from the cache or downloaded into it), or null when it does not exist (404). */
  async function get(file, { optional = false } = {}) {
    if (signal?.aborted) throw cancelled();
    if (found.has(file)) return found.get(file)?.clone() ?? null;
    const m = await readManifest();
    const c = await cache();
    if (m.files[file] === false && optional) return null;
    if (c) {
      const hit = await c.match(url(file));
      if (hit) {
        const total = Number(hit.headers.get('content-length')) || 0;
        onProgress?.({ file, loaded: total, total, cached: true });
        found.set(file, hit);
        return hit.clone();
      }
    }
    let r;
    try {
      r = await fetchFile(url(file), file, signal);
    } catch (e) {
      if (e.code === 'not_found' && optional) {
        m.files[file] = false;
        found.set(file, null);
        return null;
      }
      throw e;
    }
    const { response: body, failure } = counted(r, file, url(file), onProgress, signal);
    m.files[file] = true;
    if (file.endsWith('.json')) {
      // small: read whole and checked before it is kept
      let text;
      try {
        text = await body.text();
      } catch (e) {
        throw failure() ?? (signal?.aborted ? cancelled() : e);
      }
      checkJson(text, file, url(file));
      const checked = new Response(text, { status: 200, headers: { 'content-type': 'application/json', 'content-length': String(new Blob([text]).size) } });
      if (c) await c.put(url(file), checked.clone()).catch((e) => { throw keepError(e, file, null, signal); });
      found.set(file, checked);
      return checked.clone();
    }
    // without Cache Storage the body is read once, as it arrives (nothing kept)
    if (!c) return body;
    // stored as it arrives; read back from the cache (a file on its disk, not in memory)
    await c.put(url(file), body).catch((e) => {
      c.delete(url(file)).catch(() => {});
      throw keepError(e, file, failure(), signal);
    });
    const kept = await c.match(url(file));
    found.set(file, kept);
    return kept.clone();
  }

  return {
    kind: 'hub',
    async text(file, { optional = false } = {}) {
      const r = await get(file, { optional });
      return r ? r.text() : '';
    },
    /** Whether an optional file exists (fetching it if it was never asked for). */
    async exists(file) {
      return (await get(file, { optional: true })) !== null;
    },
    async weights() {
      const r = await get(WEIGHTS_FILE);
      return r.blob();
    },
    /**
     * model.safetensors' header alone, by two range requests (its first 8 bytes, then 8 + N), and
     * the whole file's size, so that a model the engine would refuse is refused before its
     * download: {bytes, fileSize}; null when the file is already here (read it instead) or the
     * server does not answer a range request with one (206 and its Content-Range).
     * headerSize(first8) → 8 + N (the engine's safetensorsHeaderSize).
     */
    async header(headerSize) {
      if (found.has(WEIGHTS_FILE)) return null;
      const c = await cache();
      if (c && await c.match(url(WEIGHTS_FILE)).catch(() => null)) return null;
      const first = await ranged(url(WEIGHTS_FILE), 0, 8, signal);
      if (!first || first.bytes.byteLength < 8) return null;
      const size = headerSize(first.bytes);
      if (size > first.fileSize) return null; // the engine's loader says so, with its message
      const all = await ranged(url(WEIGHTS_FILE), 0, size, signal);
      return all && all.bytes.byteLength === size ? { bytes: all.bytes, fileSize: all.fileSize } : null;
    },
    /** Writes the list of files found, so the next visit asks for nothing; after a load that worked. */
    keep: () => writeManifest(),
    /** The address a file is fetched from. */
    address: (file) => url(file),
    /** Forgets every file of this model in the cache (after a load that failed); how many there were. */
    async forget() {
      found.clear();
      manifest = null;
      return forgetUnder(url(''));
    },
  };
}

/** Forgets a Hub model's files (the cache entries under its address). */
export async function forgetHubModel(base, id) {
  await forgetUnder(hubFileUrl(base, id, ''));
}
