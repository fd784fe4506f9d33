import { visible } from './visible-text.js';

/**
 * The one way this page builds DOM: elements with attributes and children, where every string
 * child becomes a text node. User-supplied text therefore never passes through an HTML parser;
 * the only HTML this page renders is sanitised markdown (markdown.js) and sandboxed previews.
 * Displayed text (children, and attributes people read or hear) shows bidi and control
 * characters visibly (visible-text.js); values sent back, links and data attributes are kept
 * exactly.
 */

const PROPERTIES = new Set(['value', 'checked', 'disabled', 'hidden', 'open', 'selected', 'indeterminate']);
const DISPLAYED = new Set(['title', 'alt', 'placeholder', 'aria-label', 'aria-description', 'download']);

export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value == null || value === false) continue;
    if (key === 'innerHTML' || key === 'outerHTML' || key === 'srcdoc') throw new Error(`h(): ${key} is not allowed`);
    if (key === 'class') el.className = Array.isArray(value) ? value.filter(Boolean).join(' ') : value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (PROPERTIES.has(key)) el[key] = value;
    else if (DISPLAYED.has(key)) el.setAttribute(key, visible(value));
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child == null || child === false) continue;
    el.append(child instanceof Node ? child : visible(child));
  }
  return el;
}

/** Replaces an element's children. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

export const $ = (selector, root = document) => root.querySelector(selector);
export const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];

/** A short-lived message in the corner (errors stay until dismissed). */
export function toast(message, kind = 'info') {
  const box = document.getElementById('toasts');
  const item = h(
    'div',
    { class: ['toast', `toast-${kind}`], role: kind === 'error' ? 'alert' : 'status' },
    h('span', null, message),
    h('button', { type: 'button', class: 'toast-close', 'aria-label': 'Dismiss', onclick: () => item.remove() }, '×'),
  );
  box.append(item);
  if (kind !== 'error') setTimeout(() => item.remove(), 5000);
  while (box.children.length > 4) box.firstElementChild.remove();
}
