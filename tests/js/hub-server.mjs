// A stand-in for the Hugging Face Hub in the tests (no internet here): serves
// models from memory or a folder at /<id>/resolve/main/<file>, on 127.0.0.1 and
// a free port, with the CORS header the Hub sends. It records every request,
// and a test can hold a file's body half-way (to see progress, or cancel) and
// release it when it chooses: no timing involved.
//
//   const hub = await startHubServer({ 'tiny/gpt2': { 'config.json': text, 'model.safetensors': bytes } });
//   hub.base                     // 'http://127.0.0.1:PORT'
//   hub.requests                 // ['/tiny/gpt2/resolve/main/config.json', …]
//   hub.log                      // [{method: 'HEAD', url: '/tiny/gpt2/resolve/main/model.safetensors', range: null}, …]
//   hub.ranges = true            // answers range requests (206), as the Hub does; off by default
//   const held = hub.hold('tiny/gpt2', 'model.safetensors');  // the next response stops after half its bytes
//   await held.reached;          // …once it has sent that half
//   held.release();              // sends the rest
//   held.breakOff();             // …or ends the connection there, as a network that drops
//   await hub.close();
//   globalThis.caches = memoryCaches();   // Cache Storage in memory, for Node (which has none)

import { createServer } from 'node:http';
import { createReadStream, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** A file served from the disk as it is sent, not held in memory (readModelFolder's large files). */
export class FileBody {
  constructor(path, size) {
    this.path = path;
    this.size = size;
  }
}

/** Files above this are served from the disk: Node reads at most 2 GiB into one Buffer. */
const IN_MEMORY_MOST = 1 << 30;

/** {file: Buffer} of a folder's files (not its sub-folders); a file above 1 GiB (a benchmark's
 * model: bench/modern_page.mjs) is a FileBody, read from the disk at each request. */
export function readModelFolder(dir) {
  const files = {};
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isFile()) files[name] = st.size > IN_MEMORY_MOST ? new FileBody(p, st.size) : readFileSync(p);
  }
  return files;
}

/**
 * Cache Storage in memory: put() reads the whole body (and fails when the body fails), match()
 * gives a new Response. chromium: a failed body makes put() reject as Chromium's does, with a
 * DOMException of its own ("Failed to execute 'put' on 'Cache': network error", numeric code 19).
 */
export function memoryCaches({ chromium = false } = {}) {
  const stores = new Map();
  return {
    stores,
    async open(name) {
      if (!stores.has(name)) stores.set(name, new Map());
      const store = stores.get(name);
      return {
        async match(url) {
          const e = store.get(String(url));
          return e ? new Response(e.body, { headers: e.headers }) : undefined;
        },
        async put(url, response) {
          let body;
          try {
            body = new Uint8Array(await response.arrayBuffer());
          } catch (e) {
            if (chromium) throw new DOMException("Failed to execute 'put' on 'Cache': network error", 'NetworkError');
            throw e;
          }
          store.set(String(url), { body, headers: [...response.headers] });
        },
        async delete(url) {
          return store.delete(String(url?.url ?? url));
        },
        async keys() {
          return [...store.keys()].map((url) => ({ url }));
        },
      };
    },
  };
}

export function startHubServer(models = {}) {
  const requests = [];
  const log = [];
  const holds = new Map(); // "id/file" → {reached, release, resolveReached, released}
  const options = { ranges: false };
  const server = createServer((req, res) => {
    requests.push(req.url);
    log.push({ method: req.method, url: req.url, range: req.headers.range ?? null });
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (options.ranges && req.method === 'OPTIONS') {  // a cross-origin range request's preflight
      res.writeHead(204, { 'access-control-allow-headers': 'range', 'access-control-allow-methods': 'GET, HEAD' });
      res.end();
      return;
    }
    const m = /^\/(.+)\/resolve\/main\/([^/]+)$/.exec(decodeURIComponent(req.url.split('?')[0]));
    const body = m ? models[m[1]]?.[m[2]] : undefined;
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Entry not found');
      return;
    }
    const range = options.ranges ? /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '') : null;
    if (body instanceof FileBody) {  // from the disk, as it is sent (no holds)
      const [begin, end] = range ? [Number(range[1]), Math.min(Number(range[2]) + 1, body.size)] : [0, body.size];
      res.writeHead(range ? 206 : 200, {
        'content-type': 'application/octet-stream', 'content-length': String(Math.max(0, end - begin)),
        ...(range ? { 'content-range': `bytes ${begin}-${end - 1}/${body.size}`, 'access-control-expose-headers': 'content-range, content-length' } : {}),
      });
      if (end > begin && req.method !== 'HEAD') {
        const file = createReadStream(body.path, { start: begin, end: end - 1 });
        res.on('close', () => file.destroy());  // a download cancelled half-way
        file.pipe(res);
      } else {
        res.end();
      }
      return;
    }
    // a view, not a copy
    const bytes = body instanceof Uint8Array ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : Buffer.from(String(body));
    if (range) {  // one range, as the Hub's servers answer it
      const begin = Number(range[1]), end = Math.min(Number(range[2]) + 1, bytes.length);
      res.writeHead(206, { 'content-type': 'application/octet-stream', 'content-length': String(Math.max(0, end - begin)),
        'content-range': `bytes ${begin}-${end - 1}/${bytes.length}`, 'access-control-expose-headers': 'content-range, content-length' });
      res.end(bytes.subarray(begin, end));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) });
    const key = `${m[1]}/${m[2]}`;
    // a hold is for the download: a range request (the header read alone, answered whole when
    // ranges are off) passes
    const hold = req.headers.range ? undefined : holds.get(key);
    if (!hold) {
      res.end(bytes);
      return;
    }
    holds.delete(key);
    const half = Math.floor(bytes.length / 2);
    res.write(bytes.subarray(0, half), () => hold.resolveReached());
    hold.released.then((how) => {
      if (how === 'break') res.destroy();
      else res.end(bytes.subarray(half));
    });
    req.on('close', () => hold.resolveClosed());
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        base: `http://127.0.0.1:${port}`,
        requests,
        log,
        models,
        /** Whether it answers range requests (206 with Content-Range), as the Hub does; off: every GET is the whole file. */
        set ranges(on) { options.ranges = Boolean(on); },
        get ranges() { return options.ranges; },
        /** Holds the next response of that file after half its bytes. */
        hold(id, file) {
          let resolveReached, settle, resolveClosed;
          const reached = new Promise((r) => { resolveReached = r; });
          const released = new Promise((r) => { settle = r; });
          const closed = new Promise((r) => { resolveClosed = r; });
          const h = { reached, released, release: () => settle('rest'), breakOff: () => settle('break'), resolveReached, closed, resolveClosed };
          holds.set(`${id}/${file}`, h);
          return h;
        },
        close: () => new Promise((r) => {
          server.closeAllConnections?.();
          server.close(() => r());
        }),
      });
    });
  });
}
