// The benchmark's one way of streaming a Hub checkpoint into the engine, the way
// the page's worker does (web/app/hub/runner.js): the header first, then only the
// byte ranges the loader needs, in chunks of its staging size. Used in Node
// (bench/pretrained_node.mjs) and, as source text, in Chromium's page
// (bench/pretrained_page.mjs), so it imports nothing.
//
//   const model = await streamCheckpoint(engine, read, configText, tokenizerJson, fileSize);
//   read(begin, end) → Uint8Array (or a Promise of one) of the file's bytes [begin, end)

export async function streamCheckpoint(engine, read, configText, tokenizerJson, fileSize) {
  const headerBytes = engine.safetensorsHeaderSize(await read(0, 8));
  const loader = engine.openCheckpoint(configText, await read(0, headerBytes), fileSize);
  try {
    for (const { begin, end } of loader.needed) {
      for (let a = begin; a < end; a += loader.stagingBytes) loader.feed(a, await read(a, Math.min(end, a + loader.stagingBytes)));
    }
    return loader.finish({ tokenizerJson });
  } finally {
    loader.dispose();
  }
}
