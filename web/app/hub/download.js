// A pretrained checkpoint's files from the Hugging Face Hub (by id) or a server
// (by address), kept in the browser's Cache Storage. No DOM and no engine: the
// loader worker and the page both import it; source.js has the names, the
// errors and the files the user gives.
//
//   const src = hubSource({ base, id, signal, onProgress });
//   const src = urlSource({ url: 'https://host/models/my-gpt2/', signal, onProgress });
//   await src.text('config.json'), await src.weights(), await src.forget()
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
import { DEFAULT_HUB_BASE, HUB_CACHE, WEIGHTS_FILE, cancelled, hubError, hubFileUrl } from './source.js';
import { formatBytes } from '../kit/format.js';

const MANIFEST = '.attention-playground-files.json';

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
