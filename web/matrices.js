// The engine's matrix inputs (x, weights, masks) read from what a caller passes,
// checked and copied into typed arrays of our own, for engine.js to hand to wasm.

import { ENGINE_CONSTANTS } from './generated/engine_constants.js';
import { codedError, typeName, checkInteger } from './validate.js';

/** The largest int32: what the bindings take for a size, a count or an index. */
export const INT32_MAX = 2147483647;

/** Largest rows or cols of a matrix passed in (the core's limit). */
const MAX_SIDE = ENGINE_CONSTANTS.maxSide;

// Matrices are read exactly once: every property (rows, cols, data, a row,
// an entry) goes into a local before anything is checked, and what crosses
// into wasm is a typed array whose true length (not what its own `length`
// says) was checked against the shape. A getter that answers differently on
// each read, a Proxy or a typed array with a lying `length` then gets the
// shape and values it gave first, or an error: never a buffer sized for one
// shape and filled with another.

const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
const typedArrayLength = Object.getOwnPropertyDescriptor(TypedArrayPrototype, 'length').get;
const typedArrayTag = Object.getOwnPropertyDescriptor(TypedArrayPrototype, Symbol.toStringTag).get;

/** The length of a genuine typed array from its internal slot, or -1 for anything else (a Proxy included). */
function trueLength(value) {
  try {
    return typedArrayLength.call(value);
  } catch {
    return -1;
  }
}

/** Accepts {rows, cols, data} or an array of rows; returns our own {rows, cols, data: TypedArray}.
 * Masks (ArrayType Uint8Array) keep "nonzero = may attend": 0.5 becomes 1, not 0.
 * With keepFloat32, a genuine Float32Array of the right length is kept as is (no copy in JS). */
export function toMatrix(value, name, ArrayType, keepFloat32 = false) {
  const convert = ArrayType === Uint8Array ? (x) => (Number(x) !== 0 ? 1 : 0) : Number;
  if (Array.isArray(value)) {
    const rows = value.length;
    if (!Number.isInteger(rows) || rows < 0 || rows > MAX_SIDE) throw codedError(RangeError, 'bad_input', `${name} has an impossible number of rows (${rows})`);
    const lines = new Array(rows);
    for (let i = 0; i < rows; i++) lines[i] = value[i];
    const lengths = lines.map((row) => (Array.isArray(row) ? row.length : -1));
    if (rows && lengths[0] < 0) throw codedError(TypeError, 'bad_input', `${name} must be an array of rows (arrays)`);
    const cols = rows ? lengths[0] : 0;
    if (!Number.isInteger(cols) || cols > MAX_SIDE) throw codedError(RangeError, 'bad_input', `${name} has an impossible number of columns (${cols})`);
    lengths.forEach((n, i) => {
      if (n < 0) throw codedError(RangeError, 'bad_shape', `${name} row ${i} is ${typeName(lines[i])}, expected an array of ${cols} numbers`);
      if (n !== cols) throw codedError(RangeError, 'bad_shape', `${name} row ${i} has ${n} entries, expected ${cols}`);
    });
    const data = new ArrayType(rows * cols);
    for (let i = 0; i < rows; i++) {
      const row = lines[i];
      for (let j = 0; j < cols; j++) data[i * cols + j] = convert(row[j]);
    }
    return { rows, cols, data };
  }
  if (value === null || typeof value !== 'object') throw codedError(TypeError, 'bad_input', `${name} must be {rows, cols, data} or an array of rows, got ${typeName(value)}`);
  const { rows, cols, data } = value;
  checkInteger(rows, `${name}.rows`, 0, MAX_SIDE);
  checkInteger(cols, `${name}.cols`, 0, MAX_SIDE);
  const n = rows * cols;
  if (data === null || typeof data !== 'object') throw codedError(TypeError, 'bad_input', `${name}.data must be an array or typed array`);
  const typed = trueLength(data);
  const length = typed >= 0 ? typed : data.length;
  if (typeof length !== 'number') throw codedError(TypeError, 'bad_input', `${name}.data must be an array or typed array`);
  if (length !== n) throw codedError(RangeError, 'bad_shape', `${name}.data has ${length} values, expected ${rows}x${cols} = ${n}`);
  if (keepFloat32 && typed >= 0 && typedArrayTag.call(data) === 'Float32Array') return { rows, cols, data };
  const out = new ArrayType(n);
  for (let i = 0; i < n; i++) out[i] = convert(data[i]);
  return { rows, cols, data: out };
}

/** Like toMatrix(…, Float32Array), but a {rows, cols, data: Float32Array} of the
 * right length keeps its data: the bindings copy it into wasm memory once. */
export function toFloatMatrix(value, name) {
  return toMatrix(value, name, Float32Array, true);
}

/** HEAPF32.set(m.data) at a float index, after checking (with no JS code
 * running in between) that the data still has exactly the rows×cols floats
 * the buffer was sized for: a kept Float32Array's buffer could have been
 * resized or detached by a getter that ran after it was read. */
export function copyIntoHeap(heap, at, m, name) {
  if (trueLength(m.data) !== m.rows * m.cols) throw codedError(RangeError, 'bad_shape', `${name}.data changed while the inputs were being read`);
  heap.set(m.data, at);
}

/** forward()'s mask → {kind, realTokens, matrix} for the bindings. */
export function toMaskSpec(mask) {
  if (mask == null || mask === 'none') return { kind: 'none', realTokens: 0, matrix: undefined };
  if (mask === 'causal') return { kind: 'causal', realTokens: 0, matrix: undefined };
  if (typeof mask === 'string') throw codedError(RangeError, 'bad_mask', `mask "${mask}" is not one of none, causal, {kind: 'padding' | 'causal+padding', realTokens} or a T×T matrix`);
  if (typeof mask === 'object' && !Array.isArray(mask) && 'kind' in mask) {
    const { kind, realTokens } = mask;  // read once
    if (typeof kind !== 'string') throw codedError(TypeError, 'bad_mask', `mask.kind must be a string, got ${typeName(kind)}`);
    if (kind !== 'padding' && kind !== 'causal+padding') throw codedError(RangeError, 'bad_mask', `mask kind "${kind}" is not padding or causal+padding`);
    return { kind, realTokens: checkInteger(realTokens, 'mask.realTokens', 0, INT32_MAX), matrix: undefined };
  }
  return { kind: 'custom', realTokens: 0, matrix: toMatrix(mask, 'mask', Uint8Array) };
}

/** {wQuery, wKey, wValue, wOutput}, each matrix converted by toFloat(matrix, name). */
export function toWeights(weights, toFloat) {
  if (weights === null || typeof weights !== 'object') throw codedError(TypeError, 'bad_input', `weights must be an object {wQuery, wKey, wValue, wOutput}, got ${typeName(weights)}`);
  const out = {};
  for (const key of ['wQuery', 'wKey', 'wValue', 'wOutput']) {
    const m = weights[key];  // read once
    if (m == null) throw codedError(TypeError, 'bad_input', `weights.${key} is missing`);
    out[key] = toFloat(m, `weights.${key}`);
  }
  return out;
}
