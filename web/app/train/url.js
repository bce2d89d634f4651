// The training lab's link: the session's state written to the URL hash (a short
// while after a change, at most every few seconds while training) and the text a
// link carries, packed into it.
//
//   const url = createUrlSync(session, lab);
//   url.schedule();                 // write soon (data-url-pending="1" until then)
//   url.takeHash()                  // a pasted link: true when the hash is not the one written

import { serializeTrainState, packText, unpackText } from './state.js';
import { SAMPLE_TEXT } from './sample-text.js';

export function createUrlSync(session, lab) {
  let written = location.hash.replace(/^#/, '');
  let timer = 0;
  let lastWrite = 0;
  let packed = ''; // the corpus packed for the link

  function write() {
    timer = 0;
    delete lab.dataset.urlPending;
    if (location.hash.replace(/^#/, '') !== written) return; // a pasted link is waiting: it wins
    const hash = serializeTrainState(session.state, packed);
    if (hash !== written) {
      written = hash;
      history.replaceState(null, '', `#${hash}`);
    }
    lastWrite = performance.now();
  }
  function cancel() {
    if (!timer) return;
    clearTimeout(timer);
    timer = 0;
    delete lab.dataset.urlPending;
  }

  return {
    write() {
      if (timer) clearTimeout(timer);
      write();
    },
    schedule(delay = 60) {
      if (timer) return;
      lab.dataset.urlPending = '1';
      timer = setTimeout(write, delay);
    },
    /** While training: the step goes into the link every few seconds (replaceState costs a few ms). */
    scheduleAtMostEvery(ms) {
      if (performance.now() - lastWrite > ms) this.schedule();
    },
    /** A hashchange: drops a pending write; true when the hash is a new link (not the one written). */
    takeHash() {
      cancel();
      const hash = location.hash.replace(/^#/, '');
      if (hash === written) return false;
      written = hash;
      return true;
    },
    /** The lab's link (hash) that retrains this model: its settings, seed and step. */
    trainLink(step) {
      return serializeTrainState({ ...session.state, step, ablate: [] }, packed);
    },
    /** The text a link carries, or the sample text with a sentence beside the text field
     * (session.corpusProblem) when the link's text cannot be used (damaged, or longer than the lab takes). */
    async linkCorpus(textParam) {
      session.corpusProblem = null;
      if (!textParam) return SAMPLE_TEXT;
      try {
        return await unpackText(textParam);
      } catch (e) {
        session.corpusProblem = `${e.message.charAt(0).toUpperCase()}${e.message.slice(1)}, so the sample text is shown instead. The link's other settings are used; paste your text and press \u201cTrain on this text\u201d.`;
        return SAMPLE_TEXT;
      }
    },
    /** The state's text, and the same packed for the link (the sample text is not written). */
    async setCorpus(text) {
      session.state.corpus = text;
      packed = text && text !== SAMPLE_TEXT ? await packText(text) : '';
    },
  };
}
