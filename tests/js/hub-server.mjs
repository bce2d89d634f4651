// A stand-in for the Hugging Face Hub in the tests (no internet here): serves
// models from memory or a folder at /<id>/resolve/main/<file>, on 127.0.0.1 and
// a free port, with the CORS header the Hub sends. It records every request,
// and a test can hold a file's body half-way (to see progress, or cancel) and
// release it when it chooses: no timing involved.
//
//   const hub = await startHubServer({ 'tiny/gpt2': { 'config.json': text, 'model.safetensors': bytes } });
//   hub.base                     // 'http://127.0.0.1:PORT'
//   hub.requests                 // ['/tiny/gpt2/resolve/main/config.json', …]
//   const held = hub.hold('tiny/gpt2', 'model.safetensors');  // the next response stops after half its bytes
//   await held.reached;          // …once it has sent that half
//   held.release();              // sends the rest
//   held.breakOff();             // …or ends the connection there, as a network that drops
//   await hub.close();

import { createServer } from 'node:http';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** {file: Buffer} of a folder's files (not its sub-folders). */
export function readModelFolder(dir) {
  const files = {};
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isFile()) files[name] = readFileSync(p);
  }
  return files;
}

export function startHubServer(models = {}) {
  const requests = [];
  const holds = new Map(); // "id/file" → {reached, release, resolveReached, released}
  const server = createServer((req, res) => {
    requests.push(req.url);
    res.setHeader('Access-Control-Allow-Origin', '*');
    const m = /^\/(.+)\/resolve\/main\/([^/]+)$/.exec(decodeURIComponent(req.url.split('?')[0]));
    const body = m ? models[m[1]]?.[m[2]] : undefined;
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Entry not found');
      return;
    }
    const bytes = Buffer.isBuffer(body) || body instanceof Uint8Array ? Buffer.from(body) : Buffer.from(String(body));
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) });
    const key = `${m[1]}/${m[2]}`;
    const hold = holds.get(key);
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
        models,
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
