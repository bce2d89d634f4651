// The lessons (lessons.html, web/app/lessons), in Chromium: every lesson completed by
// keyboard on a desktop page and by touch on a phone (a hasTouch context), each with
// the misconception's guess first (the feedback names it) and then a right one; every
// number of each reveal is the engine's (recomputed in the page by a fresh engine and
// compared with the text); progress is kept; a bad link names the problem. Then a
// teacher's page on another origin: <attention-playground lesson="scale" screen="2">,
// an unknown lesson, and embed.html#lesson=masks in an iframe.
// One page per context; the lessons move in-page.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startServer, ARTIFACTS, ROOT, WAIT, CHROMIUM_ARGS, CHROMIUM_PATH } from './harness.mjs';
import { guessesFor } from '../js/lesson-guesses.mjs';
import { createEngine } from '../../web/engine.js';
import { lessonById } from '../../web/app/lessons/registry.js';
import { factText } from '../../web/app/lessons/parts.js';
import { tempDir } from '../js/helpers.mjs';

const SHOTS = join(ARTIFACTS, 'lessons');
const IDS = ['context', 'qkv', 'scores', 'scale', 'heads', 'order', 'masks'];
let site;
let teacher;
let teacherDir;
let browser;
before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  site = await startServer();
  teacherDir = tempDir('ap-lessons-');
  teacher = await startServer(teacherDir);
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await teacher?.close();
  await site?.close();
  rmSync(teacherDir, { recursive: true, force: true });
});

async function newPage(options) {
  const context = await browser.newContext(options);
  context.setDefaultTimeout(WAIT);
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  return { page, errors, context };
}

const screenIs = (page, lesson, screen) => page.waitForFunction(([l, s]) => {
  const el = document.querySelector('[data-testid="lesson-screen"]');
  return el?.dataset.lesson === l && el.dataset.screen === s;
}, [lesson, screen], { polling: 20 });

/** Presses a button (or chip) the learner's way: focus and Enter/Space, or a tap. */
async function press(loc, mode) {
  if (mode === 'touch') await loc.tap();
  else {
    await loc.focus();
    await loc.press('Enter');
  }
}

/** Makes a guess in the figure: chips, bars or the slider. */
async function guess(page, kind, g, mode) {
  const fig = page.locator('[data-testid="predict-figure"]');
  if (kind === 'pick') {
    for (const id of g) {
      const chip = fig.locator(`[data-option="${id}"]`);
      if (mode === 'touch') await chip.tap();
      else { await chip.focus(); await chip.press('Space'); }
    }
    return;
  }
  const ranges = fig.locator('input[type="range"]');
  const values = Array.isArray(g) ? g : [g];
  for (let i = 0; i < values.length; i++) {
    const r = ranges.nth(i);
    const now = Number(await r.inputValue());
    if (Math.abs(now - values[i]) < 0.02) continue; // the bar is already there
    if (mode === 'touch') {
      const box = await r.boundingBox();
      const min = Number(await r.getAttribute('min'));
      const at = (values[i] - min) / (1 - min);
      await page.touchscreen.tap(box.x + 8 + (box.width - 16) * at - (at >= 1 ? -6 : 0), box.y + box.height / 2);
    } else {
      await r.focus();
      if (values[i] >= 1) await r.press('End');
      else {
        await r.press('Home');
        for (let k = 0; k < Math.round(values[i] * 100); k++) await r.press('ArrowRight');
      }
    }
  }
}

/** Every [data-fact] number of the screen (predict or reveal) against a fresh engine's numbers in the page; no other digit in its text. */
async function checkNumbers(page, id, least = 3) {
  const seen = await page.evaluate(async (lessonId) => {
    const [{ createEngine: ce }, { lessonById: byId }, { factText: ft, getFact }] = await Promise.all([
      import('./engine.js'), import('./app/lessons/registry.js'), import('./app/lessons/parts.js')]);
    window.__freshEngine ??= await ce();
    const engine = window.__freshEngine;
    const lesson = byId(lessonId);
    const models = {};
    for (const n of lesson.needs) models[n] = engine.loadTrainer(new Uint8Array(await (await fetch(`generated/models/${n}.safetensors`)).arrayBuffer()));
    const facts = lesson.compute(engine, models);
    const body = document.querySelector('[data-testid="lesson-screen"] .ls-body');
    const out = [];
    for (const s of body.querySelectorAll('[data-fact]')) {
      let expected = null;
      try {
        const v = getFact(facts, s.dataset.fact);
        expected = [ft(v), ft(v, { int: true })];
      } catch { /* a number of the guess (guess, guessSum), not the engine's */ }
      out.push({ key: s.dataset.fact, text: s.textContent, expected });
    }
    const copy = body.cloneNode(true);
    for (const x of copy.querySelectorAll('[data-fact], .ls-yours, .ls-guess-value, .ls-sum')) x.remove(); // the learner's own numbers
    return { out, rest: copy.textContent };
  }, id);
  assert.ok(seen.out.length >= least, `${id}: numbers on the screen`);
  for (const n of seen.out) {
    if (n.expected) assert.ok(n.expected.includes(n.text), `${id} ${n.key}: ${n.text} is not the engine's ${n.expected[0]}`);
    else assert.ok(['guess', 'guessSum'].includes(n.key), `${id}: ${n.key} is neither the engine's nor the guess`);
  }
  const stray = seen.rest.replace(/[HL]\d+/g, '').match(/.{0,20}\d.{0,20}/);
  assert.equal(stray, null, `${id}: a number in the reveal's text that no fact gave: ${stray}`);
}

