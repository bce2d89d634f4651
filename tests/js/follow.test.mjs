// The playground's follow glide (web/app/playground/follow.js) on a stand-in window whose
// animation frames the test runs by hand: the glide reaches its target, the
// user's input stops it, and a scroll it did not make ends it where that scroll
// left the page (a script's scrollIntoView came undone by the glide's last
// frames, which move the page by less than a pixel: the security test's lost tooltip).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createFollower } from '../../web/app/playground/follow.js';

/** A window with a scroll position, frames run by frame(ms), and listeners fired by fire(type). */
function standIn({ by }) {
  const frames = new Map();
  const listeners = new Map();
  let id = 0;
  let clock = 1000;
  const win = {
    scrollX: 0,
    scrollY: 0,
    innerHeight: 900,
    scrollTo({ top }) { win.scrollY = Math.round(top); }, // a browser keeps whole pixels here
    scrollBy({ top }) { win.scrollY += top; },
    requestAnimationFrame(f) { id += 1; frames.set(id, f); return id; },
    cancelAnimationFrame(k) { frames.delete(k); },
    addEventListener(type, f) { listeners.set(type, [...(listeners.get(type) ?? []), f]); },
    matchMedia: () => ({ matches: false }),
    getComputedStyle: () => ({ position: 'sticky' }),
  };
  const card = { hidden: false, offsetHeight: 60, getBoundingClientRect: () => ({ bottom: 60 }) };
  const stepper = { closest: () => card };
  const panel = { getBoundingClientRect: () => ({ top: 0, bottom: 900 }) };
  const follow = createFollower(win, { panel, stepper, offset: () => (win.scrollY === 0 ? by : 0) });
  return {
    win,
    follow,
    /** Runs the pending animation frames, ms after the last. */
    frame(ms = 16) {
      clock += ms;
      const due = [...frames.values()];
      frames.clear();
      for (const f of due) f(clock);
    },
    pending: () => frames.size,
    fire(type) { for (const f of listeners.get(type) ?? []) f(); },
  };
}

test('follow: the glide moves the page from the first frame on and ends at the figure', () => {
  const s = standIn({ by: 400 });
  s.follow();
  s.frame();
  assert.ok(s.win.scrollY > 0, 'the frame that decides to scroll moves the page');
  for (let k = 0; k < 60 && s.pending(); k++) s.frame();
  assert.equal(s.win.scrollY, 400);
  assert.equal(s.pending(), 0);
});

test('follow: a press, wheel, touch or key stops the glide where it is', () => {
  for (const type of ['pointerdown', 'wheel', 'touchstart', 'keydown']) {
    const s = standIn({ by: 400 });
    s.follow();
    s.frame();
    s.frame();
    const at = s.win.scrollY;
    s.fire(type);
    for (let k = 0; k < 60; k++) s.frame();
    assert.equal(s.win.scrollY, at, type);
    assert.ok(at > 0 && at < 400, `${type}: stopped on the way (${at})`);
  }
});

test('follow: a scroll the glide did not make ends it, even in the last frames that move less than a pixel', () => {
  for (const after of [1, 5, 12]) {
    const s = standIn({ by: 400 });
    s.follow();
    for (let k = 0; k < after; k++) s.frame();
    assert.ok(s.pending() > 0, `still gliding after ${after} frames`);
    s.win.scrollY = 515; // a script scrolls an element into view
    for (let k = 0; k < 60; k++) s.frame();
    assert.equal(s.win.scrollY, 515, `after ${after} frames: the page stays where the other scroll took it`);
    assert.equal(s.pending(), 0);
  }
});
