// An independent JS reader of a .safetensors checkpoint's F32 tensors, for the
// tests: they check the engine's numbers (read by the C++ reader) against it.
// The page itself never reads a checkpoint: engine.loadTrainer does. It still
// refuses anything that does not fit, with a RangeError naming the problem
// (err.code 'bad_checkpoint').
//
//   const { tensors, metadata } = readSafetensors(bytes);   // tensors[name] = {shape, data: Float32Array}

/** The largest header the page reads (the engine's own limit is the same order). */
const MAX_HEADER_BYTES = 1 << 20;

function bad(message) {
  const e = new RangeError(`not a safetensors file the page can read: ${message}`);
  e.code = 'bad_checkpoint';
  return e;
}

const isCount = (x) => Number.isSafeInteger(x) && x >= 0;

/** {tensors: {name: {shape, data: Float32Array}}, metadata} of a checkpoint's bytes. */
export function readSafetensors(bytes) {
  if (!(bytes instanceof Uint8Array) || bytes.length < 8) throw bad('fewer than 8 bytes');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getBigUint64(0, true);
  if (n > BigInt(Math.min(bytes.length - 8, MAX_HEADER_BYTES))) throw bad(`its header length (${n} bytes) is larger than the file or than ${MAX_HEADER_BYTES} bytes`);
  const base = 8 + Number(n);
  let header;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, base)));
  } catch {
    throw bad('its header is not JSON');
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) throw bad('its header is not a JSON object');
  const size = bytes.length - base;
  const tensors = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    if (t?.dtype !== 'F32') throw bad(`tensor ${name} is ${t?.dtype ?? 'of no dtype'}, not F32`);
    const shape = t.shape;
    if (!Array.isArray(shape) || !shape.every(isCount)) throw bad(`tensor ${name} has no valid shape`);
    const offsets = t.data_offsets;
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isCount)) throw bad(`tensor ${name} has no valid data_offsets`);
    const [begin, end] = offsets;
    if (begin > end || end > size) throw bad(`tensor ${name} has data_offsets [${begin}, ${end}] outside its ${size} bytes of data`);
    const count = shape.reduce((a, b) => a * b, 1);
    if (end - begin !== 4 * count) throw bad(`tensor ${name} has ${end - begin} bytes for shape [${shape.join(', ')}], which needs ${4 * count}`);
    const data = new Float32Array(count);
    const dv = new DataView(bytes.buffer, bytes.byteOffset + base + begin, end - begin);
    for (let i = 0; i < count; i++) data[i] = dv.getFloat32(i * 4, true);
    tensors[name] = { shape, data };
  }
  const metadata = header.__metadata__ ?? {};
  if (typeof metadata !== 'object' || Array.isArray(metadata)) throw bad('its __metadata__ is not a JSON object');
  return { tensors, metadata };
}
