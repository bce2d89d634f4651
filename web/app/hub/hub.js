// Pretrained models from the Hugging Face Hub (or a folder of its files) on
// the page: each lives in its own worker (worker.js), which fetches, streams
// and traces; this module starts it and relays its progress and requests (the
// playground's source of such a model, playground/sources/pretrained.js, turns
// its traces into the step data).
//
//   const m = await openPretrained({ kind: 'hub', base, id }, { onProgress, signal });
//   const raw = await m.rawTrace('Hello world', 0);    // the worker's trace of layer 0 in full
//   const token = await m.generate('Hello', [], { sample: false });   // the next token (GPT-2), its KV cache in the worker
//   m.dispose();                                        // ends the worker and frees the model
//
// A model name in the picker and the URL: "hf:<id>" (a link reopens it; the
// files come from Cache Storage after the first visit) or "local:<name>" for
// dropped files (a link cannot bring those back: drop them again).

import { parseHubId, hubError, DEFAULT_HUB_BASE, isHubName, isUrlName, isLocalName, isPretrainedName, modelFolderUrl } from './source.js';
import { createHubRunner } from './runner.js';
import { familyInfo } from '../../families.js';

export { parseHubId, DEFAULT_HUB_BASE, isHubName, isUrlName, isLocalName, isPretrainedName, modelFolderUrl };

/** Above this many characters only the layer on screen sends its heads (the model view needs
 * all layers: 12 layers × 12 heads × T² floats, 150 MB at T = 512). */
export const ALL_LAYERS_MAX_CHARS = 1024;


