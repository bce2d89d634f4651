// The attention maps of a race (race-view.js) and the tables that go with them:
// every head's map of the probe for each arm, or (the context race) where "it"
// looks in two sentences with what the model answers; the heads race's table of
// each head's weight on the two letters. Like the view, it names no race: the
// race's table (races.js) says what to draw.
//
//   const maps = createRaceMaps(card, race, { tooltip });
//   maps.draw(h, variant, palette);   // h: the page's history of the race
//   maps.clear();                     // a new run: the arms' maps go

import { el } from '../kit/dom.js';
import { createHeatmap } from '../kit/heatmap.js';
import { tokenText } from '../kit/format.js';
import { createNote, createTable } from './common.js';
import { RACES, armLabel, COREFERENCE_SENTENCES } from './races.js';
import { fmt, pct, lastEval } from './race-parts.js';

export function createRaceMaps(card, race, { tooltip }) {
  const def = RACES[race];
  const mapsTitle = el('h4', 'cx-race-subtitle');
  const mapsNote = createNote(el('div'), 'cx-note');
  const mapsRow = el('div', 'cx-race-maps');
  // 'none': a race whose table and charts say it all (no maps)
  if (def.maps !== 'none') card.append(mapsTitle, mapsNote.element, mapsRow);
  const armBoxes = [];
  let sentenceMaps = null;
  let sentenceTable = null;
  let sentenceNote = null;
  let headTable = null;
  if (def.maps === 'sentences') {
    sentenceMaps = COREFERENCE_SENTENCES.map((sentence) => {
      const box = el('div', 'cx-race-arm');
      mapsRow.append(box);
      let cur = null;
      const hm = createHeatmap(box, {
        id: `race-context-${sentence.word}`,
        compact: true,
        tooltip,
        getWidth: () => Math.max(200, box.clientWidth),
        describe: (r, c) => ({ name: `weight of \u201c${cur?.tokens[c] ?? ''}\u201d for \u201cit\u201d`, provenance: `layer ${(cur?.heads[r]?.layer ?? 0) + 1}, head ${(cur?.heads[r]?.head ?? 0) + 1}, sentence ending \u201c${sentence.word}\u201d` }),
      });
      return { hm, set: (s) => { cur = s; } };
    });
    sentenceTable = createTable(card, { caption: 'Where \u201cit\u201d looks, and what the model answers', headers: ['', '\u2026too tired: animal', '\u2026too tired: street', '\u2026too wide: animal', '\u2026too wide: street'], testid: 'race-context-sentences', className: 'cx-race-heads' });
    sentenceNote = createNote(card, 'cx-note cx-race-condition');
  } else if (def.maps === 'arms') {
    for (let i = 0; i < def.arms.length; i++) {
      const title = el('h5', 'cx-race-arm-title');
      const grid = el('div', 'cx-race-arm-grid');
      const box = el('div', `cx-race-arm ${def.arms[i].className}`, { testid: `race-${race}-maps-${i}` }, title, grid);
      mapsRow.append(box);
      armBoxes.push({ title, grid, maps: [], box });
    }
    if (def.headKeys) headTable = createTable(card, { caption: 'Each head\u2019s mean weight on the two letters it needs (256 new sequences, at the finish)', headers: ['head', 'previous letter', 'letter two back'], testid: 'race-heads-keys', className: 'cx-race-heads' });
  }

  function clear() {
    for (const a of armBoxes) {
      a.grid.replaceChildren();
      a.maps = [];
    }
  }

  /** The context race: where “it” looks in each head, in both sentences, and what the model answers. */
  function drawCoreference(h, pal) {
    mapsTitle.textContent = def.mapsTitle;
    mapsNote.set(def.mapsNote());
    const look = h.final?.sentences ?? h.live?.sentences;
    sentenceMaps.forEach((m, i) => {
      m.hm.hidden = !look;
      if (!look) return;
      const s = look[i];
      m.set(s);
      const n = s.tokens.length;
      const data = new Float32Array(s.heads.length * n);
      s.heads.forEach((x, r) => data.set(x.row.subarray(0, n), r * n));
      m.hm.update({
        matrix: { rows: s.heads.length, cols: n, data },
        title: `\u2026 it was too ${s.word}: answer \u201c${s.answer}\u201d`,
        shapeText: `step ${h.final?.step ?? h.live.step}`,
        rowLabels: s.heads.map((x) => `L${x.layer + 1} H${x.head + 1}`),
        colLabels: s.tokens,
        kind: 'sequential',
        palette: pal,
        selRow: null,
        selCol: null,
        range: 1,
      });
    });
    if (look) {
      const [a, b] = look;
      const rows = a.heads.map((x, r) => ({
        testid: `race-context-head-${x.layer}-${x.head}`,
        cells: [`layer ${x.layer + 1}, head ${x.head + 1}`,
          { text: fmt(x.animal), value: x.animal, className: x.animal > 0.5 ? 'is-good' : '' },
          { text: fmt(x.street), value: x.street },
          { text: fmt(b.heads[r].animal), value: b.heads[r].animal },
          { text: fmt(b.heads[r].street), value: b.heads[r].street, className: b.heads[r].street > 0.5 ? 'is-good' : '' }],
      }));
      rows.push({ testid: 'race-context-answers', cells: ['the model answers', { text: a.answer, value: a.answer, testid: 'race-context-answer-tired', className: a.answer === a.expect ? 'is-good' : 'is-bad' }, '', { text: b.answer, value: b.answer, testid: 'race-context-answer-wide', className: b.answer === b.expect ? 'is-good' : 'is-bad' }, ''] });
      rows.push({ testid: 'race-context-average-answers', cells: ['with the plain average instead', { text: a.averageAnswer, value: a.averageAnswer, testid: 'race-context-average-tired' }, '', { text: b.averageAnswer, value: b.averageAnswer, testid: 'race-context-average-wide' }, ''] });
      sentenceTable.set(rows);
      const acc = (h.final ?? lastEval(h))?.arms?.[1]?.accuracy;
      const both = a.averageAnswer === a.expect && b.averageAnswer === b.expect;
      sentenceNote.set(Number.isFinite(acc)
        ? `${both ? 'On these two sentences the averaged model still happens to name the right noun' : 'With the plain average the answers change'}; over the held-out sentences it is right ${pct(acc)} of the time. The heads with attention change where they look when the last word changes; an average cannot.`
        : '');
    } else {
      sentenceTable.set([]);
      sentenceNote.set('');
    }
  }

  /** The other races: every head's map of the probe, for each arm. */
  function drawArmMaps(h, v, pal) {
    mapsTitle.textContent = def.mapsTitle;
    mapsNote.set(def.mapsNote(v));
    const live = h.live;
    armBoxes.forEach((a, i) => {
      a.title.textContent = armLabel(race, i, v);
      const arm = live?.arms?.[i];
      if (!arm) return;
      while (a.maps.length < arm.maps.length) {
        const k = a.maps.length;
        let cur = null;
        const hm = createHeatmap(a.grid, {
          id: `race-${race}-${i}-${k}`,
          compact: true,
          tooltip,
          getWidth: () => Math.max(140, Math.min(260, Math.floor((a.box.clientWidth - 12) / Math.min(2, arm.maps.length)) - 8)),
          describe: (r, c) => ({ name: `weight of position ${c} (\u201c${cur?.tokens[c] ?? ''}\u201d) for position ${r} (\u201c${cur?.tokens[r] ?? ''}\u201d)`, provenance: `${armLabel(race, i, v)}, step ${cur?.step ?? 0}` }),
        });
        a.maps.push({ hm, set: (x) => { cur = x; } });
      }
      arm.maps.forEach((m, k) => {
        const labels = arm.tokens.map((t) => tokenText(t));
        a.maps[k].set({ tokens: arm.tokens, step: live.step });
        a.maps[k].hm.update({
          matrix: { rows: arm.n, cols: arm.n, data: m.data },
          title: mapTitle(arm.maps, m),
          shapeText: `step ${live.step}`,
          rowLabels: labels,
          colLabels: labels,
          kind: 'sequential',
          palette: pal,
          selRow: null,
          selCol: null,
          range: 1,
        });
      });
    });
  }

  /** The heads race: each head's weight on the two letters, at the finish. */
  function drawHeadKeys(h, v) {
    const rows = [];
    if (h.final) {
      h.final.arms.forEach((arm, i) => arm.heads.forEach((x) => rows.push({
        testid: `race-heads-key-${i}-${x.head}`,
        cells: [`${armLabel(race, i, v, 'short')}: head ${x.head + 1}`, { text: fmt(x.previous), value: x.previous, className: x.previous > 0.6 ? 'is-good' : '' }, { text: fmt(x.twoBack), value: x.twoBack, className: x.twoBack > 0.6 ? 'is-good' : '' }],
      })));
    }
    headTable.set(rows);
    headTable.element.parentElement.hidden = rows.length === 0;
  }

  return {
    clear,
    /** Draws h's maps (live, or the finish line's) in the variant v's words, and the heads' table. */
    draw(h, v, pal) {
      if (def.maps === 'sentences') drawCoreference(h, pal);
      else if (def.maps === 'arms') drawArmMaps(h, v, pal);
      if (headTable) drawHeadKeys(h, v);
    },
  };
}

/** A map's title: "layer 2, head 1", "layer 1" (one head per layer) or "head 2" (one layer). */
function mapTitle(maps, m) {
  const layers = new Set(maps.map((x) => x.layer)).size;
  const headsInLayer = maps.filter((x) => x.layer === m.layer).length;
  if (layers > 1) return headsInLayer > 1 ? `layer ${m.layer + 1}, head ${m.head + 1}` : `layer ${m.layer + 1}`;
  return `head ${m.head + 1}`;
}
