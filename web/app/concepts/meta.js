// The seven ideas of product.md, in order: a short name for the navigation,
// the idea's title and the misconception its demo refutes.

export const DEMO_META = Object.freeze({
  context: {
    number: 1,
    short: 'Context, not an average',
    title: 'Self-attention builds context-aware vectors',
    myth: 'It is just a plain average of the words.',
  },
  qkv: {
    number: 2,
    short: 'Q, K, V from one input',
    title: 'Q, K and V come from the same input',
    myth: 'Q, K and V are three separate inputs.',
  },
  scores: {
    number: 3,
    short: 'Raw scores are not weights',
    title: 'Scaled dot-product attention',
    myth: 'The raw dot products are the attention weights.',
  },
  scale: {
    number: 4,
    short: 'Why 1/\u221ad_k',
    title: 'Why the scores are divided by \u221ad_k',
    myth: 'The scale is an optional tuning knob.',
  },
  heads: {
    number: 5,
    short: 'Heads differ',
    title: 'Multi-head attention',
    myth: 'The heads repeat the same calculation.',
  },
  order: {
    number: 6,
    short: 'Order needs positions',
    title: 'Positional encoding',
    myth: 'Self-attention knows word order by itself.',
  },
  masks: {
    number: 7,
    short: 'Masks restrict',
    title: 'Attention masks',
    myth: 'Every token always sees every other token.',
  },
});
