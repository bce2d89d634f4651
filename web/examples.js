// The examples page's iframe listener: docs/embedding.md's snippet, as a file (works under a strict CSP).
// embed.html posts {type: 'attention-playground:height', height} when its content's height changes.
addEventListener('message', (event) => {
  for (const frame of document.querySelectorAll('iframe.attention-playground')) {
    if (event.source === frame.contentWindow && event.data?.type === 'attention-playground:height'
        && Number.isFinite(event.data.height) && event.data.height > 0) {
      frame.style.height = `${Math.min(event.data.height, 20000)}px`;
    }
  }
});
