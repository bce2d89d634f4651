// The own-text task's starting text (generated here, so no licence is
// needed): a small grammar of everyday sentences with a few hundred words,
// repeated with variation. Its patterns (an article before a noun, "on the"
// before a place, "it" after "because", the same noun coming back) recur in
// the held-out part too, so a small word-level model predicts it visibly
// within seconds. Paste or drop any text to replace it.

const ANIMALS = ['cat', 'dog', 'bird', 'horse', 'fox', 'rabbit', 'cow', 'duck'];
const PLACES = ['mat', 'rug', 'bed', 'chair', 'sofa', 'floor', 'step', 'wall'];
const ADJ = ['small', 'big', 'old', 'young', 'happy', 'quiet'];
const VERBS = ['saw', 'heard', 'followed', 'watched', 'found', 'chased'];
const TIMES = ['in the morning', 'in the evening', 'at night', 'after lunch'];
const STATES = ['tired', 'hungry', 'sleepy', 'cold'];
const WIDE = ['wide', 'busy', 'long', 'dark'];
const STREETS = ['street', 'road', 'river', 'bridge'];

/** A seeded sequence of sentences (a linear congruential generator: the same text everywhere). */
function generate(count) {
  let x = 12345;
  const pick = (list) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return list[(x >>> 16) % list.length];
  };
  const out = [];
  for (let i = 0; i < count; i++) {
    const a = pick(ANIMALS);
    const b = pick(ANIMALS.filter((y) => y !== a));
    const p = pick(PLACES);
    switch (i % 6) {
      case 0: out.push(`the ${a} sat on the ${p}.`); break;
      case 1: out.push(`the ${pick(ADJ)} ${a} ${pick(VERBS)} the ${b} ${pick(TIMES)}.`); break;
      case 2: out.push(`the ${a} did not cross the ${pick(STREETS)} because it was too ${pick(STATES)}.`); break;
      case 3: out.push(`the ${a} did not cross the ${pick(STREETS)} because it was too ${pick(WIDE)}.`); break;
      case 4: out.push(`one ${a}, two ${a}s, three ${a}s.`); break;
      default: out.push(`the ${a} ${pick(VERBS)} the ${b}, and then the ${b} ${pick(VERBS)} the ${a}.`);
    }
  }
  // lines of about six sentences
  const lines = [];
  for (let i = 0; i < out.length; i += 6) lines.push(out.slice(i, i + 6).join(' '));
  return `${lines.join('\n')}\n`;
}

export const SAMPLE_TEXT = generate(600);
