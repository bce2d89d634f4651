// Keeping the figure in view: after a step change the user asked for (a step
// button, ← or →, Play), the step's main figure is brought in below the sticky
// stepper when it is out of view; a short glide unless the user prefers reduced
// motion.
//
// The glide is ours (a few frames of instant scrolls), not the browser's smooth
// scroll, so that the user's own input stops it where it is: a second step button
// pressed while the page still moved went on moving under the pointer until the
// release (the stepper moves with the page until it sticks), and the click then
// chose no step. A browser's smooth scroll cannot be stopped reliably (Chromium
// ignores an instant scroll to the offset it is passing through).

const STOP_ON = ['pointerdown', 'wheel', 'touchstart', 'keydown'];

/**
 * Returns follow({watching}). watching: a step Play advanced to, followed only
 * while the panel covers the middle of the window, so a reader elsewhere on the
 * page is not pulled away. offset({top}) is the panel's revealOffset
 * (views/panel.js): how far to scroll, 0 when the figure is in view.
 */
export function createFollower(win, { panel, stepper, offset }) {
  let frame = 0; // the pending frame: of a follow, or of the glide
  const stop = () => {
    if (frame) win.cancelAnimationFrame(frame);
    frame = 0;
  };
  for (const type of STOP_ON) win.addEventListener(type, stop, { capture: true, passive: true });

  // The first move is made in the frame that decided to scroll (as if one frame had passed):
  // a frame without motion between that decision and the glide would look like a page at
  // rest to code that waits for two still frames (Playwright's "stable" check), which then
  // acts on a page about to move.
  // A scroll the glide did not make (a script's scrollIntoView, the scrollbar, find in page) ends
  // it where it is: its last frames move the page by less than a pixel, so the page looks at rest,
  // and a later frame would otherwise pull the page back from where the other scroll took it.
  function glide(by, now) {
    const from = win.scrollY;
    const ms = Math.min(450, 180 + Math.abs(by) / 4);
    const t0 = now - 16;
    let at = from; // where the glide's last frame left the page
    const tick = (time) => {
      if (Math.abs(win.scrollY - at) > 1) {
        frame = 0;
        return;
      }
      const t = Math.min(1, Math.max(0, time - t0) / ms);
      win.scrollTo({ left: win.scrollX, top: from + by * (1 - (1 - t) ** 3), behavior: 'instant' });
      at = win.scrollY;
      frame = t < 1 ? win.requestAnimationFrame(tick) : 0;
    };
    tick(now);
  }

  return function follow({ watching = false } = {}) {
    stop();
    frame = win.requestAnimationFrame((now) => {
      frame = 0;
      if (watching) {
        const r = panel.getBoundingClientRect();
        if (r.bottom <= win.innerHeight / 2 || r.top >= win.innerHeight / 2) return;
      }
      // what covers the top of the page: the stepper while it sticks, else nothing above its bottom
      const card = stepper.closest('.card-stepper') ?? stepper;
      let top = 0;
      if (!card.hidden) top = win.getComputedStyle(card).position === 'sticky' ? card.offsetHeight : Math.max(0, card.getBoundingClientRect().bottom);
      const by = offset({ top });
      if (!by) return;
      if (win.matchMedia('(prefers-reduced-motion: reduce)').matches) win.scrollBy({ top: by, behavior: 'instant' });
      else glide(by, now);
    });
  };
}
