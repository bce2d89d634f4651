// Which lessons the learner finished, kept in this browser (localStorage), never
// sent anywhere. A browser without storage (or a blocked one) simply forgets.

const KEY = 'attention-playground:lessons-done';

export function readDone(ids) {
  try {
    const raw = JSON.parse(globalThis.localStorage?.getItem(KEY) ?? '[]');
    return new Set(Array.isArray(raw) ? raw.filter((x) => ids.includes(x)) : []);
  } catch {
    return new Set();
  }
}

export function markDone(id, ids) {
  const done = readDone(ids);
  done.add(id);
  try {
    globalThis.localStorage?.setItem(KEY, JSON.stringify([...done]));
  } catch {
    // storage full or blocked: the lesson is still done for this visit
  }
  return done;
}
