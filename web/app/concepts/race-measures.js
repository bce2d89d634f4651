// What the races (races.js) measure of their trainers, beyond held-out accuracy:
// the attention maps of a probe, the heads race's coverage of the two letters,
// the masks race's weight on the next position, the context race's look of "it".
// Pure (no DOM): the race worker runs them, and Node can.

import { DIFF, diffHeldout } from './race-diff-task.js';

/** The two sentences of the context race: where "it" should look when the last word changes. */
export const COREFERENCE_SENTENCES = Object.freeze([
  { text: "The animal didn't cross the street because it was too tired.", word: 'tired', expect: 'animal' },
  { text: "The animal didn't cross the street because it was too wide.", word: 'wide', expect: 'street' },
]);

/** Mean over the rows of a T×T map (row-major, cols = T) of the weight at (i, col(i)), rows where col(i) is valid. */
function meanWeight(data, T, rows, colOf) {
  let s = 0;
  let n = 0;
  for (const i of rows) {
    const j = colOf(i);
    if (j < 0 || j >= T) continue;
    s += data[i * T + j];
    n++;
  }
  return n ? s / n : 0;
}

/** The top-left n×n block of a {rows, cols, data} map, as a copy. */
function crop(m, n) {
  const out = new Float32Array(n * n);
  for (let i = 0; i < n; i++) out.set(m.data.subarray(i * m.cols, i * m.cols + n), i * n);
  return out;
}

/** Maps of every head of a probe: [{layer, head, data (n×n), scores}] and the tokens. */
export function probeMaps(p) {
  const n = p.length;
  const maps = [];
  p.layers.forEach((layer, l) => layer.heads.forEach((h, k) => maps.push({ layer: l, head: k, data: crop(h.weights, n), scores: { ...h.scores } })));
  return { tokens: Array.from(p.tokens).slice(0, n), n, maps };
}

/** Heads race: accuracy, each head's weight on the two letters, and how well the heads together cover both. */
export function diffMeasures(trainer, seed, count) {
  const { T, first } = DIFF;
  const H = trainer.config.heads;
  const prev = new Float64Array(H);
  const back = new Float64Array(H);
  let cover = 0;
  let rows = 0;
  let correct = 0;
  let targets = 0;
  for (let i = 0; i < count; i++) {
    const s = diffHeldout(seed, i);
    const p = trainer.probe({ ids: s.ids });
    for (let q = first; q < T; q++) {
      targets++;
      if (p.predictions[q] === s.targets[q]) correct++;
      let bestPrev = 0;
      let bestBack = 0;
      p.layers[0].heads.forEach((h, k) => {
        const a = h.weights.data[q * h.weights.cols + q - 1];
        const b = h.weights.data[q * h.weights.cols + q - 2];
        prev[k] += a;
        back[k] += b;
        bestPrev = Math.max(bestPrev, a);
        bestBack = Math.max(bestBack, b);
      });
      cover += (bestPrev + bestBack) / 2;
      rows++;
    }
  }
  return {
    accuracy: targets ? correct / targets : 0,
    cover: rows ? cover / rows : 0,
    heads: Array.from({ length: H }, (_, k) => ({ head: k, previous: prev[k] / rows, twoBack: back[k] / rows })),
    samples: count,
  };
}

/** Masks race: for each head of a probe, the mean weight a target row puts on the very next position (the answer). */
export function peekScores(p) {
  const n = p.length;
  const rows = [];
  for (let i = 0; i + 1 < n; i++) if (p.targets[i] >= 0) rows.push(i);
  const out = [];
  p.layers.forEach((layer) => layer.heads.forEach((h) => out.push(meanWeight(h.weights.data.length === n * n ? h.weights.data : crop(h.weights, n), n, rows, (i) => i + 1))));
  return out;
}

/** Context race: where "it" looks in each head, and what the model answers, with attention and with the plain average. */
export function coreferenceLook(trainer) {
  return COREFERENCE_SENTENCES.map((sentence) => {
    const p = trainer.probe({ text: sentence.text });
    const u = trainer.probe({ text: sentence.text, uniformAttention: true });
    const tokens = Array.from(p.tokens).slice(0, p.length);
    const it = tokens.indexOf('it');
    const animal = tokens.indexOf('animal');
    const street = tokens.indexOf('street');
    const heads = [];
    p.layers.forEach((layer, l) => layer.heads.forEach((h, k) => {
      const C = h.weights.cols;
      const row = Float32Array.from(h.weights.data.subarray(it * C, it * C + p.length));
      heads.push({ layer: l, head: k, row, animal: row[animal], street: row[street] });
    }));
    const vocab = trainer.vocabulary;
    return {
      word: sentence.word,
      expect: sentence.expect,
      tokens,
      it,
      heads,
      answer: vocab[p.predictions[it]],
      averageAnswer: vocab[u.predictions[it]],
    };
  });
}
