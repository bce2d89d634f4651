// The pretrained-model worker: one per loaded model (hub.js starts it), running
// hub-runner.js, whose header lists the messages. Cancelling a load is the page
// ending this worker.

import { createHubRunner } from './runner.js';

const runner = createHubRunner((msg, transfer = []) => self.postMessage(msg, transfer));
self.onmessage = (event) => runner.onMessage(event.data ?? {});
