// What <attention-playground> loads besides its modules. Unbundled (this file),
// the engine loads web/generated/attention_core.js + .wasm and the element links
// style.css next to this file. build_wasm.sh bundles the element into one file,
// web/attention-playground.js, and replaces this module with one that carries the
// Emscripten glue (wasm inlined) and the stylesheet's text.

/** The Emscripten module factory, or null for engine.js's default loader. */
export const moduleFactory = null;
/** The stylesheet's text, or null to link style.css instead. */
export const cssText = null;
export const bundled = false;
/** Where the element's files are: links to index.html and concepts.html start here. */
export const baseUrl = import.meta.url;
/** Shipped checkpoints carried inside the file ({name: () => Uint8Array}); unbundled: none,
 * they are fetched from generated/models/ next to the page. */
export const builtinModels = null;
/** The playground links lead to when the element has no playground-url: baked in at build
 * time (PLAYGROUND_URL=… ./build_wasm.sh), or null for index.html beside this file. */
export const playgroundUrl = null;
