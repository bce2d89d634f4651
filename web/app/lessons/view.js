// The lessons' screens: the list, one screen of a lesson, and the teacher's
// views (every lesson's links; a printable sheet per lesson). Each function is
// given the lesson, its facts (the engine's numbers) and what the learner did,
// and returns a node; the controller (lessons.js) wires the callbacks.

import { el } from '../kit/dom.js';
import { partsNode, predictFigure, revealFigure } from './figures.js';
import { SCREENS } from './registry.js';

const VERDICT_TITLE = { right: 'You got it.', myth: 'That is the misconception.', wrong: 'Not quite.', skipped: 'Skipped.' };

function button(text, onClick, { testid, primary = false, disabled = false } = {}) {
  const b = el('button', `btn${primary ? ' btn-primary' : ''}`, { type: 'button', text, testid });
  b.disabled = disabled;
  b.addEventListener('click', onClick);
  return b;
}

/** The seven lessons, each with its misconception and whether it is done. */
export function listView(lessons, done, { href, problems = [] }) {
  const box = el('div', 'ls-list-page', { testid: 'lesson-list' });
  if (problems.length) box.append(el('div', 'ls-problem', { attrs: { role: 'alert' }, testid: 'lesson-problem' }, ...problems.map((t) => el('p', null, { text: t }))));
  box.append(el('h2', 'ls-h', { text: 'Seven lessons: predict, then see the real numbers', attrs: { tabindex: '-1' } }),
    el('p', 'ls-lead', { text: `Each lesson asks you to guess before the model answers: a click, a drag, a few seconds. ${done.size} of ${lessons.length} done in this browser.` }));
  const ol = el('ol', 'ls-list');
  lessons.forEach((l) => {
    const a = el('a', 'ls-list-link', { href: href({ lesson: l.id, screen: 0 }), text: l.title, testid: `lesson-link-${l.id}` });
    ol.append(el('li', `ls-list-item${done.has(l.id) ? ' ls-done' : ''}`, {}, a,
      done.has(l.id) ? el('span', 'ls-tag ls-tag-done', { text: '\u2713 done' }) : null,
      el('span', 'ls-list-myth', { text: `Myth: \u201c${l.myth}\u201d` })));
  });
  box.append(ol, el('p', 'ls-lead', {}, el('a', 'ap-link', { href: href({ teacher: true }), text: 'For teachers: every screen\u2019s link, the answers and a printable sheet' })));
  return box;
}

/** Where the lesson is: "Lesson 4 of 7" and the five screens (the current one marked). */
function header(lesson, index, total, screen, go, fixed, href) {
  const steps = el('ol', 'ls-steps', { attrs: { 'aria-label': 'Screens of this lesson' } });
  SCREENS.forEach((s, i) => {
    const b = el('button', 'ls-step', { type: 'button', text: `${i + 1}. ${s.label}`, dataset: { screen: String(i) } });
    if (i === screen) b.setAttribute('aria-current', 'step');
    b.addEventListener('click', () => go(i));
    steps.append(el('li', null, {}, b));
  });
  return el('header', 'ls-head', {},
    fixed ? null : el('p', 'ls-back', {}, el('a', 'ap-link', { href: href({}), text: '\u2190 All lessons', testid: 'all-lessons' })),
    el('p', 'ls-where', { text: `Lesson ${index + 1} of ${total} \u00b7 screen ${screen + 1} of ${SCREENS.length}` }),
    el('h2', 'ls-h', { text: lesson.title, attrs: { tabindex: '-1' }, testid: 'lesson-title' }),
    steps);
}

/**
 * One screen of a lesson. s: {facts, guess (working), result (after reveal: {verdict, parts, extra}),
 * submitted (the guess revealed), answer (check choice id)}; on: {go(screen), setGuess, reveal(skip), answer(id), next()}.
 */
export function screenView(lesson, s, { index, total, screen, fixed, on, href, linkFor }) {
  const box = el('section', 'ls-screen', { dataset: { lesson: lesson.id, screen: SCREENS[screen].id }, testid: 'lesson-screen' });
  box.append(header(lesson, index, total, screen, on.go, fixed, href));
  const f = { ...s.facts, ...(s.result?.extra ?? {}) };
  const body = el('div', 'ls-body');
  const nav = el('div', 'ls-nav');
  if (screen > 0) nav.append(button('\u2190 Back', () => on.go(screen - 1), { testid: 'back' }));
  const id = SCREENS[screen].id;
  if (id === 'question') {
    body.append(partsNode('p', 'ls-question', lesson.question, f), el('p', 'ls-sentence', { text: lesson.sentence }),
      el('p', 'ls-hint', { text: `Myth to watch for: \u201c${lesson.myth}\u201d. You will guess on the next screen.` }));
    nav.append(button('Next: predict \u2192', () => on.go(1), { primary: true, testid: 'next' }));
  } else if (id === 'predict') {
    const reveal = button('Reveal the answer', () => on.reveal(false), { primary: true, testid: 'reveal', disabled: lesson.predict.kind === 'pick' && !lesson.predict.multi && !(s.guess?.length) });
    body.append(partsNode('p', 'ls-prompt', lesson.predict.prompt, f), predictFigure(lesson, s.facts, s.guess, (g) => {
      on.setGuess(g);
      reveal.disabled = false;
    }));
    nav.append(button('Skip the guess', () => on.reveal(true), { testid: 'skip' }), reveal);
  } else if (id === 'reveal') {
    const r = s.result ?? lesson.classify(null, s.facts);
    const shown = lesson.reveal(f, s.submitted ?? null);
    body.append(el('div', `ls-feedback ls-v-${r.verdict}`, { testid: 'feedback', dataset: { verdict: r.verdict }, attrs: { role: 'status' } },
      el('p', 'ls-verdict', { text: VERDICT_TITLE[r.verdict] }), partsNode('p', 'ls-feedback-text', r.parts, f)),
    revealFigure(shown.figure, f), partsNode('p', 'ls-reveal-text', shown.parts, f));
    nav.append(button('Next: why it matters \u2192', () => on.go(3), { primary: true, testid: 'next' }));
  } else if (id === 'why') {
    body.append(partsNode('p', 'ls-why', lesson.why.parts, f),
      el('ul', 'ls-links', {}, ...lesson.why.links(s.facts).map((l) => el('li', null, {}, el('a', 'ap-link', { href: linkFor(l.href), text: `${l.text} \u2192`, target: fixed ? '_blank' : '', rel: 'noopener' })))));
    nav.append(button('Next: one question \u2192', () => on.go(4), { primary: true, testid: 'next' }));
  } else {
    body.append(checkNode(lesson, s.answer, on.answer));
    if (s.answer) nav.append(fixed ? null : button(index + 1 < total ? 'Next lesson \u2192' : 'All lessons \u2192', () => on.next(), { primary: true, testid: 'next' }));
  }
  box.append(body, nav);
  return box;
}

