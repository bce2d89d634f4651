// "Did any of these inputs change since last time?" for the heatmap's caches.
// Inputs are compared by identity (Object.is), so a cache key is the list of
// the objects and numbers a result depends on, never a global id table.
//
//   const imageDeps = createDeps();
//   if (imageDeps.changed([m.matrix, m.mask, scale])) repaint();

export function createDeps() {
  let last = null;
  return {
    /** True (and remembers deps) when deps differ from the previous call's. */
    changed(deps) {
      if (last && last.length === deps.length && deps.every((d, i) => Object.is(d, last[i]))) return false;
      last = deps.slice();
      return true;
    },
    /** Forgets the last deps: the next changed() is true. */
    reset() {
      last = null;
    },
  };
}
