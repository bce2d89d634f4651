// The timeline: a chart of the heads' answer-key scores over the run (for each
// key, the best head's score at every snapshot; phase changes such as a
// previous-token head forming before an induction head show as one curve rising
// before another), the held-out accuracy beside them, and a slider that scrubs
// back through the snapshots: the grid then shows the heads at that step.
//
//   const view = createTimelineView(root, { onScrub(step | null) });
//   view.update({ timeline, keys, scrub, heldout, xMax, bytes });

import { el } from '../kit/dom.js';
import { formatValue } from '../kit/format.js';

/** Bytes for the reader by the page's rule: "412 KiB", "1.37 MiB". */
const size = (bytes) => (bytes < 1024 * 1000 ? `${formatValue(bytes / 1024, 3)} KiB` : `${formatValue(bytes / 1048576, 3)} MiB`);
import { createChart } from './chart.js';

const KEY_CLASSES = ['tr-s-k0', 'tr-s-k1', 'tr-s-k2', 'tr-s-k3'];

export function createTimelineView(root, { onScrub }) {
  const title = el('h2', 'card-title', { text: 'Timeline' });
  const chartBox = el('div', 'tr-timeline-chart');
  const chart = createChart(chartBox, { title: 'Best head per answer key (score on the probe) and held-out accuracy', yLabel: 'score', testid: 'timeline-chart', width: 640, height: 190, description: 'Each key\u2019s best head score at every snapshot.' });
  const slider = el('input', 'tr-slider', { type: 'range', min: 0, max: 0, step: 1, value: 0, testid: 'timeline-slider', attrs: { 'aria-label': 'Snapshot shown in the grid' } });
  const label = el('output', 'tr-slider-label num', { testid: 'timeline-label' });
  const live = el('button', 'btn', { type: 'button', text: 'Back to live', testid: 'timeline-live' });
  const memory = el('p', 'field-hint', { testid: 'timeline-memory' });
  root.append(title, chartBox, el('div', 'tr-slider-row', {}, slider, label, live), memory);
  let current = null;

  slider.addEventListener('input', () => {
    const list = current?.timeline.list ?? [];
    const i = Number(slider.value);
    if (!list.length) return;
    onScrub(i >= list.length - 1 ? null : list[i].step);
  });
  live.addEventListener('click', () => onScrub(null));

  return {
    update(m) {
      current = m;
      const list = m.timeline.list;
      const series = m.keys.slice(0, KEY_CLASSES.length).map((k, i) => ({
        name: `best \u201c${k.name}\u201d head`,
        className: KEY_CLASSES[i],
        points: list.map((s) => [s.step, Math.max(...s.scores.map((x) => x[k.name] ?? 0))]),
      }));
      series.push({ name: 'held-out accuracy', className: 'tr-s-acc', dashed: true, points: m.heldout });
      chart.update({ series, xMax: m.xMax, yDomain: [0, 1], marker: m.scrub ?? m.step });
      slider.max = String(Math.max(0, list.length - 1));
      let index = list.length - 1;
      if (m.scrub != null) index = Math.max(0, list.findIndex((s) => s.step === m.timeline.atStep(m.scrub)?.step));
      slider.value = String(index);
      slider.disabled = list.length < 2;
      label.textContent = m.scrub == null ? `live (step ${m.step})` : `step ${m.timeline.atStep(m.scrub)?.step ?? m.scrub}`;
      label.dataset.step = String(m.scrub == null ? m.step : m.timeline.atStep(m.scrub)?.step ?? m.scrub);
      live.disabled = m.scrub == null;
      memory.textContent = `${list.length} snapshots kept (every ${m.interval} steps; at most ${m.cap}), ${size(m.timeline.bytes)} of attention maps.`;
      memory.dataset.bytes = String(m.timeline.bytes);
    },
  };
}