/** One lesson from its first screen: the misconception's guess, back, the right guess, why, the check. */
async function completeLesson(page, id, mode, facts) {
  const lesson = lessonById(id);
  const g = guessesFor(id, facts);
  await screenIs(page, id, 'question');
  await press(page.locator('[data-testid="next"]'), mode);
  await screenIs(page, id, 'predict');
  if (mode === 'keyboard') await checkNumbers(page, id, 0);
  await guess(page, lesson.predict.kind, g.myth, mode);
  if (id === 'scores') await shot(page, `${id}-predict-${mode}`);
  await press(page.locator('[data-testid="reveal"]'), mode);
  await screenIs(page, id, 'reveal');
  if (id === 'scores') await shot(page, `${id}-reveal-${mode}`);
  const fb = page.locator('[data-testid="feedback"]');
  assert.equal(await fb.getAttribute('data-verdict'), 'myth', `${id} (${mode}): ${await fb.textContent()}`);
  assert.ok((await fb.textContent()).includes(`\u201c${lesson.myth}\u201d`), `${id}: the feedback names the misconception`);
  if (mode === 'keyboard') await checkNumbers(page, id);
  await press(page.locator('[data-testid="back"]'), mode);
  await screenIs(page, id, 'predict');
  // a fresh figure: the multi-picks start from the last guess, so unpick it first
  if (lesson.predict.kind === 'pick' && lesson.predict.multi) await guess(page, 'pick', g.myth, mode);
  await guess(page, lesson.predict.kind, g.right, mode);
  await press(page.locator('[data-testid="reveal"]'), mode);
  await screenIs(page, id, 'reveal');
  assert.equal(await fb.getAttribute('data-verdict'), 'right', `${id} (${mode}): ${await fb.textContent()}`);
  if (mode === 'keyboard') await checkNumbers(page, id);
  await press(page.locator('[data-testid="next"]'), mode);
  await screenIs(page, id, 'why');
  const hrefs = await page.locator('.ls-links a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  assert.ok(hrefs.length && hrefs.every((x) => /^(index|concepts)\.html#/.test(x)), hrefs.join(' '));
  await press(page.locator('[data-testid="next"]'), mode);
  await screenIs(page, id, 'check');
  await press(page.locator(`.ls-choice[data-choice="${lesson.check.answer}"]`), mode);
  assert.match(await page.locator('[data-testid="check-feedback"]').textContent(), /^Right\./);
  await press(page.locator('[data-testid="next"]'), mode);
}

let nodeFacts = null;
async function factsOf(id) {
  if (!nodeFacts) {
    const engine = await createEngine();
    const coreference = engine.loadTrainer(new Uint8Array(readFileSync(join(ROOT, 'models', 'coreference.safetensors'))));
    nodeFacts = Object.fromEntries(IDS.map((x) => [x, lessonById(x).compute(engine, { coreference })]));
  }
  return nodeFacts[id];
}

for (const mode of ['keyboard', 'touch']) {
  test(`every lesson by ${mode}: the misconception's guess is named, a right guess is right, every number is the engine's, progress is kept`, async () => {
    const { page, errors, context } = await newPage(mode === 'touch'
      ? { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, reducedMotion: 'reduce' }
      : { viewport: { width: 1280, height: 800 } });
    await page.goto(`${site.url}lessons.html#lesson=context&screen=1`);
    for (const id of IDS) {
      await completeLesson(page, id, mode, await factsOf(id));
    }
    // after the last lesson: the list, every lesson done, kept across a reload
    await page.waitForSelector('[data-testid="lesson-list"]');
    await page.reload();
    await page.waitForSelector('[data-testid="lesson-list"]');
    assert.equal(await page.locator('.ls-done').count(), 7);
    if (mode === 'keyboard') {
      // each idea of the concept lab leads to its lesson
      await page.goto(`${site.url}concepts.html#demo=order`);
      const toLesson = page.locator('[data-testid="lesson-link-order"]');
      assert.equal(await toLesson.getAttribute('href'), 'lessons.html#lesson=order&screen=1');
      await press(toLesson, mode);
      await screenIs(page, 'order', 'question');
      // a bad link: named as text, the list shown, nothing injected
      await page.goto(`${site.url}lessons.html#lesson=%3Cimg%20src%3Dx%20onerror%3Dwindow.__hit%3D1%3E&screen=9`);
      await page.reload();
      const problem = await page.locator('[data-testid="lesson-problem"]').textContent();
      assert.match(problem, /There is no lesson \u201c<img src=x onerror=window\.__hit=1>\u201d/);
      assert.match(problem, /Screen \u201c9\u201d does not exist/);
      assert.equal(await page.evaluate(() => window.__hit ?? null), null);
      assert.equal(await page.locator('.ls-list-item').count(), 7);
      // the teacher's sheet: the answer marked, printable
      await page.goto(`${site.url}lessons.html#lesson=scale&teacher`);
      await page.reload();
      await page.waitForSelector('[data-testid="sheet"]');
      assert.match(await page.locator('.ls-sheet-choices .ls-choice-right').textContent(), /answer/);
      await page.emulateMedia({ media: 'print' });
      assert.equal(await page.locator('.ls-top').isVisible(), false);
      await page.emulateMedia({ media: 'screen' });
    }
    assert.deepEqual(errors, []);
    await context.close();
  });
}

/** A screen as the learner sees it (the predict and reveal screens of one lesson, for review). */
async function shot(page, name) {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

test('on a teacher\u2019s site (another origin): <attention-playground lesson="scale" screen="2">, an unknown lesson named with the list, and embed.html#lesson=masks', async () => {
  writeFileSync(join(teacherDir, 'lesson.html'), `<!doctype html>
<meta charset="utf-8"><title>A lesson</title><link rel="icon" href="data:,">
<attention-playground id="scale" lesson="scale" screen="2"></attention-playground>
<attention-playground id="bad" lesson="attention-is-magic"></attention-playground>
<iframe id="frame" src="${site.url}embed.html#lesson=masks" width="380" height="700"></iframe>
<script src="${site.url}attention-playground.js" defer></script>`);
  const { page, errors, context } = await newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${teacher.url}lesson.html`);
  await page.waitForFunction(() => [...document.querySelectorAll('attention-playground')].every((el) => el.shadowRoot?.querySelector('[data-testid="lessons"]')?.dataset.state === 'ready'), null, { polling: 20 });
  const s = await page.evaluate(() => {
    const r = (id) => document.getElementById(id).shadowRoot;
    return {
      title: r('scale').querySelector('[data-testid="lesson-title"]').textContent,
      screen: r('scale').querySelector('[data-testid="lesson-screen"]').dataset.screen,
      topOn: r('scale').querySelector('[data-fact="topOn"]').textContent,
      list: r('scale').querySelector('[data-testid="all-lessons"]'),
      bad: r('bad').querySelector('[data-testid="lesson-problem"]').textContent,
      badLinks: [...r('bad').querySelectorAll('.ls-list-link')].map((a) => a.href),
    };
  });
  assert.equal(s.title, 'Why 1/\u221ad_k');
  assert.equal(s.screen, 'predict');
  assert.equal(s.topOn, factText((await factsOf('scale')).topOn), 'the element states the engine\u2019s number');
  assert.equal(s.list, null, 'an embedded lesson is one lesson');
  assert.match(s.bad, /no lesson \u201cattention-is-magic\u201d/);
  assert.equal(s.badLinks.length, 7);
  assert.ok(s.badLinks.every((u) => u.startsWith(`${site.url}lessons.html#lesson=`)), s.badLinks[0]);
  // the iframe: the masks lesson, and its guess works inside it
  const frame = page.frameLocator('#frame');
  const inFrame = frame.locator('attention-playground [data-testid="lesson-title"]');
  await inFrame.waitFor();
  assert.equal(await inFrame.textContent(), 'Masks restrict');
  await frame.locator('attention-playground [data-testid="next"]').click();
  await frame.locator('attention-playground [data-option="0"]').click();
  await frame.locator('attention-playground [data-testid="reveal"]').click();
  assert.equal(await frame.locator('attention-playground [data-testid="feedback"]').getAttribute('data-verdict'), 'myth');
  await page.screenshot({ path: join(SHOTS, 'teacher-site.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await context.close();
});
