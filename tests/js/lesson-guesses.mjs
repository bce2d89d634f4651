// For each lesson, a guess that is right and one that shows its misconception, made
// from the lesson's facts (shared by the Node test and the browser test, which makes
// the same guesses with the keyboard and by touch).

/** {right, myth}: pick → option ids; bars → numbers; slider → a number. */
export function guessesFor(id, f) {
  switch (id) {
    case 'context': return { right: [String(f.best)], myth: ['even'] };
    case 'qkv': return { right: ['q', 'k', 'v'], myth: ['q'] };
    // each bar near its weight, none at 0 (a tap cannot hit 0.03 exactly): still adds up to about 1
    case 'scores': return { right: f.weights.map((w) => Math.round(Math.max(w, 0.08) * 100) / 100), myth: f.scores.map((s) => Math.min(1, Math.max(0, Math.round(s * 100) / 100))) };
    case 'scale': return { right: 1, myth: f.topOn };
    case 'heads': return { right: [], myth: Array.from({ length: f.H - 1 }, (_, k) => String(k + 1)) };
    case 'order': return { right: [], myth: ['0'] };
    case 'masks': return { right: f.words.map((_, i) => String(i)).filter((i) => Number(i) >= f.edit), myth: f.words.map((_, i) => String(i)) };
    default: throw new Error(`no guesses for lesson ${id}`);
  }
}
