// The words beside each race: what is trained, what to watch and why, and the
// conditions under which the effect appears. In our own words, short.
// `setup` and `watch` take the race's variant (the second arm's setting).

import { RACES, armLabel } from './races.js';
import { formatValue, formatPercent } from '../format.js';

/** "race seeds 1–5 at 800 steps: 1 head 23.4–75.1%, 2 heads 93.6–100%": a race's measured spread (default variant). */
export function spreadText(race) {
  const { seeds, steps, arms } = RACES[race].spread;
  const v = RACES[race].variant?.default;
  const range = ([low, high]) => `${formatValue(100 * low, 3)}\u2013${formatPercent(high, 3)}`;
  return `race seeds ${seeds[0]}\u2013${seeds[1]} at ${steps} steps: ${arms.map((a, i) => `${armLabel(race, i, v, 'short')} ${range(a)}`).join(', ')}`;
}

export const RACE_TEXT = Object.freeze({
  scale: {
    setup: () => 'Two copies of one model (2 layers, one attention head of width d_k = 64, an MLP, LayerNorm, Adam at learning rate 0.003) learn the recall task: read pairs such as \u201ce 0 b 4 a 4\u201d, then a letter, and answer with the digit that went with it. Same starting weights, same batches; one divides the scores by \u221a64 = 8, the other does not.',
    watch: () => 'Without the scale the scores start about 64 times as spread out, so every softmax row is already close to one-hot on whichever key the random start favoured: the row entropy falls towards 0 and the maps turn into single dots. Little gradient then reaches the scores while it matters most (compare the two curves over the first 100 steps), and that copy stays on its plateau; the scaled copy finds the matching digit in about 100 steps.',
    condition: () => 'When it shows: with a wide head (here 64) on a task where the model must learn by content which key to look at. Adam rescales small gradients, so on a task that position alone solves, such as reversing digits, both copies learn just as fast even at width 128 (we checked). Late in the race the scaled copy\u2019s gradient drops too, for another reason: its loss is close to 0, so there is little left to correct.',
  },
  order: {
    setup: (v) => `Two copies of one small model (1 layer, 2 heads, width 32) learn to write 12 digits backwards. Same starting weights, same batches; one adds ${v} position vectors to its inputs, the other adds nothing.`,
    watch: () => 'Without positions the model sees the digits as a set: it cannot tell which digit is last, so the best it can do is guess a digit that occurs often, about 1 time in 4 here (pure chance would be 1 in 10). With positions each output looks at its mirror position, an anti-diagonal line in the maps, and the accuracy goes to 100%.',
    condition: () => 'The accuracy is measured on sequences the models never trained on.',
  },
  masks: {
    setup: () => 'Two copies of a 2-layer attention-only model learn the induction task: a run of letters appears twice, and on its second appearance each next letter must be predicted. The target at each position is the next letter, which is also the next input. One copy trains with the causal mask, the other without it.',
    watch: () => 'Without the mask the answer is in plain view: that copy learns to look one position ahead (the line just right of the diagonal in its maps) and its training loss falls to almost 0 within 150 steps. Run the way a model must be used, predicting without the future, it is right about 1 time in 26, which is chance. The masked copy has to learn the real rule (find the earlier copy, take the letter after it): it sits on a plateau, then (at most seeds around step 400) its heads fall into place, and it passes the same test about 98% of the time.',
    condition: () => `\u201cWithout the future\u201d means the trained model evaluated with the causal mask switched on, on held-out sequences; \u201cwith the future\u201d is the same held-out set as it was trained. Without the future, at the finish, over ${spreadText('masks')}. How long the masked copy stays on its plateau depends on the seed: at seed 4 it has not left it by step 600, nor by step 1000 (18.3% then).`,
  },
  heads: {
    setup: (v) => `Letters a\u2013h stand for 0\u20137. At each position the answer is how many steps forward it is from the letter two back to the previous letter, round a clock of eight: after \u201cc f\u201d it is \u201cd\u201d (3 steps). It needs both letters and which one came first. Two copies of a 1-layer model (width 32, an MLP of 64, causal) learn it from the same batches: one has a single head of width 32, the other ${v} heads of width ${32 / v}.`,
    watch: () => 'A softmax row has one unit of weight to share. A single head must split it between the two letters, and their values then add up, so \u201cc then f\u201d looks almost like \u201cf then c\u201d: the order the answer needs is lost, and it learns far more slowly. With several heads a row can send one head to each letter: watch the heads\u2019 maps pick different cells in the same row, and the coverage (the best head\u2019s weight on each of the two letters) rise towards 1.',
    condition: () => `How they specialise: in most rows one head takes the previous letter and another the letter before it, but which head takes which can depend on the letters, so on average each head leans towards one letter rather than owning it. Either way they do not repeat one calculation. The accuracy is measured on new sequences. At the finish, over ${spreadText('heads')}. One head can learn it too, by weighting the two letters unequally, but later, and how much later depends on the seed.`,
  },
  context: {
    setup: () => 'The coreference model (2 layers, 2 heads each, an MLP) learns which noun \u201cit\u201d means in sentences such as \u201cthe animal didn\u2019t cross the street because it was too tired\u201d. The \u201cplain average\u201d line is the very same model at every step, with each head\u2019s attention replaced by the uniform average over the sentence.',
    watch: () => 'With its attention the model gets the held-out sentences (new combinations of noun, obstacle and adjective) right. With the same weights averaging instead, it is right only about 1 time in 10: an average gives \u201cit\u201d the same mix whatever the last word says. Below, where \u201cit\u201d looks in each head: when the sentence ends \u201ctired\u201d some head looks at \u201canimal\u201d, when it ends \u201cwide\u201d at \u201cstreet\u201d.',
    condition: () => 'Which head does it, and how sharply, changes with the seed (seed 2 shows it cleanly; try others). The average replaces the attention of a model trained with attention; the engine cannot yet train a model that averages from the start.',
  },
});
