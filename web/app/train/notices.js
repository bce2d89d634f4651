// The training lab's messages: one notice per id (a newer one replaces it), drawn
// by views/messages.js; errors stay until dismissed unless they say otherwise.
//
//   const notices = createNotices(root);
//   notices.notify('file', 'error', 'That file could not be loaded:', 'it is empty.', { dismissible: true });
//   notices.clear('file');

import { createMessages } from '../kit/messages.js';

export function createNotices(root) {
  const shown = new Map(); // id → message
  const messages = createMessages(root, {
    onDismiss(id) {
      shown.delete(id);
      draw();
    },
  });
  function draw() {
    messages.update([...shown.values()]);
  }
  return {
    notify(id, kind, title, text, extra = {}) {
      shown.set(id, { id, kind, title, text, dismissible: kind !== 'error' || extra.dismissible !== false, ...extra });
      draw();
    },
    clear(id) {
      if (shown.delete(id)) draw();
    },
  };
}
