// Hover, tap and keyboard on a heatmap: the hovered or focused cell gets an
// outline and the shared tooltip; a click or Enter selects it.
//
// view: {canvas, scroll, hover, figure} elements; get(): {m, L} of the last
// update (null before the first); tooltip, describe, onCellClick: the heatmap's options.

export function attachInteraction({ canvas, scroll, hover, figure }, get, { tooltip, describe, onCellClick }) {
  let cursor = null; // keyboard cursor {i, j}
  let pointerInside = false;

  function cellAt(x, y) {
    const { L } = get();
    if (!L) return null;
    const j = Math.floor((x - L.x0) / L.cw);
    const i = Math.floor((y - L.y0) / L.ch);
    if (i < 0 || j < 0 || i >= L.rows || j >= L.cols) return null;
    return { i, j };
  }

  function info(i, j) {
    const { m } = get();
    const k = i * m.matrix.cols + j;
    const raw = m.matrix.data[k];
    const blocked = m.kind !== 'mask' && m.mask && !m.mask[k];
    const value = blocked ? -Infinity : raw;
    const d = describe ? describe(i, j, value) : {};
    return { name: d.name ?? `${m.title}[${i}][${j}]`, value, provenance: d.provenance ?? '' };
  }

  function showHover(i, j) {
    const { L } = get();
    hover.hidden = false;
    hover.style.left = `${L.x0 + j * L.cw}px`;
    hover.style.top = `${L.y0 + i * L.ch}px`;
    hover.style.width = `${L.cw}px`;
    hover.style.height = `${L.ch}px`;
  }

  function showTip(i, j, clientX, clientY, avoid = null) {
    showHover(i, j);
    tooltip?.show(figure, clientX, clientY, info(i, j), { avoid });
  }

  function hideTip() {
    hover.hidden = true;
    tooltip?.hide(figure);
  }

  function cellClientPoint(i, j) {
    const { L } = get();
    const r = canvas.getBoundingClientRect();
    return { x: r.left + L.x0 + (j + 1) * L.cw, y: r.top + L.y0 + (i + 1) * L.ch };
  }

  function moveCursor(di, dj) {
    const { L } = get();
    cursor.i = Math.max(0, Math.min(L.rows - 1, cursor.i + di));
    cursor.j = Math.max(0, Math.min(L.cols - 1, cursor.j + dj));
    const { i, j } = cursor;
    scrollCellIntoView(scroll, L, i, j);
    const p = cellClientPoint(i, j);
    showTip(i, j, p.x, p.y);
  }

  canvas.addEventListener('pointermove', (e) => {
    if (!get().m || e.pointerType === 'touch') return;
    pointerInside = true;
    const c = cellAt(e.offsetX, e.offsetY);
    if (c) showTip(c.i, c.j, e.clientX, e.clientY);
    else hideTip();
  });
  canvas.addEventListener('pointerleave', () => {
    pointerInside = false;
    if (!cursor) hideTip();
  });
  canvas.addEventListener('click', (e) => {
    if (!get().m) return;
    const c = cellAt(e.offsetX, e.offsetY);
    if (!c) return;
    // a tap (or click) keeps the card off the matrix: a finger has no hover to move it away
    showTip(c.i, c.j, e.clientX, e.clientY, (scroll.closest('.hm-scroll-wrap') ?? scroll).getBoundingClientRect());
    onCellClick?.(c.i, c.j);
  });

  scroll.addEventListener('focus', () => {
    const { m, L } = get();
    if (!m) return;
    cursor = { i: Math.min(m.selRow ?? 0, L.rows - 1), j: Math.min(m.selCol ?? 0, L.cols - 1) };
    moveCursor(0, 0);
  });
  scroll.addEventListener('blur', () => {
    cursor = null;
    if (!pointerInside) hideTip();
  });
  scroll.addEventListener('keydown', (e) => {
    const { m, L } = get();
    if (!m || !cursor) return;
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    if (moves[e.key]) {
      e.preventDefault();
      e.stopPropagation();
      moveCursor(...moves[e.key]);
    } else if (e.key === 'Home' || e.key === 'End') {
      e.preventDefault();
      e.stopPropagation();
      cursor.j = e.key === 'Home' ? 0 : L.cols - 1;
      moveCursor(0, 0);
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      e.stopPropagation();
      onCellClick?.(cursor.i, cursor.j);
    } else if (e.key === 'Escape') {
      hideTip();
    }
  });

  return {
    /** After a redraw: keep the cursor inside the matrix and its outline in place. */
    afterUpdate() {
      const { L } = get();
      if (cursor) {
        cursor.i = Math.min(cursor.i, L.rows - 1);
        cursor.j = Math.min(cursor.j, L.cols - 1);
        showHover(cursor.i, cursor.j);
      } else if (!pointerInside) {
        hover.hidden = true;
      }
    },
  };
}

/** Scrolls the box so that cell (i, j) is visible next to the (scrolled-along) label gutters. */
export function scrollCellIntoView(scroll, L, i, j) {
  const left = L.x0 + j * L.cw;
  const top = L.y0 + i * L.ch;
  if (left < scroll.scrollLeft + L.x0) scroll.scrollLeft = Math.max(0, left - L.x0);
  else if (left + L.cw > scroll.scrollLeft + scroll.clientWidth) scroll.scrollLeft = left + L.cw - scroll.clientWidth;
  if (top < scroll.scrollTop + L.y0) scroll.scrollTop = Math.max(0, top - L.y0);
  else if (top + L.ch > scroll.scrollTop + scroll.clientHeight) scroll.scrollTop = top + L.ch - scroll.clientHeight;
}