/** "GPT-2 (openai-community/gpt2)" for the picker. */
export function pretrainedLabel(name) {
  if (isHubName(name)) return `${name.slice(3)} (Hub)`;
  if (isUrlName(name)) return `${decodeURI(new URL(name.slice(4)).pathname).split('/').filter(Boolean).pop() ?? 'model'} (${new URL(name.slice(4)).host})`;
  if (isLocalName(name)) return `${name.slice(6)} (your files)`;
  return name;
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** What the page says of a load that failed: the error's message, and that the cached copy went when it did. */
export function failureText(e) {
  const text = String(e?.message ?? e);
  return e?.forgotten ? `${text}. The copy of its files this browser kept was removed: Download again fetches them anew` : text;
}

/** A worker's error reply as an Error with its code, file and whether the cache forgot the model. */
function replyError(msg) {
  return Object.assign(new Error(msg.message), { code: msg.code, file: msg.file ?? null, forgotten: Boolean(msg.forgotten) });
}

/**
 * Hub ids of checkpoints published as trained by their authors (each model card says on
 * what), lower case. Only these are described as trained: any other file's weights may be
 * anything. A bare legacy id (the Hub's old names, before their organisations) is the same
 * model as the one here that ends in "/" and it.
 */
export const KNOWN_TRAINED = Object.freeze(new Set([
  'openai-community/gpt2', 'openai-community/gpt2-medium', 'openai-community/gpt2-large', 'openai-community/gpt2-xl', 'distilbert/distilgpt2',
  'google-bert/bert-base-uncased', 'google-bert/bert-base-cased', 'google-bert/bert-large-uncased', 'google-bert/bert-large-cased',
  'huggingfacetb/smollm2-135m', 'huggingfacetb/smollm2-135m-instruct', 'huggingfacetb/smollm2-360m', 'huggingfacetb/smollm2-360m-instruct',
  'qwen/qwen2.5-0.5b', 'qwen/qwen2.5-0.5b-instruct', 'qwen/qwen3-0.6b', 'tinyllama/tinyllama-1.1b-chat-v1.0',
]));

const isKnownTrained = (id) => {
  const key = id.toLowerCase();
  return KNOWN_TRAINED.has(key) || (!key.includes('/') && [...KNOWN_TRAINED].some((k) => k.endsWith(`/${key}`)));
};

/**
 * What is known of a pretrained model's weights: trained by its authors (a known Hub id from
 * the Hub), else only where they come from. base: where its hf: files came from (a mirror may
 * serve anything under a known id).
 */
export function weightsAbout(name, base = DEFAULT_HUB_BASE) {
  const engine = 'Everything is computed in your browser by a C++ engine compiled to WebAssembly.';
  const id = isHubName(name) ? name.slice(3) : null;
  if (id && isKnownTrained(id) && base !== DEFAULT_HUB_BASE) {
    return `${id}, read from ${new URL(base).origin}, a copy of the Hub: on the Hub, ${id} holds weights its authors trained on large amounts of text; whether this copy holds the same, its files do not say. ${engine}`;
  }
  if (id && isKnownTrained(id)) {
    return `${id}: weights its authors trained on large amounts of text (its model card on the Hub says which), read here from the model\u2019s own files. ${engine}`;
  }
  const from = id ? `${id} on the Hub` : isUrlName(name) ? name.slice(4) : 'your files';
  return `Weights read from the model\u2019s own files (${from}). The files do not say how they were made (trained, or random as in a test checkpoint), so this page does not claim they learned anything. ${engine}`;
}

/** The one line about a loaded model: what it is and how big. */
export function pretrainedAbout(name, info) {
  const c = info.config;
  const family = familyInfo(c.family)?.title ?? c.family;
  const from = isHubName(name) ? `${name.slice(3)} from the Hugging Face Hub` : isUrlName(name) ? `from ${name.slice(4)}` : 'your files';
  return `A pretrained ${family} model (${from}), run by our engine in this page: ${plural(c.layers, 'layer')} \u00d7 ${plural(c.heads, 'head')}, C = ${c.dModel}, vocabulary ${c.vocab.toLocaleString('en-US')}, ${info.parameterCount.toLocaleString('en-US')} parameters.`;
}

/** Where a model name's files come from: {kind: 'hub', base, id} or {kind: 'url', url}; null for dropped files. */
export function sourceOf(name, hubBase = DEFAULT_HUB_BASE) {
  if (isHubName(name)) return { kind: 'hub', base: hubBase, id: name.slice(3) };
  if (isUrlName(name)) return { kind: 'url', url: name.slice(4) };
  return null;
}

/** The same as openPretrained, without a worker (the one-file element has no worker file beside it). */
function openInPage(source, { onProgress, signal, loadEngine }) {
  return new Promise((resolve, reject) => {
    let waiting = null; // a trace request's {resolve, reject}
    const runner = createHubRunner((msg) => {
      if (msg.type === 'progress') onProgress?.(msg);
      else if (msg.type === 'loaded') resolve(handleOf(msg.info));
      else if (msg.type === 'trace') waiting?.resolve(msg.trace);
      else if (msg.type === 'generated') waiting?.resolve(msg.token);
      else if (msg.type === 'backward') waiting?.resolve(msg.trace);
      else if (msg.type === 'stepped') waiting?.resolve(msg.step);
      else if (msg.type === 'undone') waiting?.resolve(msg.steps);
      else if (msg.type === 'error' && msg.req) waiting?.reject(Object.assign(new Error(msg.message), { code: msg.code }));
      else if (msg.type === 'error') reject(replyError(msg));
    }, { loadEngine, signal });
    let next = 1;
    const handleOf = (info) => ({
      info,
      // the page computes in place: nothing runs once a request has answered
      busy: () => false,
      rawTrace(sentence, layer, { allWeights = true, generated = [] } = {}) {
        return new Promise((res, rej) => {
          waiting = { resolve: res, reject: rej };
          runner.onMessage({ type: 'trace', req: next++, sentence, layer, allWeights, generated });
        });
      },
      generate(sentence, generated, options) {
        return new Promise((res, rej) => {
          waiting = { resolve: res, reject: rej };
          runner.onMessage({ type: 'generate', req: next++, sentence, generated, options });
        });
      },
      ...learnRequests((msg) => new Promise((res, rej) => {
        waiting = { resolve: res, reject: rej };
        runner.onMessage({ ...msg, req: next++ });
      })),
      dispose: () => runner.dispose(),
    });
    runner.onMessage({ type: 'load', source });
  });
}

/**
 * Starts a worker and loads the model in it (inPage: in this page, on loadEngine's engine). source: {kind: 'hub', base, id} or
 * {kind: 'files', files: File[]}. onProgress({phase, file, loaded, total, cached}).
 * signal (AbortSignal): cancels (the worker ends; the promise rejects with code cancelled).
 */
export function openPretrained(source, { onProgress = null, signal = null, inPage = false, loadEngine = null, workerUrl = new URL('./worker.js', import.meta.url) } = {}) {
  if (inPage) return openInPage(source, { onProgress, signal, loadEngine });
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(hubError('cancelled', 'the download was cancelled'));
      return;
    }
    const worker = new Worker(workerUrl, { type: 'module' });
    let settled = false;
    const fail = (e) => {
      if (settled) return;
      settled = true;
      worker.terminate();
      reject(e);
    };
    const onAbort = () => fail(hubError('cancelled', 'the download was cancelled'));
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.onerror = (e) => fail(hubError('internal', `the model's worker stopped: ${e.message ?? 'an error'}`));
    worker.onmessage = (event) => {
      const msg = event.data;
      if (msg.type === 'progress') onProgress?.(msg);
      else if (msg.type === 'error') fail(replyError(msg));
      else if (msg.type === 'loaded') {
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        resolve(pretrainedHandle(worker, msg.info));
      }
    };
    worker.postMessage({ type: 'load', source });
  });
}

