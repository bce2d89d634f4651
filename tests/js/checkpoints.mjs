// Hand edits of .safetensors bytes for the tests (not a test file itself): a
// tensor overwritten, a metadata entry removed. Pure bytes: no engine here.

function headerOf(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(0, true));
  return { n, header: JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) };
}

/** A copy of the bytes with float k of one tensor set to valueAt(k). */
export function setTensorValues(bytes, name, valueAt) {
  const out = new Uint8Array(bytes);
  const view = new DataView(out.buffer);
  const { n, header } = headerOf(out);
  const [begin, end] = header[name].data_offsets;
  for (let i = 8 + n + begin, k = 0; i < 8 + n + end; i += 4, k++) view.setFloat32(i, valueAt(k), true);
  return out;
}

/** A copy of the bytes with every float of one tensor set to value. */
export const setTensor = (bytes, name, value) => setTensorValues(bytes, name, () => value);

/** A copy of the bytes with one __metadata__ entry removed (the header rewritten, the tensors as they were). */
export function withoutMetadata(bytes, key) {
  const { n, header } = headerOf(bytes);
  delete header.__metadata__[key];
  const text = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + text.length + bytes.length - 8 - n);
  new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
  out.set(text, 8);
  out.set(bytes.subarray(8 + n), 8 + text.length);
  return out;
}

/** A reverse model (lr 10, no weight decay) whose layer-0 w_key sits at value: 1e6 − 5 is
 * just inside the ±1e6 the engine's probe accepts, so its first updates carry it out. */
export function poisonedReverse(engine, value) {
  const base = engine.createTrainer({ task: 'reverse', lr: 10, weightDecay: 0 });
  const bytes = base.save();
  base.dispose();
  return setTensor(bytes, 'layers.0.w_key', value);
}
