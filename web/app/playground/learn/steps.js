// The Learn part's steps: the backward pass through the layer the forward steps
// show, in the order it runs, then one step of gradient descent by hand. The
// same shape as the forward list (../steps.js: id, short, title), each with
// part: 'learn'. Pure data, read by the URL (state.js), the step buttons and
// the tests; what each step draws (its view, its exported figure) is in
// step-registry.js, keyed by these ids.

export const LEARN_LIST = Object.freeze([
  { id: 'loss', short: 'Loss', title: 'Learn: the loss, and dL/dlogits = softmax \u2212 one-hot' },
  { id: 'dout', short: 'dO', title: 'Learn: back to the head\u2019s output, dO' },
  { id: 'dweights', short: 'dP', title: 'Learn: dP = dO\u00b7V\u1d40' },
  { id: 'dsoftmax', short: 'dS\u2032', title: 'Learn: back through the softmax, row by row' },
  { id: 'dscale', short: '1/\u221ad_k', title: 'Learn: the scale, dS = dS\u2032/\u221ad_k' },
  { id: 'dqkv', short: 'dQ,K,V', title: 'Learn: dQ = dS\u00b7K, dK = dS\u1d40\u00b7Q, dV = P\u1d40\u00b7dO' },
  { id: 'dparams', short: 'dW', title: 'Learn: the head\u2019s weight gradients' },
  { id: 'sgd', short: 'Step', title: 'Learn: one step of gradient descent by hand' },
].map((s) => Object.freeze({ ...s, part: 'learn' })));

/** The Learn step ids in order. */
export const LEARN_STEPS = Object.freeze(LEARN_LIST.map((s) => s.id));
