// The cut of a heatmap that does not fit its box: a fade at the right (or
// bottom) edge with "scroll →" ("scroll ↓"), shown while there is more to
// see in that direction. The words sit on a line of their own below the box,
// over no cell, and let pointer events through.

import { el } from '../dom.js';

export function createScrollCues(scroll, id) {
  const right = el('div', 'hm-cue hm-cue-right', { hidden: true, testid: `cue-right-${id}`, attrs: { 'aria-hidden': 'true' } });
  const down = el('div', 'hm-cue hm-cue-down', { hidden: true, testid: `cue-down-${id}`, attrs: { 'aria-hidden': 'true' } });
  const element = el('div', 'hm-scroll-wrap', {}, scroll, right, down);

  function refresh() {
    const moreRight = scroll.scrollWidth - scroll.clientWidth - scroll.scrollLeft > 3; // the canvas ends with a 2 px margin
    const moreDown = scroll.scrollHeight - scroll.clientHeight - scroll.scrollTop > 3;
    right.hidden = !moreRight;
    down.hidden = !moreDown;
    if (moreRight) right.textContent = 'scroll \u2192';
    if (moreDown) down.textContent = 'scroll \u2193';
    // the box's own description says it is cut (screen readers do not see the fade)
    scroll.dataset.cut = [moreRight ? 'right' : '', moreDown ? 'down' : ''].filter(Boolean).join(' ');
    // the line for the words stays while the map is cut at all (no jump when a scroll hides them)
    element.classList.toggle('is-cut', scroll.scrollWidth - scroll.clientWidth > 3 || scroll.scrollHeight - scroll.clientHeight > 3);
  }

  scroll.addEventListener('scroll', refresh, { passive: true });
  return {
    element,
    /** After a redraw (sizes may have changed). */
    update: refresh,
  };
}
