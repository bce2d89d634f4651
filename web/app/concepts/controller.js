// What every demo controller shares. A demo is two modules:
//   <idea>.js        the controller: createXxxDemo(root, ctx) → {update(state), hide?()};
//                    it turns the demo's state into engine calls (through a cache),
//                    measures what the verdicts need from the engine's numbers, and
//                    hands the result to the view; a pure compute function beside it
//                    (exported, so tests can run it on the engine alone).
//   views/<idea>.js  the view: createXxxView(root, {onState, tooltip}) → {frame, update(state, model, palette)};
//                    it builds the DOM once and then only draws what it is given
//                    (it never calls the engine and does no model maths).

/** Runs fn; returns {value} or {error: message}. The engine throws real JS errors. */
export function attempt(fn) {
  try {
    return { value: fn() };
  } catch (e) {
    return { error: String(e?.message ?? e) };
  }
}

/**
 * A computation that repeats only when its inputs change:
 *   const get = createCache((inputs) => engine.run(inputs));
 *   const { value, error } = get(inputs);
 * value is the result of the last inputs that worked (null before any), so a
 * failed edit keeps the last good numbers on screen; error is this call's
 * failure message, or null (it worked, or the inputs did not change).
 */
export function createCache(compute) {
  let key = null;
  let value = null;
  return (inputs) => {
    const k = JSON.stringify(inputs);
    if (k === key) return { value, error: null };
    const r = attempt(() => compute(inputs));
    if (r.error) return { value, error: r.error };
    key = k;
    value = r.value;
    return { value, error: null };
  };
}

/** The first error of several cache results, or null. */
export function firstError(...results) {
  return results.find((r) => r.error)?.error ?? null;
}

/**
 * The weights of a trace with W_Q set to zero: every query is the zero vector,
 * every score 0, every softmax row uniform (1/T), so each head's output row is
 * the plain average of its value vectors (W_K, W_V and W_O are the trace's own).
 * engine.run({...settings, weights: uniformAttentionWeights(trace)}) then gives
 * the plain average, computed by the engine like any other attention output.
 */
export function uniformAttentionWeights(trace) {
  const C = trace.config.dModel;
  return { wQuery: { rows: C, cols: C, data: new Float32Array(C * C) }, wKey: trace.wKey, wValue: trace.wValue, wOutput: trace.wOutput };
}

/** When clamping changed an index of the state, write the clamped value back (after this render). */
export function writeBack(onState, state, fixed) {
  if (Object.keys(fixed).some((k) => fixed[k] !== state[k])) queueMicrotask(() => onState(fixed));
}
