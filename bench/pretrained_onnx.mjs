// GPT-2 (the Hub's GPT2LMHeadModel, tied unembedding, gelu_new) as an ONNX graph
// written by hand with onnx.mjs's encoder, for onnxruntime-web: the same weights
// as the Hub folder, no converter. Benchmark only (bench/pretrained_node.mjs).
//
//   const bytes = gpt2Onnx(tensors, config);   // tensors: readSafetensors(file).tensors
//   session.run({ ids, positions, bias })      // ids, positions: int64 [T]; bias: float [T, T]
//                                              // (0 where a key is visible, −∞ above the diagonal)
//   → { logits: [T, V] }
// Rows of the residual stream are [T, C] (a batch of one), so every
// projection is one Gemm (x·W + b: the Hub's Conv1D layout is W [in, out]).

import { onnxModel } from './onnx.mjs';

export function gpt2Onnx(tensors, config) {
  const C = config.n_embd, H = config.n_head, L = config.n_layer, V = config.vocab_size, D = C / H;
  const eps = config.layer_norm_epsilon ?? 1e-5;
  const prefix = tensors['transformer.wte.weight'] ? 'transformer.' : '';
  const init = [];
  const weight = (name) => {
    const t = tensors[prefix + name];
    if (!t) throw new Error(`the checkpoint has no ${prefix + name}`);
    init.push([name, t.shape, t.data]);
    return name;
  };
  const i64 = (...v) => BigInt64Array.from(v.map(BigInt));
  const scalar = (name, v) => {
    init.push([name, [], Float32Array.of(v)]);
    return name;
  };
  init.push(['shape_thd', [3], i64(-1, H, D)], ['shape_tc', [2], i64(-1, C)], ['split_qkv', [3], i64(C, C, C)]);
  scalar('scale', 1 / Math.sqrt(D));
  scalar('half', 0.5);
  scalar('one', 1);
  scalar('cubic', 0.044715);
  scalar('sqrt_2_over_pi', Math.sqrt(2 / Math.PI));
  const nodes = [
    ['Gather', [weight('wte.weight'), 'ids'], ['tok']],
    ['Gather', [weight('wpe.weight'), 'positions'], ['pos']],
    ['Add', ['tok', 'pos'], ['x0']],
  ];
  const ln = (x, g, b, out) => nodes.push(['LayerNormalization', [x, weight(g), weight(b)], [out], { axis: -1, epsilon: { float: eps } }]);
  let x = 'x0';
  for (let l = 0; l < L; l++) {
    const h = `h.${l}.`, n = (s) => `${s}_${l}`;
    ln(x, `${h}ln_1.weight`, `${h}ln_1.bias`, n('a'));
    nodes.push(
      ['Gemm', [n('a'), weight(`${h}attn.c_attn.weight`), weight(`${h}attn.c_attn.bias`)], [n('qkv')]],
      ['Split', [n('qkv'), 'split_qkv'], [n('q'), n('k'), n('v')], { axis: 1 }],
      ['Reshape', [n('q'), 'shape_thd'], [n('q3')]], ['Reshape', [n('k'), 'shape_thd'], [n('k3')]], ['Reshape', [n('v'), 'shape_thd'], [n('v3')]],
      ['Transpose', [n('q3')], [n('qh')], { perm: [1, 0, 2] }],   // (H, T, D)
      ['Transpose', [n('k3')], [n('kt')], { perm: [1, 2, 0] }],   // (H, D, T)
      ['Transpose', [n('v3')], [n('vh')], { perm: [1, 0, 2] }],   // (H, T, D)
      ['MatMul', [n('qh'), n('kt')], [n('s')]],
      ['Mul', [n('s'), 'scale'], [n('ss')]],
      ['Add', [n('ss'), 'bias'], [n('sm')]],
      ['Softmax', [n('sm')], [n('p')], { axis: -1 }],
      ['MatMul', [n('p'), n('vh')], [n('o')]],
      ['Transpose', [n('o')], [n('o3')], { perm: [1, 0, 2] }],    // (T, H, D)
      ['Reshape', [n('o3'), 'shape_tc'], [n('concat')]],
      ['Gemm', [n('concat'), weight(`${h}attn.c_proj.weight`), weight(`${h}attn.c_proj.bias`)], [n('attn')]],
      ['Add', [x, n('attn')], [n('mid')]],
    );
    ln(n('mid'), `${h}ln_2.weight`, `${h}ln_2.bias`, n('m'));
    nodes.push(
      ['Gemm', [n('m'), weight(`${h}mlp.c_fc.weight`), weight(`${h}mlp.c_fc.bias`)], [n('pre')]],
      // gelu_new: 0.5·u·(1 + tanh(√(2/π)·(u + 0.044715·u³)))
      ['Mul', [n('pre'), n('pre')], [n('u2')]], ['Mul', [n('u2'), n('pre')], [n('u3')]],
      ['Mul', [n('u3'), 'cubic'], [n('cu3')]], ['Add', [n('pre'), n('cu3')], [n('inner')]],
      ['Mul', [n('inner'), 'sqrt_2_over_pi'], [n('arg')]], ['Tanh', [n('arg')], [n('th')]],
      ['Add', [n('th'), 'one'], [n('th1')]], ['Mul', [n('pre'), 'half'], [n('hu')]], ['Mul', [n('hu'), n('th1')], [n('act')]],
      ['Gemm', [n('act'), weight(`${h}mlp.c_proj.weight`), weight(`${h}mlp.c_proj.bias`)], [n('mlp')]],
      ['Add', [n('mid'), n('mlp')], [n('out')]],
    );
    x = n('out');
  }
  ln(x, 'ln_f.weight', 'ln_f.bias', 'xf');
  nodes.push(['Gemm', ['xf', 'wte.weight'], ['logits'], { transB: 1 }]);  // tied: x·wteᵀ
  // wte is listed once, though two nodes read it
  const seen = new Set();
  const initializers = init.filter(([name]) => !seen.has(name) && seen.add(name));
  return onnxModel({
    nodes,
    initializers,
    inputs: [['ids', ['T'], 'int64'], ['positions', ['T'], 'int64'], ['bias', ['T', 'T']]],
    outputs: [['logits', ['T', V]]],
    name: 'gpt2',
  });
}
