// Type-checked by tests/js/types.test.mjs (tsc --noEmit --strict): every public
// API of web/engine.d.ts used as a caller would, so the declarations cannot
// drift into something that does not compile, and misuse stays an error.

import { createEngine, at, DEFAULT_SETTINGS, TASKS, TOKENIZER_FILES, type PretrainedTokenizer, type PretrainedToken, type Engine, type Trace, type Trainer, type TaskInfo, type ModelTrace, type TrainingMemory, type PretrainedConfig, type HubLoader, type HubSizeCheck, type PretrainedModel, type PretrainedTrace } from '../../web/engine.js';

async function main(): Promise<void> {
  const engine: Engine = await createEngine();
  const trace: Trace = engine.run({ sentence: 'The cat sat.', dModel: 16, heads: 4, mask: 'causal', positional: 'learned' });
  const w: number = at(trace.heads[0].weights, 0, 0);
  const batch: Trace[] = engine.runBatch(['a b', 'c'], { mask: 'padding' });
  const y = engine.forward({ x: trace.input, weights: { wQuery: trace.wQuery, wKey: trace.wKey, wValue: trace.wValue, wOutput: trace.wOutput }, heads: 4, mask: 'causal' });
  const rows: number = y.rows;
  const entropy: Float32Array = engine.rowEntropy(trace.heads[0].weights);
  const stats = engine.scoreStats(trace.heads[0].scaled, trace.mask);
  const v: number = stats.variance;

  const tasks: readonly TaskInfo[] = engine.tasks();
  const name: (typeof TASKS)[number] = tasks[0].name;
  const trainer: Trainer = engine.createTrainer({ task: 'induction', layers: 2, heads: 2, dModel: 32, layernorm: false, lr: 1e-2, clip: 1 });
  const memory: TrainingMemory = engine.estimateTrainingMemory({ task: 'induction', batch: 1024 });
  const fits: boolean = memory.fits && memory.bytes <= memory.limitBytes && memory.parts.attention >= 0;
  const refusal: string | null = memory.message;
  const report = trainer.step(10);
  const loss: number = report.loss + report.scoreGradNorm + report.rowEntropy;
  const evaluation = trainer.evaluate({ samples: 64, ablate: [[1, 0]], causal: true });
  const probe = trainer.probe({ text: 'a b c a b' });
  const score: number = probe.layers[0].heads[0].scores['induction'] ?? 0;
  const modelTrace: ModelTrace = trainer.trace({ ids: [1, 2, 3] });
  const out = modelTrace.layers[0].attentionOutput.data;
  const bytes: Uint8Array = trainer.save();
  const back: Trainer = engine.loadTrainer(bytes, { corpus: '' });
  const steps: number = back.stepCount + back.parameterCount + back.config.dModel;
  trainer.dispose();
  back.dispose();

  const tok: PretrainedTokenizer = engine.createTokenizer({ 'vocab.txt': '[UNK]\n[CLS]\n[SEP]\nhi\n' }, { family: 'bert' });
  const pieces: PretrainedToken[] = tok.encode('hi');
  const said: string = tok.decode(pieces.map((t) => t.id)) + tok.piece(0) + tok.family + pieces[0].piece + pieces[0].text;
  const spans: number = pieces[0].start + pieces[0].endChar + tok.vocabSize + tok.maskId + TOKENIZER_FILES.length;
  tok.dispose();
  // @ts-expect-error: files are texts by name
  engine.createTokenizer({ 'vocab.txt': new Uint8Array(1) });

  // misuse stays a type error
  // @ts-expect-error: heads is a number
  engine.run({ heads: '4' });
  // @ts-expect-error: no such task
  engine.createTrainer({ task: 'juggle' });
  // @ts-expect-error: step counts are numbers
  trainer.step('10');
  // @ts-expect-error: checkpoints are bytes
  engine.loadTrainer('model.safetensors');

  // a pretrained checkpoint, streamed in chunks
  const configText = '{"model_type": "gpt2"}';
  const hubConfig: PretrainedConfig = engine.readHubConfig(configText);
  const headerBytes: number = engine.safetensorsHeaderSize(new Uint8Array(8));
  const size: HubSizeCheck = engine.checkHubConfig(configText);
  const loader: HubLoader = engine.openCheckpoint(configText, new Uint8Array(headerBytes), 1 << 20);
  for (const { begin, end } of loader.needed) loader.feed(begin, new Uint8Array(Math.min(end - begin, loader.stagingBytes)));
  const pretrained: PretrainedModel = loader.finish({ tokenizerJson: '{}' });
  const ptrace: PretrainedTrace = pretrained.trace('Hello world', { layer: 0 });
  const piece: string = pretrained.tokenize('Hello')[0].piece;
  const topId: number = ptrace.top.ids[0];
  pretrained.dispose();
  // @ts-expect-error: the header is bytes
  engine.openCheckpoint(configText, 'header', 1 << 20);
  // @ts-expect-error: the file's size is required
  engine.openCheckpoint(configText, new Uint8Array(headerBytes));

  console.log(said, spans, fits, refusal, w, batch.length, rows, entropy.length, v, name, loss, evaluation.accuracy, score, out.length, steps, DEFAULT_SETTINGS.dModel, hubConfig.family, piece, topId, size.fits);
}

void main();
