// The Learn part's steps: the backward pass through the layer the forward steps
// show, in the order it runs, then one step of gradient descent by hand. The
// same shape as the forward registry (steps.js: id, short, title, view), each
// with part: 'learn'; the controller gives their views v.learn (learn.js).
// A view touches the DOM only when called, so this module imports in Node.

import { createLearnLossStep } from './views/learn-loss.js';
import { createLearnOutStep } from './views/learn-dout.js';
import { createLearnWeightsStep } from './views/learn-dweights.js';
import { createLearnSoftmaxStep } from './views/learn-dsoftmax.js';
import { createLearnScaleStep } from './views/learn-dscale.js';
import { createLearnQkvStep } from './views/learn-dqkv.js';
import { createLearnParamsStep } from './views/learn-dparams.js';
import { createLearnSgdStep } from './views/learn-sgd.js';

export const LEARN_REGISTRY = Object.freeze([
  { id: 'loss', short: 'Loss', title: 'Learn: the loss, and dL/dlogits = softmax \u2212 one-hot', view: createLearnLossStep },
  { id: 'dout', short: 'dO', title: 'Learn: back to the head\u2019s output, dO', view: createLearnOutStep },
  { id: 'dweights', short: 'dP', title: 'Learn: dP = dO\u00b7V\u1d40', view: createLearnWeightsStep },
  { id: 'dsoftmax', short: 'dS\u2032', title: 'Learn: back through the softmax, row by row', view: createLearnSoftmaxStep },
  { id: 'dscale', short: '1/\u221ad_k', title: 'Learn: the scale, dS = dS\u2032/\u221ad_k', view: createLearnScaleStep },
  { id: 'dqkv', short: 'dQ,K,V', title: 'Learn: dQ = dS\u00b7K, dK = dS\u1d40\u00b7Q, dV = P\u1d40\u00b7dO', view: createLearnQkvStep },
  { id: 'dparams', short: 'dW', title: 'Learn: the head\u2019s weight gradients', view: createLearnParamsStep },
  { id: 'sgd', short: 'Step', title: 'Learn: one step of gradient descent by hand', view: createLearnSgdStep },
].map((s) => Object.freeze({ ...s, part: 'learn' })));

/** The Learn step ids in order. */
export const LEARN_STEPS = Object.freeze(LEARN_REGISTRY.map((s) => s.id));
