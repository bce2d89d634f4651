// Notices and errors above the playground: a link that could not be read, an
// engine error (with its own text), a sentence that is empty or too long.

import { el, clear } from './dom.js';

export function createMessages(root, { onDismiss }) {
  root.setAttribute('aria-live', 'polite');
  let key = '';
  return {
    /** messages: [{id, kind: 'error' | 'notice' | 'info', title, text, details?, link?: {href, text}}] */
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
