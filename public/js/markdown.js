import { Marked } from '../vendor/marked.js';
import DOMPurify from '../vendor/purify.js';

/**
 * Markdown from agents (summaries, markdown previews, email bodies) rendered as HTML, in two
 * locks: marked renders markdown syntax only (raw HTML inside the markdown is escaped and shows
 * as text), then DOMPurify removes anything active that markdown itself produced (javascript:
 * links, for one). The result reaches the DOM as a Trusted Types value: the page's CSP refuses
 * plain strings. Links open in a new tab without a referrer; remote images are blocked by the
 * CSP (img-src 'self' data: blob:).
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
  return el;
}