/**
 * The Learn steps' requests (runner.js's backward, sgd, undo) over ask(msg) → the reply:
 * backward({sentence, targets, scale, layer}) → backwardTrace's object, sgd({sentence, targets,
 * lr, layer, head}) → sgdStep's, undo() → how many steps remain.
 */
function learnRequests(ask) {
  return {
    backward: ({ sentence, targets = null, scale = null, layer = 0 }) => ask({ type: 'backward', sentence, targets, scale, layer }),
    sgd: ({ sentence, targets = null, lr, layer = 0, head = -1 }) => ask({ type: 'sgd', sentence, targets, lr, layer, head }),
    undo: () => ask({ type: 'undo' }),
  };
}

/** The page's handle on a loaded model's worker. */
function pretrainedHandle(worker, info) {
  let next = 1;
  const waiting = new Map(); // req → {resolve, reject}
  worker.onmessage = (event) => {
    const msg = event.data;
    const w = waiting.get(msg.req);
    if (!w) return;
    waiting.delete(msg.req);
    if (msg.type === 'trace' || msg.type === 'backward') w.resolve(msg.trace);
    else if (msg.type === 'generated') w.resolve(msg.token);
    else if (msg.type === 'stepped') w.resolve(msg.step);
    else if (msg.type === 'undone') w.resolve(msg.steps);
    else w.reject(Object.assign(new Error(msg.message), { code: msg.code }));
  };
  worker.onerror = (e) => {
    for (const w of waiting.values()) w.reject(hubError('internal', `the model's worker stopped: ${e.message ?? 'an error'}`));
    waiting.clear();
  };
  return {
    info,
    /** Whether the worker is computing a request the page still waits for (a trace, a backward, a token). */
    busy: () => waiting.size > 0,
    /** The worker's trace of one sentence (pretrained.js's PretrainedModel.trace). */
    rawTrace(sentence, layer, { allWeights = true, generated = [] } = {}) {
      const req = next++;
      return new Promise((resolve, reject) => {
        waiting.set(req, { resolve, reject });
        worker.postMessage({ type: 'trace', req, sentence, layer, allWeights, generated });
      });
    },
    /** The next token after the sentence, in the worker (pretrained.js's PretrainedModel.generate). */
    generate(sentence, generated, options) {
      const req = next++;
      return new Promise((resolve, reject) => {
        waiting.set(req, { resolve, reject });
        worker.postMessage({ type: 'generate', req, sentence, generated, options });
      });
    },
    ...learnRequests((msg) => {
      const req = next++;
      return new Promise((resolve, reject) => {
        waiting.set(req, { resolve, reject });
        worker.postMessage({ ...msg, req });
      });
    }),
    dispose() {
      worker.terminate();
      for (const w of waiting.values()) w.reject(hubError('cancelled', 'the model was closed'));
      waiting.clear();
    },
  };
}
