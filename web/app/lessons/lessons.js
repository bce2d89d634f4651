// The lessons' controller: loads the engine (and the shipped models a lesson
// needs), computes each lesson's facts once, keeps what the learner did per
// lesson (the guess, the feedback, the check answer) and draws one screen.
// Used by the lessons page (main.js) and by <attention-playground lesson="…">.
//
//   const l = mountLessons(root, {loadEngine, fetchShipped, initial: {lesson, screen, teacher, problems},
//                                 fixed: false, onNavigate(state), href(state), linkFor(path)});
//   l.show({lesson, screen, teacher, problems});   l.ready() → Promise<boolean>;   l.destroy()

import { el } from '../kit/dom.js';
import { LESSONS, LESSON_IDS, lessonById } from './registry.js';
import { listView, screenView, teacherIndex, sheetView } from './view.js';
import { readDone, markDone } from './progress.js';

const MODEL_FILES = { coreference: 'coreference.safetensors' };

export function mountLessons(root, options) {
  const { loadEngine, fetchShipped, fixed = false, onNavigate = () => {}, href, pageHref = href, linkFor = (p) => p } = options;
  const app = el('div', 'ls', { dataset: { state: 'loading' }, testid: 'lessons' });
  const status = el('p', 'ls-status', { attrs: { role: 'status' }, text: 'Starting the attention engine\u2026' });
  app.append(status);
  root.append(app);
  let state = { lesson: null, screen: 0, teacher: false, problems: [], ...options.initial };
  let engine = null;
  let destroyed = false;
  const models = {};
  const sessions = {}; // lesson id → {facts, guess, submitted, result, answer}
  let renders = 0;

  async function load() {
    engine = await loadEngine();
    const needed = new Set(LESSONS.filter((l) => !fixed || l.id === state.lesson).flatMap((l) => l.needs));
    for (const name of needed) models[name] = engine.loadTrainer(await fetchShipped(name, MODEL_FILES[name]));
  }

  function session(lesson) {
    if (!sessions[lesson.id]) sessions[lesson.id] = { facts: lesson.compute(engine, models), guess: null, submitted: null, result: null, answer: null };
    return sessions[lesson.id];
  }

  function go(next) {
    state = { ...state, ...next, problems: next.problems ?? [] };
    onNavigate(state);
    render(true);
  }

  function render(focus = false) {
    if (!engine || destroyed) return;
    const lesson = lessonById(state.lesson);
    let node;
    if (state.teacher && !lesson) node = teacherIndex(LESSONS, { href, pageHref });
    else if (!lesson) node = listView(LESSONS, readDone(LESSON_IDS), { href, problems: state.problems });
    else if (state.teacher) node = sheetView(lesson, session(lesson).facts, { href, fixed });
    else node = lessonScreen(lesson);
    app.replaceChildren(node);
    renders += 1;
    app.dataset.rendered = String(renders);
    app.dataset.state = 'ready';
    if (focus) app.querySelector('.ls-h')?.focus({ preventScroll: false });
  }

  function lessonScreen(lesson) {
    const s = session(lesson);
    const index = LESSON_IDS.indexOf(lesson.id);
    return screenView(lesson, s, {
      index, total: LESSONS.length, screen: state.screen, fixed, href, linkFor,
      on: {
        go: (screen) => go({ screen }),
        setGuess: (g) => { s.guess = g; },
        reveal(skip) {
          const p = lesson.predict;
          // an untouched multi-pick is the guess "none"; untouched bars or slider: their start
          const guess = skip ? null : s.guess ?? (p.kind === 'pick' ? [] : p.kind === 'bars' ? p.start(s.facts) : s.facts[p.start]);
          s.submitted = guess;
          s.result = lesson.classify(guess, s.facts);
          go({ screen: 2 });
        },
        answer(id) {
          s.answer = id;
          markDone(lesson.id, LESSON_IDS);
          render();
          // the explanation is what to read next: keyboard and screen reader land on it
          app.querySelector('[data-testid="check-feedback"]')?.focus({ preventScroll: false });
        },
        next() {
          const n = LESSON_IDS[index + 1];
          go(n ? { lesson: n, screen: 0 } : { lesson: null, screen: 0 });
        },
      },
    });
  }

  const started = load().then(() => {
    if (destroyed) return false;
    render();
    return true;
  }, (e) => {
    app.dataset.state = 'error';
    status.textContent = `The lessons need the attention engine, which could not start: ${e?.message ?? e}`;
    return false;
  });

  return {
    show(next) {
      state = { lesson: null, screen: 0, teacher: false, problems: [], ...next };
      render(true);
    },
    ready: () => started,
    get state() { return { ...state }; },
    /** The facts of a lesson (the engine's numbers it states), for tests and the element. */
    facts: (id) => (engine && lessonById(id) ? session(lessonById(id)).facts : null),
    destroy() {
      destroyed = true;
      app.remove();
    },
  };
}
