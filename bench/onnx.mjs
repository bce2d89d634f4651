// A tiny ONNX (protobuf) encoder, just enough to hand onnxruntime-web the
// multi-head attention graph of a given size without any model file or
// converter: ModelProto → GraphProto → NodeProto / TensorProto / ValueInfoProto.
// Field numbers are those of onnx/onnx.proto (IR version 8, opset 17).

const enc = new TextEncoder();

class Writer {
  constructor() { this.parts = []; this.length = 0; }
  bytes(b) { this.parts.push(b); this.length += b.length; return this; }
  varint(v) {
    let n = BigInt.asUintN(64, BigInt(v));
    const out = [];
    do {
      let byte = Number(n & 0x7fn);
      n >>= 7n;
      if (n) byte |= 0x80;
      out.push(byte);
    } while (n);
    return this.bytes(Uint8Array.from(out));
  }
  tag(field, wire) { return this.varint((field << 3) | wire); }
  int(field, v) { return this.tag(field, 0).varint(v); }
  float(field, v) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, v, true);
    return this.tag(field, 5).bytes(b);
  }
  blob(field, b) { return this.tag(field, 2).varint(b.length).bytes(b); }
  string(field, s) { return this.blob(field, enc.encode(s)); }
  message(field, w) { return this.blob(field, w.finish()); }
  finish() {
    const out = new Uint8Array(this.length);
    let o = 0;
    for (const p of this.parts) { out.set(p, o); o += p.length; }
    return out;
  }
}

const FLOAT = 1;
const INT64 = 7;

