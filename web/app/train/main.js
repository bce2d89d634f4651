// The training lab's page (train.html): state from the URL hash → the worker
// (which owns the engine and trains) → the views, and every change back into the
// hash. The page never touches wasm itself; it keeps what it is sent: the curves
// and the timeline (both bounded, see timeline.js).
//
// This module is the wiring: what the page knows is one object, the session
// (session.js); the controller (controller.js) acts on it for the worker client
// (worker-client.js), the link (url.js), the files (files.js), the messages
// (notices.js) and the page (views.js).
//
// Test hooks on <main id="lab">: data-state (loading | ready | error),
// data-step, data-running (1 | 0), data-catching (1 while a link retrains to
// its step), data-heldout (held-out accuracy of the last report),
// data-heldout-samples, data-final (1 once the bigger evaluation after a pause
// has arrived), data-ablated (held-out accuracy with the ablated heads).

import { createTooltip } from '../kit/tooltip.js';
import { createNotation } from '../kit/notation-legend.js';
import { createSession } from './session.js';
import { createNotices } from './notices.js';
import { createWorkerClient } from './worker-client.js';
import { createUrlSync } from './url.js';
import { createFiles } from './files.js';
import { createLabView } from './views.js';
import { createLabController } from './controller.js';

const doc = document;
doc.getElementById('tr-notation')?.append(createNotation());
const lab = doc.getElementById('lab');
const session = createSession();
const notices = createNotices(doc.getElementById('tr-messages'));
const url = createUrlSync(session, lab);
// the view and the files are made below, with the controller's actions; the controller calls them later
const page = {
  render: () => view.render(),
  applyTheme: () => view.applyTheme(),
  build: () => view.build(),
  bootFailed: (text) => view.bootFailed(text),
  saved: (m) => files.saved(m),
};
let controller = null;
const { send } = createWorkerClient({
  onMessage: (m) => controller.handle(m),
  onStartFailure: (text) => controller.fatal(text),
  onError: (m) => controller.onWorkerError(m),
});
controller = createLabController({ session, lab, notices, url, send, page });
const files = createFiles({ session, lab, send, notices, url, applyCorpus: controller.applyCorpus });
const view = createLabView(doc, {
  lab,
  session,
  tooltip: createTooltip(doc.getElementById('tr-tips')),
  actions: { ...controller.actions, loadText: files.loadText, loadModel: files.loadModel },
});
files.bindDrop(doc.body);
window.addEventListener('hashchange', () => controller.onHashChange());
