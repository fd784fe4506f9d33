import type { FastifyReply } from 'fastify';

/**
 * The page's Content-Security-Policy. Nothing inline, nothing from elsewhere:
 * - scripts and styles only as files from this daemon;
 * - `connect-src 'self'` covers fetch and the same-origin `ws:`/`wss:` event stream (CSP Level 3);
 * - images from this daemon, `data:`, and `blob:` (preview images are fetched with the session
 *   and shown through object URLs so their declared type is checked first);
 * - HTML previews live in `<iframe sandbox srcdoc>`; srcdoc documents inherit this policy, so
 *   they cannot load or run anything either;
 * - Trusted Types: the only HTML strings the DOM accepts come from DOMPurify (policy
 *   `dompurify`) or the sandboxed-iframe policy, so a stray `innerHTML = userText` throws
 *   instead of rendering markup.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  'trusted-types dompurify countersign-srcdoc',
].join('; ');

/** Headers on every response that is part of the page (HTML, scripts, styles, icons). */
export function setPageHeaders(reply: FastifyReply): FastifyReply {
  return (
    reply
      .header('content-security-policy', PAGE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      // Older browsers ignore frame-ancestors; this keeps the page out of other sites' frames.
      .header('x-frame-options', 'DENY')
      .header('cross-origin-opener-policy', 'same-origin')
      .header('cross-origin-resource-policy', 'same-origin')
  );
}