function checkNode(lesson, answer, onAnswer) {
  const c = lesson.check;
  const box = el('div', 'ls-check', { testid: 'check' }, el('p', 'ls-question', { text: c.question }));
  const group = el('div', 'ls-choices', { attrs: { role: 'group', 'aria-label': 'Your answer' } });
  for (const ch of c.choices) {
    const b = el('button', 'ls-choice', { type: 'button', text: ch.text, dataset: { choice: ch.id } });
    if (answer) {
      b.setAttribute('aria-pressed', String(answer === ch.id));
      if (ch.id === c.answer) b.classList.add('ls-choice-right');
      else if (answer === ch.id) b.classList.add('ls-choice-wrong');
    }
    b.addEventListener('click', () => onAnswer(ch.id));
    group.append(b);
  }
  box.append(group);
  if (answer) {
    const right = answer === c.answer;
    const picked = c.choices.find((x) => x.id === answer);
    box.append(el('div', `ls-feedback ls-v-${right ? 'right' : picked?.myth ? 'myth' : 'wrong'}`, { testid: 'check-feedback', attrs: { role: 'status', tabindex: '-1' } },
      el('p', 'ls-verdict', { text: right ? 'Right.' : picked?.myth ? `That is the misconception \u201c${lesson.myth}\u201d.` : 'Not this one.' }),
      el('p', null, { text: c.explain })));
  }
  return box;
}

/** The teacher's index: every lesson, a link to each screen and to its sheet, and how to embed one. */
export function teacherIndex(lessons, { href, pageHref }) {
  const box = el('div', 'ls-teacher', { testid: 'teacher-index' }, el('h2', 'ls-h', { text: 'For teachers', attrs: { tabindex: '-1' } }),
    el('p', 'ls-lead', { text: 'Link any screen. Embed one lesson with <attention-playground lesson="scale"></attention-playground> or an iframe of embed.html#lesson=scale. Each sheet prints on one page with the answers.' }));
  for (const l of lessons) {
    box.append(el('section', 'ls-teacher-lesson', {}, el('h3', null, { text: l.title }),
      el('p', null, {}, ...SCREENS.map((s, i) => el('a', 'ap-link ls-screen-link', { href: href({ lesson: l.id, screen: i }), text: `${i + 1}. ${s.label}` })),
        el('a', 'ap-link ls-screen-link', { href: href({ lesson: l.id, teacher: true }), text: 'Sheet with answers', testid: `sheet-link-${l.id}` })),
      el('p', 'ls-url', { text: pageHref({ lesson: l.id, screen: 0 }) })));
  }
  return box;
}

/** One lesson on one printable page: the question, the figure with the engine's numbers, the answers. */
export function sheetView(lesson, facts, { href, fixed }) {
  const shown = lesson.reveal(facts, null);
  const c = lesson.check;
  const printBtn = button('Print this sheet', () => globalThis.print?.(), { testid: 'print' });
  return el('article', 'ls-sheet', { testid: 'sheet', dataset: { lesson: lesson.id } },
    el('p', 'ls-back ls-noprint', {}, fixed ? null : el('a', 'ap-link', { href: href({ teacher: true }), text: '\u2190 Teacher\u2019s index' }), ' ', printBtn),
    el('h2', 'ls-h', { text: `Lesson: ${lesson.title}`, attrs: { tabindex: '-1' } }),
    el('h3', null, { text: '1. Question' }), partsNode('p', 'ls-question', lesson.question, facts), el('p', 'ls-sentence', { text: lesson.sentence }),
    el('h3', null, { text: '2. Predict' }), partsNode('p', 'ls-prompt', lesson.predict.prompt, facts),
    el('h3', null, { text: '3. Answer (the engine\u2019s numbers)' }), revealFigure(shown.figure, facts), partsNode('p', 'ls-reveal-text', shown.parts, facts),
    el('p', 'ls-hint', { text: `A guess that shows the misconception \u201c${lesson.myth}\u201d gets feedback naming it.` }),
    el('h3', null, { text: '4. Why it matters' }), partsNode('p', 'ls-why', lesson.why.parts, facts),
    el('h3', null, { text: '5. Check' }), el('p', 'ls-question', { text: c.question }),
    el('ol', 'ls-sheet-choices', { attrs: { type: 'A' } }, ...c.choices.map((ch) => el('li', ch.id === c.answer ? 'ls-choice-right' : null, { text: `${ch.text}${ch.id === c.answer ? ' \u2190 answer' : ch.myth ? ' (the misconception)' : ''}` }))),
    el('p', 'ls-explain', { text: c.explain }));
}