/** TensorProto: a float32 (Float32Array) or int64 (BigInt64Array) initializer. */
function tensor(name, dims, data) {
  const w = new Writer();
  for (const d of dims) w.int(1, d);
  w.int(2, data instanceof BigInt64Array ? INT64 : FLOAT);
  w.string(8, name);
  w.blob(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return w;
}

/** AttributeProto from a JS value: integer → INT, float → FLOAT, int array → INTS. */
function attribute(name, value) {
  const w = new Writer().string(1, name);
  if (Array.isArray(value)) {
    for (const v of value) w.int(8, v);
    w.int(20, 7);
  } else if (typeof value === 'object' && value.float !== undefined) {
    w.float(2, value.float);
    w.int(20, 1);
  } else {
    w.int(3, value);
    w.int(20, 2);
  }
  return w;
}

function node(opType, inputs, outputs, attrs = {}, domain = '') {
  const w = new Writer();
  for (const i of inputs) w.string(1, i);
  for (const o of outputs) w.string(2, o);
  w.string(3, `${opType}_${outputs[0]}`);
  w.string(4, opType);
  for (const [k, v] of Object.entries(attrs)) w.message(5, attribute(k, v));
  if (domain) w.string(7, domain);
  return w;
}

/** ValueInfoProto: a number in dims is a fixed size, a string a named (dynamic) one. */
function valueInfo(name, dims, type = FLOAT) {
  const shape = new Writer();
  for (const d of dims) shape.message(1, typeof d === 'string' ? new Writer().string(2, d) : new Writer().int(1, d));
  const tensorType = new Writer().int(1, type).message(2, shape);
  return new Writer().string(1, name).message(2, new Writer().message(1, tensorType));
}

/**
 * A serialised ONNX model. nodes: [opType, inputs, outputs, attrs?, domain?];
 * initializers: [name, dims, Float32Array | BigInt64Array]; inputs/outputs: [name, dims, 'int64'?]
 * (float32 unless 'int64'; a string in dims names a dynamic size).
 */
export function onnxModel({ nodes, initializers, inputs, outputs, opsets = { '': 17 }, name = 'attention' }) {
  const graph = new Writer();
  for (const n of nodes) graph.message(1, node(...n));
  graph.string(2, name);
  for (const [name, dims, data] of initializers) graph.message(5, tensor(name, dims, data));
  const type = (t) => (t === 'int64' ? INT64 : FLOAT);
  for (const [name, dims, t] of inputs) graph.message(11, valueInfo(name, dims, type(t)));
  for (const [name, dims, t] of outputs) graph.message(12, valueInfo(name, dims, type(t)));
  const model = new Writer().int(1, 8).string(2, 'attention-playground-bench');
  for (const [domain, version] of Object.entries(opsets)) model.message(8, new Writer().string(1, domain).int(2, version));
  model.message(7, graph);
  return model.finish();
}

/** Upper-triangle additive bias (T×T): 0 where key ≤ query, `hidden` above. */
export function causalBias(t, hidden) {
  const b = new Float32Array(t * t);
  for (let i = 0; i < t; i++) for (let j = i + 1; j < t; j++) b[i * t + j] = hidden;
  return b;
}

/**
 * Multi-head self-attention y = MHA(x) as ONNX, in one of three forms:
 *   'ops'       standard ops: MatMul, Reshape, Transpose, Mul, Add (causal bias), Softmax
 *   'mha'       projections as MatMul + com.microsoft MultiHeadAttention (causal via attention_bias)
 *   'attention' com.microsoft Attention (fused QKV projection, unidirectional = causal)
 * x: [T, C] ('ops') or [1, T, C]; w: {wQuery, wKey, wValue, wOutput} Float32Array (C×C row-major).
 */
export function attentionModel(form, { t, c, heads, causal, scale, w }) {
  const d = c / heads;
  const i64 = (...v) => BigInt64Array.from(v.map(BigInt));
  const init = [
    ['wq', [c, c], w.wQuery], ['wk', [c, c], w.wKey], ['wv', [c, c], w.wValue], ['wo', [c, c], w.wOutput],
  ];
  if (form === 'ops') {
    const nodes = [
      ['MatMul', ['x', 'wq'], ['q']], ['MatMul', ['x', 'wk'], ['k']], ['MatMul', ['x', 'wv'], ['v']],
      ['Reshape', ['q', 'thd'], ['q3']], ['Reshape', ['k', 'thd'], ['k3']], ['Reshape', ['v', 'thd'], ['v3']],
      ['Transpose', ['q3'], ['qh'], { perm: [1, 0, 2] }],   // (H, T, D)
      ['Transpose', ['k3'], ['kt'], { perm: [1, 2, 0] }],   // (H, D, T)
      ['Transpose', ['v3'], ['vh'], { perm: [1, 0, 2] }],   // (H, T, D)
      ['MatMul', ['qh', 'kt'], ['s']],                      // (H, T, T)
      ['Mul', ['s', 'scale'], ['ss']],
      ...(causal ? [['Add', ['ss', 'bias'], ['sm']]] : []),
      ['Softmax', [causal ? 'sm' : 'ss'], ['p'], { axis: -1 }],
      ['MatMul', ['p', 'vh'], ['o']],                       // (H, T, D)
      ['Transpose', ['o'], ['o3'], { perm: [1, 0, 2] }],    // (T, H, D)
      ['Reshape', ['o3', 'tc'], ['concat']],                // (T, C)
      ['MatMul', ['concat', 'wo'], ['y']],
    ];
    init.push(['thd', [3], i64(t, heads, d)], ['tc', [2], i64(t, c)], ['scale', [], Float32Array.of(scale)]);
    if (causal) init.push(['bias', [t, t], causalBias(t, -Infinity)]);
    return onnxModel({ nodes, initializers: init, inputs: [['x', [t, c]]], outputs: [['y', [t, c]]] });
  }
  if (form === 'mha') {
    const nodes = [
      ['MatMul', ['x', 'wq'], ['q']], ['MatMul', ['x', 'wk'], ['k']], ['MatMul', ['x', 'wv'], ['v']],
      ['MultiHeadAttention', ['q', 'k', 'v', '', '', causal ? 'bias' : ''], ['o'], { num_heads: heads, scale: { float: scale } }, 'com.microsoft'],
      ['MatMul', ['o', 'wo'], ['y']],
    ];
    if (causal) init.push(['bias', [1, 1, t, t], causalBias(t, -Infinity)]);
    return onnxModel({ nodes, initializers: init, inputs: [['x', [1, t, c]]], outputs: [['y', [1, t, c]]], opsets: { '': 17, 'com.microsoft': 1 } });
  }
  if (form === 'attention') {
    // Attention wants W_QKV as (C, 3C): [W_Q | W_K | W_V] side by side, and a bias.
    const qkv = new Float32Array(c * 3 * c);
    for (let r = 0; r < c; r++) {
      qkv.set(w.wQuery.subarray(r * c, (r + 1) * c), r * 3 * c);
      qkv.set(w.wKey.subarray(r * c, (r + 1) * c), r * 3 * c + c);
      qkv.set(w.wValue.subarray(r * c, (r + 1) * c), r * 3 * c + 2 * c);
    }
    const nodes = [
      ['Attention', ['x', 'wqkv', 'bqkv'], ['o'], { num_heads: heads, unidirectional: causal ? 1 : 0, scale: { float: scale } }, 'com.microsoft'],
      ['MatMul', ['o', 'wo'], ['y']],
    ];
    const init2 = [['wqkv', [c, 3 * c], qkv], ['bqkv', [3 * c], new Float32Array(3 * c)], ['wo', [c, c], w.wOutput]];
    return onnxModel({ nodes, initializers: init2, inputs: [['x', [1, t, c]]], outputs: [['y', [1, t, c]]], opsets: { '': 17, 'com.microsoft': 1 } });
  }
  throw new Error(`unknown form ${form}`);
}
