// Text rules every page shares: capping text to a length without splitting a
// character, and the lines of a batch box.
//
// Capping: lengths are in UTF-16 code units (what String#length and maxLength
// count); a cut that would fall between the two halves of a surrogate pair (an
// emoji, most CJK extensions) moves back one unit, so the result is always valid
// Unicode, which the engine insists on.

/** The longest prefix of `text` of at most `max` UTF-16 units that ends on a code-point boundary. */
export function cutText(text, max) {
  if (text.length <= max) return text;
  let end = Math.max(0, max);
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end -= 1;  // a high surrogate whose low half is past the cut
  return text.slice(0, end);
}

/** The non-empty lines of a batch text, trimmed. */
export function splitLines(text) {
  return String(text).split('\n').map((x) => x.trim()).filter(Boolean);
}
