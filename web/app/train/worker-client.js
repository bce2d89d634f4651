// The page's side of the training worker (worker.js owns the engine and trains):
// it starts the worker, sends it messages and hands every reply to onMessage.
//
//   const worker = createWorkerClient({ onMessage, onStartFailure, onError });
//   worker.send({ type: 'play' });
//
// onStartFailure(text): the worker could not start (before its 'ready'); onError(m):
// a later uncaught error, as an error reply {where: 'worker', message, running: false}.

export function createWorkerClient({ onMessage, onStartFailure, onError }) {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  let ready = false;
  worker.onerror = (e) => {
    // before 'ready' the worker could not start; later an uncaught error (the worker wraps every
    // handler, so this is a backstop) is one more error the lab recovers from
    if (!ready) onStartFailure(`the training worker failed to start (${e.message || 'no details'})`);
    else {
      e.preventDefault();
      onError({ where: 'worker', message: e.message || 'an unexpected error', running: false });
    }
  };
  worker.onmessage = (e) => {
    if (e.data?.type === 'ready') ready = true;
    onMessage(e.data);
  };
  return {
    send: (msg, transfer) => worker.postMessage(msg, transfer ?? []),
  };
}
