// Keeping the figure in view: after a step change the user asked for (a step
// button, ← or →, Play), the step's main figure is brought in below the sticky
// stepper when it is out of view; smooth unless the user prefers reduced motion.

/**
 * Returns follow({watching}). watching: a step Play advanced to, followed only
 * while the panel covers the middle of the window, so a reader elsewhere on the
 * page is not pulled away. reveal({top, smooth}) is the panel's (views/panel.js).
 */
export function createFollower(win, { panel, stepper, reveal }) {
  return function follow({ watching = false } = {}) {
    win.requestAnimationFrame(() => {
      if (watching) {
        const r = panel.getBoundingClientRect();
        if (r.bottom <= win.innerHeight / 2 || r.top >= win.innerHeight / 2) return;
      }
      // what covers the top of the page: the stepper while it sticks, else nothing above its bottom
      const card = stepper.closest('.card-stepper') ?? stepper;
      let top = 0;
      if (!card.hidden) top = win.getComputedStyle(card).position === 'sticky' ? card.offsetHeight : Math.max(0, card.getBoundingClientRect().bottom);
      reveal({ top, smooth: !win.matchMedia('(prefers-reduced-motion: reduce)').matches });
    });
  };
}
