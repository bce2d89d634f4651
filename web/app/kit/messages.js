// Notices and errors above the playground: a link that could not be read, an
// engine error (with its own text), a sentence that is empty or too long, and
// a question with its buttons (a model a link names: fetch it?).

import { el, clear } from './dom.js';

/** onDismiss(id): a dismissible message's Dismiss; onAction(id, action): one of a message's buttons. */
export function createMessages(root, { onDismiss, onAction = () => {} }) {
  root.setAttribute('aria-live', 'polite');
  let key = '';
  return {
    /** messages: [{id, kind: 'error' | 'notice' | 'info', title, text, details?, link?: {href, text},
     *  actions?: [{id, text, testid?}] (buttons under the text; a click calls onAction(message id, action id))}] */
    update(messages) {
      const k = JSON.stringify(messages);
      if (k === key) return;
      key = k;
      clear(root);
      for (const m of messages) {
        const body = el('div', 'message-body', {}, el('strong', 'message-title', { text: m.title }), el('span', null, { text: ` ${m.text}` }));
        if (m.link) body.append(' ', el('a', 'ap-link', { href: m.link.href, text: m.link.text, testid: 'message-link' }));
        if (m.details?.length) {
          const list = el('ul', 'message-details');
          for (const d of m.details) list.append(el('li', null, { text: d }));
          body.append(list);
        }
        if (m.actions?.length) {
          const row = el('div', 'message-actions');
          for (const a of m.actions) {
            const b = el('button', 'btn btn-small', { type: 'button', text: a.text, testid: a.testid ?? `message-action-${a.id}` });
            b.addEventListener('click', () => onAction(m.id, a.id));
            row.append(b);
          }
          body.append(row);
        }
        const box = el('div', `message is-${m.kind}`, { testid: `message-${m.kind}`, attrs: { role: m.kind === 'error' ? 'alert' : 'status' } }, body);
        if (m.dismissible) {
          const close = el('button', 'btn btn-quiet message-close', { type: 'button', text: 'Dismiss', attrs: { 'aria-label': `Dismiss: ${m.title}` } });
          close.addEventListener('click', () => onDismiss(m.id));
          box.append(close);
        }
        root.append(box);
      }
    },
  };
}
