import { Marked } from '../vendor/marked.js';
import DOMPurify from '../vendor/purify.js';
import { visible } from './visible-text.js';

/**
 * Markdown from agents (summaries, markdown previews, email bodies) rendered as HTML, in two
 * locks: marked renders markdown syntax only (raw HTML inside the markdown is escaped and shows
 * as text), then DOMPurify removes anything active that markdown itself produced (javascript:
 * links, for one). The result reaches the DOM as a Trusted Types value: the page's CSP refuses
 * plain strings. Links open in a new tab without a referrer; remote images are blocked by the
 * CSP (img-src 'self' data: blob:). Bidi and control characters in the rendered text (typed, or
 * written as character references) are then shown visibly, as everywhere on the page.
 */

const escapeHtml = (s) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const marked = new Marked({
  async: false,
  gfm: true,
  breaks: false,
  renderer: { html: ({ text }) => escapeHtml(text) },
});

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

const PURIFY = {
  RETURN_TRUSTED_TYPE: true,
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'option'],
  // Inline styles would only trip the CSP; ids and names could clobber the page's own.
  FORBID_ATTR: ['style', 'id', 'name'],
};

export function renderMarkdown(text, className = 'markdown') {
  const el = document.createElement('div');
  el.className = className;
  el.innerHTML = DOMPurify.sanitize(marked.parse(String(text ?? '')), PURIFY);
  showHidden(el);
  return el;
}

/** Applied after parsing, so `&#x202E;` is caught as well as the character itself. */
function showHidden(root) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) node.data = visible(node.data);
  for (const el of root.querySelectorAll('[title], [alt]')) {
    for (const name of ['title', 'alt']) if (el.hasAttribute(name)) el.setAttribute(name, visible(el.getAttribute(name)));
  }
}
