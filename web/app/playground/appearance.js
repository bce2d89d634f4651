// Theme and size: the root's data-theme attribute, the colour palette read
// from the stylesheet (cached until the theme or the system scheme changes),
// and the panel's width, tracked by a ResizeObserver (reading clientWidth in
// a frame would force a layout).

import { readPalette } from '../kit/palette.js';

/** {apply(theme), palette(), destroy()}; onSchemeChange runs when the system's light/dark changes. */
export function createAppearance(root, win, onSchemeChange) {
  let palette = null;
  let stale = true;
  const media = win.matchMedia('(prefers-color-scheme: dark)');
  const onMedia = () => {
    stale = true;
    onSchemeChange();
  };
  media.addEventListener('change', onMedia);
  return {
    apply(theme) {
      if (theme === 'system') delete root.dataset.theme;
      else root.dataset.theme = theme;
      stale = true;
    },
    palette() {
      if (stale || !palette) {
        palette = readPalette(root);
        stale = false;
      }
      return palette;
    },
    destroy() {
      media.removeEventListener('change', onMedia);
    },
  };
}

/**
 * Calls onWidth(width) once per animation frame at most when the element's
 * rounded width changes; width() is the last one seen. Returns {width, destroy}.
 */
export function watchWidth(win, element, onWidth) {
  let last = 0;
  let raf = 0;
  const observer = new win.ResizeObserver((entries) => {
    const w = Math.round(entries[0].contentRect.width);
    if (w === last) return;
    last = w;
    if (!raf) {
      raf = win.requestAnimationFrame(() => {
        raf = 0;
        onWidth(last);
      });
    }
  });
  observer.observe(element);
  return {
    width: () => last,
    destroy: () => observer.disconnect(),
  };
}
