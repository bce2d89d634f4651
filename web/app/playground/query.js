// Where the selected query goes when the text changes under it: it follows
// its word into an edited sentence (placed once the new trace is there: a
// worker's comes later), stays inside the trace on screen, and in batch mode
// moves off a [PAD] token. The controller's part; the rules themselves are
// rules.js's pure functions.
//
//   const query = createQueryKeeper();
//   query.typed(prevQuery, trace);          // a new sentence was typed (the trace before it)
//   state = query.keep(state, trace, { ready });   // after every change: placed and clamped
//   state = query.changed(state, patch, changed, trace);   // the user's pick, batch-mode padding
//   query.moved                             // {from, to} when batch mode moved it, else null

import { clampToTrace, queryOffPadding, followQuery, queryText } from './rules.js';

export function createQueryKeeper() {
  let word = null; // the word the query is meant to be on (rules.js followQuery), kept across edits
  let pending = null; // {word, query, last}: a new sentence waits for its trace to place the query
  let moved = null; // {from, to} when batch mode moved the query off a [PAD] token

  return {
    get moved() {
      return moved;
    },
    /** A new sentence was typed: the query follows its word into it (tr: the trace before). */
    typed(prevQuery, tr) {
      pending = { word: word ?? (tr ? queryText(tr, prevQuery) : null), query: prevQuery, last: tr ? prevQuery >= tr.tokens.length - 1 : false };
    },
    /**
     * The state with the query placed on its word once the new sentence's trace is on screen
     * (ready: the trace is of the state's sentence), and every index inside the trace.
     */
    keep(state, tr, { ready = true } = {}) {
      let s = state;
      if (pending && tr && ready) {
        // a new sentence's trace is on screen: put the query on its word, else on the model's natural query
        const q = followQuery(tr, pending);
        pending = null;
        if (q !== s.query) s = { ...s, query: q };
      }
      s = clampToTrace(s, tr);
      if (tr && !pending && word === null) word = queryText(tr, s.query);
      return s;
    },
    /** After a change of the state: a query the user picked is its own word; batch mode keeps it off [PAD]. */
    changed(state, patch, changed, tr) {
      if (changed.includes('query')) moved = null;
      if (patch.query !== undefined || changed.includes('model')) word = null;
      if (patch.query !== undefined || !(changed.includes('shown') || changed.includes('batch') || changed.includes('sentences'))) return state;
      const off = queryOffPadding(state, tr);
      moved = off.moved;
      return off.state;
    },
  };
}
