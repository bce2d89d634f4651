// The step list and the transport: Previous step, Play/Pause, Next step,
// Speed, and a bar showing how far the current step has played. `steps` is
// the step list (steps.js): each entry's id, short label and title; `learnSteps`
// the Learn part's (learn/steps.js), a second, smaller row after them (Previous
// and Next move inside the part of the current step); `speeds` the speed
// choices (the state's SPEEDS). `extraSteps` (steps.js's EXTRA_STEPS): steps only some
// models have (RoPE), each a button after the step it follows, shown when it applies to the
// trace, with its own number ("4b") so that the twelve keep theirs.
// During the guided tour the transport gives way to the tour's own row: where
// the tour is ("3 of 12"), Back, Next (named after the step it leads to) and
// End tour. The tour waits for Next: it never moves while the learner reads.

import { el, field, setValue } from '../../kit/dom.js';
import { formatSpeed } from '../../kit/format.js';

export function createStepper(root, { steps, extraSteps = [], learnSteps = [], speeds, onStep, onPrev, onNext, onTogglePlay, onSpeed, onTourEnd = () => {} }) {
  const buttons = new Map();
  const extraItems = new Map(); // an extra step's id → its list item (hidden unless it applies)
  function button(name, number, short, title, word) {
    const b = el('button', 'step-btn', { type: 'button', dataset: { step: name } },
      el('span', 'step-n', { text: number }),
      el('span', 'step-label', { text: short }));
    b.title = title;
    b.setAttribute('aria-label', `${word} ${number}: ${title}`);
    b.addEventListener('click', () => onStep(name));
    buttons.set(name, b);
    return el('li', null, {}, b);
  }
  function stepList(part, className, word) {
    const ol = el('ol', className);
    part.forEach(({ id: name, short, title }, i) => {
      ol.append(button(name, String(i + 1), short, title, word));
      for (const x of extraSteps) {
        if (x.after !== name) continue;
        const li = button(x.id, x.number, x.short, x.title, word);
        li.hidden = true;
        extraItems.set(x.id, li);
        ol.append(li);
      }
    });
    return ol;
  }
  const list = stepList(steps, 'steps', 'Step');
  const nav = el('nav', 'steps-nav', { attrs: { 'aria-label': 'Steps of the computation' } }, list);
  const learnList = stepList(learnSteps, 'steps-learn', 'Learn step');
  const learnNav = el('nav', 'steps-nav steps-nav-learn', { attrs: { 'aria-label': 'Learn: the backward pass' } }, el('span', 'steps-part', { text: 'Learn' }), learnList);
  learnNav.hidden = learnSteps.length === 0;
  let forwardIds = steps.map((s) => s.id);
  const learnIds = learnSteps.map((s) => s.id);
  const partOf = (step) => (learnIds.includes(step) ? learnIds : forwardIds);

  // on a narrow stepper "Previous step" shows as its arrow (the words stay its accessible name)
  const prev = el('button', 'btn btn-prev', { type: 'button', testid: 'prev' }, el('span', 'icon', { text: '\u25c0', attrs: { 'aria-hidden': 'true' } }), el('span', 'btn-words', { text: ' Previous step' }));
  const play = el('button', 'btn btn-primary', { type: 'button', testid: 'play' });
  const playIcon = el('span', 'icon', { attrs: { 'aria-hidden': 'true' } });
  const playText = el('span', null);
  play.append(playIcon, ' ', playText);
  const next = el('button', 'btn', { type: 'button', testid: 'next' }, 'Next step ', el('span', 'icon', { text: '\u25b6', attrs: { 'aria-hidden': 'true' } }));
  const speed = el('select', 'control');
  for (const s of speeds) speed.append(el('option', null, { value: String(s), text: formatSpeed(s) }));
  prev.addEventListener('click', onPrev);
  next.addEventListener('click', onNext);
  play.addEventListener('click', onTogglePlay);
  speed.addEventListener('change', () => onSpeed(Number(speed.value)));
  const speedField = field('Speed', speed, { className: 'field field-inline' });
  const transport = el('div', 'transport', {}, prev, play, next, speedField);
  const bar = el('div', 'progress-fill');
  const progress = el('div', 'progress', { attrs: { 'aria-hidden': 'true' } }, bar);

  // the tour's row (shown instead of the transport while the tour is on)
  const tourWhere = el('span', 'tour-where', { testid: 'tour-where', attrs: { role: 'status', 'aria-live': 'polite' } });
  const tourBack = el('button', 'btn btn-prev', { type: 'button', testid: 'tour-back' }, el('span', 'icon', { text: '\u25c0', attrs: { 'aria-hidden': 'true' } }), el('span', 'btn-words', { text: ' Back' }));
  const tourNextText = el('span', 'tour-next-text');
  const tourNext = el('button', 'btn btn-primary tour-next', { type: 'button', testid: 'tour-next' }, tourNextText, ' ', el('span', 'icon', { text: '\u25b6', attrs: { 'aria-hidden': 'true' } }));
  // on a phone End tour shows as its ✕ (the words stay its accessible name), so the row stays one line
  const tourEnd = el('button', 'btn btn-prev tour-end', { type: 'button', testid: 'tour-end' }, el('span', 'icon', { text: '\u2715', attrs: { 'aria-hidden': 'true' } }), el('span', 'btn-words', { text: ' End tour' }));
  tourBack.addEventListener('click', onPrev);
  tourNext.addEventListener('click', () => (tourNext.dataset.last ? onTourEnd() : onNext()));
  tourEnd.addEventListener('click', onTourEnd);
  const tourRow = el('div', 'transport tour-row', { testid: 'tour-row', attrs: { role: 'group', 'aria-label': 'Guided tour' } }, tourWhere, tourBack, tourNext, tourEnd);
  tourRow.hidden = true;
  root.append(nav, learnNav, transport, tourRow, progress);

  /**
   * On a phone the steps are one scrolling strip: scroll it (not the page) so the current step
   * and the next one (where Next goes) are whole, none cut at the strip's edge by the Learn row.
   */
  function showCurrent(b) {
    const strip = b?.closest('ol');
    if (!b || strip.scrollWidth <= strip.clientWidth) return;
    const r = b.getBoundingClientRect();
    let li = b.closest('li')?.nextElementSibling;
    while (li?.hidden) li = li.nextElementSibling;
    const next = li?.querySelector('button')?.getBoundingClientRect() ?? r;
    const box = strip.getBoundingClientRect();
    const pad = 4;
    if (next.right - r.left > box.width - 2 * pad) strip.scrollLeft += r.left - box.left - (box.width - r.width) / 2;
    else if (r.left < box.left + pad) strip.scrollLeft += r.left - box.left - pad;
    else if (next.right > box.right - pad) strip.scrollLeft += next.right - box.right + pad;
  }

  let last = {};
  return {
    /** Puts the keyboard on the tour's Next (without scrolling): Enter then moves on. */
    focusTour() {
      tourNext.focus({ preventScroll: true });
    },
    update(trace, v) {
      const { step } = v.state;
      // random weights have no loss: no Learn row (a link to a Learn step still shows it, and the panel says why)
      if (trace) learnNav.hidden = learnIds.length === 0 || (!trace.model && !learnIds.includes(step));
      root.classList.toggle('is-playing', v.playing);
      // the extra steps this trace has (a link may open one it has not: shown while it is the step)
      const shownIds = [];
      for (const s of steps) {
        shownIds.push(s.id);
        for (const x of extraSteps) {
          if (x.after !== s.id) continue;
          const shown = x.applies(trace) || x.id === step;
          extraItems.get(x.id).hidden = !shown;
          if (shown) shownIds.push(x.id);
        }
      }
      const changedList = shownIds.join() !== forwardIds.join();
      forwardIds = shownIds;
      if (last.step !== step || changedList) {
        for (const [name, b] of buttons) {
          if (name === step) b.setAttribute('aria-current', 'step');
          else b.removeAttribute('aria-current');
        }
        showCurrent(buttons.get(step));
        const ids = partOf(step);
        const i = ids.indexOf(step);
        prev.disabled = i === 0;
        next.disabled = i === ids.length - 1;
        // Play walks the forward steps; the Learn part is stepped by hand
        play.disabled = ids !== forwardIds && !v.playing;
      }
      if (last.playing !== v.playing) {
        playIcon.textContent = v.playing ? '\u275a\u275a' : '\u25b6';
        playText.textContent = v.playing ? 'Pause' : 'Play';
        play.setAttribute('aria-pressed', v.playing ? 'true' : 'false');
      }
      const tour = v.tour;
      transport.hidden = Boolean(tour);
      tourRow.hidden = !tour;
      progress.hidden = Boolean(tour);
      if (tour && (last.tourStep !== step || !last.tour)) {
        const i = forwardIds.indexOf(step);
        const final = i === forwardIds.length - 1;
        tourWhere.textContent = `Tour \u00b7 ${i + 1} of ${forwardIds.length}`;
        tourBack.disabled = i <= 0;
        tourNextText.textContent = final ? 'Finish' : `Next: ${steps[i + 1].short}`;
        tourNext.setAttribute('aria-label', final ? 'Finish the tour' : `Next: step ${i + 2}, ${steps[i + 1].title}`);
        if (final) tourNext.dataset.last = '1';
        else delete tourNext.dataset.last;
      }
      setValue(speed, v.state.speed);
      const p = v.playing ? v.progress : 0;
      if (last.p !== p) bar.style.transform = `scaleX(${p.toFixed(4)})`;
      last = { step, playing: v.playing, p, tour: Boolean(tour), tourStep: step };
    },
  };
}
