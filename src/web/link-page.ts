import { createHash } from 'node:crypto';
import type { LinkOutcome } from '../notify/link-service.js';
import type { Preview } from '../requests/request-schema.js';
import { previewText } from '../requests/preview-text.js';
import { visibleText } from '../lib/visible-text.js';

/**
 * HTML text and attribute escaping: everything from a request is text, never markup, and its
 * bidi controls and invisible characters are shown (U+FFFD), as the inbox shows them.
 */
const esc = (s: string) => visibleText(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const PREVIEW_CHARS = 20_000;

const STYLE = `
:root{color-scheme:light dark;font-family:system-ui,sans-serif;line-height:1.45}
body{margin:0;padding:1.5rem;display:flex;justify-content:center}
main{max-width:42rem;width:100%}
h1{font-size:1.35rem;margin:.2rem 0 .6rem}
.meta{color:GrayText;font-size:.9rem}
.box{border:1px solid color-mix(in srgb,CanvasText 20%,transparent);border-radius:.5rem;padding:.8rem 1rem;margin:1rem 0}
pre{white-space:pre-wrap;word-break:break-word;font-size:.85rem;margin:.3rem 0;max-height:24rem;overflow:auto}
pre.ltr{direction:ltr;unicode-bidi:bidi-override}
textarea{width:100%;box-sizing:border-box;min-height:5rem;font:inherit}
button{font:inherit;font-size:1rem;padding:.6rem 1.4rem;border-radius:.4rem;border:0;cursor:pointer;color:#fff}
.approve{background:#2e7d32}.deny{background:#c62828}
.notice{font-size:1.1rem}
`.trim();

/** The page's only style, allowed by hash: the CSP needs no 'unsafe-inline' and loads nothing else. */
export const LINK_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><meta name="referrer" content="no-referrer">
<title>${esc(title)} · countersign</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>`;
}

function previewHtml(p: Preview): string {
  const label = esc(p.title ?? p.name ?? p.type);
  const text = previewText(p);
  const blobs = p.blob || p.before_blob || p.after_blob || p.files?.length ? '<p class="meta">Its file contents are shown in the inbox.</p>' : '';
  if (text == null) return `<div class="box"><div class="meta">${label}</div><p class="meta">Shown in the inbox.</p></div>`;
  const shown = text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}\n… (cut here: the rest is in the inbox)` : text;
  // Commands and code read in the order they run: right-to-left letters move nothing around them.
  const ltr = p.type === 'command' || p.type === 'code' || p.type === 'diff' ? ' class="ltr"' : '';
  return `<div class="box"><div class="meta">${label}</div><pre${ltr}>${esc(shown)}</pre>${blobs}</div>`;
}

const MESSAGES: Record<string, [string, string]> = {
  used: ['This link was already used', 'The request was decided with this link. Nothing more to do.'],
  not_pending: ['This request is no longer waiting', 'It was decided, cancelled or expired before this link was used.'],
  expired: ['This link has expired', 'Open the inbox to see the request.'],
  changed: ['This request changed', 'The request is not what the notification showed. Open the inbox to review it.'],
  unknown: ['Link not found', 'This link is not valid. It may have been revoked.'],
  rate_limited: ['Too many requests', 'Wait a minute and try again.'],
};

const DONE: Record<string, string> = {
  approved: 'Approved',
  denied: 'Denied',
  dismissed: 'Dismissed',
  answered: 'Answered',
};

/**
 * The decision-link page, server-rendered without scripts: the confirmation
 * form for an open link (its button POSTs the same URL), the result after a POST, or why the
 * link cannot be used.
 */
export function renderLinkPage(outcome: LinkOutcome, inboxUrl: (id: string) => string, token: string): string {
  if (outcome.state === 'open' || outcome.state === 'invalid') {
    const { stored, option } = outcome;
    const r = stored.record;
    const deny = option.outcome === 'deny';
    const required = deny && r.input?.feedback === 'required_on_deny';
    const error = outcome.state === 'invalid' ? `<p class="box" role="alert">${esc(outcome.message)}</p>` : '';
    // The label is the agent's words and may say the opposite of what the option does ("Deny" that approves): say it plainly.
    const effect = r.kind === 'info' ? 'dismisses this notice' : deny ? 'denies this request' : 'approves this request';
    return page(
      `${option.label}: ${r.title}`,
      `<p class="meta">${esc(r.source.agent ?? 'An agent')} asks · ${esc(r.risk)} risk · ${esc(r.kind)}</p>
<h1>${esc(r.title)}</h1>
${r.summary ? `<div class="box"><pre>${esc(r.summary)}</pre></div>` : ''}
${r.previews.map(previewHtml).join('\n')}
${error}
<form method="post">
<input type="hidden" name="token" value="${esc(token)}">
${deny ? `<p><label for="feedback">Feedback${required ? ' (required)' : ' (optional)'}</label><br><textarea id="feedback" name="feedback"${required ? ' required' : ''}></textarea></p>` : ''}
<p>“${esc(option.label)}” ${effect}.</p>
<p><button type="submit" class="${deny ? 'deny' : 'approve'}">${esc(option.label)}</button></p>
</form>
<p class="meta">Nothing happens until you press the button. <a href="${esc(inboxUrl(r.id))}">Open in the inbox</a></p>`,
    );
  }
  if (outcome.state === 'decided') {
    const r = outcome.stored.record;
    const word = DONE[r.status] ?? r.status;
    return page(`${word}: ${r.title}`, `<p class="notice" role="status">${esc(word)} with “${esc(outcome.option.label)}”.</p><h1>${esc(r.title)}</h1>`);
  }
  const [title, text] = MESSAGES[outcome.state]!;
  const link = 'stored' in outcome ? `<p><a href="${esc(inboxUrl(outcome.stored.record.id))}">Open in the inbox</a></p>` : '';
  return page(title, `<h1>${esc(title)}</h1><p>${esc(text)}</p>${link}`);
}
