// What the pretrained-model worker (hub/worker.js) runs, one runner per
// loaded model: it fetches the files (hub-source.js: the Hub through Cache
// Storage, or the File objects the page passed), streams model.safetensors
// into the engine in chunks (its header first, then only the byte ranges the
// loader needs), keeps the model, and traces sentences on it. In the worker
// the page never waits for any of it, and cancelling is ending the worker; the
// one-file element (no worker file beside it) runs it in the page, cancelled
// by the load's AbortSignal between chunks.
//
//   const runner = createHubRunner(post, { loadEngine, signal });
//   runner.onMessage(msg);     // the messages below
//
// Page → worker:
//   {type: 'load', source: {kind: 'hub', base, id} | {kind: 'url', url} (a folder a host serves) | {kind: 'files', files: [File]}}
//   {type: 'trace', req, sentence, layer, allWeights, generated}   (generated: the ids that wrote the sentence's end)
//   {type: 'generate', req, sentence, generated, options}           the next token (pretrained.js's generate)
//   {type: 'backward', req, sentence, targets, scale, layer}         the Learn steps' backward (pretrained.js's backwardTrace)
//   {type: 'sgd', req, sentence, targets, lr, layer, head}          a step by hand (sgdStep); {type: 'undo', req} its undo
//   {type: 'memory', req}                                           the wasm heap's size now (bench/modern_page.mjs)
// Worker → page:
//   {type: 'progress', phase: 'download' | 'read', file, loaded, total, cached}
//   {type: 'loaded', info: {config, parameterCount, maskId, files, neededBytes, fileBytes, memoryBytes}}
//   {type: 'trace', req, trace}                        (pretrained.js's trace; its buffers transferred)
//   {type: 'generated', req, token}                    (pretrained.js's generate)
//   {type: 'backward', req, trace}                     (pretrained.js's backwardTrace; its buffers transferred)
//   {type: 'stepped', req, step} / {type: 'undone', req, steps}   (sgdStep / undoStep)
//   {type: 'memory', req, memoryBytes}                 (engine.memoryBytes(): it only grows, so the peak so far)
//   {type: 'error', req?, message, code, file, forgotten}   a failed load or trace (code: err.code;
//                                                      forgotten: the model's files in the cache were removed)
// Every message is wrapped: an error becomes an 'error' reply, never an uncaught one.
// A load that fails (not a cancel) forgets what the cache kept of the model: the
// next try downloads it again, so one bad answer of a server does not stay.

import { createEngine } from '../../engine.js';
import { filesSource, readRanges, familyOf, pickTokenizer, tokenizerNeeds, hubError, tooLarge, CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILES } from './source.js';
import { hubSource, urlSource } from './download.js';

/** The tokenizer files' texts ({tokenizerJson, …}: pretrained.js's finish()), tokenizer_config.json optional. */
async function tokenizerTexts(src, family) {
  const keyOf = Object.fromEntries(Object.entries(TOKENIZER_FILES).map(([k, f]) => [f, k]));
  let files;
  if (src.kind === 'files') {
    files = pickTokenizer(family, src.has);
  } else {
    // the Hub: tokenizer.json when the model has one, else the older files
    files = (await src.exists('tokenizer.json')) ? ['tokenizer.json'] : pickTokenizer(family, (f) => f !== 'tokenizer.json');
  }
  if (!files) throw hubError('missing_file', `there is no tokenizer: a ${family || 'model of this'} model needs ${tokenizerNeeds(family)}`, 'tokenizer.json');
  const texts = {};
  for (const f of files) texts[keyOf[f]] = await src.text(f);
  texts.tokenizerConfigJson = await src.text('tokenizer_config.json', { optional: true });
  return { texts, files: [...files] };
}

/** Every ArrayBuffer under a trace (to transfer, not copy). */
function buffers(value, out = new Set()) {
  if (ArrayBuffer.isView(value)) out.add(value.buffer);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) buffers(v, out);
  return out;
}

/** The error with the file it is about (an engine error names none). */
function aboutFile(e, file) {
  if (e && typeof e === 'object' && !e.file) e.file = file;
  return e;
}

/** The bytes a safetensors file holds by its header (headerBytes: 8 + N), or null when the header
 * does not read as JSON (the engine then says what is wrong with it). */
function describedBytes(header, headerBytes) {
  try {
    const index = JSON.parse(new TextDecoder().decode(header.subarray(8, headerBytes)));
    let end = 0;
    for (const [name, t] of Object.entries(index)) if (name !== '__metadata__') end = Math.max(end, Number(t?.data_offsets?.[1]) || 0);
    return headerBytes + end;
  } catch {
    return null;
  }
}

/** Throws unless the blob holds every byte its header describes: a download cut short with a clean
 * end is the download's fault (bad_download), before the engine refuses the file (it checks too). */
function checkLength(blob, header, headerBytes, src) {
  const needs = describedBytes(header, headerBytes);
  if (needs === null || blob.size >= needs) return;
  const from = src.address ? ` from ${src.address(WEIGHTS_FILE)}` : '';
  throw hubError(src.address ? 'bad_download' : 'bad_checkpoint',
    `${WEIGHTS_FILE}${from} has ${blob.size.toLocaleString('en-US')} bytes; its header says the file holds ${needs.toLocaleString('en-US')}: ${src.address ? 'the download was cut short' : 'the file is cut short, or its header is wrong'}`, WEIGHTS_FILE);
}

