// Small DOM helpers shared by the views. Text always goes in through
// textContent, never innerHTML, so user text can never become markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

/** el('div', 'card', {text: 'hi', testid: 'x'}, child1, child2) */
export function el(tag, className, props = {}, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  applyProps(node, props);
  for (const c of children) if (c != null) node.append(c);
  return node;
}

export function svgEl(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text != null) node.textContent = text;
  return node;
}

function applyProps(node, props) {
  for (const [k, v] of Object.entries(props)) {
    if (v == null) continue;
    if (k === 'text') node.textContent = v;
    else if (k === 'testid') node.dataset.testid = v;
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else if (k === 'attrs') for (const [a, x] of Object.entries(v)) node.setAttribute(a, String(x));
    else node[k] = v;
  }
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
}

/** A label + control pair: <label class="field"><span>Label</span>control</label> */
export function field(labelText, control, { hint, className = 'field' } = {}) {
  const id = uniqueId('f');
  control.id = id;
  const label = el('label', 'field-label', { text: labelText, htmlFor: id });
  const wrap = el('div', className, {}, label, control);
  if (hint) wrap.append(el('span', 'field-hint', { text: hint }));
  return wrap;
}

let counter = 0;
/** Ids unique within the page (and so within any shadow root). */
export function uniqueId(prefix) {
  counter += 1;
  return `ap-${prefix}-${counter}`;
}

/** Replaces a <select>'s options when they differ: [{value, text}]. */
export function setOptions(select, options) {
  const same = select.options.length === options.length
    && options.every((o, i) => select.options[i].value === String(o.value) && select.options[i].textContent === o.text);
  if (same) return;
  clear(select);
  for (const o of options) select.append(el('option', null, { value: String(o.value), text: o.text }));
}

/** Sets a control's value only when it changed (keeps the caret and focus). */
export function setValue(control, value) {
  const v = String(value);
  if (control.value !== v) control.value = v;
}
