// The playground's keys: ← and → step, Space plays and pauses, Escape ends
// the guided tour. Keys typed
// into a text field, a select or a focused button are left alone.

/** True for an element that takes typed keys (text fields, selects, editable content). */
export function isTyping(t) {
  if (!t || t.nodeType !== 1) return false;
  if (t.isContentEditable) return true;
  const tag = t.tagName;
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag === 'INPUT') return !['checkbox', 'radio', 'button', 'submit', 'reset'].includes(t.type);
  return false;
}

/** Listens on target; returns the function that stops listening. */
export function bindStepKeys(target, { go, togglePlay, escape = () => {} }) {
  function onKey(e) {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.composedPath()[0];
    if (isTyping(t)) return;
    if (e.key === 'ArrowRight') {
      e.preventDefault();
      go(1);
    } else if (e.key === 'ArrowLeft') {
      e.preventDefault();
      go(-1);
    } else if (e.key === 'Escape') {
      escape();
    } else if (e.key === ' ' || e.key === 'Spacebar') {
      if (t?.closest?.('button, a, summary, [role="button"], input')) return; // Space presses the focused control
      e.preventDefault();
      togglePlay();
    }
  }
  target.addEventListener('keydown', onKey);
  return () => target.removeEventListener('keydown', onKey);
}
