// Hand-off of a trained model to the playground (index.html): the checkpoint
// bytes go into this origin's IndexedDB (database "attention-playground",
// store "models"), under a key that is a digest of the bytes, so the same
// training (same settings, seed and step: training is deterministic) gives the
// same key in any browser. The playground opens index.html#model=lab:<key>&…
//
// Record: {key, bytes: Uint8Array, settings, step, trainLink, savedAt}.
// Bound: at most MAX_MODELS records (the oldest are deleted first) and at most
// MAX_BYTES per checkpoint (a bigger one is not stored; the page says so).

import { fnv1a32, hex32, FNV32_BASIS } from './hash.js';

export const DB_NAME = 'attention-playground';
export const STORE = 'models';
export const MAX_MODELS = 8;
export const MAX_BYTES = 32 * 1024 * 1024;

function open() {
  return new Promise((resolve, reject) => {
    if (typeof indexedDB === 'undefined') {
      reject(new Error('this browser has no IndexedDB storage'));
      return;
    }
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => {
      const db = req.result;
      if (!db.objectStoreNames.contains(STORE)) db.createObjectStore(STORE, { keyPath: 'key' });
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB could not be opened'));
  });
}

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error('the storage transaction was aborted'));
  });
}

/** 16 hex digits: FNV-1a 32 of the bytes, then of the bytes last first from another basis. */
export function bytesKey(bytes) {
  return hex32(fnv1a32(bytes)) + hex32(fnv1a32(bytes, { basis: (FNV32_BASIS ^ 0x5bd1e995) >>> 0, reverse: true }));
}

/** Stores a checkpoint; returns its key. Keeps only the MAX_MODELS newest. */
export async function storeModel(bytes, { settings, step, trainLink }) {
  if (bytes.length > MAX_BYTES) throw new Error(`the model has ${bytes.length} bytes, more than the ${MAX_BYTES / 1048576} MB the hand-off keeps`);
  const key = bytesKey(bytes);
  const db = await open();
  try {
    const tx = db.transaction(STORE, 'readwrite');
    const store = tx.objectStore(STORE);
    store.put({ key, bytes, settings, step, trainLink, savedAt: Date.now() });
    const all = store.getAll();
    all.onsuccess = () => {
      const records = all.result.filter((r) => r.key !== key).sort((x, y) => y.savedAt - x.savedAt);
      for (const r of records.slice(MAX_MODELS - 1)) store.delete(r.key);
    };
    await done(tx);
  } finally {
    db.close();
  }
  return key;
}

/** The record of a key, or null. */
export async function loadModel(key) {
  const db = await open();
  try {
    const tx = db.transaction(STORE, 'readonly');
    const req = tx.objectStore(STORE).get(key);
    const record = await new Promise((resolve, reject) => {
      req.onsuccess = () => resolve(req.result ?? null);
      req.onerror = () => reject(req.error);
    });
    return record;
  } finally {
    db.close();
  }
}

/** The newest record stored for a lab link (trainLink: the hash that retrains it), or null;
 * null too when this browser has no storage (the lab then retrains from the link). */
export async function findModelByLink(trainLink) {
  let db;
  try {
    db = await open();
  } catch {
    return null;
  }
  try {
    const tx = db.transaction(STORE, 'readonly');
    const req = tx.objectStore(STORE).getAll();
    const all = await new Promise((resolve, reject) => {
      req.onsuccess = () => resolve(req.result ?? []);
      req.onerror = () => reject(req.error);
    });
    return all.filter((r) => r.trainLink === trainLink).sort((x, y) => y.savedAt - x.savedAt)[0] ?? null;
  } catch {
    return null;
  } finally {
    db.close();
  }
}