/** post(msg, transfer): where the replies go. */
export function createHubRunner(post, { loadEngine = createEngine, signal = null } = {}) {
  let engine = null;
  let model = null;

  function checkCancelled() {
    if (signal?.aborted) throw hubError('cancelled', 'the download was cancelled');
  }

  async function load(source) {
    engine ??= await loadEngine();
    const onProgress = (p) => post({ type: 'progress', phase: 'download', ...p });
    const src = source.kind === 'hub' ? hubSource({ base: source.base, id: source.id, onProgress, signal })
      : source.kind === 'url' ? urlSource({ url: source.url, onProgress, signal })
        : filesSource(source.files);
    try {
      await loadFrom(src);
    } catch (e) {
      // whatever the cache kept of a model that failed goes: the next try asks the server again
      // (a model too large for the engine is not worth another try: the page does not offer one)
      if (src.forget && e?.code !== 'cancelled' && !signal?.aborted && await src.forget().catch(() => 0) > 0 && e && typeof e === 'object' && e.code !== 'too_large') e.forgotten = true;
      throw e;
    }
  }

  async function loadFrom(src) {
    const configText = await src.text(CONFIG_FILE);
    // an unsupported architecture, a bad field or a model too large for the engine is refused
    // from config.json alone, before the tokenizer and the weights are fetched
    let size;
    try {
      size = engine.checkHubConfig(configText);
    } catch (e) {
      throw aboutFile(e, CONFIG_FILE);
    }
    if (!size.fits) throw tooLarge(size);
    const { config } = size;
    // the weights file's header alone, when the server answers range requests: a model whose
    // tensors the engine would refuse (too large, missing, another shape, a file shorter than its
    // header says) is refused before the file is downloaded
    try {
      const early = await src.header?.((first8) => engine.safetensorsHeaderSize(first8));
      if (early) engine.checkCheckpointHeader(configText, early.bytes, early.fileSize);
    } catch (e) {
      throw e?.code === 'cancelled' ? e : aboutFile(e, 'model.safetensors');
    }
    const family = config.family || familyOf(configText);
    const tokenizer = await tokenizerTexts(src, family);
    const blob = await src.weights();
    const read = async (a, b) => new Uint8Array(await blob.slice(a, b).arrayBuffer());
    if (blob.size < 8) throw hubError('bad_checkpoint', `model.safetensors has ${blob.size} bytes: not a safetensors file`, 'model.safetensors');
    const headerBytes = engine.safetensorsHeaderSize(await read(0, 8));
    const header = await read(0, Math.min(blob.size, headerBytes));
    checkLength(blob, header, headerBytes, src);
    // the file's size: a header that describes more is refused before anything is allocated
    const loader = engine.openCheckpoint(configText, header, blob.size);
    try {
      const total = loader.neededBytes;
      let loaded = 0;
      post({ type: 'progress', phase: 'read', file: 'model.safetensors', loaded, total });
      // one buffer for the whole file (readRanges): the chunks make no garbage
      await readRanges(blob, loader.needed, loader.stagingBytes, (offset, chunk) => {
        checkCancelled();
        loader.feed(offset, chunk);
        loaded += chunk.byteLength;
        post({ type: 'progress', phase: 'read', file: 'model.safetensors', loaded, total });
      });
      model = loader.finish(tokenizer.texts);
    } finally {
      loader.dispose();
    }
    await src.keep?.();
    post({
      type: 'loaded',
      info: {
        config: model.config,
        parameterCount: model.parameterCount,
        maskId: model.maskId,
        files: [CONFIG_FILE, ...tokenizer.files, 'model.safetensors'],
        neededBytes: loader.neededBytes,
        fileBytes: blob.size,
        memoryBytes: engine.memoryBytes(),
      },
    });
  }

  function reply(error, req) {
    post({ type: 'error', req, message: String(error?.message ?? error), code: error?.code ?? 'internal', file: error?.file ?? null, forgotten: Boolean(error?.forgotten) });
  }

  return {
    async onMessage(msg = {}) {
      try {
        if (msg.type === 'load') {
          await load(msg.source);
        } else if (msg.type === 'trace') {
          if (!model) throw hubError('bad_state', 'no model is loaded');
          const trace = model.trace(msg.sentence, { layer: msg.layer, allWeights: msg.allWeights !== false, generated: msg.generated ?? [] });
          post({ type: 'trace', req: msg.req, trace }, [...buffers(trace)]);
        } else if (msg.type === 'backward') {
          if (!model) throw hubError('bad_state', 'no model is loaded');
          const trace = model.backwardTrace({ text: msg.sentence, targets: msg.targets ?? null, scale: msg.scale ?? null, layer: msg.layer ?? 0 });
          post({ type: 'backward', req: msg.req, trace }, [...buffers(trace)]);
        } else if (msg.type === 'sgd') {
          if (!model) throw hubError('bad_state', 'no model is loaded');
          const step = model.sgdStep({ text: msg.sentence, targets: msg.targets ?? null, lr: msg.lr, layer: msg.layer ?? 0, head: msg.head ?? -1 });
          post({ type: 'stepped', req: msg.req, step });
        } else if (msg.type === 'undo') {
          if (!model) throw hubError('bad_state', 'no model is loaded');
          post({ type: 'undone', req: msg.req, steps: model.undoStep() });
        } else if (msg.type === 'memory') {
          post({ type: 'memory', req: msg.req, memoryBytes: engine ? engine.memoryBytes() : 0 });
        } else if (msg.type === 'generate') {
          if (!model) throw hubError('bad_state', 'no model is loaded');
          const token = model.generate(msg.sentence, { ...msg.options, generated: msg.generated ?? [] });
          post({ type: 'generated', req: msg.req, token }, [...buffers(token)]);
        }
      } catch (e) {
        reply(signal?.aborted ? hubError('cancelled', 'the download was cancelled') : e, msg.req);
      }
    },
    /** Frees the model (in the page; a worker's ends with the worker). */
    dispose() {
      model?.dispose();
      model = null;
    },
  };
}
