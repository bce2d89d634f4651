// The clock of the step-by-step animation. It owns requestAnimationFrame and
// nothing else: each frame it reports the progress (0 … 1) through the current
// step; at 1 it asks to advance. It does no work while paused or while the
// page is hidden.
//
//   const clock = createAnimation({ durationMs: (step) => 1500, onFrame, onStepDone });
//   clock.play(); clock.pause(); clock.setSpeed(2);

export function createAnimation({ durationMs, onFrame, onStepDone, onPlayingChange, doc = document }) {
  let playing = false;
  let speed = 1;
  let progress = 1; // within the current step; 1 = the step is shown complete
  let raf = 0;
  let last = null;
  const win = doc.defaultView ?? globalThis;

  function frame(now) {
    raf = 0;
    if (!playing) return;
    if (last !== null) {
      const dt = Math.min(now - last, 100); // a long stall does not skip a step
      progress += (dt * speed) / Math.max(1, durationMs());
    }
    last = now;
    if (progress >= 1) {
      progress = 1;
      onFrame(progress);
      const more = onStepDone(); // false when there is no next step
      if (!more) {
        setPlaying(false);
        return;
      }
      progress = 0;
    }
    onFrame(progress);
    schedule();
  }

  function schedule() {
    if (!raf && playing && !doc.hidden) raf = win.requestAnimationFrame(frame);
  }

  function setPlaying(value) {
    if (playing === value) return;
    playing = value;
    last = null;
    if (!playing && raf) {
      win.cancelAnimationFrame(raf);
      raf = 0;
    }
    onPlayingChange?.(playing);
  }

  function onVisibility() {
    if (doc.hidden) {
      if (raf) win.cancelAnimationFrame(raf);
      raf = 0;
      last = null;
    } else {
      schedule();
    }
  }
  doc.addEventListener('visibilitychange', onVisibility);

  return {
    /** Starts playing the current step from its beginning. */
    play() {
      if (playing) return;
      progress = 0;
      setPlaying(true);
      onFrame(progress);
      schedule();
    },
    /** Stops; the current step is shown complete. */
    pause() {
      if (!playing) return;
      setPlaying(false);
      progress = 1;
      onFrame(progress);
    },
    /** A manual step change while playing restarts the step's clock. */
    restartStep() {
      progress = playing ? 0 : 1;
      last = null;
    },
    setSpeed(value) {
      speed = value > 0 ? value : 1;
    },
    get playing() {
      return playing;
    },
    get progress() {
      return progress;
    },
    destroy() {
      setPlaying(false);
      doc.removeEventListener('visibilitychange', onVisibility);
    },
  };
}
