// The concept lab's limits and choices: plain tables with no imports, so the views
// read them too (state.js checks links against them; views/** never import the state).

/** d_k values of the scale demo's slider and charts (log-spaced, 2 … 512). */
export const DK_VALUES = Object.freeze([2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512]);
export const MAX_TEXT = 300;
/** The masks demo computes the first MAX_LINES batch lines; more are kept (in the box and the link). */
export const MAX_LINES = 6;
/** All batch text together, in UTF-16 units (the box's maxLength). */
export const MAX_LINES_TEXT = 4 * MAX_LINES * MAX_TEXT;
