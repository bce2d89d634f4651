// The page's side of the race worker: one module Worker for the whole concept
// lab, started the first time a race needs it; messages are routed to the race
// view that owns their key. See race-worker.js for the protocol.

let worker = null;
let failure = null;
const listeners = new Map(); // key → fn(message)

function broadcast(m) {
  for (const fn of listeners.values()) fn(m);
}

function start() {
  if (worker || failure) return;
  try {
    worker = new Worker(new URL('./race-worker.js', import.meta.url), { type: 'module' });
  } catch (e) {
    failure = String(e?.message ?? e);
    return;
  }
  worker.onmessage = (event) => {
    const m = event.data;
    if (m.type === 'error' && m.key == null) {
      failure = m.message;
      broadcast(m);
      return;
    }
    if (m.type === 'ready') return;
    listeners.get(m.key)?.(m);
  };
  worker.onerror = (event) => {
    event.preventDefault?.();
    failure = event.message || 'the race worker could not start';
    broadcast({ type: 'error', key: null, message: failure });
  };
}

function send(m) {
  start();
  if (failure) {
    queueMicrotask(() => listeners.get(m.key)?.({ type: 'error', key: null, message: failure }));
    return;
  }
  worker.postMessage(m);
}

export const raceClient = {
  /** Messages of one key go to fn (one listener per key); returns the unsubscribe. */
  listen(key, fn) {
    listeners.set(key, fn);
    return () => {
      if (listeners.get(key) === fn) listeners.delete(key);
    };
  },
  run(key, gen, race, options, until, finish) {
    send({ type: 'run', key, gen, race, options, until, finish });
  },
  pause(key) {
    if (worker) send({ type: 'pause', key });
  },
  drop(key) {
    if (worker) send({ type: 'drop', key });
  },
};
