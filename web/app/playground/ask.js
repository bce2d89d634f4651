// A pretrained model a link names is fetched only when the reader asks (the
// loader's part, loader.js; its words are messages above the playground). A
// link is anyone's to write: opening one must not make the page ask another
// site for files (a tracker), fill this browser's storage with gigabytes, or
// show someone's files as the site's own. So the page first says which model
// and where from, with nothing fetched; "Check its size" fetches config.json
// (small) and asks the server for the weights' size (a HEAD request); then
// "Download" loads it. A model that loaded here before opens at once: its
// files are in this browser's cache and nothing is asked of the network.
//
//   const ask = createAsk({ engine, render });
//   await ask.wait(source, name, signal);   // resolves once the reader says yes (at once when cached)
//   ask.message()                             // the message bar's question, or null
//   ask.act('look' | 'download')             // its buttons
//   ask.status(name)                          // the step panel's note while the question is open

import { hubError, tooLarge, DEFAULT_HUB_BASE, CONFIG_FILE, WEIGHTS_FILE } from '../hub/source.js';
import { hubSource, urlSource, isCachedModel, fileSize } from '../hub/download.js';
import { familyInfo } from '../../families.js';
import { formatBytes } from '../kit/format.js';

/** Where a model's files come from, in words, and the origin the page would ask. */
export function placeOf(source) {
  if (source.kind === 'hub') {
    const base = source.base ?? DEFAULT_HUB_BASE;
    const origin = new URL(base).origin;
    return { what: `${source.id} on the Hugging Face Hub`, origin: base === DEFAULT_HUB_BASE ? origin : `${origin} (a copy of the Hub the link names)` };
  }
  return { what: `the model in ${source.url}`, origin: new URL(source.url).origin };
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** engine(): the page's engine (config.json is read by it); render(): redraw. */
export function createAsk({ engine, render }) {
  // {source, name, stage: 'ask' | 'looking' | 'sized', about, size, yes, no}: the open question
  let open = null;

  function close(q) {
    if (open === q) open = null;
  }

  /** config.json (kept in the cache once checked) and the weights' size: what the reader decides on. */
  async function lookUp(q, signal) {
    const src = q.source.kind === 'hub' ? hubSource({ base: q.source.base, id: q.source.id, signal }) : urlSource({ url: q.source.url, signal });
    try {
      const [configText, size] = await Promise.all([src.text(CONFIG_FILE), fileSize(q.source, WEIGHTS_FILE, { signal })]);
      let fits;
      try {
        fits = engine().checkHubConfig(configText);
      } catch (e) {
        throw Object.assign(e, { file: CONFIG_FILE });
      }
      // a model too large for the engine: no Download button, and why
      if (!fits.fits) throw tooLarge(fits);
      return { config: fits.config, size };
    } catch (e) {
      // what was kept of a model that cannot load goes (a page served as config.json is never kept);
      // one too large is not worth another try, and not said to be
      if (e?.code !== 'cancelled' && await src.forget().catch(() => 0) > 0 && e?.code !== 'too_large') e.forgotten = true;
      throw e;
    }
  }

  /** config.json and the size, asked for (the reader's "Check its size", or the page's offer clicked). */
  function look(q) {
    q.stage = 'looking';
    lookUp(q, q.signal).then(({ config, size }) => {
      q.config = config;
      q.size = size;
      q.stage = 'sized';
    }, (e) => {
      close(q);
      q.no(e);
    }).finally(render);
  }

  return {
    /**
     * Resolves once the reader asked for the model (at once when its files are in this browser);
     * rejects with code 'cancelled' when signal aborts (another model took its place), or with
     * the error of config.json once looked up.
     */
    async wait(source, name, signal, { offered = false } = {}) {
      if (await isCachedModel(source)) return;
      if (signal.aborted) throw hubError('cancelled', 'the load was cancelled');
      await new Promise((yes, no) => {
        const q = { source, name, stage: 'ask', config: null, size: null, yes, no, signal, offered };
        open = q;
        signal.addEventListener('abort', () => {
          close(q);
          no(hubError('cancelled', 'the load was cancelled'));
          render();
        }, { once: true });
        // the reader clicked the page's offer: the size is what they asked to see
        if (offered) look(q);
        render();
      });
    },

    /** The reader's answer: 'look' (fetch config.json and the size) or 'download'. */
    act(action) {
      const q = open;
      if (!q) return;
      if (action === 'download' && q.stage === 'sized') {
        close(q);
        q.yes();
      } else if (action === 'look' && q.stage === 'ask') look(q);
      render();
    },

    /** The question for the message bar, or null. */
    message() {
      if (!open) return null;
      const { what, origin } = placeOf(open.source);
      const base = { id: 'ask-model', kind: 'info', title: open.offered ? 'A real model, for the sentences the toy models cannot read:' : 'This link names a pretrained model:' };
      if (open.stage !== 'sized') {
        return {
          ...base,
          text: `${what}, whose files come from ${origin}. Nothing is fetched from there until you ask.${open.stage === 'looking' ? ` Asking ${origin} for config.json and the size of the weights\u2026` : ''}`,
          actions: open.stage === 'ask' ? [{ id: 'look', text: 'Check its size', testid: 'ask-look' }] : [],
        };
      }
      const c = open.config;
      const family = familyInfo(c.family)?.title ?? c.family;
      const size = open.size ? `Its weights (${WEIGHTS_FILE}) are ${formatBytes(open.size)}` : `The server does not say how big its weights (${WEIGHTS_FILE}) are (size unknown)`;
      return {
        ...base,
        text: `${what}, from ${origin}: a ${family} model, ${plural(c.layers, 'layer')} \u00d7 ${plural(c.heads, 'head')}, C = ${c.dModel}, vocabulary ${c.vocab.toLocaleString('en-US')}. ${size}; once downloaded, they are kept in this browser.`,
        actions: [{ id: 'download', text: open.size ? `Download ${formatBytes(open.size)}` : 'Download', testid: 'ask-download' }],
      };
    },

    /** The step panel's note while a model waits for the reader (or null). */
    status(name) {
      return open?.name === name ? ['empty', 'This model is not loaded: the note above says where its files come from. Nothing is fetched until you ask.'] : null;
    },
  };
}
