// The lessons page's URL: #lesson=<id>&screen=<1…5>, #teacher (every lesson's
// answers and links), #lesson=<id>&teacher (its printable sheet), or nothing (the
// list). Everything read from a link is checked; what cannot be used is named.

import { LESSON_IDS, SCREENS } from './registry.js';

/** What a value from a link looks like when quoted back to the reader: short, no markup meaning. */
function shown(v) {
  const s = String(v).replace(/[\u0000-\u001f]/g, ' ');
  return s.length > 40 ? `${s.slice(0, 40)}\u2026` : s;
}

/** {lesson: id|null, screen: 0-based, teacher: bool, problems: [text]} from a hash. */
export function parseLessonHash(hash) {
  const params = new URLSearchParams(String(hash ?? '').replace(/^#/, ''));
  const out = { lesson: null, screen: 0, teacher: params.has('teacher'), problems: [] };
  const id = params.get('lesson');
  if (id !== null) {
    if (LESSON_IDS.includes(id)) out.lesson = id;
    else out.problems.push(`There is no lesson \u201c${shown(id)}\u201d. The lessons are: ${LESSON_IDS.join(', ')}.`);
  }
  const screen = params.get('screen');
  if (screen !== null) {
    const n = /^\d{1,2}$/.test(screen) ? Number(screen) : NaN;
    if (n >= 1 && n <= SCREENS.length) out.screen = n - 1;
    else out.problems.push(`Screen \u201c${shown(screen)}\u201d does not exist: a lesson has screens 1 to ${SCREENS.length}.`);
  }
  return out;
}

export function lessonHash({ lesson, screen = 0, teacher = false }) {
  const parts = [];
  if (lesson) parts.push(`lesson=${encodeURIComponent(lesson)}`);
  if (lesson && !teacher) parts.push(`screen=${screen + 1}`);
  if (teacher) parts.push('teacher');
  return parts.join('&');
}
